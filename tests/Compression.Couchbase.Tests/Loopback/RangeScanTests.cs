using System.Text;
using Compression.Testing.Couchbase;
using Couchbase.KeyValue;
using Couchbase.KeyValue.RangeScan;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>KV range scans (RANGE_SCAN_CREATE/CONTINUE/CANCEL) of the loopback server, through the real SDK's <c>ScanAsync</c>.</summary>
public sealed class RangeScanTests(ITestOutputHelper output)
{
    [Fact]
    public async Task A_scan_of_the_whole_bucket_returns_every_key_once_with_its_body_and_cas()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        var expected = new Dictionary<string, (string Body, ulong Cas)>();
        for (int i = 0; i < 700; i++)
        {
            string key = $"doc::{i:D4}";
            string body = $$"""{"n":{{i}},"pad":"{{new string('x', i % 50)}}"}""";
            ulong cas = loopback.Server.PutDocument(key, Encoding.UTF8.GetBytes(body), 0x02000006, dataType: 1);
            expected[key] = (body, cas);
        }

        var seen = new Dictionary<string, (string Body, ulong Cas)>();
        await foreach (IScanResult result in loopback.Collection.ScanAsync(new RangeScan()))
        {
            Assert.False(result.IdOnly);
            Assert.True(seen.TryAdd(result.Id, (result.ContentAsString(), result.Cas)), $"{result.Id} returned twice");
        }

        Assert.Equal(expected.OrderBy(p => p.Key), seen.OrderBy(p => p.Key));
        Assert.Equal(0, loopback.Server.OpenRangeScans);
        Assert.Empty(loopback.Server.UnknownCommands);
        Assert.True(loopback.Server.CommandCount(KvProtocol.Opcodes.RangeScanCreate) >= 1024);
    }

    [Fact]
    public async Task Ids_only_scans_and_ranges_with_exclusive_bounds_return_exactly_the_keys_in_range()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        string[] keys = [.. Enumerable.Range(0, 400).Select(i => $"k{i:D3}")];
        foreach (string key in keys) loopback.Server.PutDocument(key, "{}"u8.ToArray(), 0x02000006, dataType: 1);

        var all = new List<string>();
        await foreach (IScanResult result in loopback.Collection.ScanAsync(new RangeScan(), new ScanOptions().IdsOnly(true).ItemLimit(7)))
        {
            Assert.True(result.IdOnly);
            all.Add(result.Id);
        }
        Assert.Equal(keys, all.Order(StringComparer.Ordinal));

        var range = new List<string>();
        await foreach (IScanResult result in loopback.Collection.ScanAsync(new RangeScan(ScanTerm.Exclusive("k100"), ScanTerm.Inclusive("k199")), new ScanOptions().IdsOnly(true)))
        {
            range.Add(result.Id);
        }
        Assert.Equal(keys.Where(k => string.CompareOrdinal(k, "k100") > 0 && string.CompareOrdinal(k, "k199") <= 0), range.Order(StringComparer.Ordinal));
        Assert.Equal(0, loopback.Server.OpenRangeScans);
    }

    [Fact]
    public async Task A_scan_of_an_empty_bucket_returns_nothing_and_large_bodies_come_in_several_responses()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        var none = new List<IScanResult>();
        await foreach (IScanResult result in loopback.Collection.ScanAsync(new RangeScan())) none.Add(result);
        Assert.Empty(none);

        // Bodies of 20 KB: more than one response value's worth each, so one continue answers in several responses.
        string big = $$"""{"pad":"{{new string('y', 20_000)}}"}""";
        for (int i = 0; i < 40; i++) loopback.Server.PutDocument($"big::{i}", Encoding.UTF8.GetBytes(big), 0x02000006, dataType: 1);
        int count = 0;
        await foreach (IScanResult result in loopback.Collection.ScanAsync(new RangeScan(), new ScanOptions().ByteLimit(0).ItemLimit(0)))
        {
            Assert.Equal(big, result.ContentAsString());
            count++;
        }
        Assert.Equal(40, count);
    }
}
