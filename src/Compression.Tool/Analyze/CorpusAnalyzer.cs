using System.Diagnostics;
using System.Globalization;
using System.Text.Json.Serialization;
using Compression.Dictionaries;
using ZstdSharp;

namespace Compression.Tool.Analyze;

internal sealed record AnalyzeSettings
{
    public int Seed { get; init; } = 42;
    public int DictionarySize { get; init; } = 16 * 1024;
    public bool Checksum { get; init; } = true;
    public bool Quick { get; init; }
    public double TrainFraction { get; init; } = 0.2;
}

internal sealed record CodecResult(string Codec, int Level, bool Dictionary, double Ratio, double CompressMBps, double DecompressMBps);

internal sealed record OnlineVersionResult(uint Id, int Version, long AfterDocuments, double Ratio);

internal sealed record OnlineResult(double Ratio, long RawBytes, long EnvelopeBytes, IReadOnlyList<OnlineVersionResult> Versions);

/// <summary>One cell of the dictionary sweep: a dictionary of <paramref name="RequestedSize"/> trained on <paramref name="TrainDocuments"/> documents; ratio 0 when training failed.</summary>
internal sealed record SweepCell(int TrainDocuments, long TrainBytes, int RequestedSize, int DictionaryBytes, int Level, double Ratio, double CompressMBps);

/// <summary>The level 3 ratio of a dictionary capped at min(DictionarySize, sample bytes / 4, <paramref name="BytesPerDocument"/> x documents).</summary>
internal sealed record SweepRule(int TrainDocuments, long TrainBytes, int BytesPerDocument, int Size, double Ratio);

internal sealed record SweepResult(int Documents, int TrainDocuments, int TestDocuments, IReadOnlyList<SweepCell> Cells, IReadOnlyList<SweepRule> Rules);

internal sealed record AnalyzeResult
{
    public required int Documents { get; init; }
    public required long RawBytes { get; init; }
    public required double LimitRatio { get; init; }
    public required IReadOnlyList<CodecResult> Results { get; init; }
    public required int TrainDocuments { get; init; }
    public required int TestDocuments { get; init; }
    public required int DictionarySize { get; init; }
    public required bool Checksum { get; init; }
    public required int Seed { get; init; }
    public required string Recommendation { get; init; }

    /// <summary>The row <see cref="Recommendation"/> names (for the HTML page's chart and configuration snippet; not in the JSON output).</summary>
    [JsonIgnore]
    public CodecResult? Recommended { get; init; }

    /// <summary>The largest dictionary the run would train (<c>--dictionary-size</c>); <see cref="DictionarySize"/> is what was trained (not in the JSON output).</summary>
    [JsonIgnore]
    public int MaxDictionarySize { get; init; }

    public OnlineResult? Online { get; init; }
}

/// <summary>
/// Measures codecs on a corpus. Every row is measured on the same 80% of the documents (a seeded split); the zstd
/// dictionary is trained on the other 20%. Ratio = raw bytes / envelope bytes (envelope included). Speeds are of raw
/// bytes, one thread, MB = 10^6 bytes, averaged over repeated passes after a warm-up.
/// </summary>
internal static class CorpusAnalyzer
{
    private static readonly (CompressionCodec Codec, int Level)[] FullCases =
    [
        (CompressionCodec.Stored, 0),
        (CompressionCodec.Zstd, 1), (CompressionCodec.Zstd, 3), (CompressionCodec.Zstd, 9), (CompressionCodec.Zstd, 19),
        (CompressionCodec.Lz4, 0), (CompressionCodec.Lz4, 9),
        (CompressionCodec.Snappy, 0),
        (CompressionCodec.Deflate, 1), (CompressionCodec.Deflate, 6), (CompressionCodec.Deflate, 9),
        (CompressionCodec.Gzip, 6),
        (CompressionCodec.Brotli, 1), (CompressionCodec.Brotli, 4), (CompressionCodec.Brotli, 9),
    ];

    private static readonly int[] FullDictionaryLevels = [1, 3, 9, 19];

    private static readonly (CompressionCodec Codec, int Level)[] QuickCases =
    [
        (CompressionCodec.Stored, 0), (CompressionCodec.Zstd, 3), (CompressionCodec.Lz4, 0), (CompressionCodec.Snappy, 0),
        (CompressionCodec.Deflate, 6), (CompressionCodec.Gzip, 6), (CompressionCodec.Brotli, 4),
    ];

    private static readonly int[] QuickDictionaryLevels = [3];

    public static AnalyzeResult Analyze(IReadOnlyList<byte[]> documents, AnalyzeSettings settings, CancellationToken cancellationToken = default)
    {
        var (train, test) = Split(documents, settings);
        TimeSpan budget = settings.Quick ? TimeSpan.FromMilliseconds(20) : TimeSpan.FromMilliseconds(300);

        var results = new List<CodecResult>();
        foreach (var (codec, level) in settings.Quick ? QuickCases : FullCases)
        {
            cancellationToken.ThrowIfCancellationRequested();
            results.Add(Measure(test, codec, level, null, settings.Checksum, budget));
        }

        // The engine's rule: min(DictionarySize, training bytes / 4, 256 x training documents).
        long trainBytes = train.Sum(d => (long)d.Length);
        int dictionarySize = new DictionaryOptions { DictionarySize = settings.DictionarySize }.GetTrainingSize(train.Length, trainBytes);
        ZstdDictionary? dictionary = dictionarySize >= ZstdDictionary.MinimumSize ? ZstdDictionaryTrainer.TryTrain(train, dictionarySize, 1) : null;
        if (dictionary is not null)
        {
            foreach (int level in settings.Quick ? QuickDictionaryLevels : FullDictionaryLevels)
            {
                cancellationToken.ThrowIfCancellationRequested();
                results.Add(Measure(test, CompressionCodec.Zstd, level, dictionary, settings.Checksum, budget));
            }
        }

        var (recommended, recommendation) = Recommend(results);
        return new AnalyzeResult
        {
            Documents = documents.Count,
            RawBytes = documents.Sum(d => (long)d.Length),
            LimitRatio = LimitRatio(documents, settings.Quick ? 3 : 19),
            Results = results,
            TrainDocuments = train.Length,
            TestDocuments = test.Length,
            DictionarySize = dictionary?.Content.Length ?? 0,
            Checksum = settings.Checksum,
            Seed = settings.Seed,
            Recommendation = recommendation,
            Recommended = recommended,
            MaxDictionarySize = settings.DictionarySize,
        };
    }

    /// <summary>The seeded split every row uses: <see cref="AnalyzeSettings.TrainFraction"/> trains the dictionary, the rest is measured.</summary>
    private static (byte[][] Train, byte[][] Test) Split(IReadOnlyList<byte[]> documents, AnalyzeSettings settings)
    {
        var shuffled = documents.ToArray();
        new Random(settings.Seed).Shuffle(shuffled);
        int trainCount = documents.Count < 10 ? 0 : (int)(documents.Count * settings.TrainFraction);
        return (shuffled[..trainCount], shuffled[trainCount..]);
    }

    /// <summary>
    /// The measurement behind the default dictionary size and level (hidden <c>--sweep</c>, see docs/dictionary-defaults.md).
    /// Same split as <see cref="Analyze"/>, no cap on the dictionary size. First: every size of <paramref name="sizes"/> at
    /// every level of <paramref name="levels"/>, trained on the whole training share, ratio and compress speed. Second: level 3
    /// ratios of dictionaries trained on only the first <paramref name="sampleCounts"/> training documents, for the cap rule.
    /// </summary>
    public static SweepResult Sweep(IReadOnlyList<byte[]> documents, AnalyzeSettings settings, IReadOnlyList<int> sizes, IReadOnlyList<int> levels, IReadOnlyList<int> sampleCounts, CancellationToken cancellationToken = default)
    {
        var (train, test) = Split(documents, settings);
        TimeSpan budget = settings.Quick ? TimeSpan.FromMilliseconds(20) : TimeSpan.FromMilliseconds(300);
        var cells = new List<SweepCell>();
        foreach (int count in sampleCounts.Where(c => c < train.Length).Append(train.Length).Distinct())
        {
            byte[][] samples = train[..count];
            long sampleBytes = samples.Sum(d => (long)d.Length);
            bool full = count == train.Length;
            foreach (int size in sizes)
            {
                cancellationToken.ThrowIfCancellationRequested();
                ZstdDictionary? dictionary = ZstdDictionaryTrainer.TryTrain(samples, size, 1);
                foreach (int level in full ? levels : [3])
                {
                    CodecResult r = dictionary is null
                        ? new CodecResult("zstd", level, false, 0, 0, 0)
                        : Measure(test, CompressionCodec.Zstd, level, dictionary, settings.Checksum, full ? budget : TimeSpan.Zero, timeDecompression: false);
                    cells.Add(new SweepCell(count, sampleBytes, size, dictionary?.Content.Length ?? 0, level, r.Ratio, full ? r.CompressMBps : 0));
                }
            }
        }

        // Candidate caps for the engine: min(32 KiB, sample bytes / 4, bytesPerDocument x sample count); 0 = no per-document term.
        var rules = new List<SweepRule>();
        foreach (int count in sampleCounts.Where(c => c < train.Length).Append(train.Length).Distinct())
        {
            byte[][] samples = train[..count];
            long sampleBytes = samples.Sum(d => (long)d.Length);
            foreach (int perDocument in (int[])[0, 256, 512, 1024])
            {
                cancellationToken.ThrowIfCancellationRequested();
                long cap = Math.Min(settings.DictionarySize, sampleBytes / new DictionaryOptions().SampleBytesPerDictionaryByte);
                if (perDocument > 0) cap = Math.Min(cap, (long)perDocument * count);
                ZstdDictionary? dictionary = cap >= ZstdDictionary.MinimumSize ? ZstdDictionaryTrainer.TryTrain(samples, (int)cap, 1) : null;
                double ratio = dictionary is null ? 0 : Measure(test, CompressionCodec.Zstd, 3, dictionary, settings.Checksum, TimeSpan.Zero, timeDecompression: false).Ratio;
                rules.Add(new SweepRule(count, sampleBytes, perDocument, (int)cap, ratio));
            }
        }
        return new SweepResult(documents.Count, train.Length, test.Length, cells, rules);
    }

    public static async Task<OnlineResult> ReplayAsync(IReadOnlyList<byte[]> documents, AnalyzeSettings settings, CancellationToken cancellationToken = default)
    {
        var options = new NamespaceOptions();
        options.Checksum = settings.Checksum;
        options.Dictionary.DictionarySize = settings.DictionarySize;
        OnlineReplayResult replay = await OnlineReplay.RunAsync(documents, options, settings.Seed, cancellationToken).ConfigureAwait(false);
        return new OnlineResult(replay.Ratio, replay.RawBytes, replay.EnvelopeBytes,
            [.. replay.Versions.Select(v => new OnlineVersionResult(v.Id, v.Version, v.AfterDocuments, v.Ratio))]);
    }

    /// <summary>The whole corpus as one buffer (documents joined by newlines) through plain zstd: what no per-document scheme can beat.</summary>
    internal static double LimitRatio(IReadOnlyList<byte[]> documents, int level)
    {
        long total = documents.Sum(d => (long)d.Length + 1);
        byte[] all = new byte[total];
        int offset = 0;
        foreach (byte[] d in documents)
        {
            d.CopyTo(all, offset);
            offset += d.Length;
            all[offset++] = (byte)'\n';
        }
        using var compressor = new Compressor(level);
        return (double)total / compressor.Wrap(all).Length;
    }

    private static CodecResult Measure(byte[][] documents, CompressionCodec codec, int level, ZstdDictionary? dictionary, bool checksum, TimeSpan budget, bool timeDecompression = true)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Level = level, Checksum = checksum });
        var offsets = new int[documents.Length + 1];
        long capacity = documents.Sum(d => (long)DocumentCompressor.GetMaxEnvelopeLength(d.Length));
        byte[] envelopes = new byte[capacity];
        byte[] output = new byte[documents.Max(d => d.Length)];
        long raw = documents.Sum(d => (long)d.Length);

        void CompressAll()
        {
            int at = 0;
            for (int i = 0; i < documents.Length; i++)
            {
                compressor.TryCompress(documents[i], envelopes.AsSpan(at), out int written, dictionary);
                at += written;
                offsets[i + 1] = at;
            }
        }

        void DecompressAll()
        {
            for (int i = 0; i < documents.Length; i++)
            {
                compressor.TryDecompress(envelopes.AsSpan(offsets[i], offsets[i + 1] - offsets[i]), output, out _, dictionary);
            }
        }

        double compressSeconds = TimePasses(CompressAll, budget);
        long envelopeBytes = offsets[^1];
        for (int i = 0; i < documents.Length; i++)
        {
            // Check every document once: a measurement of wrong output is worth nothing.
            compressor.TryDecompress(envelopes.AsSpan(offsets[i], offsets[i + 1] - offsets[i]), output, out int n, dictionary);
            if (!output.AsSpan(0, n).SequenceEqual(documents[i])) throw new InvalidOperationException($"{codec} level {level} did not round-trip document {i}.");
        }
        double decompressMBps = timeDecompression ? raw / TimePasses(DecompressAll, budget) / 1e6 : 0;
        return new CodecResult(CodecName(codec), level, dictionary is not null, (double)raw / envelopeBytes, raw / compressSeconds / 1e6, decompressMBps);
    }

    /// <summary>Seconds per pass: one warm-up pass, then passes until the budget is spent (at least one).</summary>
    private static double TimePasses(Action pass, TimeSpan budget)
    {
        pass();
        int passes = 0;
        var watch = Stopwatch.StartNew();
        do
        {
            pass();
            passes++;
        }
        while (watch.Elapsed < budget);
        return watch.Elapsed.TotalSeconds / passes;
    }

    /// <summary>The compress speed, in MB/s, a recommended setting must reach when any setting does.</summary>
    internal const double RecommendMinCompressMBps = 50;

    /// <summary>The smallest output among settings that compress at <see cref="RecommendMinCompressMBps"/> or more (a write path that keeps up), with the reason.</summary>
    private static (CodecResult Best, string Reason) Recommend(IReadOnlyList<CodecResult> results)
    {
        var fast = results.Where(r => r.Codec != "stored" && r.CompressMBps >= RecommendMinCompressMBps).ToList();
        var pool = fast.Count > 0 ? fast : results.Where(r => r.Codec != "stored").ToList();
        var best = pool.MaxBy(r => r.Ratio)!;
        var plainZstd = results.FirstOrDefault(r => r.Codec == "zstd" && r.Level == 3 && !r.Dictionary);
        var c = CultureInfo.InvariantCulture;
        string gain = best.Dictionary && plainZstd is not null ? string.Create(c, $", {best.Ratio / plainZstd.Ratio:F1}x zstd-3 without a dictionary") : "";
        return (best, string.Create(c, $"{best.Codec} level {best.Level}{(best.Dictionary ? " with a trained dictionary" : "")}: ratio {best.Ratio:F2} at {best.CompressMBps:F0} MB/s compress{gain}; ") +
               (fast.Count > 0 ? string.Create(c, $"the highest ratio among settings compressing at {RecommendMinCompressMBps:F0} MB/s or more.") : string.Create(c, $"no setting reached {RecommendMinCompressMBps:F0} MB/s; the highest ratio overall.")));
    }

    internal static string CodecName(CompressionCodec codec) => codec.ToString().ToLowerInvariant();
}
