using Compression.Testing.Couchbase;
using Xunit;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// Durable writes on the loopback KV server, as kv_engine's docs/BinaryProtocol.md frames them: HELLO's sync replication
/// feature (0x11), then framing extra 1 (a level, optionally a 2-byte timeout) on SET/ADD/REPLACE/DELETE; and the
/// failover the server plays instead of losing a node (<see cref="CouchbaseLoopbackServer.LoseUnreplicatedWrites"/>).
/// </summary>
public sealed class DurabilityProtocolTests
{
    private static readonly ushort[] WithSyncReplication = [.. KvRawClient.SevenDotXFeatures, KvProtocol.Features.SyncReplication];

    private static byte[] Key(string key) => [.. KvProtocol.EncodeCollectionId(0), .. System.Text.Encoding.UTF8.GetBytes(key)];

    [Fact]
    public async Task A_durable_write_survives_the_failover_and_a_plain_one_does_not()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, WithSyncReplication);

        // Majority (level 1), then majority with a timeout (level 1, 2 bytes): both accepted.
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("durable"), "{\"v\":1}"u8.ToArray(), framing: [0x11, 0x01], extras: new byte[8])).Status);
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("durable-too"), "{\"v\":1}"u8.ToArray(), framing: [0x13, 0x01, 0x00, 0x64], extras: new byte[8])).Status);
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("plain"), "{\"v\":1}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("durable"), "{\"v\":2}"u8.ToArray(), extras: new byte[8])).Status);

        Assert.Equal(2, server.LoseUnreplicatedWrites());

        Assert.True(server.TryGetDocument("durable", out KvDocument? durable));
        Assert.Equal("{\"v\":1}", System.Text.Encoding.UTF8.GetString(durable.Value.Span));
        Assert.True(server.TryGetDocument("durable-too", out _));
        Assert.False(server.TryGetDocument("plain", out _));
    }

    [Fact]
    public async Task A_durable_delete_stays_deleted_and_a_plain_one_comes_back()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, WithSyncReplication);
        foreach (string key in new[] { "a", "b" })
            Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Set, Key(key), "{}"u8.ToArray(), framing: [0x11, 0x01], extras: new byte[8])).Status);

        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Delete, Key("a"), framing: [0x11, 0x01])).Status);
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Delete, Key("b"))).Status);
        server.LoseUnreplicatedWrites();

        Assert.False(server.TryGetDocument("a", out _));
        Assert.True(server.TryGetDocument("b", out _));
    }

    [Theory]
    [InlineData(false, new byte[] { 0x11, 0x01 }, "without HELLO sync replication")]
    [InlineData(true, new byte[] { 0x11, 0x00 }, "is not implemented")] // level 0 is no requirement at all
    [InlineData(true, new byte[] { 0x11, 0x04 }, "is not implemented")] // no level 4
    [InlineData(true, new byte[] { 0x12, 0x01, 0x00 }, "is not implemented")] // a timeout is 2 bytes
    public async Task A_durability_frame_the_protocol_does_not_allow_is_refused_loudly(bool negotiated, byte[] framing, string why)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, negotiated ? WithSyncReplication : KvRawClient.SevenDotXFeatures);

        KvRawResponse reply = await client.CallAsync(KvProtocol.Opcodes.Set, Key("k"), "{}"u8.ToArray(), framing: framing, extras: new byte[8]);

        Assert.Equal(KvProtocol.Status.InvalidArguments, reply.Status);
        Assert.Contains(why, System.Text.Encoding.UTF8.GetString(reply.Value), StringComparison.Ordinal);
        Assert.False(server.TryGetDocument("k", out _));
    }

    [Fact]
    public async Task Durability_on_a_read_is_refused()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, WithSyncReplication);

        KvRawResponse reply = await client.CallAsync(KvProtocol.Opcodes.Get, Key("k"), framing: [0x11, 0x01]);

        Assert.Equal(KvProtocol.Status.InvalidArguments, reply.Status);
        Assert.Contains("durability (1) on GET", System.Text.Encoding.UTF8.GetString(reply.Value), StringComparison.Ordinal);
    }
}
