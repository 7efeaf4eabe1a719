using Compression.Testing.Couchbase;
using Couchbase.KeyValue;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

public sealed class BootstrapTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Sdk_bootstraps_over_kv_only_and_round_trips_a_document()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);

        IMutationResult upsert = await loopback.Collection.UpsertAsync("doc-1", new { name = "Ada", n = 1 });
        using IGetResult get = await loopback.Collection.GetAsync("doc-1");

        Assert.Equal("Ada", get.ContentAs<Dictionary<string, object>>()!["name"].ToString());
        Assert.Equal(upsert.Cas, get.Cas);
        Assert.Empty(loopback.Server.UnknownCommands);
        Assert.Empty(loopback.Server.ProtocolErrors);
        Assert.Equal(0, loopback.Server.AuthenticationFailures);
        foreach (KvCommand command in loopback.Server.Commands)
        {
            output.WriteLine($"{command.ConnectionId} {command.Name} -> 0x{command.Status:x2}");
        }
    }
}
