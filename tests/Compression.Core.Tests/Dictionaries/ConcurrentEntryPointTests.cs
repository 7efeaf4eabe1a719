using System.Buffers;
using System.Collections.Concurrent;
using Compression.Core.Tests.Envelope;
using Compression.Dictionaries;
using Microsoft.Extensions.Time.Testing;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// Every entry point of a namespace stays correct under concurrency and with large documents (written as a stress review,
/// 2026-11-26, of what earlier reviews left out): documents over 128 KiB (zstd frames) and over 256 KiB
/// (the unproven-length path) through every entry point of a namespace, on several threads and two engines sharing one
/// folder store while dictionaries are adopted and evicted; several folder stores publishing one namespace at once;
/// engines stopped while writers and readers run; corrupt envelopes of every codec, large ones included, decoded on
/// several threads between valid ones; RequireChecksum and MaxUncompressedLength on those paths.
/// </summary>
public sealed class ConcurrentEntryPointTests(ITestOutputHelper output) : IDisposable
{
    /// <summary>
    /// How long a wait may last before the test calls it a hang: generous, because these tests run beside the whole
    /// suite on machines of any speed and load (a limit of 20 or 60 s failed a run on a loaded machine, 2026-12-08), and
    /// a real hang fails all the same.
    /// </summary>
    private static readonly TimeSpan HangLimit = TimeSpan.FromMinutes(5);

    private readonly string _directory = Directory.CreateTempSubdirectory("stress-review-").FullName;

    public void Dispose()
    {
        try { Directory.Delete(_directory, recursive: true); } catch (IOException) { } catch (UnauthorizedAccessException) { }
    }

    /// <summary>How much longer the stress tests run: STRESS_REVIEW_SCALE (default 1, the guard's few seconds).</summary>
    private static readonly int Scale = int.TryParse(Environment.GetEnvironmentVariable("STRESS_REVIEW_SCALE"), out int scale) && scale > 0 ? scale : 1;

    /// <summary>Added to every test's seed: STRESS_REVIEW_SEED (default 0), to explore other interleavings and mutants.</summary>
    private static readonly int SeedOffset = int.TryParse(Environment.GetEnvironmentVariable("STRESS_REVIEW_SEED"), out int offset) ? offset : 0;

    // ----------------------------------------------------------------------------------------------------------------
    // Helpers: documents, the entry points of a namespace, multi-segment sequences.

    /// <summary>Sizes around the block/frame limit (128 KiB) and the direct-decode limit (256 KiB), and well past both.</summary>
    private static readonly int[] LargeSizes = [131_071, 131_072, 131_073, 200_003, 262_143, 262_144, 262_145, 300_001, 520_000, 1_100_000];

    /// <summary>A JSON array of records of <paramref name="size"/> bytes exactly (cut or padded): compressible, and better with a dictionary.</summary>
    private static byte[] LargeJson(Random random, int size, bool sensors = false)
    {
        var buffer = new ArrayBufferWriter<byte>(size + 1024);
        buffer.Write("["u8);
        while (buffer.WrittenCount < size)
        {
            if (buffer.WrittenCount > 1) buffer.Write(","u8);
            buffer.Write(sensors ? TestDocuments.Sensor(random) : TestDocuments.Movie(random));
        }
        byte[] document = buffer.WrittenSpan[..size].ToArray();
        document[^1] = (byte)']';
        return document;
    }

    private static byte[] RandomBytes(Random random, int size)
    {
        byte[] bytes = new byte[size];
        random.NextBytes(bytes);
        return bytes;
    }

    /// <summary>The bytes as a sequence of two to five segments (never one), each copied into its own array.</summary>
    private static ReadOnlySequence<byte> MultiSegment(byte[] data, Random random)
    {
        ReadOnlySequence<byte> sequence = TestSequences.RandomSplit(data, random);
        Assert.False(data.Length >= 2 && sequence.IsSingleSegment);
        return sequence;
    }

    private const int CompressEntryPoints = 4;
    private const int DecompressEntryPoints = 5;

    /// <summary>Compresses through one of the four entry points: span to span, span to a buffer writer, a multi-segment sequence, byte[].</summary>
    private static byte[] CompressVia(CompressionNamespace ns, byte[] document, int how, Random random)
    {
        switch (how)
        {
            case 0:
            {
                byte[] destination = new byte[CompressionNamespace.GetMaxCompressedLength(document.Length) + random.Next(0, 64)];
                Assert.True(ns.TryCompress(document, destination, out int written));
                return destination[..written];
            }
            case 1:
            {
                var writer = new ArrayBufferWriter<byte>();
                writer.Write("pre"u8);
                ns.Compress(document, writer);
                Assert.True(writer.WrittenSpan[..3].SequenceEqual("pre"u8));
                return writer.WrittenSpan[3..].ToArray();
            }
            case 2:
            {
                var writer = new ArrayBufferWriter<byte>();
                ns.Compress(MultiSegment(document, random), writer);
                return writer.WrittenSpan.ToArray();
            }
            default:
                return ns.Compress(document);
        }
    }

    /// <summary>
    /// Decompresses through one of the five entry points: span to span, to a buffer writer (after bytes already written,
    /// which must stay), a multi-segment sequence, byte[], DecompressAsync.
    /// </summary>
    private static byte[] DecompressVia(CompressionNamespace ns, byte[] envelope, int how, Random random)
    {
        switch (how)
        {
            case 0:
            {
                int length = DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header.UncompressedLength : 16;
                byte[] destination = new byte[length + random.Next(0, 64)];
                if (!ns.TryDecompress(envelope, destination, out int written)) throw new InvalidOperationException("destination too small");
                return destination[..written];
            }
            case 1:
            {
                var writer = new ArrayBufferWriter<byte>();
                writer.Write("pre"u8);
                ns.Decompress(envelope, writer);
                Assert.True(writer.WrittenSpan[..3].SequenceEqual("pre"u8));
                return writer.WrittenSpan[3..].ToArray();
            }
            case 2:
            {
                var writer = new ArrayBufferWriter<byte>();
                ns.Decompress(MultiSegment(envelope, random), writer);
                return writer.WrittenSpan.ToArray();
            }
            case 3:
                return ns.Decompress(envelope);
            default:
                return ns.DecompressAsync(envelope).AsTask().GetAwaiter().GetResult();
        }
    }

    private static string Describe(byte[] envelope)
    {
        if (!DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader h)) return "not an envelope";
        return $"{h.Codec}{(h.DictionaryId is uint id ? $"+dict{id}" : "")} v{h.FormatVersion + 1} {h.UncompressedLength} B";
    }

    /// <summary>Codec, "+dict" when the envelope names a dictionary, and the size class: "small", "&gt;128K" or "&gt;256K".</summary>
    private static string Kind(byte[] envelope)
    {
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader h));
        string size = h.UncompressedLength > 256 * 1024 ? ">256K" : h.UncompressedLength > 128 * 1024 ? ">128K" : "small";
        return $"{h.Codec}{(h.DictionaryId is null ? "" : "+dict")} {size}";
    }

    // ----------------------------------------------------------------------------------------------------------------
    // 1. Large documents, every entry point, several threads, two engines over one folder, adoption and eviction.

    [Theory]
    [InlineData(11)]
    public async Task LargeDocuments_TwoEnginesOneFolder_EveryEntryPoint_DictionariesAdoptedAndEvicted_ReadBackByteForByte(int seed)
    {
        seed += SeedOffset;
        var time = new FakeTimeProvider();
        var engines = new CompressionEngine[2];
        for (int e = 0; e < engines.Length; e++)
        {
            var options = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromSeconds(1));
            options.MaxNamespaces = e == 0 ? 3 : 2; // the second engine keeps two of the three namespaces: it evicts and reloads them
            options.MaxCachedDictionaries = 1;
            options.NamespaceIdleTimeout = TimeSpan.FromSeconds(5);
            options.Defaults.Dictionary.MinSampleCount = 40;
            options.Defaults.Dictionary.MinSampleBytes = 8 * 1024;
            options.Defaults.Dictionary.DriftMinDocuments = 60;
            // Each engine has its own store object over the folder, as two processes would.
            engines[e] = TestEngine.Create(new FileDictionaryStore(_directory), options, time);
            await engines[e].StartAsync();
        }

        const int Threads = 4, Phases = 3;
        int perPhase = 45 * Scale;
        var written = new ConcurrentQueue<(string Ns, byte[] Document, byte[] Envelope)>();
        var problems = new ConcurrentQueue<string>();
        var counts = new ConcurrentDictionary<string, int>();
        var randoms = Enumerable.Range(0, Threads).Select(t => new Random(seed * 1000 + t)).ToArray();
        var driver = new Random(seed);
        for (int phase = 0; phase < Phases; phase++)
        {
            var threads = new List<Thread>();
            for (int t = 0; t < Threads; t++)
            {
                var random = randoms[t];
                int p = phase;
                var thread = new Thread(() =>
                {
                    for (int i = 0; i < perPhase; i++)
                    {
                        int pick = random.Next(100);
                        string name = pick < 45 ? "db.a" : pick < 92 ? "db.b" : "db.c"; // three namespaces, two kept: db.c evicts
                        bool drift = p >= 1 && name == "db.a";
                        bool large = random.Next(10) < 3;
                        byte[] document = !large ? (drift ? TestDocuments.Sensor(random) : TestDocuments.Movie(random))
                            : random.Next(8) == 0 ? RandomBytes(random, LargeSizes[random.Next(LargeSizes.Length)])
                            : LargeJson(random, LargeSizes[random.Next(LargeSizes.Length)], drift);
                        int how = random.Next(CompressEntryPoints);
                        byte[] envelope;
                        try
                        {
                            envelope = CompressVia(engines[random.Next(2)].GetNamespace(name), document, how, random);
                        }
                        catch (Exception ex)
                        {
                            problems.Enqueue($"{name} compress #{how} of {document.Length} B threw {ex.GetType().Name}: {ex.Message}");
                            continue;
                        }
                        written.Enqueue((name, document, envelope));
                        counts.AddOrUpdate(Kind(envelope), 1, (_, n) => n + 1);
                        // Read back at once, through either engine and any entry point.
                        int back = random.Next(DecompressEntryPoints);
                        try
                        {
                            byte[] decoded = DecompressVia(engines[random.Next(2)].GetNamespace(name), envelope, back, random);
                            if (!decoded.AsSpan().SequenceEqual(document)) problems.Enqueue($"{name} {Describe(envelope)} read #{back}: WRONG BYTES");
                        }
                        catch (Exception ex)
                        {
                            problems.Enqueue($"{name} {Describe(envelope)} read #{back} threw {ex.GetType().Name}: {ex.Message}");
                        }
                    }
                }) { IsBackground = true };
                threads.Add(thread);
                thread.Start();
            }
            Task<TrainingResult>? training = null;
            while (threads.Any(t => t.IsAlive))
            {
                time.Advance(TimeSpan.FromMilliseconds(driver.Next(50, 400))); // polls, idle eviction
                // Training forced now and then too, on a namespace of either engine: new versions while the writers write.
                if (training is null || training.IsCompleted)
                {
                    if (training is { IsFaulted: true }) problems.Enqueue($"training failed: {training.Exception}");
                    training = engines[driver.Next(2)].GetNamespace(driver.Next(2) == 0 ? "db.a" : "db.b").TrainAsync();
                }
                Thread.Sleep(2);
            }
            if (training is not null) await training;
            foreach (var thread in threads) thread.Join();
            foreach (var engine in engines) await engine.WhenIdleAsync();
        }

        // Both engines come to the store's newest version of every namespace (a refresh that fails throws here, where a
        // poll only logs), whatever they cached, evicted and reloaded meanwhile.
        var newestStore = new FileDictionaryStore(_directory);
        foreach (var engine in engines)
        {
            foreach (string name in new[] { "db.a", "db.b", "db.c" })
            {
                try
                {
                    await engine.GetNamespace(name).RefreshAsync();
                    var newest = await newestStore.GetCurrentAsync(name);
                    if (engine.GetNamespace(name).CurrentDictionary?.Id != newest?.Id)
                        problems.Enqueue($"{name}: an engine has version {engine.GetNamespace(name).CurrentDictionary?.Version} after a refresh, the store {newest?.Version}");
                }
                catch (Exception ex)
                {
                    problems.Enqueue($"{name}: refresh threw {ex.GetType().Name}: {ex.Message}");
                }
            }
        }

        // Everything read again: by the writers' engines through every entry point, and by a cold engine.
        var check = new Random(seed + 7);
        await using var cold = TestEngine.Create(new FileDictionaryStore(_directory), CompressionEngineOptionsBuilder.Fast(), new FakeTimeProvider());
        foreach (var (name, document, envelope) in written)
        {
            foreach (var reader in new[] { engines[check.Next(2)].GetNamespace(name), cold.GetNamespace(name) })
            {
                int how = check.Next(DecompressEntryPoints);
                try
                {
                    if (!DecompressVia(reader, envelope, how, check).AsSpan().SequenceEqual(document)) problems.Enqueue($"{name} {Describe(envelope)} reread #{how}: WRONG BYTES");
                }
                catch (Exception ex)
                {
                    problems.Enqueue($"{name} {Describe(envelope)} reread #{how} threw {ex.GetType().Name}: {ex.Message}");
                }
            }
        }
        foreach (var engine in engines) await engine.DisposeAsync();

        var versions = new List<string>();
        await foreach (var record in new FileDictionaryStore(_directory).ListAsync()) versions.Add($"{record.Namespace} v{record.Version} id {record.Id}");
        output.WriteLine($"seed {seed}: {written.Count} documents, {problems.Count} problems; versions: {string.Join(", ", versions)}");
        foreach (var (key, n) in counts.OrderBy(k => k.Key, StringComparer.Ordinal)) output.WriteLine($"  {key}: {n}");
        foreach (string problem in problems.Take(30)) output.WriteLine(problem);
        Assert.Empty(problems);
        Assert.Contains(counts.Keys, k => k.Contains("+dict >256K", StringComparison.Ordinal)); // the unproven frame path with a dictionary ran
        Assert.Contains(counts.Keys, k => k.Contains("+dict >128K", StringComparison.Ordinal));
    }

    // ----------------------------------------------------------------------------------------------------------------
    // 2. Several folder stores (as separate processes) publishing versions of one namespace at once, readers meanwhile.

    private static DictionaryRecord StoreRecord(uint id, string ns, int version, int salt)
    {
        byte[] content = new byte[300 + salt % 50];
        new Random(salt).NextBytes(content);
        return new DictionaryRecord
        {
            Id = id, Namespace = ns, Version = version, Content = content, ContentHash = DictionaryRecord.ComputeContentHash(content),
            Created = DateTimeOffset.UnixEpoch, Level = 3, SampleCount = salt, Ratio = 2,
        };
    }

    [Theory]
    [InlineData(21)]
    public async Task FileStores_RacingPublishersOfOneNamespace_OneWinnerPerVersion_NoOrphans_ReadersSeeWholeRecords(int seed)
    {
        seed += SeedOffset;
        const int Publishers = 6;
        int Versions = 12 * Scale;
        string[] names = ["db.race", "db.Race"]; // two namespaces whose keys differ only by an escaped capital: ids conflict across them
        var stores = Enumerable.Range(0, Publishers).Select(_ => new FileDictionaryStore(_directory)).ToArray();
        var problems = new ConcurrentQueue<string>();
        var winners = new ConcurrentDictionary<(string Ns, int Version), ConcurrentBag<(uint Id, int Salt)>>();
        var candidates = new ConcurrentDictionary<(string Ns, int Version, uint Id, int Salt), byte>();
        int conflicts = 0;
        using var barrier = new Barrier(Publishers);
        using var stop = new CancellationTokenSource();

        // Readers: every listing holds each version once, 1..n without gaps; the current version never goes back.
        var readers = Enumerable.Range(0, 2).Select(r => Task.Factory.StartNew(async () =>
        {
            var reader = new FileDictionaryStore(_directory);
            var last = new Dictionary<string, int>();
            int rounds = 0;
            while (!stop.IsCancellationRequested || rounds < 5)
            {
                rounds++;
                try
                {
                    foreach (string ns in names)
                    {
                        var listed = new List<DictionaryRecord>();
                        await foreach (var record in reader.ListAsync(ns)) listed.Add(record);
                        if (!listed.Select(x => x.Version).SequenceEqual(Enumerable.Range(1, listed.Count)))
                            problems.Enqueue($"reader {r}: {ns} listed versions {string.Join(",", listed.Select(x => x.Version))}");
                        if (listed.Any(x => x.Namespace != ns)) problems.Enqueue($"reader {r}: {ns} listed another namespace's record");
                        var current = await reader.GetCurrentAsync(ns);
                        int version = current?.Version ?? 0;
                        if (version < last.GetValueOrDefault(ns)) problems.Enqueue($"reader {r}: {ns} current went back from {last[ns]} to {version}");
                        last[ns] = version;
                        if (current is not null && reader.Get(current.Id) is not { } byId) problems.Enqueue($"reader {r}: {ns} v{version} id {current.Id} not found by id");
                    }
                    var all = new List<DictionaryRecord>();
                    await foreach (var record in reader.ListAsync()) all.Add(record);
                    if (all.Count != all.Select(x => (x.Namespace, x.Version)).Distinct().Count()) problems.Enqueue($"reader {r}: a version listed twice");
                }
                catch (Exception ex)
                {
                    problems.Enqueue($"reader {r} threw {ex.GetType().Name}: {ex.Message}");
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap()).ToArray();

        var publishers = Enumerable.Range(0, Publishers).Select(p => Task.Factory.StartNew(() =>
        {
            var random = new Random(seed * 100 + p);
            for (int version = 1; version <= Versions; version++)
            {
                foreach (string ns in names)
                {
                    barrier.SignalAndWait();
                    // Ids from a small range, so publishers of both namespaces meet each other's ids (and losers' ids, briefly).
                    uint id = (uint)random.Next(1, 40);
                    int salt = random.Next();
                    for (int attempt = 0; ; attempt++)
                    {
                        var candidate = StoreRecord(id, ns, version, salt);
                        candidates[(ns, version, id, salt)] = 0;
                        try
                        {
                            DictionaryRecord winner = stores[p].PublishAsync(candidate).AsTask().GetAwaiter().GetResult();
                            if (winner.Version != version || winner.Namespace != ns) problems.Enqueue($"publisher {p}: {ns} v{version} answered with {winner.Namespace} v{winner.Version}");
                            winners.GetOrAdd((ns, version), _ => []).Add((winner.Id, winner.SampleCount));
                            break;
                        }
                        catch (DictionaryIdConflictException) when (attempt < 50)
                        {
                            Interlocked.Increment(ref conflicts);
                            id = (uint)random.Next(1, 100_000);
                        }
                        catch (Exception ex)
                        {
                            problems.Enqueue($"publisher {p}: {ns} v{version} threw {ex.GetType().Name}: {ex.Message}");
                            break;
                        }
                    }
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default)).ToArray();
        await Task.WhenAll(publishers).WaitAsync(HangLimit);
        stop.Cancel();
        await Task.WhenAll(readers).WaitAsync(HangLimit);

        foreach (var ((ns, version), answers) in winners)
        {
            var distinct = answers.Distinct().ToList();
            if (distinct.Count != 1) problems.Enqueue($"{ns} v{version}: publishers were answered with {distinct.Count} winners: {string.Join(", ", distinct)}");
            if (answers.Count != Publishers) problems.Enqueue($"{ns} v{version}: {answers.Count} answers");
            var (id, salt) = distinct[0];
            if (!candidates.ContainsKey((ns, version, id, salt))) problems.Enqueue($"{ns} v{version}: the winner id {id} is no candidate's");
        }

        // The folder: no temporary file, every record named by exactly one version file, every version listed once.
        var store = new FileDictionaryStore(_directory);
        string[] files = Directory.GetFiles(_directory).Select(Path.GetFileName).ToArray()!;
        if (files.Any(f => f.StartsWith(".tmp-", StringComparison.Ordinal))) problems.Enqueue("a temporary file was left");
        var records = files.Where(f => f.EndsWith(".dict.json", StringComparison.Ordinal)).Select(f => uint.Parse(f[..^".dict.json".Length], System.Globalization.CultureInfo.InvariantCulture)).ToHashSet();
        var named = new List<uint>();
        foreach (string versionFile in files.Where(f => f.EndsWith(".id", StringComparison.Ordinal)))
            named.Add(uint.Parse(File.ReadAllText(Path.Combine(_directory, versionFile)), System.Globalization.CultureInfo.InvariantCulture));
        if (named.Count != names.Length * Versions) problems.Enqueue($"{named.Count} version files for {names.Length * Versions} versions");
        if (!records.SetEquals(named) || named.Distinct().Count() != named.Count)
            problems.Enqueue($"records {string.Join(",", records.Order())} against the ids version files name {string.Join(",", named.Order())}");
        var listedAll = new List<DictionaryRecord>();
        await foreach (var record in store.ListAsync()) listedAll.Add(record);
        foreach (string ns in names)
        {
            var versions = listedAll.Where(r => r.Namespace == ns).Select(r => r.Version).ToList();
            if (!versions.SequenceEqual(Enumerable.Range(1, Versions))) problems.Enqueue($"{ns}: listed {string.Join(",", versions)}");
            if ((await store.GetCurrentAsync(ns))?.Version != Versions) problems.Enqueue($"{ns}: current is not v{Versions}");
        }

        output.WriteLine($"seed {seed}: {Publishers} publishers x {names.Length} namespaces x {Versions} versions, {conflicts} id conflicts, {files.Length} files, {problems.Count} problems");
        foreach (string problem in problems.Take(30)) output.WriteLine(problem);
        Assert.Empty(problems);
    }

    // ----------------------------------------------------------------------------------------------------------------
    // 3. An engine stopped (DisposeAsync, twice at once) while writers and readers run on other threads.

    private static Dictionary<string, long> Snapshot(string directory) =>
        Directory.GetFiles(directory).ToDictionary(f => Path.GetFileName(f), f => new FileInfo(f).Length, StringComparer.Ordinal);

    [Theory]
    [InlineData(31)]
    public async Task Dispose_WhileWritersAndReadersRun_NoWriteThatSucceededThrows_NothingPublishedAfterTheStop_NoHang(int seed)
    {
        seed += SeedOffset;
        const int Threads = 3;
        int Rounds = 3 * Scale;
        var problems = new ConcurrentQueue<string>();
        var random = new Random(seed);
        int disposedWrites = 0, totalWrites = 0, publishedBefore = 0;
        for (int round = 0; round < Rounds; round++)
        {
            string folder = Path.Combine(_directory, $"round{round}");
            var options = CompressionEngineOptionsBuilder.Fast(TimeSpan.FromSeconds(1));
            options.MaxNamespaces = 2;
            options.Defaults.Dictionary.MinSampleCount = 30;
            options.Defaults.Dictionary.MinSampleBytes = 6 * 1024;
            var time = new FakeTimeProvider();
            var engine = TestEngine.Create(new FileDictionaryStore(folder), options, time);
            await engine.StartAsync();
            var written = new ConcurrentQueue<(string Ns, byte[] Document, byte[] Envelope)>();
            int writes = 0;
            int stopAt = random.Next(60, 300);
            using var stopped = new ManualResetEventSlim();
            using var disposing = new ManualResetEventSlim();
            var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
            {
                var r = new Random(seed * 1000 + round * 10 + t);
                int after = 0;
                while (after < 60) // writes and reads go on for 60 rounds after every DisposeAsync returned
                {
                    if (stopped.IsSet) after++;
                    int pick = r.Next(100);
                    string name = pick < 48 ? "db.a" : pick < 96 ? "db.b" : "db.c"; // two namespaces kept: db.c evicts one now and then
                    byte[] document = r.Next(25) == 0 ? LargeJson(r, LargeSizes[r.Next(LargeSizes.Length - 2)]) : TestDocuments.Movie(r);
                    byte[] envelope;
                    try
                    {
                        envelope = CompressVia(engine.GetNamespace(name), document, r.Next(CompressEntryPoints), r);
                    }
                    catch (ObjectDisposedException)
                    {
                        Interlocked.Increment(ref disposedWrites); // refused before anything was written: allowed once stopped
                        if (!disposing.IsSet) problems.Enqueue($"round {round}: ObjectDisposedException before the stop started");
                        continue;
                    }
                    catch (Exception ex)
                    {
                        problems.Enqueue($"round {round}: compress threw {ex.GetType().Name}: {ex.Message}");
                        continue;
                    }
                    Interlocked.Increment(ref totalWrites);
                    Interlocked.Increment(ref writes);
                    written.Enqueue((name, document, envelope));
                    try
                    {
                        byte[] back = DecompressVia(engine.GetNamespace(name), envelope, r.Next(DecompressEntryPoints), r);
                        if (!back.AsSpan().SequenceEqual(document)) problems.Enqueue($"round {round}: {Describe(envelope)} read WRONG BYTES");
                    }
                    catch (ObjectDisposedException) { }
                    catch (Exception ex)
                    {
                        problems.Enqueue($"round {round}: {Describe(envelope)} read threw {ex.GetType().Name}: {ex.Message}");
                    }
                }
            }) { IsBackground = true }).ToList();
            threads.ForEach(t => t.Start());
            while (Volatile.Read(ref writes) < stopAt && threads.Any(t => t.IsAlive))
            {
                time.Advance(TimeSpan.FromMilliseconds(random.Next(50, 500)));
                Thread.Sleep(1);
            }

            // Two stops at once, as a host's shutdown and an 'await using' might: each must return only once everything stopped.
            var snapshots = new ConcurrentQueue<Dictionary<string, long>>();
            disposing.Set();
            Task[] disposals = Enumerable.Range(0, 2).Select(_ => Task.Run(async () =>
            {
                await engine.DisposeAsync();
                snapshots.Enqueue(Snapshot(folder));
            })).ToArray();
            try
            {
                await Task.WhenAll(disposals).WaitAsync(HangLimit);
            }
            catch (TimeoutException)
            {
                problems.Enqueue($"round {round}: DisposeAsync did not return within {HangLimit}");
                break;
            }
            stopped.Set();
            foreach (var thread in threads)
            {
                if (!thread.Join(HangLimit)) problems.Enqueue($"round {round}: a writer hung after the stop");
            }
            var final = Snapshot(folder);
            foreach (var snapshot in snapshots)
            {
                if (!snapshot.OrderBy(k => k.Key).SequenceEqual(final.OrderBy(k => k.Key)))
                    problems.Enqueue($"round {round}: the folder changed after a DisposeAsync returned: [{string.Join(", ", snapshot.Keys.Order())}] then [{string.Join(", ", final.Keys.Order())}]");
            }
            publishedBefore += final.Count(f => f.Key.EndsWith(".id", StringComparison.Ordinal));

            await using var cold = TestEngine.Create(new FileDictionaryStore(folder), CompressionEngineOptionsBuilder.Fast(), new FakeTimeProvider());
            foreach (var (name, document, envelope) in written)
            {
                try
                {
                    if (!(await cold.GetNamespace(name).DecompressAsync(envelope)).AsSpan().SequenceEqual(document)) problems.Enqueue($"round {round}: cold {Describe(envelope)} WRONG BYTES");
                }
                catch (Exception ex)
                {
                    problems.Enqueue($"round {round}: cold {Describe(envelope)} threw {ex.GetType().Name}: {ex.Message}");
                }
            }
        }
        output.WriteLine($"seed {seed}: {Rounds} rounds, {totalWrites} writes, {disposedWrites} refused as disposed, {publishedBefore} versions published before the stops, {problems.Count} problems");
        foreach (string problem in problems.Take(30)) output.WriteLine(problem);
        Assert.Empty(problems);
    }

    /// <summary>A store whose publications wait for <see cref="Gate"/> whatever their token says, as a write already on its way would.</summary>
    private sealed class SlowPublishStore(InMemoryDictionaryStore inner) : DictionaryStore
    {
        private int _published;

        public TaskCompletionSource Gate { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public int Published => Volatile.Read(ref _published);

        public override string Location => "the slow test store";

        public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default) => inner.GetAsync(id, cancellationToken);

        public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default) => inner.GetCurrentAsync(@namespace, cancellationToken);

        public override async ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
        {
            Entered.TrySetResult();
            await Gate.Task;
            DictionaryRecord winner = await inner.PublishAsync(candidate, CancellationToken.None);
            Interlocked.Increment(ref _published);
            return winner;
        }

        public override IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default) => inner.ListAsync(@namespace, cancellationToken);
    }

    [Fact]
    public async Task DisposeAsync_CalledTwiceAtOnce_NeitherReturnsBeforeThePublicationInFlightHasEnded()
    {
        // Found by the stress test above (1 round in 16: the folder changed after a DisposeAsync had returned, a record
        // and its version file written by a training run still publishing). The second of two concurrent disposals
        // returned at once, before the first had stopped the background work: its caller could take the engine for
        // stopped (delete the folder, end the process) while a publication was still on its way to the store.
        var store = new SlowPublishStore(new InMemoryDictionaryStore());
        var engine = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400));
        var ns = engine.GetNamespace("db.movies");
        var random = new Random(5);
        for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
        await store.Entered.Task.WaitAsync(HangLimit); // a background training run is publishing

        ValueTask first = engine.DisposeAsync();
        ValueTask second = engine.DisposeAsync();
        bool firstReturned = first.IsCompleted, secondReturned = second.IsCompleted;
        store.Gate.SetResult();
        await first.AsTask().WaitAsync(HangLimit);
        await second.AsTask().WaitAsync(HangLimit);

        Assert.False(firstReturned, "the first DisposeAsync returned while a publication was in flight");
        Assert.False(secondReturned, "the second DisposeAsync returned while a publication was in flight");
        Assert.Equal(1, store.Published);
    }

    // ----------------------------------------------------------------------------------------------------------------
    // 4. Corrupt envelopes of every codec, large ones included, decoded on several threads between valid ones.

    private sealed record CorruptCase(string Name, DocumentCompressor Compressor, ZstdDictionary? Dictionary, List<(byte[] Document, byte[] Envelope)> Valid);

    private sealed record Mutant(CorruptCase Case, string Kind, byte[] Envelope, byte[] Original);

    /// <summary>What decoding gives: "=" and the bytes' hash, or the exception's type.</summary>
    /// <summary>Joins <paramref name="thread"/>, false only when <paramref name="progress"/> did not move for a whole <see cref="HangLimit"/>.</summary>
    private static bool JoinWhileProgressing(Thread thread, Func<long> progress)
    {
        long last = progress();
        while (!thread.Join(HangLimit))
        {
            long now = progress();
            if (now == last) return false;
            last = now;
        }
        return true;
    }

    private static string Outcome(Func<byte[]> decode)
    {
        try
        {
            return "=" + System.IO.Hashing.XxHash3.HashToUInt64(decode()).ToString("X16", System.Globalization.CultureInfo.InvariantCulture);
        }
        catch (Exception ex)
        {
            return ex.GetType().Name;
        }
    }

    private static string Hash(byte[] bytes) => "=" + System.IO.Hashing.XxHash3.HashToUInt64(bytes).ToString("X16", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Decodes with a <see cref="DocumentCompressor"/> through one of three entry points, or through the engine's namespace (any of five).</summary>
    private static byte[] DecodeVia(CorruptCase c, CompressionNamespace ns, byte[] envelope, int how, Random random)
    {
        switch (how)
        {
            case 0:
                return c.Compressor.Decompress(envelope, c.Dictionary);
            case 1:
            {
                int length = DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header.UncompressedLength : 16;
                byte[] destination = new byte[length + random.Next(0, 40)];
                try
                {
                    if (!c.Compressor.TryDecompress(envelope, destination, out int written, c.Dictionary)) throw new InvalidOperationException("destination too small");
                    return destination[..written];
                }
                catch (InvalidDataException) when (destination.AsSpan().IndexOfAnyExcept((byte)0) >= 0)
                {
                    throw new InvalidOperationException("a failed decode left bytes in the destination");
                }
            }
            case 2:
            {
                var writer = new ArrayBufferWriter<byte>();
                writer.Write("pre"u8);
                try
                {
                    c.Compressor.Decompress(envelope, writer, c.Dictionary);
                }
                catch (InvalidDataException) when (writer.WrittenCount != 3)
                {
                    throw new InvalidOperationException("a failed decode advanced the writer");
                }
                if (!writer.WrittenSpan[..3].SequenceEqual("pre"u8)) throw new InvalidOperationException("the decode overwrote bytes written before");
                return writer.WrittenSpan[3..].ToArray();
            }
            default:
                return DecompressVia(ns, envelope, random.Next(DecompressEntryPoints), random);
        }
    }

    private static IEnumerable<Mutant> Mutate(CorruptCase c, Random random, int perEnvelope)
    {
        for (int v = 0; v < c.Valid.Count; v++)
        {
            var (document, envelope) = c.Valid[v];
            for (int m = 0; m < perEnvelope; m++)
            {
                byte[] bytes = (byte[])envelope.Clone();
                string kind;
                switch (random.Next(6))
                {
                    case 0:
                    case 1:
                    {
                        // a bit flip: in the header, near the end (checksum, last sequences), or anywhere
                        int region = random.Next(3);
                        int at = region == 0 ? random.Next(Math.Min(8, bytes.Length)) : region == 1 ? Math.Max(0, bytes.Length - 1 - random.Next(Math.Min(8, bytes.Length))) : random.Next(bytes.Length);
                        int bit = random.Next(8);
                        bytes[at] ^= (byte)(1 << bit);
                        kind = $"flip {at}.{bit}";
                        break;
                    }
                    case 2:
                    {
                        int at = random.Next(bytes.Length);
                        byte value = (byte)random.Next(256);
                        if (bytes[at] == value) value ^= 0x5A;
                        bytes[at] = value;
                        kind = $"set {at}={value:X2}";
                        break;
                    }
                    case 3:
                    {
                        int keep = random.Next(bytes.Length);
                        bytes = bytes[..keep];
                        kind = $"truncate {keep}";
                        break;
                    }
                    case 4:
                    {
                        int n = random.Next(1, 4);
                        bytes = [.. bytes, .. Enumerable.Range(0, n).Select(_ => (byte)random.Next(256))];
                        kind = $"append {n}";
                        break;
                    }
                    default:
                    {
                        // another envelope's tail of the same case after this header
                        var (_, other) = c.Valid[(v + 1 + random.Next(c.Valid.Count - 1)) % c.Valid.Count];
                        DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader a);
                        DocumentEnvelope.TryReadHeader(other, out EnvelopeHeader b);
                        bytes = [.. envelope.AsSpan(0, a.HeaderLength), .. other.AsSpan(b.HeaderLength)];
                        kind = "splice";
                        break;
                    }
                }
                if (bytes.AsSpan().SequenceEqual(envelope)) continue;
                yield return new Mutant(c, kind, bytes, document);
            }
        }
    }

    [Theory]
    [InlineData(41)]
    public async Task CorruptEnvelopes_EveryCodecLargeOnesIncluded_OnSeveralThreadsBetweenValidOnes_NeverSpoilALaterValidDecode(int seed)
    {
        seed += SeedOffset;
        // A namespace with a dictionary that has a shape table (for packed envelopes), as the single-thread test trains it.
        var store = new InMemoryDictionaryStore();
        await using var engine = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400));
        var ns = engine.GetNamespace("db.movies");
        var random = new Random(seed);
        for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        if (ns.CurrentDictionary is null) await ns.TrainAsync();
        Assert.NotNull(ns.CurrentDictionary);
        ZstdDictionary dictionary = (await ns.PreloadDictionaryAsync(ns.Compress(TestDocuments.Movie(random))))!;
        Assert.True(dictionary.HasShapeTable);

        var documents = new List<byte[]> { TestDocuments.Movie(random), TestDocuments.Movie(random), TestDocuments.Sensor(random),
            LargeJson(random, 200_003), LargeJson(random, 300_001, sensors: true) };
        var cases = new List<CorruptCase>();
        void Add(string name, DocumentCompressorOptions options, ZstdDictionary? d, bool pack = true)
        {
            var compressor = new DocumentCompressor(options) { Pack = pack };
            cases.Add(new CorruptCase(name, compressor, d, documents.Select(doc => (doc, compressor.Compress(doc, d))).ToList()));
        }
        foreach (var format in new[] { EnvelopeFormat.V3, EnvelopeFormat.V1 })
        {
            foreach (var codec in Corpus.AllCodecsInRegistryOrder)
                Add($"{codec}-{format}", new DocumentCompressorOptions { Codec = codec, Format = format }, null);
            Add($"zstd+dict-{format}", new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Format = format }, dictionary, pack: false);
            if (format != EnvelopeFormat.V1) Add($"packed-{format}", new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Format = format }, dictionary);
        }
        Add("zstd-v3-nochecksum", new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Checksum = false }, null);
        Add("zstd+dict-v3-nochecksum", new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Checksum = false }, dictionary, pack: false);
        Assert.Contains(cases.SelectMany(c => c.Valid), v => DocumentEnvelope.TryReadHeader(v.Envelope, out var h) && Corpus.IsStructured(h.Codec));
        Assert.Contains(cases.SelectMany(c => c.Valid), v => DocumentEnvelope.TryReadHeader(v.Envelope, out var h) && h.Codec == CompressionCodec.Zstd && h.DictionaryId is not null && h.UncompressedLength > 256 * 1024);

        // The expected outcome of every mutant, decoded once on this thread: a clear exception or, where the codec and
        // checksum let the change through, the original document (never other bytes when the envelope has a checksum).
        var mutants = cases.SelectMany(c => Mutate(c, random, perEnvelope: 6 * Scale)).ToList();
        var expected = new string[mutants.Count];
        var problems = new ConcurrentQueue<string>();
        int wrongWithoutChecksum = 0;
        for (int i = 0; i < mutants.Count; i++)
        {
            var mutant = mutants[i];
            expected[i] = Outcome(() => mutant.Case.Compressor.Decompress(mutant.Envelope, mutant.Case.Dictionary));
            if (expected[i].StartsWith('=') && expected[i] != Hash(mutant.Original))
            {
                if (mutant.Case.Name.Contains("nochecksum", StringComparison.Ordinal)) wrongWithoutChecksum++;
                else problems.Enqueue($"{mutant.Case.Name} {mutant.Kind}: WRONG BYTES from a checksummed envelope (single thread)");
            }
            else if (!expected[i].StartsWith('=') && expected[i] is not (nameof(InvalidDataException) or nameof(DictionaryNotFoundException)))
            {
                problems.Enqueue($"{mutant.Case.Name} {mutant.Kind}: {expected[i]} (single thread)");
            }
        }

        // Then on four threads at once, through every entry point, each corrupt decode followed by valid ones.
        var valid = cases.SelectMany(c => c.Valid.Select(v => (Case: c, v.Document, v.Envelope))).ToList();
        int corruptDecodes = 0, validDecodes = 0;
        var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            var r = new Random(seed * 100 + t);
            for (int op = 0; op < 400 * Scale; op++)
            {
                int i = r.Next(mutants.Count);
                var mutant = mutants[i];
                int how = r.Next(4);
                string got = Outcome(() => DecodeVia(mutant.Case, ns, mutant.Envelope, how, r));
                Interlocked.Increment(ref corruptDecodes);
                // The engine's namespace refuses what the compressor refuses, maybe by another exception type (an id it cannot find).
                bool same = got == expected[i] || (how == 3 && !got.StartsWith('=') && !expected[i].StartsWith('=')
                    && got is nameof(InvalidDataException) or nameof(DictionaryNotFoundException));
                if (!same) problems.Enqueue($"thread {t}: {mutant.Case.Name} {mutant.Kind} via #{how}: {got}, single thread {expected[i]}");
                for (int k = 0; k < 2; k++)
                {
                    var (c, document, envelope) = k == 0 ? (mutant.Case, mutant.Case.Valid[r.Next(mutant.Case.Valid.Count)].Document, default(byte[])) : valid[r.Next(valid.Count)];
                    if (envelope is null)
                    {
                        int index = mutant.Case.Valid.FindIndex(x => ReferenceEquals(x.Document, document));
                        envelope = mutant.Case.Valid[index].Envelope;
                    }
                    int via = r.Next(4);
                    string result = Outcome(() => DecodeVia(c, ns, envelope, via, r));
                    Interlocked.Increment(ref validDecodes);
                    if (result != Hash(document)) problems.Enqueue($"thread {t}: valid {c.Name} {Describe(envelope)} via #{via} after {mutant.Case.Name} {mutant.Kind}: {result}");
                }
                if (problems.Count > 50) break;
            }
        }) { IsBackground = true }).ToList();
        threads.ForEach(t => t.Start());
        // A thread hangs when no decode ends for a whole HangLimit; a slow machine only makes them slower.
        threads.ForEach(t => Assert.True(JoinWhileProgressing(t, () => Volatile.Read(ref corruptDecodes) + Volatile.Read(ref validDecodes)), "a decoding thread hung"));

        output.WriteLine($"seed {seed}: {cases.Count} cases, {mutants.Count} mutants ({expected.Count(e => !e.StartsWith('='))} refused, {expected.Count(e => e.StartsWith('='))} decoded, {wrongWithoutChecksum} to other bytes without a checksum); {corruptDecodes} corrupt and {validDecodes} valid decodes on 4 threads; {problems.Count} problems");
        foreach (string problem in problems.Take(40)) output.WriteLine(problem);
        Assert.Empty(problems);
    }

    // ----------------------------------------------------------------------------------------------------------------
    // 5. RequireChecksum and MaxUncompressedLength on those paths.

    [Fact]
    public async Task Options_RequireChecksumWithoutChecksum_AreRefused_ForTheyMakeEveryDocumentWrittenUnreadable()
    {
        // Found by review: a namespace (or compressor) set to write without a checksum and to read only envelopes with one
        // was accepted; every document it wrote was then refused by its own reads (and by every reader with the same
        // settings): "InvalidDataException: The envelope carries no checksum, and this reader requires one". Like a
        // dictionary larger than readers accept (DictionaryOptionsTests), it is refused when the options are validated.
        var options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Checksum = false;
        options.Defaults.RequireChecksum = true;
        options.Namespaces["db.strict"] = new NamespaceOptions { Checksum = false, RequireChecksum = true };
        options.Namespaces["db.fine"] = new NamespaceOptions { Checksum = true, RequireChecksum = true };
        options.Namespaces["db.plain"] = new NamespaceOptions { Checksum = false, RequireChecksum = false };
        var ex = Assert.Throws<ArgumentException>(() => TestEngine.Create(new InMemoryDictionaryStore(), options));
        Assert.Contains("Compression:Defaults:RequireChecksum", ex.Message, StringComparison.Ordinal);
        Assert.Contains("Compression:Namespaces:db.strict:RequireChecksum", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("db.fine", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("db.plain", ex.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => new DocumentCompressor(new DocumentCompressorOptions { Checksum = false, RequireChecksum = true }));

        // The settings that remain write what they read, large documents included.
        options.Defaults.Checksum = true;
        options.Namespaces.Remove("db.strict");
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), options);
        var random = new Random(51);
        foreach (string name in new[] { "db.any", "db.fine", "db.plain" })
        {
            foreach (int size in new[] { 400, 200_003, 300_001 })
            {
                byte[] document = LargeJson(random, size);
                byte[] envelope = engine.GetNamespace(name).Compress(document);
                for (int how = 0; how < DecompressEntryPoints; how++) Assert.Equal(document, DecompressVia(engine.GetNamespace(name), envelope, how, random));
            }
        }
    }

    [Fact]
    public async Task MaxUncompressedLengthAndRequireChecksum_LargeDocuments_EveryEntryPoint_RefusedClearlyOrReadBack()
    {
        const int Limit = 300_001, ReaderLimit = 200_000;
        var store = new InMemoryDictionaryStore();
        var writerOptions = CompressionEngineOptionsBuilder.TrainOnceAt(200);
        writerOptions.Defaults.MaxUncompressedLength = Limit;
        writerOptions.Namespaces["db.nosum"] = new NamespaceOptions { Checksum = false, MaxUncompressedLength = Limit };
        await using var writer = TestEngine.Create(store, writerOptions);
        var readerOptions = CompressionEngineOptionsBuilder.Fast();
        readerOptions.Defaults.MaxUncompressedLength = ReaderLimit;
        readerOptions.Defaults.RequireChecksum = true;
        await using var reader = TestEngine.Create(store, readerOptions);

        var ns = writer.GetNamespace("db.big");
        var random = new Random(52);
        for (int i = 0; i < 200; i++) ns.Compress(TestDocuments.Movie(random));
        await writer.WhenIdleAsync();
        if (ns.CurrentDictionary is null) await ns.TrainAsync();
        Assert.NotNull(ns.CurrentDictionary);

        // At the limit: written and read back through every entry point; one byte over: refused, nothing written.
        byte[] atLimit = LargeJson(random, Limit);
        byte[] over = LargeJson(random, Limit + 1);
        for (int how = 0; how < CompressEntryPoints; how++)
        {
            byte[] envelope = CompressVia(ns, atLimit, how, random);
            Assert.NotNull(DocumentEnvelope.TryReadHeader(envelope, out var header) ? header.DictionaryId : null);
            for (int back = 0; back < DecompressEntryPoints; back++) Assert.Equal(atLimit, DecompressVia(ns, envelope, back, random));
            var sink = new ArrayBufferWriter<byte>();
            Assert.Throws<ArgumentException>(() => how switch
            {
                0 => ns.TryCompress(over, new byte[CompressionNamespace.GetMaxCompressedLength(over.Length)], out _),
                1 => Run(() => ns.Compress(over, sink)),
                2 => Run(() => ns.Compress(MultiSegment(over, random), sink)),
                _ => ns.Compress(over).Length > 0,
            });
            Assert.Equal(0, sink.WrittenCount);

            // A reader with a lower limit refuses it clearly, through every entry point, advancing nothing.
            foreach (var (what, read) in ReadsOf(reader.GetNamespace("db.big"), envelope))
            {
                var thrown = await Record.ExceptionAsync(read);
                Assert.True(thrown is InvalidDataException, $"{what}: {thrown?.GetType().Name ?? "no exception"}");
            }
        }

        // Under the reader's limit, with a checksum: read back (dictionary fetched on demand) through every entry point.
        byte[] under = LargeJson(random, ReaderLimit);
        byte[] underEnvelope = ns.Compress(under);
        await reader.GetNamespace("db.big").PreloadDictionaryAsync(underEnvelope);
        for (int back = 0; back < DecompressEntryPoints; back++) Assert.Equal(under, DecompressVia(reader.GetNamespace("db.big"), underEnvelope, back, random));

        // Without a checksum: refused by the reader that requires one, through every entry point; read back by the writer.
        foreach (int size in new[] { 150_000, ReaderLimit })
        {
            byte[] document = LargeJson(random, size);
            byte[] envelope = writer.GetNamespace("db.nosum").Compress(document);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header) && !header.HasChecksum);
            for (int back = 0; back < DecompressEntryPoints; back++) Assert.Equal(document, DecompressVia(writer.GetNamespace("db.nosum"), envelope, back, random));
            foreach (var (what, read) in ReadsOf(reader.GetNamespace("db.nosum"), envelope))
            {
                var thrown = await Record.ExceptionAsync(read);
                Assert.True(thrown is InvalidDataException, $"{what}: {thrown?.GetType().Name ?? "no exception"}");
            }
        }

        static bool Run(Action action)
        {
            action();
            return true;
        }
    }

    /// <summary>Every decode entry point of a namespace as a call, each checking that it advanced no writer and left no bytes when it failed.</summary>
    private static IEnumerable<(string What, Func<Task> Read)> ReadsOf(CompressionNamespace ns, byte[] envelope)
    {
        yield return ("TryDecompress", () =>
        {
            byte[] destination = new byte[400_000];
            try
            {
                ns.TryDecompress(envelope, destination, out _);
            }
            finally
            {
                Assert.Equal(-1, destination.AsSpan().IndexOfAnyExcept((byte)0));
            }
            return Task.CompletedTask;
        });
        yield return ("Decompress to a writer", () => Advancing(w => ns.Decompress(envelope, w)));
        yield return ("Decompress a sequence", () => Advancing(w => ns.Decompress(MultiSegment(envelope, new Random(1)), w)));
        yield return ("Decompress to byte[]", () => Task.FromResult(ns.Decompress(envelope)));
        yield return ("DecompressAsync", async () => await ns.DecompressAsync(envelope));

        static Task Advancing(Action<ArrayBufferWriter<byte>> decode)
        {
            var writer = new ArrayBufferWriter<byte>();
            try
            {
                decode(writer);
            }
            finally
            {
                Assert.Equal(0, writer.WrittenCount);
            }
            return Task.CompletedTask;
        }
    }
}
