using System.Collections.Concurrent;
using System.Diagnostics;
using Compression.Core.Tests.Dictionaries;
using Compression.Dictionaries;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Reliability;

/// <summary>
/// Load: eight clients (engines, two writer threads each) share one on-disk dictionary store, the way processes share a
/// database, and write documents into six namespaces (zstd with dictionaries, one whose document shape changes once its
/// first dictionary is out, and lz4, snappy and brotli) while dictionaries are trained, raced for and published. Afterwards
/// a client with a cold cache, on a store opened afresh, reads every document back in parallel, byte for byte. At least
/// 200,000 documents (more while the writers wait for the drift to be retrained); a longer run:
/// <c>COMPRESSION_LOAD_DOCUMENTS=1000000 dotnet test tests/Compression.Core.Tests -c Release --filter FullyQualifiedName~LoadTests
/// --logger "console;verbosity=detailed"</c> (docs/reliability.md).
/// </summary>
public sealed class LoadTests(ITestOutputHelper output) : IDisposable
{
    private const int Clients = 8;
    private const int WritersPerClient = 2;
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "compression-load-" + Guid.NewGuid().ToString("N"));

    private static readonly string[] Namespaces = ["app.movies", "app.sensors", "app.drifting", "app.lz4", "app.brotli", "app.snappy"];

    // Write order: the drifting namespace takes three slots of eight, so each client sees enough of its new shape.
    private static readonly string[] Slots = ["app.movies", "app.drifting", "app.sensors", "app.drifting", "app.lz4", "app.drifting", "app.brotli", "app.snappy"];

    [Fact]
    public async Task EightClients_WritingWhileDictionariesArePublished_ColdClientReadsEveryDocument()
    {
        int total = int.TryParse(Environment.GetEnvironmentVariable("COMPRESSION_LOAD_DOCUMENTS"), out int n) && n > 0 ? n : 200_000;
        int perWriter = total / (Clients * WritersPerClient);
        var database = new ConcurrentDictionary<string, (string Namespace, byte[] Document, byte[] Stored)>();
        var stopwatch = Stopwatch.StartNew();

        var engines = Enumerable.Range(0, Clients).Select(_ => new CompressionEngine(new FileDictionaryStore(_directory), Options())).ToArray();
        // The drifting namespace writes movie-like documents until its client has adopted a first version, then sensor
        // readings. Past their share, writers go on until their client has adopted a dictionary in every zstd namespace
        // and a second version of the drifting one, then write 300 more with them; every 500 writes they let the background training catch up and pick up
        // the others' versions (what a poll does), so a chain of versions is raced for and adopted under load. Bounded by
        // a number of documents, not by time: past it the assertions below fail.
        int cap = perWriter * 40;
        try
        {
            // Writers on their own threads (clients are processes): the engines' background training must not wait for
            // the thread pool.
            var writers = engines.SelectMany((engine, c) => Enumerable.Range(0, WritersPerClient).Select(w => Task.Factory.StartNew(() =>
            {
                var random = new Random(1000 * c + w);
                var drifting = engine.GetNamespace("app.drifting");
                bool Done() => drifting.CurrentDictionary is { Version: >= 2 }
                    && engine.GetNamespace("app.movies").CurrentDictionary is not null && engine.GetNamespace("app.sensors").CurrentDictionary is not null;
                // Once done, 300 more writes: the versions just adopted are then used, not only published.
                int extra = 300;
                for (int i = 0; i < perWriter || (i < cap && (!Done() || extra-- > 0)); i++)
                {
                    string ns = Slots[i % Slots.Length];
                    byte[] document = ns switch
                    {
                        "app.sensors" => TestDocuments.Sensor(random),
                        "app.drifting" when drifting.CurrentDictionary is not null => TestDocuments.Sensor(random),
                        _ => TestDocuments.Movie(random),
                    };
                    string key = $"{c}-{w}-{i}";
                    Assert.True(database.TryAdd(key, (ns, document, engine.GetNamespace(ns).Compress(document))));
                    if (i >= perWriter && i % 500 == 0)
                    {
                        engine.WhenIdleAsync().GetAwaiter().GetResult();
                        engine.RefreshAsync().GetAwaiter().GetResult();
                    }
                }
            }, TaskCreationOptions.LongRunning))).ToArray();
            await Task.WhenAll(writers);
            foreach (var engine in engines) await engine.WhenIdleAsync();
        }
        finally
        {
            foreach (var engine in engines) await engine.DisposeAsync();
        }
        TimeSpan writing = stopwatch.Elapsed;

        // What was published: versions 1..n per namespace without gaps (insert-only, raced by eight clients).
        var verifyStore = new FileDictionaryStore(_directory);
        var published = new Dictionary<string, int>();
        foreach (string ns in Namespaces)
        {
            var versions = new List<int>();
            await foreach (var record in verifyStore.ListAsync(ns)) versions.Add(record.Version);
            Assert.Equal(Enumerable.Range(1, versions.Count), versions);
            published[ns] = versions.Count;
        }

        // A new client, cold cache, store opened afresh: every document back, byte for byte, from eight threads.
        stopwatch.Restart();
        await using var cold = new CompressionEngine(new FileDictionaryStore(_directory), Options());
        var byDictionary = new ConcurrentDictionary<string, int>();
        long raw = 0, stored = 0;
        Parallel.ForEach(database, new ParallelOptions { MaxDegreeOfParallelism = Clients }, entry =>
        {
            var (ns, document, envelope) = entry.Value;
            Assert.Equal(document, cold.GetNamespace(ns).Decompress(envelope));
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header));
            byDictionary.AddOrUpdate($"{ns} {header.Codec}{(header.DictionaryId is uint id ? " dictionary " + id : "")}", 1, (_, count) => count + 1);
            Interlocked.Add(ref raw, document.Length);
            Interlocked.Add(ref stored, envelope.Length);
        });
        TimeSpan reading = stopwatch.Elapsed;

        Assert.InRange(database.Count, perWriter * Clients * WritersPerClient, int.MaxValue);
        output.WriteLine($"{database.Count:N0} documents by {Clients} clients x {WritersPerClient} threads in {writing.TotalSeconds:F1} s; " +
                         $"read back by a cold client in {reading.TotalSeconds:F1} s: all equal");
        output.WriteLine($"raw {raw:N0} B, stored {stored:N0} B, ratio {(double)raw / stored:F2}");
        output.WriteLine("versions published: " + string.Join(", ", published.Select(p => $"{p.Key} {p.Value}")));
        foreach (var (key, count) in byDictionary.OrderBy(p => p.Key, StringComparer.Ordinal))
            output.WriteLine($"  {key}: {count:N0}");
        // Training runs in the background while the writers go at full speed, so how many documents miss a dictionary
        // depends on the machine; what must hold: every zstd namespace published, and its documents used what was published.
        foreach (string ns in (string[])["app.movies", "app.sensors", "app.drifting"])
        {
            Assert.True(published[ns] >= 1, $"{ns} trained and published a dictionary");
            Assert.Contains(byDictionary.Keys, k => k.StartsWith(ns + " ", StringComparison.Ordinal) && (k.Contains("Zstd dictionary", StringComparison.Ordinal) || k.Contains("ZstdFoldedChecksum dictionary", StringComparison.Ordinal)));
        }
        Assert.All(["app.lz4", "app.brotli", "app.snappy"], ns => Assert.Equal(0, published[ns]));
        Assert.True(published["app.drifting"] >= 2, $"the drifting namespace retrained within {cap:N0} documents a writer: {published["app.drifting"]} version(s)");
        // Zstd or PackedZstd (the shape table is published with the dictionary where it measures smaller): counted by dictionary id.
        Assert.True(byDictionary.Keys.Where(k => k.StartsWith("app.drifting ", StringComparison.Ordinal) && (k.Contains("Zstd dictionary", StringComparison.Ordinal) || k.Contains("ZstdFoldedChecksum dictionary", StringComparison.Ordinal)))
                .Select(k => k[(k.LastIndexOf(' ') + 1)..]).Distinct().Count() >= 2,
            "documents of the drifting namespace were written with at least two dictionary versions");
    }

    private static CompressionEngineOptions Options()
    {
        CompressionEngineOptions options = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromMilliseconds(250));
        options.Namespaces["app.lz4"] = new NamespaceOptions { Codec = CompressionCodec.Lz4 };
        options.Namespaces["app.brotli"] = new NamespaceOptions { Codec = CompressionCodec.Brotli, Level = 4 };
        options.Namespaces["app.snappy"] = new NamespaceOptions { Codec = CompressionCodec.Snappy };
        return options;
    }

    public void Dispose()
    {
        if (Directory.Exists(_directory)) Directory.Delete(_directory, recursive: true);
    }
}
