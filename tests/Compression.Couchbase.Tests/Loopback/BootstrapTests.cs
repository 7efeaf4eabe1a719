using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Core.Exceptions;
using Couchbase.Diagnostics;
using Couchbase.KeyValue;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>The real SDK (<c>Cluster.ConnectAsync</c>) bootstraps against the loopback KV server, over KV only.</summary>
public sealed class BootstrapTests(ITestOutputHelper output)
{
    private static readonly string[] Handshake = ["HELLO", "GET_ERROR_MAP", "SASL_LIST_MECHS", "SASL_AUTH", "SASL_STEP"];

    [Fact]
    public async Task Every_connection_does_the_handshake_in_the_sdk_order_then_the_bucket_is_selected_and_configured()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);

        IMutationResult upsert = await loopback.Collection.UpsertAsync("doc-1", new { name = "Ada", n = 1 });
        using IGetResult get = await loopback.Collection.GetAsync("doc-1");

        Assert.Equal("Ada", get.ContentAs<Dictionary<string, object>>()!["name"].ToString());
        Assert.Equal(upsert.Cas, get.Cas);
        IReadOnlyList<KvCommand> commands = loopback.Server.Commands;
        foreach (KvCommand command in commands)
        {
            output.WriteLine($"connection {command.ConnectionId}: {command.Name} -> 0x{command.Status:x2}");
        }

        foreach (IGrouping<long, KvCommand> connection in commands.GroupBy(c => c.ConnectionId))
        {
            Assert.Equal(Handshake, connection.Take(Handshake.Length).Select(c => c.Name));
            Assert.Equal([0x00, 0x00, 0x00, 0x21, 0x00], connection.Take(Handshake.Length).Select(c => (int)c.Status));
        }

        Assert.Contains(commands, c => c.Name == "SELECT_BUCKET" && c.Status == 0);
        // One global config (before SELECT_BUCKET) and at least one bucket config (after).
        Assert.True(commands.Count(c => c.Name == "GET_CLUSTER_CONFIG" && c.Status == 0) >= 2);
        Assert.All(loopback.Server.Authentications, mechanism => Assert.Equal("SCRAM-SHA512", mechanism));
        Assert.Empty(loopback.Server.UnknownCommands);
        Assert.Empty(loopback.Server.ProtocolErrors);
        Assert.Equal(0, loopback.Server.AuthenticationFailures);
    }

    [Fact]
    public async Task WaitUntilReady_for_key_value_completes_without_http()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);

        await loopback.Bucket.WaitUntilReadyAsync(TimeSpan.FromSeconds(10), new WaitUntilReadyOptions().ServiceTypes(ServiceType.KeyValue));
        await loopback.Cluster.WaitUntilReadyAsync(TimeSpan.FromSeconds(10), new WaitUntilReadyOptions().ServiceTypes(ServiceType.KeyValue));

        IMutationResult result = await loopback.Collection.UpsertAsync("ready", new { ok = true });
        Assert.NotEqual(0UL, result.Cas);
    }

    [Fact]
    public async Task Scram_sha256_is_negotiated_when_the_server_offers_only_that()
    {
        var log = new TestLog(output);
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(
            output, new CouchbaseLoopbackServerOptions { SaslMechanisms = ["SCRAM-SHA256"], Log = log.Write });

        await loopback.Collection.UpsertAsync("sha256", new { ok = true });

        Assert.NotEmpty(loopback.Server.Authentications);
        Assert.All(loopback.Server.Authentications, mechanism => Assert.Equal("SCRAM-SHA256", mechanism));
    }

    [Fact]
    public async Task A_wrong_password_fails_the_scram_proof_check_with_the_sdks_authentication_exception()
    {
        var log = new TestLog(output);
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = log.Write });
        ClusterOptions options = LoopbackCluster.Options(server, log).WithPasswordAuthentication(server.Username, "not-the-password");

        await Assert.ThrowsAsync<AuthenticationFailureException>(async () =>
        {
            await using ICluster cluster = await Cluster.ConnectAsync(server.ConnectionString, options);
            IBucket bucket = await cluster.BucketAsync(server.BucketName);
            await bucket.DefaultCollection().UpsertAsync("never", new { });
        });
        Assert.True(server.AuthenticationFailures > 0);
        Assert.Empty(server.Authentications);
    }

    [Fact]
    public async Task An_unknown_bucket_is_refused_as_a_real_server_refuses_it()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);

        await Assert.ThrowsAsync<AuthenticationFailureException>(() => loopback.Cluster.BucketAsync("no-such-bucket").AsTask());
        Assert.Contains(loopback.Server.Commands, c => c.Name == "SELECT_BUCKET" && c.Status == 0x24);
    }
}
