using System.Text;
using Compression.Testing.Couchbase;
using Couchbase.KeyValue;
using Couchbase.KeyValue.RangeScan;
using Microsoft.Extensions.Time.Testing;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>The loopback server's collections through the real SDK: manifest, collection ids, documents per collection, maximum TTL.</summary>
public sealed class CollectionsTests(ITestOutputHelper output)
{
    private static readonly DateTimeOffset Start = new(2026, 12, 7, 12, 0, 0, TimeSpan.Zero);

    private CouchbaseLoopbackServerOptions Options(FakeTimeProvider? clock = null) => new()
    {
        Collections =
        [
            new KvCollectionDefinition("inventory", "hotels"),
            new KvCollectionDefinition("inventory", "airlines") { MaxTtl = TimeSpan.FromHours(1) },
        ],
        Clock = clock ?? new FakeTimeProvider(Start),
        Log = new TestLog(output).Write,
    };

    [Fact]
    public async Task The_sdk_reads_the_manifest_gets_collection_ids_and_writes_each_collections_documents_into_it()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        IScope inventory = await loopback.Bucket.ScopeAsync("inventory");
        ICouchbaseCollection hotels = inventory.Collection("hotels"), airlines = inventory.Collection("airlines");

        await hotels.UpsertAsync("k::1", new { name = "Grand" });
        await airlines.UpsertAsync("k::1", new { name = "Air Ada" });
        await loopback.Collection.UpsertAsync("k::1", new { name = "default" });
        await airlines.RemoveAsync("k::1");

        Assert.Equal(1, loopback.Server.CommandCount(KvProtocol.Opcodes.GetCollectionsManifest));
        Assert.True(loopback.Server.CommandCount(KvProtocol.Opcodes.GetCollectionId) >= 3); // hotels, airlines, _default
        Assert.Contains("Grand", Body(loopback.Server, "inventory", "hotels", "k::1"), StringComparison.Ordinal);
        Assert.Contains("default", Body(loopback.Server, "_default", "_default", "k::1"), StringComparison.Ordinal);
        Assert.Empty(loopback.Server.KeysIn("inventory", "airlines"));
        using (IGetResult read = await hotels.GetAsync("k::1")) Assert.Equal("Grand", read.ContentAs<Dictionary<string, string>>()!["name"]);
        await Assert.ThrowsAsync<global::Couchbase.Core.Exceptions.KeyValue.DocumentNotFoundException>(() => airlines.GetAsync("k::1"));
        Assert.Empty(loopback.Server.UnknownCommands);
        Assert.Empty(loopback.Server.ProtocolErrors);
    }

    [Fact]
    public async Task A_document_upserted_without_expiry_into_a_collection_with_a_max_ttl_gets_it_by_the_servers_clock()
    {
        var clock = new FakeTimeProvider(Start);
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options(clock));
        IScope inventory = await loopback.Bucket.ScopeAsync("inventory");

        await inventory.Collection("airlines").UpsertAsync("a::1", new { v = 1 });
        await inventory.Collection("airlines").UpsertAsync("a::2", new { v = 2 }, options => options.Expiry(TimeSpan.FromMinutes(5)));
        await inventory.Collection("hotels").UpsertAsync("h::1", new { v = 1 });

        uint now = (uint)Start.ToUnixTimeSeconds();
        Assert.True(loopback.Server.TryGetDocument("inventory", "airlines", "a::1", out KvDocument? capped));
        Assert.Equal(now + 3600, capped.Expiry);
        Assert.True(loopback.Server.TryGetDocument("inventory", "airlines", "a::2", out KvDocument? shorter));
        Assert.Equal(now + 300, shorter.Expiry);
        Assert.True(loopback.Server.TryGetDocument("inventory", "hotels", "h::1", out KvDocument? none));
        Assert.Equal(0u, none.Expiry);
    }

    [Fact]
    public async Task A_range_scan_of_a_collection_returns_its_documents_only()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        for (int i = 0; i < 50; i++)
        {
            loopback.Server.PutDocument("inventory", "hotels", $"h::{i:D2}", Encoding.UTF8.GetBytes($$"""{"n":{{i}}}"""), 0x02000006, dataType: 1);
            loopback.Server.PutDocument($"d::{i:D2}", "{}"u8.ToArray(), 0x02000006, dataType: 1);
        }

        ICouchbaseCollection hotels = (await loopback.Bucket.ScopeAsync("inventory")).Collection("hotels");
        var ids = new List<string>();
        await foreach (IScanResult result in hotels.ScanAsync(new RangeScan(), new ScanOptions().IdsOnly(true)))
        {
            ids.Add(result.Id);
        }

        Assert.Equal(loopback.Server.KeysIn("inventory", "hotels"), ids.Order(StringComparer.Ordinal));
        Assert.Equal(50, ids.Count);
        Assert.Equal(0, loopback.Server.OpenRangeScans);
    }

    [Fact]
    public async Task A_collection_the_manifest_lacks_is_retried_by_the_sdk_until_its_kv_timeout_and_nothing_is_written()
    {
        // SDK 3.9.5 opens a collection without asking the server; its first operation looks the id up, and the lookup is
        // retried on 0x88 until the cluster's KvTimeout (5 s here: the operation's own timeout does not bound it).
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        ICouchbaseCollection rooms = (await loopback.Bucket.ScopeAsync("inventory")).Collection("rooms");

        var error = await Assert.ThrowsAsync<global::Couchbase.Core.Exceptions.UnambiguousTimeoutException>(() => rooms.UpsertAsync("r::1", new { v = 1 }));

        output.WriteLine(error.Message);
        Assert.Contains("GetCidByName", error.Message, StringComparison.Ordinal);
        Assert.Contains(loopback.Server.Commands, c => c.Opcode == KvProtocol.Opcodes.GetCollectionId && c.Status == KvProtocol.Status.UnknownCollection);
        Assert.Equal(0, loopback.Server.CommandCount(KvProtocol.Opcodes.Set));
        Assert.Equal(0, loopback.Server.DocumentCount);
    }

    [Fact]
    public async Task Concurrent_gets_of_two_collections_each_get_their_own_document_whatever_order_the_replies_come_in()
    {
        // The SDK negotiates unordered execution, so replies to requests that reach the server together come last first;
        // how many do depends on timing (RepliesReordered is reported, not asserted), every result must match its key.
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        IScope inventory = await loopback.Bucket.ScopeAsync("inventory");
        ICouchbaseCollection hotels = inventory.Collection("hotels"), airlines = inventory.Collection("airlines");
        for (int i = 0; i < 200; i++)
        {
            loopback.Server.PutDocument("inventory", "hotels", $"k::{i}", Encoding.UTF8.GetBytes($$"""{"hotel":{{i}}}"""), 0x02000006, dataType: 1);
            loopback.Server.PutDocument("inventory", "airlines", $"k::{i}", Encoding.UTF8.GetBytes($$"""{"airline":{{i}}}"""), 0x02000006, dataType: 1);
        }

        string[] read = await Task.WhenAll(Enumerable.Range(0, 400).Select(async n =>
        {
            using IGetResult result = await (n % 2 == 0 ? hotels : airlines).GetAsync($"k::{n / 2}");
            return result.ContentAs<Dictionary<string, int>>()!.Single() is var (field, value) ? $"{field}:{value}" : "";
        }));

        Assert.Equal(Enumerable.Range(0, 400).Select(n => $"{(n % 2 == 0 ? "hotel" : "airline")}:{n / 2}"), read);
        output.WriteLine($"replies reordered by the server: {loopback.Server.RepliesReordered}");
    }

    private static string Body(CouchbaseLoopbackServer server, string scope, string collection, string key)
    {
        Assert.True(server.TryGetDocument(scope, collection, key, out KvDocument? document), $"{scope}.{collection} has no {key}");
        return Encoding.UTF8.GetString(document.Value.Span);
    }
}
