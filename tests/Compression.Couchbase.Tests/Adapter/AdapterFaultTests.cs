using System.Collections.Concurrent;
using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Core.Exceptions;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Faults on demand, which only the loopback server can give (so these run against it even when a real cluster is
/// configured): connections dropped in the middle of a compressed load, and the dictionary store unreachable.
/// </summary>
public sealed class AdapterFaultTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Connections_dropped_mid_load_lose_nothing_every_acknowledged_compressed_write_is_read_by_a_cold_client()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(data.Collection), Core.Tests.Dictionaries.CompressionEngineOptionsBuilder.Fast(),
            timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        const int writers = 6, perWriter = 150, dropAfter = 250;
        var acknowledged = new ConcurrentDictionary<string, JObject>();
        var failures = new ConcurrentQueue<Exception>();
        int completed = 0;
        long acceptedBefore = data.Server.ConnectionsAccepted;

        await Task.WhenAll(Enumerable.Range(0, writers).Select(w => Task.Run(async () =>
        {
            var random = new Random(w);
            for (int i = 0; i < perWriter; i++)
            {
                JObject doc = Docs.Movie(random);
                try
                {
                    await compressed.UpsertAsync($"load::{w}::{i}", doc);
                    acknowledged[$"load::{w}::{i}"] = doc;
                }
                catch (CouchbaseException e)
                {
                    failures.Enqueue(e);
                }
                if (Interlocked.Increment(ref completed) == dropAfter) data.Server.DropAllConnections();
            }
        })));
        await engine.WhenIdleAsync();

        output.WriteLine($"{acknowledged.Count} acknowledged, {failures.Count} failed ({string.Join(", ", failures.Select(f => f.GetType().Name).Distinct())}); " +
            $"connections {acceptedBefore} -> {data.Server.ConnectionsAccepted}; dictionary {engine.GetNamespace("default._default._default").CurrentDictionary?.Version}");
        Assert.True(data.Server.ConnectionsAccepted > acceptedBefore, "the SDK did not reconnect");
        Assert.True(failures.Count <= writers, $"{failures.Count} writes failed");
        Assert.All(failures, e => Assert.True(e is RequestCanceledException or AmbiguousTimeoutException, e.ToString()));

        // A cold client (its own connection, engine and cache) reads every acknowledged document.
        await using LoopbackClusterClient cold = await LoopbackClusterClient.ConnectAsync(data.Server, output);
        await using var coldEngine = new CompressionEngine(new CouchbaseDictionaryStore(cold.Collection), Core.Tests.Dictionaries.CompressionEngineOptionsBuilder.Fast(),
            timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        ICouchbaseCollection coldCompressed = cold.Collection.WithCompression(coldEngine);
        foreach ((string key, JObject doc) in acknowledged)
        {
            using IGetResult read = await coldCompressed.GetAsync(key);
            Docs.Equal(doc, read.ContentAs<JObject>());
        }
    }

    [Fact]
    public async Task With_the_store_unreachable_writes_go_on_without_a_dictionary_and_it_is_published_when_the_store_comes_back()
    {
        // Data and dictionaries on two servers, so that the store can stall while the data keeps flowing.
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using LoopbackCluster storeServer = await LoopbackCluster.StartAsync(output, configure: o => o.KvTimeout = TimeSpan.FromMilliseconds(300));
        var options = Core.Tests.Dictionaries.CompressionEngineOptionsBuilder.Fast();
        await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(storeServer.Collection), options,
            timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        CompressionNamespace ns = compressed.GetCompressingTranscoder()!.Namespace;

        storeServer.Server.StallReplies = true; // requests are read, replies never come: timeouts
        var random = new Random(5);
        var docs = Enumerable.Range(0, 300).ToDictionary(i => $"offline::{i}", _ => Docs.Movie(random));
        foreach ((string key, JObject doc) in docs) await compressed.UpsertAsync(key, doc);
        await engine.WhenIdleAsync();
        TrainingResult offline = await ns.TrainAsync();
        output.WriteLine($"store stalled: training {offline.Outcome}; dictionary {ns.CurrentDictionary?.Version}");

        Assert.Equal(TrainingOutcome.PublishFailed, offline.Outcome);
        Assert.Null(ns.CurrentDictionary);
        foreach ((string key, JObject doc) in docs)
        {
            using IGetResult read = await compressed.GetAsync(key);
            Docs.Equal(doc, read.ContentAs<JObject>());
            Assert.True(data.Server.TryGetDocument(key, out KvDocument? stored));
            Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out EnvelopeHeader header));
            Assert.Null(header.DictionaryId);
        }

        storeServer.Server.StallReplies = false;
        TrainingResult online = await ns.TrainAsync();
        output.WriteLine($"store back: training {online.Outcome}; dictionary {ns.CurrentDictionary?.Version} #{ns.CurrentDictionary?.Id}");
        Assert.True(online.Outcome is TrainingOutcome.Adopted or TrainingOutcome.AdoptedFromOtherClient, online.Outcome.ToString());
        DictionaryRecord published = Assert.IsType<DictionaryRecord>(ns.CurrentDictionary);
        Assert.Equal(1, published.Version);
        await compressed.UpsertAsync("online", docs["offline::0"]);
        Assert.True(data.Server.TryGetDocument("online", out KvDocument? after));
        Assert.True(DocumentEnvelope.TryReadHeader(after.Value.Span, out EnvelopeHeader withDictionary));
        Assert.Equal(published.Id, withDictionary.DictionaryId);

        // Another client finds it in the store and reads everything.
        await using LoopbackClusterClient other = await LoopbackClusterClient.ConnectAsync(storeServer.Server, output);
        Assert.Equal(published.Id, (await new CouchbaseDictionaryStore(other.Collection).GetCurrentAsync(ns.Name))!.Id);
    }
}

/// <summary>One more SDK connection to a loopback server that a test already runs.</summary>
internal sealed class LoopbackClusterClient : IAsyncDisposable
{
    private LoopbackClusterClient(ICluster cluster, ICouchbaseCollection collection)
    {
        Cluster = cluster;
        Collection = collection;
    }

    public ICluster Cluster { get; }

    public ICouchbaseCollection Collection { get; }

    public static async Task<LoopbackClusterClient> ConnectAsync(CouchbaseLoopbackServer server, ITestOutputHelper output)
    {
        ICluster cluster = await global::Couchbase.Cluster.ConnectAsync(server.ConnectionString, LoopbackCluster.Options(server, new TestLog(output)));
        IBucket bucket = await cluster.BucketAsync(server.BucketName);
        return new LoopbackClusterClient(cluster, bucket.DefaultCollection());
    }

    public ValueTask DisposeAsync() => Cluster.DisposeAsync();
}
