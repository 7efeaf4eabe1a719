using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Compression.Dictionaries;
using Compression.Tests.Shared;
using Microsoft.Extensions.Logging;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

public sealed class CompressionEngineTests
{
    private const string Ns = "db.movies";

    [Fact]
    public async Task Compress_AfterEnoughSamples_TrainsPublishesAndAdoptsADictionary()
    {
        var store = new InMemoryDictionaryStore();
        await using var engine = TestEngine.Create(store);
        var random = new Random(1);
        var documents = Enumerable.Range(0, 600).Select(_ => TestDocuments.Movie(random)).ToList();
        var envelopes = new List<byte[]>();
        foreach (var d in documents) envelopes.Add(engine.GetNamespace(Ns).Compress(d));
        await engine.WhenIdleAsync();

        var current = engine.GetNamespace(Ns).CurrentDictionary;
        Assert.NotNull(current);
        Assert.InRange(current.Version, 1, 4); // the first dictionary, then retrained as the samples doubled
        Assert.Equal(current.Version, store.Count);
        Assert.True(current.Ratio > 2.0, $"held-out ratio {current.Ratio}");

        // Documents written after adoption are smaller than the bootstrap ones, and everything decodes.
        var after = Enumerable.Range(0, 200).Select(_ => TestDocuments.Movie(random)).ToList();
        long rawAfter = after.Sum(d => (long)d.Length), outAfter = 0;
        foreach (var d in after)
        {
            var e = engine.GetNamespace(Ns).Compress(d);
            outAfter += e.Length;
            Assert.True(DocumentEnvelope.TryReadHeader(e, out var h));
            Assert.Equal(current.Id, h.DictionaryId);
            Assert.Equal(d, engine.GetNamespace(Ns).Decompress(e));
        }
        Assert.True((double)rawAfter / outAfter > 2.0, $"ratio after adoption {(double)rawAfter / outAfter:F2}");
        for (int i = 0; i < documents.Count; i++) Assert.Equal(documents[i], engine.GetNamespace(Ns).Decompress(envelopes[i]));
    }

    [Fact]
    public async Task Compress_BurstBeforeTheStoreAnswered_StillTrainsOnceItHas()
    {
        var store = new ControllableStore(new InMemoryDictionaryStore()) { CurrentGate = new TaskCompletionSource() };
        // Failed once in CI under load (no dictionary after idle) and never since, in 400 seeded hold-out splits or in
        // loops beside CPU hogs: the engine's log goes into the failure message, so the next occurrence says why.
        var logs = new CollectingLoggerProvider();
        using var loggerFactory = LoggerFactory.Create(b => b.AddProvider(logs).SetMinimumLevel(LogLevel.Trace));
        await using var engine = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(), loggerFactory,
            timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        var ns = engine.GetNamespace(Ns);
        var random = new Random(21);
        for (int i = 0; i < 300; i++) ns.Compress(TestDocuments.Movie(random)); // all before the first look-up returns
        Assert.Null(ns.CurrentDictionary);
        store.CurrentGate.SetResult();
        await engine.WhenIdleAsync();
        Assert.True(ns.CurrentDictionary is not null,
            $"no dictionary once idle; store calls: current {store.CurrentCalls}, publish {store.PublishCalls}; log:\n{string.Join("\n", logs.Messages)}");
    }

    [Fact]
    public async Task ThreeClients_ConcurrentWritersSharingAStore_ColdClientDecodesEverything()
    {
        var store = new InMemoryDictionaryStore();
        var written = new ConcurrentBag<(string Ns, byte[] Document, byte[] Envelope)>();
        string[] namespaces = ["db.movies", "db.sensors"];
        var engines = Enumerable.Range(0, 3).Select(_ => TestEngine.Create(store)).ToArray();
        try
        {
            // Each client writes from two threads into both namespaces; all of them train and race to publish.
            async Task WriteAsync(int count, int seed)
            {
                await Task.WhenAll(engines.SelectMany((engine, e) => Enumerable.Range(0, 2).Select(t => Task.Run(() =>
                {
                    var random = new Random(seed + 100 * e + t);
                    for (int i = 0; i < count; i++)
                    {
                        string ns = namespaces[i % 2];
                        byte[] doc = ns == "db.movies" ? TestDocuments.Movie(random) : TestDocuments.Sensor(random);
                        written.Add((ns, doc, engine.GetNamespace(ns).Compress(doc)));
                    }
                }))));
            }
            await WriteAsync(1500, 0);
            foreach (var engine in engines) await engine.WhenIdleAsync(); // the training runs the writes started
            foreach (var engine in engines) await engine.RefreshAsync();  // what a poll does: adopt the others' versions
            Assert.All(engines, e => Assert.All(namespaces, ns => Assert.NotNull(e.GetNamespace(ns).CurrentDictionary)));
            await WriteAsync(200, 7);
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
        await using var cold = TestEngine.Create(store);
        Assert.Equal(3 * 2 * 1700, written.Count);
        foreach (var (ns, document, envelope) in written)
        {
            Assert.Equal(document, cold.GetNamespace(ns).Decompress(envelope));
        }
    }

    [Fact]
    public async Task Compress_WhenDocumentShapeDrifts_TrainsAndAdoptsANewVersion_AndOldDocumentsStayReadable()
    {
        var store = new InMemoryDictionaryStore();
        var options = CompressionEngineOptionsBuilder.Fast();
        await using var engine = TestEngine.Create(store, options);
        engine.InlineTraining = true;
        await engine.GetNamespace(Ns).RefreshAsync();
        var random = new Random(7);
        var written = new List<(byte[] Document, byte[] Envelope)>();
        for (int i = 0; i < 800; i++)
        {
            var d = TestDocuments.Movie(random);
            written.Add((d, engine.GetNamespace(Ns).Compress(d)));
        }
        var v1 = engine.GetNamespace(Ns).CurrentDictionary;
        Assert.NotNull(v1);

        for (int i = 0; i < 4000; i++)
        {
            var d = TestDocuments.Sensor(random);
            written.Add((d, engine.GetNamespace(Ns).Compress(d)));
        }
        var latest = engine.GetNamespace(Ns).CurrentDictionary;
        Assert.NotNull(latest);
        Assert.True(latest.Version > v1.Version, $"still on version {latest.Version} after the drift");

        // Sensor documents now compress better than with the movie dictionary.
        var sensors = Enumerable.Range(0, 200).Select(_ => TestDocuments.Sensor(random)).ToList();
        var compressor = new DocumentCompressor();
        var v1Dictionary = ZstdDictionary.Create(v1.Id, v1.Content.Span);
        long withV1 = sensors.Sum(s => (long)compressor.Compress(s, v1Dictionary).Length);
        long withLatest = sensors.Sum(s => (long)engine.GetNamespace(Ns).Compress(s).Length);
        Assert.True(withLatest < withV1 * 0.9, $"latest {withLatest} B against v1 {withV1} B");

        // Documents written under every version still decode, in this engine and in a cold one.
        var versionsUsed = written.Select(w => DocumentEnvelope.TryReadHeader(w.Envelope, out var h) ? h.DictionaryId : null).Distinct().ToList();
        Assert.True(versionsUsed.Count >= 3, "bootstrap, v1 and a later version were all used");
        await using var cold = TestEngine.Create(store, options);
        foreach (var (document, envelope) in written)
        {
            Assert.Equal(document, engine.GetNamespace(Ns).Decompress(envelope));
            Assert.Equal(document, cold.GetNamespace(Ns).Decompress(envelope));
        }
    }

    [Fact]
    public async Task Compress_WhileTrainingIsBlocked_WritesStillComplete()
    {
        var store = new InMemoryDictionaryStore();
        using var release = new ManualResetEventSlim(false);
        using var trainingStarted = new ManualResetEventSlim(false);
        await using var engine = TestEngine.Create(store);
        engine.TrainingStarting = _ =>
        {
            trainingStarted.Set();
            release.Wait(); // a training step that blocks until the test releases it
        };
        await engine.GetNamespace(Ns).RefreshAsync();
        var random = new Random(3);
        for (int i = 0; i < 300 && !trainingStarted.IsSet; i++) engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        Assert.True(trainingStarted.Wait(TimeSpan.FromMinutes(5)), "training started"); // a safety net, not a wait for a condition

        // Training is stuck; 5,000 more writes must complete anyway, on this thread, without waiting for it.
        var writes = Task.Run(() =>
        {
            for (int i = 0; i < 5000; i++)
            {
                var d = TestDocuments.Movie(random);
                Assert.Equal(d, engine.GetNamespace(Ns).Decompress(engine.GetNamespace(Ns).Compress(d)));
            }
        });
        await writes; // they complete although training is blocked: the write path never waits for it
        Assert.Null(engine.GetNamespace(Ns).CurrentDictionary); // training really was still blocked
        release.Set();
        await engine.WhenIdleAsync();
        Assert.NotNull(engine.GetNamespace(Ns).CurrentDictionary);
    }

    [Fact]
    public async Task Compress_StreamingManyMegabytes_KeepsSamplesWithinTheConfiguredCaps()
    {
        var options = CompressionEngineOptionsBuilder.Fast();
        var d = options.Defaults.Dictionary;
        d.MaxSampleCount = 300;
        d.MaxSampleBytes = 64 * 1024;
        d.MaxSampleDocumentSize = 2048;
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), options);
        var random = new Random(11);
        long streamed = 0;
        var big = new byte[8192];
        long maxObservedBytes = 0;
        int maxObservedCount = 0;
        for (int i = 0; streamed < 20_000_000; i++)
        {
            byte[] doc = i % 50 == 0 ? big : (i % 2 == 0 ? TestDocuments.Movie(random) : TestDocuments.Sensor(random));
            engine.GetNamespace(Ns).Compress(doc);
            streamed += doc.Length;
            if (i % 1000 == 0)
            {
                maxObservedBytes = Math.Max(maxObservedBytes, engine.GetNamespace(Ns).State.Reservoir.Bytes);
                maxObservedCount = Math.Max(maxObservedCount, engine.GetNamespace(Ns).State.Reservoir.Count);
            }
        }
        await engine.WhenIdleAsync();
        Assert.True(streamed >= 20_000_000);
        Assert.InRange(maxObservedBytes, 1, d.MaxSampleBytes);
        Assert.InRange(maxObservedCount, 1, d.MaxSampleCount);
        Assert.InRange(engine.GetNamespace(Ns).State.Reservoir.Bytes, 1, d.MaxSampleBytes);
        Assert.InRange(engine.CachedDictionaryCount, 0, options.MaxCachedDictionaries);
    }

    [Fact]
    public async Task Decompress_UnknownDictionary_ThrowsNamingIdAndNamespace()
    {
        var writerStore = new InMemoryDictionaryStore();
        await using var writer = TestEngine.Create(writerStore);
        var random = new Random(5);
        var r = await TrainOnAsync(writer, random);
        var envelope = writer.GetNamespace(Ns).Compress(TestDocuments.Movie(random));

        await using var reader = TestEngine.Create(new InMemoryDictionaryStore());
        var ex = Assert.Throws<DictionaryNotFoundException>(() => reader.GetNamespace(Ns).Decompress(envelope));
        Assert.Equal(r.Id, ex.DictionaryId);
        Assert.Equal(Ns, ex.Namespace);
        Assert.Contains(r.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), ex.Message);
        Assert.Contains(Ns, ex.Message);
        await Assert.ThrowsAsync<DictionaryNotFoundException>(async () => await reader.GetNamespace(Ns).DecompressAsync(envelope));
    }

    [Fact]
    public async Task Decompress_AsyncOnlyStore_NeedsEnsureDictionary_AndFetchesOnceForParallelReaders()
    {
        var shared = new InMemoryDictionaryStore();
        await using var writer = TestEngine.Create(shared);
        var random = new Random(9);
        await TrainOnAsync(writer, random);
        var doc = TestDocuments.Movie(random);
        var envelope = writer.GetNamespace(Ns).Compress(doc);

        var store = new ControllableStore(shared) { GetGate = new TaskCompletionSource() };
        await using var reader = TestEngine.Create(store);
        var ex = Assert.Throws<DictionaryNotFoundException>(() => reader.GetNamespace("db.other").Decompress(envelope));
        Assert.Contains("PreloadDictionaryAsync", ex.Message);

        var readers = Enumerable.Range(0, 16).Select(_ => reader.GetNamespace("db.other").PreloadDictionaryAsync(envelope).AsTask()).ToArray();
        store.GetGate.SetResult(); // all sixteen asked before the store answered
        await Task.WhenAll(readers);
        Assert.Equal(1, store.GetCalls); // single-flight
        Assert.Equal(doc, reader.GetNamespace("db.other").Decompress(envelope));
    }

    [Fact]
    public async Task Decompress_StoreUnreachable_RetriesThenFailsClearly_AndCachesNothingWrong()
    {
        var shared = new InMemoryDictionaryStore();
        await using var writer = TestEngine.Create(shared);
        var random = new Random(13);
        await TrainOnAsync(writer, random);
        var doc = TestDocuments.Movie(random);
        var envelope = writer.GetNamespace(Ns).Compress(doc);

        var store = new ControllableStore(shared) { FailGet = true };
        var options = CompressionEngineOptionsBuilder.Fast();
        options.StoreAttempts = 3;
        await using var reader = TestEngine.Create(store, options);
        var ex = await Assert.ThrowsAsync<DictionaryNotFoundException>(async () => await reader.GetNamespace("db.x").DecompressAsync(envelope));
        Assert.Contains("3 attempt(s)", ex.Message);
        Assert.IsType<IOException>(ex.InnerException);
        Assert.Equal(3, store.GetCalls);

        store.FailGet = false;
        Assert.Equal(doc, await reader.GetNamespace("db.x").DecompressAsync(envelope));
    }

    [Fact]
    public async Task Training_WhenPublicationFails_WritesContinueWithoutTheCandidate_AndPublicationIsRetried()
    {
        var store = new ControllableStore(new InMemoryDictionaryStore()) { FailPublish = true };
        await using var engine = TestEngine.Create(store);
        var random = new Random(17);
        for (int i = 0; i < 400; i++) engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync(); // the write path started a training run; its publication failed
        Assert.True(store.PublishCalls >= 1);
        var failed = await engine.GetNamespace(Ns).TrainAsync();
        Assert.Equal(TrainingOutcome.PublishFailed, failed.Outcome);
        Assert.Null(engine.GetNamespace(Ns).CurrentDictionary); // an unpublished dictionary is never used: nobody else could read it

        var envelope = engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Null(header.DictionaryId);
        // That write started a retry too (the publication is pending): let it fail first. Still running when the store
        // recovers, it could fail after PublishCalls is read below and leave the one write there finding it busy.
        await engine.WhenIdleAsync();

        store.FailPublish = false;
        int before = store.PublishCalls;
        // The next write schedules the retry. One write only: with more, a write after the retry has published could also
        // start a growth training (the last full training saw ~100 documents), which may publish a version 2 (seen once
        // in CI under load).
        engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        Assert.True(store.PublishCalls > before);
        var adopted = engine.GetNamespace(Ns).CurrentDictionary;
        Assert.NotNull(adopted);
        Assert.Equal(1, store.Inner.Count);
    }

    [Fact]
    public async Task Decompress_DictionaryFromTheStoreIsCorruptOrTooLarge_FailsClearly()
    {
        var good = new InMemoryDictionaryStore();
        await using var writer = TestEngine.Create(good);
        var record = await TrainOnAsync(writer, new Random(41));
        var envelope = writer.GetNamespace(Ns).Compress(TestDocuments.Movie(new Random(42)));

        // A store that hands back damaged bytes under the right id: dictionaries from a database are untrusted input.
        var damaged = new InMemoryDictionaryStore();
        byte[] bytes = record.Content.ToArray();
        Array.Fill(bytes, (byte)0xFF, 8, 64);
        await damaged.PublishAsync(record with { Content = bytes });
        await using var reader = TestEngine.Create(damaged);
        var ex = Assert.Throws<InvalidDataException>(() => reader.GetNamespace("db.other").Decompress(envelope));
        Assert.Contains(record.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), ex.Message);

        // A reader whose limit is one byte under the record's dictionary. (Dictionaries trained on what the field model
        // leaves to zstd can be small: 1,024 bytes, the limit this test used before, no longer refuses every one.)
        int limit = record.Content.Length - 1;
        Assert.True(limit >= ZstdDictionary.MinimumSize, $"a {record.Content.Length}-byte dictionary");
        var small = CompressionEngineOptionsBuilder.Fast();
        small.MaxDictionaryBytes = limit;
        small.Defaults.Dictionary.DictionarySize = limit; // within what it accepts (or the options are refused)
        await using var strict = TestEngine.Create(good, small);
        ex = Assert.Throws<InvalidDataException>(() => strict.GetNamespace("db.other").Decompress(envelope));
        Assert.Contains("MaxDictionaryBytes", ex.Message);
    }

    [Fact]
    public async Task Refresh_PicksUpAVersionPublishedByAnotherClient()
    {
        var store = new InMemoryDictionaryStore();
        await using var a = TestEngine.Create(store);
        await using var b = TestEngine.Create(store);
        b.GetNamespace(Ns).Compress(TestDocuments.Movie(new Random(1)));
        await b.WhenIdleAsync();
        Assert.Null(b.GetNamespace(Ns).CurrentDictionary);

        var published = await TrainOnAsync(a, new Random(2));
        await b.RefreshAsync();
        Assert.Equal(published.Id, b.GetNamespace(Ns).CurrentDictionary?.Id);
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
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore());
        var doc = TestDocuments.Movie(new Random(1));
        var envelope = engine.GetNamespace("db.metrics").Compress(doc);
        Assert.Equal(doc.Length, totals.GetValueOrDefault("compression.bytes_in/zstd"));
        Assert.Equal(envelope.Length, totals.GetValueOrDefault("compression.bytes_out/zstd"));
    }

    [Fact]
    public void Constructor_InvalidOptions_ListsEveryProblemWithItsKey()
    {
        var options = new CompressionEngineOptions();
        options.Defaults.Level = 40;
        options.Defaults.Dictionary.DictionarySize = 10;
        options.Namespaces["db.c"] = new NamespaceOptions();
        options.Namespaces["db.c"].Dictionary.HoldoutFraction = 0.9;
        options.PollInterval = TimeSpan.Zero;
        var ex = Assert.Throws<ArgumentException>(() => TestEngine.Create(new InMemoryDictionaryStore(), options));
        Assert.Contains("Compression:Defaults:Level: 40 is out of range for Zstd; allowed: 1 to 22", ex.Message);
        Assert.Contains("Compression:Defaults:Dictionary:DictionarySize", ex.Message);
        Assert.Contains("Compression:Namespaces:db.c:Dictionary:HoldoutFraction", ex.Message);
        Assert.Contains("Compression:PollInterval", ex.Message);
    }

    [Fact]
    public async Task Compress_DictionariesDisabled_NeverTrains()
    {
        var options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Dictionary.Enabled = false;
        var store = new InMemoryDictionaryStore();
        await using var engine = TestEngine.Create(store, options);
        var random = new Random(1);
        for (int i = 0; i < 500; i++) engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        Assert.Equal(0, store.Count);
        Assert.Equal(TrainingOutcome.Disabled, (await engine.GetNamespace(Ns).TrainAsync()).Outcome);
    }

    [Fact]
    public async Task Compress_BufferWriter_AppendsExactlyTheEnvelope()
    {
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore());
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(new byte[] { 1, 2, 3 });
        var doc = TestDocuments.Sensor(new Random(4));
        engine.GetNamespace(Ns).Compress(doc, writer);
        var output = new ArrayBufferWriter<byte>();
        engine.GetNamespace(Ns).Decompress(writer.WrittenSpan[3..], output);
        Assert.Equal(doc, output.WrittenSpan.ToArray());
    }

    [Fact]
    public async Task Training_TinyDocumentsJustOverMinSampleBytes_TrainsInsteadOfWaiting()
    {
        // 48 flight-like records of ~85 bytes: over MinSampleBytes (4 KiB) in all, under it once the 20% hold-out is set
        // aside. The trigger counts every sample, so the training must too (it used to refuse with TooFewSamples and
        // wait for twice as many documents).
        var options = new CompressionEngineOptions { PollInterval = TimeSpan.FromHours(1), StoreRetryDelay = TimeSpan.Zero };
        options.Defaults.Dictionary.MinSampleCount = 32;
        options.Defaults.Dictionary.MinSampleBytes = 4096;
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), options);
        var random = new Random(3);
        long bytes = 0;
        string[] airports = ["LHR", "JFK", "CDG", "FRA", "AMS", "MAD", "FCO", "ZRH"];
        for (int i = 0; bytes < 4096; i++)
        {
            byte[] flight = System.Text.Encoding.UTF8.GetBytes(
                $"{{\"from\":\"{airports[random.Next(8)]}\",\"to\":\"{airports[random.Next(8)]}\",\"departs\":\"2026-05-{random.Next(1, 29):00}T{random.Next(24):00}:00\",\"price\":{random.Next(40, 900)}}}");
            engine.GetNamespace(Ns).Compress(flight);
            bytes += flight.Length;
        }
        await engine.WhenIdleAsync();
        TrainingResult result = await engine.GetNamespace(Ns).TrainAsync();
        Assert.NotEqual(TrainingOutcome.TooFewSamples, result.Outcome);
        Assert.NotNull(engine.GetNamespace(Ns).CurrentDictionary);
    }

    private static async Task<DictionaryRecord> TrainOnAsync(CompressionEngine engine, Random random)
    {
        for (int i = 0; i < 400; i++) engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        var current = engine.GetNamespace(Ns).CurrentDictionary;
        if (current is null)
        {
            var result = await engine.GetNamespace(Ns).TrainAsync();
            current = result.Dictionary;
        }
        Assert.NotNull(current);
        return current;
    }
}
