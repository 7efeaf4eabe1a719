using System.Globalization;
using System.Text.Json.Serialization;
using Compression.Codecs;
using Compression.Dictionaries;
using Compression.Structure;
using ZstdSharp;

namespace Compression.Tool.Analyze;

internal sealed record AnalyzeSettings
{
    public int Seed { get; init; } = 42;
    public int DictionarySize { get; init; } = 16 * 1024;
    public bool Checksum { get; init; } = true;
    public bool Quick { get; init; }
    public double TrainFraction { get; init; } = 0.2;

    /// <summary>For the online replay: how many of the first documents train a dictionary before any is written (0: none, the live write path alone).</summary>
    public int TrainFirst { get; init; }
}

/// <summary>
/// One measured setting. <paramref name="Shapes"/>: zstd with the dictionary of a structure model, so documents are packed
/// with its shape table first (envelope codec 7, docs/structure.md) and fall back to zstd with the same dictionary where
/// packing does not reproduce them; <paramref name="Dictionary"/> is then true as well.
/// </summary>
internal sealed record CodecResult(string Codec, int Level, bool Dictionary, double Ratio, double CompressMBps, double DecompressMBps, bool Shapes = false);

internal sealed record OnlineVersionResult(uint Id, int Version, long AfterDocuments, double Ratio, bool Shapes);

internal sealed record OnlineResult(double Ratio, long RawBytes, long EnvelopeBytes, IReadOnlyList<OnlineVersionResult> Versions, long Documents, long PackedDocuments, int TrainedFirst = 0);

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

    /// <summary>The zstd level of <see cref="LimitRatio"/>: 19, or 3 with <c>--quick</c>.</summary>
    public int LimitLevel { get; init; } = 19;
    public required IReadOnlyList<CodecResult> Results { get; init; }
    public required int TrainDocuments { get; init; }
    public required int TestDocuments { get; init; }
    public required int DictionarySize { get; init; }

    /// <summary>Shapes in the table of the rows with shapes; null when there are none (<see cref="ShapesNote"/> says why).</summary>
    public int? ShapeCount { get; init; }

    /// <summary>How many fields the field model trained with the shape table codes (0: the table alone, codec 7); null without rows with shapes.</summary>
    public int? ModelledFields { get; init; }

    /// <summary>Why there are no rows with shapes (packing needs the checksum, too few documents, no shape table trained); null when there are.</summary>
    public string? ShapesNote { get; init; }

    public required bool Checksum { get; init; }
    public required int Seed { get; init; }
    public required string Recommendation { get; init; }

    /// <summary>The row <see cref="Recommendation"/> names; null when no setting makes the documents smaller (compression does not pay).</summary>
    public CodecResult? Recommended { get; init; }

    /// <summary>The largest dictionary the run would train (<c>--dictionary-size</c>); <see cref="DictionarySize"/> is what was trained (not in the JSON output).</summary>
    [JsonIgnore]
    public int MaxDictionarySize { get; init; }

    public OnlineResult? Online { get; init; }

    /// <summary>What the file held: non-blank lines, and the lines skipped as not JSON (set by the command, not by <see cref="CorpusAnalyzer"/>).</summary>
    public InputSummary? Input { get; init; }
}

/// <summary>
/// The items of the input, in its <paramref name="Format"/>: <paramref name="Lines"/> (non-blank lines of JSON Lines,
/// elements of a JSON array), of which <paramref name="SkippedLines"/> were not documents; the first of those named.
/// </summary>
internal sealed record InputSummary(long Lines, long SkippedLines, IReadOnlyList<SkippedLine> FirstSkipped, CorpusFormat Format = CorpusFormat.JsonLines)
{
    /// <summary>What an item is: <c>line</c> or <c>element</c>.</summary>
    [JsonIgnore]
    public string Item => Format == CorpusFormat.JsonArray ? "element" : "line";

    /// <summary>
    /// The report's line on the items skipped: <c>3 of 150 lines skipped, not JSON documents (first at lines 5, 10, 20)</c>,
    /// or for a JSON array <c>1 of 4 elements skipped, not JSON objects (first at elements 3)</c>.
    /// </summary>
    public string SkippedSummary() => string.Create(CultureInfo.InvariantCulture,
        $"{SkippedLines:N0} of {Lines:N0} {Item}s skipped, not JSON {(Format == CorpusFormat.JsonArray ? "objects" : "documents")} (first at {Item}s {string.Join(", ", FirstSkipped.Select(l => l.Line.ToString("N0", CultureInfo.InvariantCulture)))})");
}

/// <summary>
/// Measures codecs on a corpus. Every row is measured on the same 80% of the documents (a seeded split); the zstd
/// dictionary, and the structure model (shape table and a dictionary trained on packed documents) of the rows with
/// shapes, are trained on the other 20%. Ratio = raw bytes / envelope bytes (envelope included). Speeds are of raw
/// bytes, one thread, MB = 10^6 bytes, the median of timed samples after a warm-up (<see cref="ClockPassTimer"/>); a
/// setting whose passes are short is timed <see cref="TimingRounds"/> times, in rounds over all settings seconds apart,
/// and given its fastest timing (lzbench also reports the fastest of its runs by default).
/// </summary>
internal static class CorpusAnalyzer
{
    /// <summary>Every application codec at each of its <see cref="Codec.AnalyzeLevels"/>, in the registry's order.</summary>
    internal static readonly (CompressionCodec Codec, int Level)[] FullCases =
        [.. CodecRegistry.All.Where(c => !c.IsStructured).SelectMany(c => c.AnalyzeLevels.Select(level => (c.Id, level)))];

    /// <summary>Zstd with the dictionary: at the levels zstd is measured at without one.</summary>
    private static readonly int[] FullDictionaryLevels = [.. CodecRegistry.For(CompressionCodec.Zstd).AnalyzeLevels];

    /// <summary>With <c>--quick</c>: every application codec at its default level, in the registry's order.</summary>
    internal static readonly (CompressionCodec Codec, int Level)[] QuickCases =
        [.. CodecRegistry.All.Where(c => !c.IsStructured).Select(c => (c.Id, c.DefaultLevel))];

    private static readonly int[] QuickDictionaryLevels = [CodecRegistry.For(CompressionCodec.Zstd).DefaultLevel];

    public static AnalyzeResult Analyze(IReadOnlyList<byte[]> documents, AnalyzeSettings settings, CancellationToken cancellationToken = default) =>
        Analyze(documents, settings, AnalyzeProgress.None, ClockPassTimer.System, cancellationToken);

    /// <summary>How many times a row whose timing is short (<see cref="IsRetimed"/>) is timed, in rounds over all rows; it keeps the fastest.</summary>
    public const int TimingRounds = 3;

    /// <summary>
    /// Measures every setting, trains the dictionary, measures it, then times every setting whose passes are short again
    /// in <see cref="TimingRounds"/> - 1 more rounds and keeps its fastest timings.
    /// <paramref name="progress"/> hears of each setting; <paramref name="timer"/> times the passes.
    /// </summary>
    public static AnalyzeResult Analyze(IReadOnlyList<byte[]> documents, AnalyzeSettings settings, AnalyzeProgress progress, PassTimer timer, CancellationToken cancellationToken = default)
    {
        var (train, test) = Split(documents, settings);
        TimeSpan budget = settings.Quick ? TimeSpan.FromMilliseconds(20) : TimeSpan.FromMilliseconds(300);
        var cases = settings.Quick ? QuickCases : FullCases;
        int[] dictionaryLevels = settings.Quick ? QuickDictionaryLevels : FullDictionaryLevels;
        int limitLevel = settings.Quick ? 3 : 19;

        // Steps: each setting, the training, each dictionary level, with the checksum the structure training and each
        // level with shapes (packing needs the checksum), the limit; the later timing rounds are added when known.
        long total = cases.Length + 1 + dictionaryLevels.Length + (settings.Checksum ? 1 + dictionaryLevels.Length : 0) + 1, done = 0;
        progress.Start("measuring", total);
        void Step(string what)
        {
            cancellationToken.ThrowIfCancellationRequested();
            progress.Report(done++, total, what);
        }

        var results = new List<CodecResult>();
        var measured = new List<(CompressionCodec Codec, ZstdDictionary? Dictionary)>();
        foreach (var (codec, level) in cases)
        {
            Step($"{CodecName(codec)} level {level}");
            results.Add(Measure(test, codec, level, null, settings.Checksum, budget, timer));
            measured.Add((codec, null));
        }

        // The engine's rule: min(DictionarySize, training bytes / 4, 256 x training documents).
        Step("training a zstd dictionary");
        long trainBytes = train.Sum(d => (long)d.Length);
        int dictionarySize = new DictionaryOptions { DictionarySize = settings.DictionarySize }.GetTrainingSize(train.Length, trainBytes);
        ZstdDictionary? dictionary = dictionarySize >= ZstdDictionary.MinimumSize ? ZstdDictionaryTrainer.TryTrain(train, dictionarySize, 1) : null;
        if (dictionary is not null)
        {
            foreach (int level in dictionaryLevels)
            {
                Step($"zstd level {level} with the dictionary");
                results.Add(Measure(test, CompressionCodec.Zstd, level, dictionary, settings.Checksum, budget, timer));
                measured.Add((CompressionCodec.Zstd, dictionary));
            }
        }
        else
        {
            done += dictionaryLevels.Length;
        }

        // The same dictionary levels with shapes: a structure model trained on the same share at the same size, as the
        // engine's training does. Measure packs through DocumentCompressor (format v3, the default) because its dictionary has a table.
        StructureModel? model = null;
        string? shapesNote = null;
        if (!settings.Checksum)
        {
            shapesNote = "rows with shapes not measured: packing documents needs the checksum (--no-checksum turns it off)";
        }
        else
        {
            Step("learning shapes and training a dictionary on the packed documents");
            model = dictionarySize >= ZstdDictionary.MinimumSize ? StructureTrainer.TryTrain(train, dictionarySize, 2, kind: null, fieldModel: true) : null;
            if (model is not null)
            {
                foreach (int level in dictionaryLevels)
                {
                    Step($"zstd level {level} with the dictionary and shapes");
                    results.Add(Measure(test, CompressionCodec.Zstd, level, model.Dictionary, settings.Checksum, budget, timer));
                    measured.Add((CompressionCodec.Zstd, model.Dictionary));
                }
            }
            else
            {
                done += dictionaryLevels.Length;
                shapesNote = dictionarySize < ZstdDictionary.MinimumSize
                    ? "no rows with shapes: too few documents to train a dictionary"
                    : "no rows with shapes: no shape table trained (packing takes compact JSON objects or BSON documents, and at least half of the training documents must be one)";
            }
        }

        // Timing noise must not decide. Another process can slow this one for seconds at a time (on a shared machine, by
        // 1.5-1.7x), and a timing lasts under a second: every row whose timing is short is timed again in later rounds,
        // each round over all rows in table order, and keeps its fastest timing. Noise only ever adds time.
        int[] again = [.. Enumerable.Range(0, results.Count).Where(i => IsRetimed(results[i], test, budget))];
        total += again.Length * (long)(TimingRounds - 1);
        for (int round = 2; round <= TimingRounds; round++)
        {
            foreach (int i in again)
            {
                CodecResult row = results[i];
                Step($"{Describe(row)}, timing {round} of {TimingRounds}");
                var (codec, rowDictionary) = measured[i];
                var bench = new SettingBench(test, codec, row.Level, rowDictionary, settings.Checksum);
                double compressMBps = bench.RawBytes / timer.SecondsPerPass(bench.Label(decompress: false), bench.CompressAll, budget, warmedUp: true) / 1e6;
                double decompressMBps = bench.RawBytes / timer.SecondsPerPass(bench.Label(decompress: true), bench.DecompressAll, budget, warmedUp: true) / 1e6;
                results[i] = row with { CompressMBps = Math.Max(row.CompressMBps, compressMBps), DecompressMBps = Math.Max(row.DecompressMBps, decompressMBps) };
            }
        }

        Step($"limit: the whole corpus as one zstd level {limitLevel} frame");
        double limit = LimitRatio(documents, limitLevel);
        progress.Report(done, total);
        progress.Stop();

        var (recommended, recommendation) = SettingRecommender.Recommend(results);
        return new AnalyzeResult
        {
            Documents = documents.Count,
            RawBytes = documents.Sum(d => (long)d.Length),
            LimitRatio = limit,
            LimitLevel = limitLevel,
            Results = results,
            TrainDocuments = train.Length,
            TestDocuments = test.Length,
            DictionarySize = dictionary?.Content.Length ?? 0,
            ShapeCount = model?.Table.Count,
            ModelledFields = model is null ? null : model.Transform.Fields?.Model.FieldCount ?? 0,
            ShapesNote = shapesNote,
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
    /// Same split as <c>Analyze</c>, no cap on the dictionary size. First: every size of <paramref name="sizes"/> at
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
                        : Measure(test, CompressionCodec.Zstd, level, dictionary, settings.Checksum, full ? budget : TimeSpan.Zero, ClockPassTimer.System, timeDecompression: false);
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
                double ratio = dictionary is null ? 0 : Measure(test, CompressionCodec.Zstd, 3, dictionary, settings.Checksum, TimeSpan.Zero, ClockPassTimer.System, timeDecompression: false).Ratio;
                rules.Add(new SweepRule(count, sampleBytes, perDocument, (int)cap, ratio));
            }
        }
        return new SweepResult(documents.Count, train.Length, test.Length, cells, rules);
    }

    public static async Task<OnlineResult> ReplayAsync(IReadOnlyList<byte[]> documents, AnalyzeSettings settings, AnalyzeProgress? progress = null, CancellationToken cancellationToken = default)
    {
        var options = new NamespaceOptions();
        options.Checksum = settings.Checksum;
        options.Dictionary.DictionarySize = settings.DictionarySize;
        progress ??= AnalyzeProgress.None;
        progress.Start("online replay (documents)", documents.Count);
        OnlineReplayResult replay = await OnlineReplay.RunAsync(documents, options, settings.Seed, cancellationToken, n => progress.Report(n, documents.Count), settings.TrainFirst).ConfigureAwait(false);
        progress.Stop();
        return new OnlineResult(replay.Ratio, replay.RawBytes, replay.EnvelopeBytes,
            [.. replay.Versions.Select(v => new OnlineVersionResult(v.Id, v.Version, v.AfterDocuments, v.Ratio, v.Shapes))], replay.Documents, replay.Packed,
            Math.Min(settings.TrainFirst, documents.Count));
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

    private static CodecResult Measure(byte[][] documents, CompressionCodec codec, int level, ZstdDictionary? dictionary, bool checksum, TimeSpan budget, PassTimer timer, bool timeDecompression = true)
    {
        var bench = new SettingBench(documents, codec, level, dictionary, checksum);
        double compressSeconds = timer.SecondsPerPass(bench.Label(decompress: false), bench.CompressAll, budget);
        bench.CheckRoundTrip(); // a measurement of wrong output is worth nothing
        double decompressMBps = timeDecompression ? bench.RawBytes / timer.SecondsPerPass(bench.Label(decompress: true), bench.DecompressAll, budget) / 1e6 : 0;
        return new CodecResult(CodecName(codec), level, dictionary is not null, (double)bench.RawBytes / bench.EnvelopeBytes, bench.RawBytes / compressSeconds / 1e6, decompressMBps, dictionary is { HasShapeTable: true });
    }

    /// <summary>
    /// Whether a row is timed again in later rounds: its compress pass is short enough that a timing of
    /// <paramref name="budget"/> holds <see cref="ClockPassTimer.MinTimedPasses"/> of them. A slower row's timing already
    /// lasts a second or more (warm-up and three passes), which spans the machine's moments, and timing it again would
    /// multiply a long wait.
    /// </summary>
    private static bool IsRetimed(CodecResult row, byte[][] documents, TimeSpan budget)
    {
        if (row.CompressMBps <= 0) return false;
        double passSeconds = documents.Sum(d => (long)d.Length) / (row.CompressMBps * 1e6);
        return passSeconds * ClockPassTimer.MinTimedPasses <= budget.TotalSeconds;
    }

    /// <summary>One setting on the measured documents: <see cref="CompressAll"/> writes their envelopes, <see cref="DecompressAll"/> reads them back.</summary>
    private sealed class SettingBench
    {
        private readonly byte[][] _documents;
        private readonly DocumentCompressor _compressor;
        private readonly ZstdDictionary? _dictionary;
        private readonly int[] _offsets;
        private readonly byte[] _envelopes;
        private readonly byte[] _output;
        private readonly string _name;
        private readonly int _level;

        public SettingBench(byte[][] documents, CompressionCodec codec, int level, ZstdDictionary? dictionary, bool checksum)
        {
            _documents = documents;
            _compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Level = level, Checksum = checksum });
            _dictionary = dictionary;
            _offsets = new int[documents.Length + 1];
            _envelopes = new byte[documents.Sum(d => (long)DocumentCompressor.GetMaxEnvelopeLength(d.Length))];
            _output = new byte[documents.Max(d => d.Length)];
            _name = CodecName(codec);
            _level = level;
            RawBytes = documents.Sum(d => (long)d.Length);
        }

        public long RawBytes { get; }

        /// <summary>The envelopes' bytes after <see cref="CompressAll"/>.</summary>
        public long EnvelopeBytes => _offsets[^1];

        public string Label(bool decompress) => PassTimer.Label(_name, _level, _dictionary is not null, decompress, _dictionary is { HasShapeTable: true });

        public void CompressAll()
        {
            int at = 0;
            for (int i = 0; i < _documents.Length; i++)
            {
                _compressor.TryCompress(_documents[i], _envelopes.AsSpan(at), out int written, _dictionary);
                at += written;
                _offsets[i + 1] = at;
            }
        }

        public void DecompressAll()
        {
            for (int i = 0; i < _documents.Length; i++)
            {
                _compressor.TryDecompress(_envelopes.AsSpan(_offsets[i], _offsets[i + 1] - _offsets[i]), _output, out _, _dictionary);
            }
        }

        /// <summary>Decodes every envelope <see cref="CompressAll"/> wrote and compares it with its document; throws on the first that differs.</summary>
        public void CheckRoundTrip()
        {
            for (int i = 0; i < _documents.Length; i++)
            {
                _compressor.TryDecompress(_envelopes.AsSpan(_offsets[i], _offsets[i + 1] - _offsets[i]), _output, out int n, _dictionary);
                if (!_output.AsSpan(0, n).SequenceEqual(_documents[i])) throw new InvalidOperationException($"{_name} level {_level} did not round-trip document {i}.");
            }
        }
    }

    internal static string CodecName(CompressionCodec codec) => CodecRegistry.For(codec).Name;

    /// <summary>Whether the codec named <paramref name="name"/> (a row's <see cref="CodecResult.Codec"/>) has a single level, so a level says nothing about it.</summary>
    internal static bool HasOneLevel(string name) => CodecRegistry.All.Any(c => c.Name == name && c.MinLevel == c.MaxLevel);

    /// <summary>A row as the progress names it: <c>zstd level 3 with the dictionary and shapes</c>.</summary>
    internal static string Describe(CodecResult row) =>
        $"{row.Codec} level {row.Level}{(row.Shapes ? " with the dictionary and shapes" : row.Dictionary ? " with the dictionary" : "")}";
}
