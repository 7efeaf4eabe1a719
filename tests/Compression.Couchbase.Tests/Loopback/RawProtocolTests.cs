using System.Buffers.Binary;
using System.Text;
using Compression.Testing.Couchbase;
using Xunit;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>
/// The loopback server at the byte level, for what the SDK never exercises: SCRAM-SHA1 (the SDK on .NET 8+ only
/// offers SHA-256/512), the server signature, commands before authentication, and a flexible-framing request that
/// HELLO never allowed.
/// </summary>
public sealed class RawProtocolTests
{
    [Theory]
    [InlineData("SCRAM-SHA1")]
    [InlineData("SCRAM-SHA256")]
    [InlineData("SCRAM-SHA512")]
    public async Task Scram_exchange_checks_the_proof_and_returns_a_server_signature_the_client_can_verify(string mechanism)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using var client = await KvRawClient.ConnectAsync(server.Port);

        (ushort status, byte[] value) = await client.CallAsync(KvProtocol.Opcodes.SaslListMechs);
        Assert.Equal(0, status);
        Assert.Contains(mechanism, Encoding.UTF8.GetString(value).Split(' '));

        Assert.True(await client.AuthenticateAsync(mechanism, server.Username, server.Password));
        (status, _) = await client.CallAsync(KvProtocol.Opcodes.SelectBucket, key: server.BucketName);
        Assert.Equal(0, status);
        Assert.Equal([mechanism], server.Authentications);
    }

    [Fact]
    public async Task A_wrong_password_is_answered_auth_error_and_the_connection_stays_unauthenticated()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using var client = await KvRawClient.ConnectAsync(server.Port);

        Assert.False(await client.AuthenticateAsync("SCRAM-SHA256", server.Username, "wrong"));
        (ushort status, _) = await client.CallAsync(KvProtocol.Opcodes.SelectBucket, key: server.BucketName);

        Assert.Equal(KvProtocol.Status.AccessDenied, status);
        Assert.Equal(1, server.AuthenticationFailures);
    }

    [Fact]
    public async Task Key_value_commands_need_authentication_then_a_bucket()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using var client = await KvRawClient.ConnectAsync(server.Port);

        Assert.Equal(KvProtocol.Status.AccessDenied, (await client.CallAsync(KvProtocol.Opcodes.Get, key: "k")).Status);
        Assert.True(await client.AuthenticateAsync("SCRAM-SHA512", server.Username, server.Password));
        Assert.Equal(KvProtocol.Status.NoBucket, (await client.CallAsync(KvProtocol.Opcodes.Get, key: "k")).Status);
        (ushort status, byte[] global) = await client.CallAsync(KvProtocol.Opcodes.GetClusterConfig);
        Assert.Equal(0, status);
        Assert.DoesNotContain("vBucketServerMap", Encoding.UTF8.GetString(global), StringComparison.Ordinal);

        await client.CallAsync(KvProtocol.Opcodes.SelectBucket, key: server.BucketName);
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Get, key: "k")).Status);
        (status, byte[] bucket) = await client.CallAsync(KvProtocol.Opcodes.GetClusterConfig);
        Assert.Equal(0, status);
        Assert.Contains($"\"serverList\":[\"127.0.0.1:{server.Port}\"]", Encoding.UTF8.GetString(bucket), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(true, new ushort[] { 0x0b, 0x12, 0x08, 0x10, 0x07, 0x14 })]
    [InlineData(false, new ushort[] { 0x0b, 0x08, 0x07 })] // a server older than 7.0: no alternate requests, collections or PRESERVE_TTL
    public async Task Hello_acknowledges_only_implemented_features_in_the_order_asked(bool preserveTtl, ushort[] expected)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { PreserveTtl = preserveTtl });
        using var client = await KvRawClient.ConnectAsync(server.Port);
        ushort[] asked = [0x0b, 0x12, 0x08, 0x10, 0x0a, 0x07, 0x14];
        var body = new byte[asked.Length * 2];
        for (int i = 0; i < asked.Length; i++)
        {
            BinaryPrimitives.WriteUInt16BigEndian(body.AsSpan(2 * i), asked[i]);
        }

        (ushort status, byte[] value) = await client.CallAsync(KvProtocol.Opcodes.Hello, key: "agent", value: body);

        Assert.Equal(0, status);
        ushort[] acknowledged = [.. Enumerable.Range(0, value.Length / 2).Select(i => BinaryPrimitives.ReadUInt16BigEndian(value.AsSpan(2 * i)))];
        Assert.Equal(expected, acknowledged);
    }

    [Fact]
    public async Task An_unknown_command_is_answered_0x81_and_recorded_and_a_flexible_framing_request_closes_the_connection()
    {
        var log = new List<string>();
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = line => { lock (log) { log.Add(line); } } });
        using var client = await KvRawClient.ConnectAsync(server.Port);

        (ushort status, byte[] message) = await client.CallAsync(0x92, key: "counter"); // OBSERVE
        Assert.Equal(KvProtocol.Status.UnknownCommand, status);
        Assert.Contains("OBSERVE", Encoding.UTF8.GetString(message), StringComparison.Ordinal);
        Assert.Equal(("OBSERVE", "counter"), (Assert.Single(server.UnknownCommands).Name, server.UnknownCommands[0].Key));
        lock (log)
        {
            Assert.Contains(log, line => line.Contains("UNKNOWN COMMAND OBSERVE", StringComparison.Ordinal));
        }

        await client.SendAsync(KvProtocol.FlexibleRequestMagic, KvProtocol.Opcodes.Noop, [], [], []);
        Assert.Equal(0, await client.ReadToEndAsync());
        Assert.Contains("magic 0x08", Assert.Single(server.ProtocolErrors), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(KvProtocol.Opcodes.Delete, new byte[] { 0x11, 0x01 })] // durability (id 1), level majority: must not be a plain delete
    [InlineData(KvProtocol.Opcodes.Get, new byte[] { 0x11, 0x01 })]
    [InlineData(KvProtocol.Opcodes.Delete, new byte[] { 0x50 })] // PRESERVE_TTL on a delete
    [InlineData(KvProtocol.Opcodes.Delete, new byte[] { 0x1f })] // malformed: a length escape with no byte after it
    public async Task A_framing_extra_the_server_does_not_implement_is_refused_on_every_command(byte opcode, byte[] framing)
    {
        // Found by review: framing extras were read on SET/ADD/REPLACE only, so a durable DELETE ran as a plain one.
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        server.PutDocument("k", "{\"v\":1}"u8.ToArray(), flags: 0x02000006, expiry: 1234);
        using var client = await KvRawClient.ConnectAsync(server.Port);
        byte[] hello = [0x00, 0x10, 0x00, 0x14, 0x00, 0x07, 0x00, 0x08, 0x00, 0x0b];
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Hello, key: "agent", value: hello)).Status);
        Assert.True(await client.AuthenticateAsync("SCRAM-SHA512", server.Username, server.Password));
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.SelectBucket, key: server.BucketName)).Status);

        (ushort status, _) = await client.CallAsync(opcode, key: "k", framing: framing);

        Assert.Equal(KvProtocol.Status.InvalidArguments, status);
        Assert.NotEmpty(server.ProtocolErrors);
        Assert.True(server.TryGetDocument("k", out KvDocument? kept));
        Assert.Equal(1234u, kept.Expiry);
    }
}
