using System.Collections.Concurrent;
using Compression.Dictionaries;
using Microsoft.Extensions.Time.Testing;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// Two engines over one store, four writer threads in four namespaces (more than <c>MaxNamespaces</c>), background
/// training with drift, a cache bound of 2, polling and eviction on a fake clock, and (some seeds) a store failing
/// publications and reads at random: every envelope reads back byte for byte through its writer and through a cold
/// engine. Written by a review helper (2026-11-25); it found nothing, and stays as a guard.
/// </summary>
public sealed class EngineHammerTests(ITestOutputHelper output)
{
    private static readonly string[] Names = ["db.a", "db.b", "db.c", "db.d"];

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, false)]
    [InlineData(3, true)]
    [InlineData(4, true)]
    [InlineData(5, true)]
    [InlineData(6, false)]
    public async Task Hammer_WritersTrainingEvictionPolling_EverythingReadsBack(int seed, bool failures)
    {
        var inner = new InMemoryDictionaryStore();
        var stores = new[] { new ControllableStore(inner), new ControllableStore(inner) };
        var time = new FakeTimeProvider();
        var engines = new CompressionEngine[2];
        for (int e = 0; e < 2; e++)
        {
            var options = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromSeconds(1));
            options.MaxNamespaces = 3;
            options.Defaults.Dictionary.MinSampleCount = 50;
            options.MaxCachedDictionaries = 2;
            options.NamespaceIdleTimeout = TimeSpan.FromSeconds(5);
            options.MissingDictionaryRetention = TimeSpan.FromSeconds(2);
            options.Defaults.Dictionary.DriftMinDocuments = 100;
            options.Namespaces["db.b"] = new NamespaceOptions { Dictionary = { PackDocuments = false, DictionarySize = 8 * 1024, MinSampleCount = 50, MinSampleBytes = 16 * 1024, MinTrainingInterval = TimeSpan.Zero } };
            engines[e] = TestEngine.Create(stores[e], options, time);
            await engines[e].StartAsync();
        }

        var written = new ConcurrentBag<(int Engine, string Ns, byte[] Doc, byte[] Env)>();
        var immediate = new ConcurrentQueue<string>();
        int notFound = 0;
        const int Writers = 4, PerWriter = 100, Phases = 8;
        var driverRandom = new Random(seed);
        var randoms = Enumerable.Range(0, Writers).Select(id => new Random(seed * 100 + id)).ToArray();
        for (int phase = 0; phase < Phases; phase++)
        {
            var threads = new List<Thread>();
            for (int t = 0; t < Writers; t++)
            {
                int id = t;
                var th = new Thread(() =>
                {
                    var random = randoms[id];
                    for (int i = 0; i < PerWriter; i++)
                    {
                        int e = random.Next(2);
                        int pick = random.Next(100);
                        string name = pick < 45 ? "db.a" : pick < 90 ? "db.b" : pick < 99 ? "db.c" : "db.d";
                        byte[] doc = name is "db.a" or "db.b" ? TestDocuments.Movie(random) : random.Next(3) == 0 ? TestDocuments.Movie(random) : TestDocuments.Sensor(random);
                        if (phase >= 4 && name == "db.a") doc = TestDocuments.Sensor(random); // drift
                        var ns = engines[e].GetNamespace(name);
                        byte[] env;
                        try { env = ns.Compress(doc); }
                        catch (Exception ex) { immediate.Enqueue($"compress threw {ex.GetType().Name}: {ex.Message}"); continue; }
                        written.Add((e, name, doc, env));
                        try
                        {
                            byte[] back = engines[e].GetNamespace(name).Decompress(env);
                            if (!back.AsSpan().SequenceEqual(doc)) immediate.Enqueue($"{name} immediate decode WRONG BYTES");
                        }
                        catch (DictionaryNotFoundException) { Interlocked.Increment(ref notFound); }
                        catch (Exception ex) { immediate.Enqueue($"{name} immediate decode threw {ex.GetType().Name}: {ex.Message}"); }
                    }
                }) { IsBackground = true };
                threads.Add(th);
                th.Start();
            }

            while (threads.Any(t => t.IsAlive))
            {
                if (failures)
                {
                    foreach (var s in stores)
                    {
                        s.FailPublish = driverRandom.Next(3) == 0;
                        s.FailGet = driverRandom.Next(4) == 0;
                    }
                }
                time.Advance(TimeSpan.FromMilliseconds(driverRandom.Next(200, 3000)));
                Thread.Yield();
            }
            foreach (var t in threads) t.Join();
            time.Advance(TimeSpan.FromSeconds(1));
            foreach (var e in engines) await e.WhenIdleAsync();
        }
        foreach (var s in stores) { s.FailPublish = false; s.FailGet = false; }
        for (int i = 0; i < 5; i++) { time.Advance(TimeSpan.FromSeconds(1)); foreach (var e in engines) await e.WhenIdleAsync(); }

        var problems = new List<string>(immediate);
        var byCodec = new Dictionary<string, int>();
        await using var cold = TestEngine.Create(new InMemoryDictionaryStoreView(inner), CompressionEngineOptionsBuilder.Fast(), new FakeTimeProvider());
        foreach (var (e, name, doc, env) in written)
        {
            DocumentEnvelope.TryReadHeader(env, out var h);
            string key = $"{h.Codec}{(h.DictionaryId is null ? "" : "+dict")}";
            byCodec[key] = byCodec.GetValueOrDefault(key) + 1;
            try
            {
                byte[] back = await engines[e].GetNamespace(name).DecompressAsync(env);
                if (!back.AsSpan().SequenceEqual(doc)) problems.Add($"writer {e} {name} {key}: WRONG BYTES");
            }
            catch (Exception ex) { problems.Add($"writer {e} {name} {key} dict {h.DictionaryId}: {ex.GetType().Name}: {ex.Message}"); }
            try
            {
                byte[] back = await cold.GetNamespace(name).DecompressAsync(env);
                if (!back.AsSpan().SequenceEqual(doc)) problems.Add($"cold {name} {key}: WRONG BYTES");
            }
            catch (Exception ex) { problems.Add($"cold {name} {key} dict {h.DictionaryId}: {ex.GetType().Name}: {ex.Message}"); }
            if (problems.Count > 40) break;
        }
        foreach (var e in engines) await e.DisposeAsync();
        output.WriteLine($"seed {seed} failures {failures}: {written.Count} envelopes, immediate not-found {notFound}, publishes {stores.Sum(s => s.PublishCalls)}, records {await CountAsync(inner)}");
        foreach (var kv in byCodec) output.WriteLine($"  {kv.Key}: {kv.Value}");
        foreach (var p in problems.Take(40)) output.WriteLine(p);
        Assert.Empty(problems);
        Assert.Contains(byCodec.Keys, k => k.EndsWith("+dict", StringComparison.Ordinal)); // dictionaries were really used
    }

    private static async Task<int> CountAsync(InMemoryDictionaryStore store)
    {
        int n = 0;
        await foreach (var _ in store.ListAsync()) n++;
        return n;
    }

    /// <summary>Another store instance over the same records (a cold client).</summary>
    private sealed class InMemoryDictionaryStoreView(InMemoryDictionaryStore inner) : DictionaryStore
    {
        public override string Location => "view";
        public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default) => inner.GetAsync(id, cancellationToken);
        public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default) => inner.GetCurrentAsync(@namespace, cancellationToken);
        public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default) => inner.PublishAsync(candidate, cancellationToken);
        public override IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default) => inner.ListAsync(@namespace, cancellationToken);
    }
}
