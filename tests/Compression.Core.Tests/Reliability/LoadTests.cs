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
        // The drifting namespace writes movie-like documents until its first version is published, then sensor readings.
        // The writers go on past their share until every zstd namespace has published and the drift has been retrained
        // into a second version (then one more second, so that every client adopts), so a chain of versions is raced
        // for and adopted under load. Bounded: past the deadline the assertions below fail.
        using var shifted = new CancellationTokenSource();
        using var drifted = new CancellationTokenSource();
        var deadline = TimeSpan.FromSeconds(90);
        try
        {
            var monitor = Task.Run(async () =>
            {
                var store = new FileDictionaryStore(_directory);
                while (stopwatch.Elapsed < deadline)
                {
                    var versions = new Dictionary<string, int>();
                    foreach (string ns in (string[])["app.movies", "app.sensors", "app.drifting"])
                    {
                        versions[ns] = 0;
                        await foreach (var _ in store.ListAsync(ns)) versions[ns]++;
                    }
                    if (versions["app.drifting"] >= 1 && !shifted.IsCancellationRequested) await shifted.CancelAsync();
                    if (versions["app.drifting"] >= 2 && versions["app.movies"] >= 1 && versions["app.sensors"] >= 1)
                    {
                        await Task.Delay(TimeSpan.FromSeconds(1)); // a few polls: every client adopts and writes with them
                        break;
                    }
                    await Task.Delay(20);
                }
                await drifted.CancelAsync();
            });
            // Writers on their own threads (clients are processes): the engines' background training must not wait for
            // the thread pool. Past their share they go on at a gentler pace, leaving the CPU to that training.
            var writers = engines.SelectMany((engine, c) => Enumerable.Range(0, WritersPerClient).Select(w => Task.Factory.StartNew(() =>
            {
                var random = new Random(1000 * c + w);
                for (int i = 0; i < perWriter || (!drifted.IsCancellationRequested && stopwatch.Elapsed < deadline); i++)
                {
                    string ns = Slots[i % Slots.Length];
                    byte[] document = ns switch
                    {
                        "app.sensors" => TestDocuments.Sensor(random),
                        "app.drifting" when shifted.IsCancellationRequested => TestDocuments.Sensor(random),
                        _ => TestDocuments.Movie(random),
                    };
                    string key = $"{c}-{w}-{i}";
                    Assert.True(database.TryAdd(key, (ns, document, engine.Compress(ns, document))));
                    if (i >= perWriter && i % 8 == 0) Thread.Sleep(1);
                }
            }, TaskCreationOptions.LongRunning))).ToArray();
            await Task.WhenAll(writers);
            await monitor;
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
            Assert.Equal(document, cold.Decompress(ns, envelope));
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
            Assert.Contains(byDictionary.Keys, k => k.StartsWith(ns + " Zstd dictionary", StringComparison.Ordinal));
        }
        Assert.All(["app.lz4", "app.brotli", "app.snappy"], ns => Assert.Equal(0, published[ns]));
        Assert.True(published["app.drifting"] >= 2, $"the drifting namespace retrained within {deadline}: {published["app.drifting"]} version(s)");
        Assert.True(byDictionary.Keys.Count(k => k.StartsWith("app.drifting Zstd dictionary", StringComparison.Ordinal)) >= 2,
            "documents of the drifting namespace were written with at least two dictionary versions");
    }

    private static CompressionEngineOptions Options()
    {
        CompressionEngineOptions options = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromMilliseconds(250));
        options.Namespaces["app.lz4"] = new NamespaceOptions { Compressor = new DocumentCompressorOptions { Codec = CompressionCodec.Lz4 } };
        options.Namespaces["app.brotli"] = new NamespaceOptions { Compressor = new DocumentCompressorOptions { Codec = CompressionCodec.Brotli, Level = 4 } };
        options.Namespaces["app.snappy"] = new NamespaceOptions { Compressor = new DocumentCompressorOptions { Codec = CompressionCodec.Snappy } };
        return options;
    }

    public void Dispose()
    {
        if (Directory.Exists(_directory)) Directory.Delete(_directory, recursive: true);
    }
}
