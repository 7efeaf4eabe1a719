using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

public sealed class CompressionEngineTests
{
    private const string Ns = "db.movies";

    [Fact]
    public async Task Compress_AfterEnoughSamples_TrainsPublishesAndAdoptsADictionary()
    {
        var store = new InMemoryDictionaryStore();
        await using var engine = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast());
        var random = new Random(1);
        var documents = Enumerable.Range(0, 600).Select(_ => TestDocuments.Movie(random)).ToList();
        var envelopes = new List<byte[]>();
        foreach (var d in documents) envelopes.Add(engine.Compress(Ns, d));
        await engine.WhenIdleAsync();

        var current = engine.GetCurrentDictionary(Ns);
        Assert.NotNull(current);
        Assert.InRange(current.Version, 1, 4); // the first dictionary, then retrained as the samples doubled
        Assert.Equal(current.Version, store.Count);
        Assert.True(current.Ratio > 2.0, $"held-out ratio {current.Ratio}");

        // Documents written after adoption are smaller than the bootstrap ones, and everything decodes.
        var after = Enumerable.Range(0, 200).Select(_ => TestDocuments.Movie(random)).ToList();
        long rawAfter = after.Sum(d => (long)d.Length), outAfter = 0;
        foreach (var d in after)
        {
            var e = engine.Compress(Ns, d);
            outAfter += e.Length;
            Assert.True(DocumentEnvelope.TryReadHeader(e, out var h));
            Assert.Equal(current.Id, h.DictionaryId);
            Assert.Equal(d, engine.Decompress(Ns, e));
        }
        Assert.True((double)rawAfter / outAfter > 2.0, $"ratio after adoption {(double)rawAfter / outAfter:F2}");
        for (int i = 0; i < documents.Count; i++) Assert.Equal(documents[i], engine.Decompress(Ns, envelopes[i]));
    }

    [Fact]
    public async Task Compress_BurstBeforeTheStoreAnswered_StillTrainsOnceItHas()
    {
        var store = new ControllableStore(new InMemoryDictionaryStore()) { CurrentDelay = TimeSpan.FromMilliseconds(300) };
        await using var engine = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1)));
        var random = new Random(21);
        for (int i = 0; i < 300; i++) engine.Compress(Ns, TestDocuments.Movie(random)); // all before the first look-up returns
        Assert.Null(engine.GetCurrentDictionary(Ns));
        await engine.WhenIdleAsync();
        Assert.NotNull(engine.GetCurrentDictionary(Ns));
    }

    [Fact]
    public async Task ThreeClients_ConcurrentWritersSharingAStore_ColdClientDecodesEverything()
    {
        var store = new InMemoryDictionaryStore();
        var written = new ConcurrentBag<(string Ns, byte[] Document, byte[] Envelope)>();
        string[] namespaces = ["db.movies", "db.sensors"];
        var engines = Enumerable.Range(0, 3).Select(_ => new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(TimeSpan.FromMilliseconds(50)))).ToArray();
        try
        {
            // Each client writes from two threads into both namespaces; all of them train and race to publish.
            // Writers go on until every client uses a dictionary in both namespaces (training runs in the background, and
            // on a loaded machine it may finish after the first 1,500 writes), then write 200 more each.
            var deadline = DateTime.UtcNow.AddSeconds(60);
            bool AllAdopted() => engines.All(e => namespaces.All(ns => e.GetCurrentDictionary(ns) is not null));
            var writers = engines.SelectMany((engine, e) => Enumerable.Range(0, 2).Select(t => Task.Run(async () =>
            {
                var random = new Random(100 * e + t);
                int extra = 200;
                for (int i = 0; i < 1500 || ((!AllAdopted() && DateTime.UtcNow < deadline) || extra-- > 0); i++)
                {
                    string ns = namespaces[i % 2];
                    byte[] doc = ns == "db.movies" ? TestDocuments.Movie(random) : TestDocuments.Sensor(random);
                    written.Add((ns, doc, engine.Compress(ns, doc)));
                    if (i % 300 == 0) await Task.Yield();
                    if (i >= 1500 && !AllAdopted()) await Task.Delay(1);
                }
            }))).ToArray();
            await Task.WhenAll(writers);
            foreach (var engine in engines) await engine.WhenIdleAsync();
        }
        finally
        {
            foreach (var engine in engines) await engine.DisposeAsync();
        }

        // Publication is insert-only: versions of a namespace are 1..n without gaps or duplicates.
        foreach (var ns in namespaces)
        {
            var versions = new List<int>();
            await foreach (var r in store.ListAsync(ns)) versions.Add(r.Version);
            Assert.NotEmpty(versions);
            Assert.Equal(Enumerable.Range(1, versions.Count), versions);
        }
        var usedIds = written.Select(w => DocumentEnvelope.TryReadHeader(w.Envelope, out var h) ? h.DictionaryId : null).Where(id => id is not null).Distinct().Count();
        Assert.True(usedIds >= 2, "documents were compressed with dictionaries");

        // A fresh client with a cold cache reads every document, byte for byte.
        await using var cold = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast());
        Assert.True(written.Count >= 9000);
        foreach (var (ns, document, envelope) in written)
        {
            Assert.Equal(document, cold.Decompress(ns, envelope));
        }
    }

    [Fact]
    public async Task Compress_WhenDocumentShapeDrifts_TrainsAndAdoptsANewVersion_AndOldDocumentsStayReadable()
    {
        var store = new InMemoryDictionaryStore();
        var options = CompressionEngineOptionsBuilder.Fast();
        await using var engine = new CompressionEngine(store, options) { InlineTraining = true };
        await engine.InitializeAsync(Ns);
        var random = new Random(7);
        var written = new List<(byte[] Document, byte[] Envelope)>();
        for (int i = 0; i < 800; i++)
        {
            var d = TestDocuments.Movie(random);
            written.Add((d, engine.Compress(Ns, d)));
        }
        var v1 = engine.GetCurrentDictionary(Ns);
        Assert.NotNull(v1);

        for (int i = 0; i < 4000; i++)
        {
            var d = TestDocuments.Sensor(random);
            written.Add((d, engine.Compress(Ns, d)));
        }
        var latest = engine.GetCurrentDictionary(Ns);
        Assert.NotNull(latest);
        Assert.True(latest.Version > v1.Version, $"still on version {latest.Version} after the drift");

        // Sensor documents now compress better than with the movie dictionary.
        var sensors = Enumerable.Range(0, 200).Select(_ => TestDocuments.Sensor(random)).ToList();
        var compressor = new DocumentCompressor();
        var v1Dictionary = ZstdDictionary.Create(v1.Id, v1.Content.Span);
        long withV1 = sensors.Sum(s => (long)compressor.Compress(s, v1Dictionary).Length);
        long withLatest = sensors.Sum(s => (long)engine.Compress(Ns, s).Length);
        Assert.True(withLatest < withV1 * 0.9, $"latest {withLatest} B against v1 {withV1} B");

        // Documents written under every version still decode, in this engine and in a cold one.
        var versionsUsed = written.Select(w => DocumentEnvelope.TryReadHeader(w.Envelope, out var h) ? h.DictionaryId : null).Distinct().ToList();
        Assert.True(versionsUsed.Count >= 3, "bootstrap, v1 and a later version were all used");
        await using var cold = new CompressionEngine(store, options);
        foreach (var (document, envelope) in written)
        {
            Assert.Equal(document, engine.Decompress(Ns, envelope));
            Assert.Equal(document, cold.Decompress(Ns, envelope));
        }
    }

    [Fact]
    public async Task Compress_WhileTrainingIsBlocked_WritesStillComplete()
    {
        var store = new InMemoryDictionaryStore();
        using var release = new ManualResetEventSlim(false);
        using var trainingStarted = new ManualResetEventSlim(false);
        await using var engine = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast());
        engine.TrainingStarting = _ =>
        {
            trainingStarted.Set();
            release.Wait(TimeSpan.FromMinutes(1)); // a training step that blocks
        };
        await engine.InitializeAsync(Ns);
        var random = new Random(3);
        for (int i = 0; i < 300 && !trainingStarted.IsSet; i++) engine.Compress(Ns, TestDocuments.Movie(random));
        Assert.True(trainingStarted.Wait(TimeSpan.FromSeconds(30)), "training started");

        // Training is stuck; 5,000 more writes must complete anyway, on this thread, without waiting for it.
        var writes = Task.Run(() =>
        {
            for (int i = 0; i < 5000; i++)
            {
                var d = TestDocuments.Movie(random);
                Assert.Equal(d, engine.Decompress(Ns, engine.Compress(Ns, d)));
            }
        });
        Assert.True(await Task.WhenAny(writes, Task.Delay(TimeSpan.FromSeconds(60))) == writes, "writes completed while training was blocked");
        await writes;
        Assert.Null(engine.GetCurrentDictionary(Ns)); // training really was still blocked
        release.Set();
        await engine.WhenIdleAsync();
        Assert.NotNull(engine.GetCurrentDictionary(Ns));
    }

    [Fact]
    public async Task Compress_StreamingManyMegabytes_KeepsSamplesWithinTheConfiguredCaps()
    {
        var options = CompressionEngineOptionsBuilder.Fast();
        var d = options.Defaults.Dictionary;
        d.MaxSampleCount = 300;
        d.MaxSampleBytes = 64 * 1024;
        d.MaxSampleDocumentSize = 2048;
        await using var engine = new CompressionEngine(new InMemoryDictionaryStore(), options);
        var random = new Random(11);
        long streamed = 0;
        var big = new byte[8192];
        long maxObservedBytes = 0;
        int maxObservedCount = 0;
        for (int i = 0; streamed < 20_000_000; i++)
        {
            byte[] doc = i % 50 == 0 ? big : (i % 2 == 0 ? TestDocuments.Movie(random) : TestDocuments.Sensor(random));
            engine.Compress(Ns, doc);
            streamed += doc.Length;
            if (i % 1000 == 0)
            {
                maxObservedBytes = Math.Max(maxObservedBytes, engine.GetSampleBytes(Ns));
                maxObservedCount = Math.Max(maxObservedCount, engine.GetSampleCount(Ns));
            }
        }
        await engine.WhenIdleAsync();
        Assert.True(streamed >= 20_000_000);
        Assert.InRange(maxObservedBytes, 1, d.MaxSampleBytes);
        Assert.InRange(maxObservedCount, 1, d.MaxSampleCount);
        Assert.InRange(engine.GetSampleBytes(Ns), 1, d.MaxSampleBytes);
        Assert.InRange(engine.CachedDictionaryCount, 0, options.MaxCachedDictionaries);
    }

    [Fact]
    public async Task Decompress_UnknownDictionary_ThrowsNamingIdAndNamespace()
    {
        var writerStore = new InMemoryDictionaryStore();
        await using var writer = new CompressionEngine(writerStore, CompressionEngineOptionsBuilder.Fast());
        var random = new Random(5);
        var r = await TrainOnAsync(writer, random);
        var envelope = writer.Compress(Ns, TestDocuments.Movie(random));

        await using var reader = new CompressionEngine(new InMemoryDictionaryStore(), CompressionEngineOptionsBuilder.Fast());
        var ex = Assert.Throws<DictionaryNotFoundException>(() => reader.Decompress(Ns, envelope));
        Assert.Equal(r.Id, ex.DictionaryId);
        Assert.Equal(Ns, ex.Namespace);
        Assert.Contains(r.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), ex.Message);
        Assert.Contains(Ns, ex.Message);
        await Assert.ThrowsAsync<DictionaryNotFoundException>(async () => await reader.DecompressAsync(Ns, envelope));
    }

    [Fact]
    public async Task Decompress_AsyncOnlyStore_NeedsEnsureDictionary_AndFetchesOnceForParallelReaders()
    {
        var shared = new InMemoryDictionaryStore();
        await using var writer = new CompressionEngine(shared, CompressionEngineOptionsBuilder.Fast());
        var random = new Random(9);
        await TrainOnAsync(writer, random);
        var doc = TestDocuments.Movie(random);
        var envelope = writer.Compress(Ns, doc);

        var store = new ControllableStore(shared) { GetDelay = TimeSpan.FromMilliseconds(100) };
        await using var reader = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1)));
        var ex = Assert.Throws<DictionaryNotFoundException>(() => reader.Decompress("db.other", envelope));
        Assert.Contains("EnsureDictionaryAsync", ex.Message);

        await Task.WhenAll(Enumerable.Range(0, 16).Select(_ => reader.EnsureDictionaryAsync("db.other", envelope).AsTask()));
        Assert.Equal(1, store.GetCalls); // single-flight
        Assert.Equal(doc, reader.Decompress("db.other", envelope));
    }

    [Fact]
    public async Task Decompress_StoreUnreachable_RetriesThenFailsClearly_AndCachesNothingWrong()
    {
        var shared = new InMemoryDictionaryStore();
        await using var writer = new CompressionEngine(shared, CompressionEngineOptionsBuilder.Fast());
        var random = new Random(13);
        await TrainOnAsync(writer, random);
        var doc = TestDocuments.Movie(random);
        var envelope = writer.Compress(Ns, doc);

        var store = new ControllableStore(shared) { FailGet = true };
        var options = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1));
        options.FetchAttempts = 3;
        await using var reader = new CompressionEngine(store, options);
        var ex = await Assert.ThrowsAsync<DictionaryNotFoundException>(async () => await reader.DecompressAsync("db.x", envelope));
        Assert.Contains("3 attempts", ex.Message);
        Assert.IsType<IOException>(ex.InnerException);
        Assert.Equal(3, store.GetCalls);

        store.FailGet = false;
        Assert.Equal(doc, await reader.DecompressAsync("db.x", envelope));
    }

    [Fact]
    public async Task Training_WhenPublicationFails_WritesContinueWithoutTheCandidate_AndPublicationIsRetried()
    {
        var store = new ControllableStore(new InMemoryDictionaryStore()) { FailPublish = true };
        await using var engine = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast());
        var random = new Random(17);
        for (int i = 0; i < 400; i++) engine.Compress(Ns, TestDocuments.Movie(random));
        await engine.WhenIdleAsync(); // the write path started a training run; its publication failed
        Assert.True(store.PublishCalls >= 1);
        var failed = await engine.TrainAsync(Ns);
        Assert.Equal(TrainingOutcome.PublishFailed, failed.Outcome);
        Assert.Null(engine.GetCurrentDictionary(Ns)); // an unpublished dictionary is never used: nobody else could read it

        var envelope = engine.Compress(Ns, TestDocuments.Movie(random));
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Null(header.DictionaryId);

        store.FailPublish = false;
        int before = store.PublishCalls;
        for (int i = 0; i < 10; i++) engine.Compress(Ns, TestDocuments.Movie(random)); // the next write schedules the retry
        await engine.WhenIdleAsync();
        Assert.True(store.PublishCalls > before);
        var adopted = engine.GetCurrentDictionary(Ns);
        Assert.NotNull(adopted);
        Assert.Equal(1, store.Inner.Count);
    }

    [Fact]
    public async Task Decompress_DictionaryFromTheStoreIsCorruptOrTooLarge_FailsClearly()
    {
        var good = new InMemoryDictionaryStore();
        await using var writer = new CompressionEngine(good, CompressionEngineOptionsBuilder.Fast());
        var record = await TrainOnAsync(writer, new Random(41));
        var envelope = writer.Compress(Ns, TestDocuments.Movie(new Random(42)));

        // A store that hands back damaged bytes under the right id: dictionaries from a database are untrusted input.
        var damaged = new InMemoryDictionaryStore();
        byte[] bytes = record.Content.ToArray();
        Array.Fill(bytes, (byte)0xFF, 8, 64);
        await damaged.PublishAsync(record with { Content = bytes });
        await using var reader = new CompressionEngine(damaged, CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1)));
        var ex = Assert.Throws<InvalidDataException>(() => reader.Decompress("db.other", envelope));
        Assert.Contains(record.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), ex.Message);

        var small = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1));
        small.MaxDictionaryBytes = 1024;
        await using var strict = new CompressionEngine(good, small);
        ex = Assert.Throws<InvalidDataException>(() => strict.Decompress("db.other", envelope));
        Assert.Contains("MaxDictionaryBytes", ex.Message);
    }

    [Fact]
    public async Task Refresh_PicksUpAVersionPublishedByAnotherClient()
    {
        var store = new InMemoryDictionaryStore();
        await using var a = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1)));
        await using var b = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(TimeSpan.FromHours(1)));
        b.Compress(Ns, TestDocuments.Movie(new Random(1)));
        await b.WhenIdleAsync();
        Assert.Null(b.GetCurrentDictionary(Ns));

        var published = await TrainOnAsync(a, new Random(2));
        await b.RefreshAsync();
        Assert.Equal(published.Id, b.GetCurrentDictionary(Ns)?.Id);
    }

    [Fact]
    public async Task Compress_RecordsBytesInAndOutPerNamespaceAndCodec()
    {
        var totals = new ConcurrentDictionary<string, long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Compression") l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            string ns = "", codec = "";
            foreach (var t in tags)
            {
                if (t.Key == "namespace") ns = (string)t.Value!;
                if (t.Key == "codec") codec = (string)t.Value!;
            }
            if (ns == "db.metrics") totals.AddOrUpdate($"{instrument.Name}/{codec}", value, (_, v) => v + value);
        });
        listener.Start();
        await using var engine = new CompressionEngine(new InMemoryDictionaryStore());
        var doc = TestDocuments.Movie(new Random(1));
        var envelope = engine.Compress("db.metrics", doc);
        Assert.Equal(doc.Length, totals.GetValueOrDefault("compression.bytes_in/zstd"));
        Assert.Equal(envelope.Length, totals.GetValueOrDefault("compression.bytes_out/zstd"));
    }

    [Fact]
    public void Constructor_InvalidOptions_ListsEveryProblemWithItsKey()
    {
        var options = new CompressionEngineOptions();
        options.Defaults.Compressor.Level = 40;
        options.Defaults.Dictionary.DictionarySize = 10;
        options.Namespaces["db.c"] = new NamespaceOptions();
        options.Namespaces["db.c"].Dictionary.HoldoutFraction = 0.9;
        options.PollInterval = TimeSpan.Zero;
        var ex = Assert.Throws<ArgumentException>(() => new CompressionEngine(new InMemoryDictionaryStore(), options));
        Assert.Contains("Defaults:Compressor:Level: 40 is out of range for Zstd; allowed: 1 to 22", ex.Message);
        Assert.Contains("Defaults:Dictionary:DictionarySize", ex.Message);
        Assert.Contains("Namespaces:db.c:Dictionary:HoldoutFraction", ex.Message);
        Assert.Contains("PollInterval", ex.Message);
    }

    [Fact]
    public async Task Compress_DictionariesDisabled_NeverTrains()
    {
        var options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Dictionary.Enabled = false;
        var store = new InMemoryDictionaryStore();
        await using var engine = new CompressionEngine(store, options);
        var random = new Random(1);
        for (int i = 0; i < 500; i++) engine.Compress(Ns, TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        Assert.Equal(0, store.Count);
        Assert.Equal(TrainingOutcome.Disabled, (await engine.TrainAsync(Ns)).Outcome);
    }

    [Fact]
    public async Task Compress_BufferWriter_AppendsExactlyTheEnvelope()
    {
        await using var engine = new CompressionEngine(new InMemoryDictionaryStore());
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(new byte[] { 1, 2, 3 });
        var doc = TestDocuments.Sensor(new Random(4));
        engine.Compress(Ns, doc, writer);
        var output = new ArrayBufferWriter<byte>();
        engine.Decompress(Ns, writer.WrittenSpan[3..], output);
        Assert.Equal(doc, output.WrittenSpan.ToArray());
    }

    private static async Task<DictionaryRecord> TrainOnAsync(CompressionEngine engine, Random random)
    {
        for (int i = 0; i < 400; i++) engine.Compress(Ns, TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        var current = engine.GetCurrentDictionary(Ns);
        if (current is null)
        {
            var result = await engine.TrainAsync(Ns);
            current = result.Dictionary;
        }
        Assert.NotNull(current);
        return current;
    }
}
