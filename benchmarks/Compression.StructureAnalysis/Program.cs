using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Compression;
using Compression.Codecs;
using Compression.Dictionaries;
using Compression.Internal;
using Compression.Structure;
using MongoDB.Bson;

// Compression.StructureAnalysis [--split random|first] [--seed N] [--fraction F] [--level L] [--dictionary-size BYTES] [--input json|bson|both]
//                               [--seconds S] [--json OUT.json] FILE.jsonl...
// Compression.StructureAnalysis vectors OUT.json DICTIONARY-4242.bin    (writes the structure format's test vectors)
// Compression.StructureAnalysis profile FILE.jsonl [json|bson]          (time per phase of the structure step)
// Compression.StructureAnalysis hot FILE.jsonl SECONDS compress|decompress|encode   (one operation in a loop, for a profiler)
// Compression.StructureAnalysis blockframe FILE.jsonl SECONDS           (frame, block and envelope decode side by side)
// Compression.StructureAnalysis hostile-shapes                          (parse and encode time with shape tables built to collide)
// Compression.StructureAnalysis fieldcodec FILE.jsonl...                (the field model, codec 8, against codecs 7 and 1 as the engine writes them)
// Compression.StructureAnalysis fields FILE.jsonl...                    (what a per-field model could code: value tables, ranges; issue #37)
// For each corpus and input kind: the documents are split into training (F of them, 0.2 by default: a seeded random
// sample, or the first ones in file order with --split first, as a live collection trains on what was written first)
// and held-out documents. Training follows the engine's sampling caps (DictionaryOptions defaults: at most 2,000
// samples and 4 MiB, documents over 32 KiB never sampled) and its dictionary size rule (or --dictionary-size). A plain zstd dictionary is
// trained on the samples as they are, and a structure model (shape table + dictionary of the same size trained on the
// packed samples) by StructureTrainer.TrainAndChoose, which also says whether it would be chosen; every held-out document is compressed both ways at zstd level L and decoded again (checked byte for
// byte). Ratios are raw bytes / stored bytes, stored bytes = zstd frame + the v1 envelope around it (magic, header,
// length varint, a 2-byte dictionary id, 4-byte checksum), or the stored envelope when that is smaller, the same
// accounting for both columns.
if (args.Length == 3 && args[0] == "vectors") return Compression.StructureAnalysis.Vectors.Write(args[1], args[2]);
if (args.Length == 3 && args[0] == "blockframe") return Compression.StructureAnalysis.BlockVsFrame.Run(args[1], double.Parse(args[2], CultureInfo.InvariantCulture));
if (args.Length == 4 && args[0] == "hot") return Compression.StructureAnalysis.HotLoop.Run(args[1], double.Parse(args[2], CultureInfo.InvariantCulture), args[3]);
if (args.Length == 1 && args[0] == "hostile-shapes") return Compression.StructureAnalysis.HostileShapes.Run();
if (args.Length >= 2 && args[0] == "fieldcodec") return Compression.StructureAnalysis.FieldCodec.Run(args[1..]);
if (args.Length >= 2 && args[0] == "fields") return Compression.StructureAnalysis.FieldAnalysis.Run(args[1..]);
if (args.Length >= 2 && args[0] == "profile") return Compression.StructureAnalysis.Profile.Run(args[1], args.Length > 2 ? args[2] : "json");
var options = Options.Parse(args);
if (options is null) return 2;

var rows = new List<Row>();
foreach (string file in options.Files)
{
    string corpus = Path.GetFileNameWithoutExtension(file);
    List<byte[]> lines = ReadLines(file);
    foreach (string input in options.Inputs)
    {
        List<byte[]> documents = input == "json" ? lines : lines.Select(ToBson).ToList();
        Row row = Analyze(corpus, input, documents, options);
        rows.Add(row);
        Console.Error.WriteLine(row.Summary());
    }
}

Console.WriteLine(Report.Markdown(rows, options));
if (options.JsonOut is { } jsonOut)
{
    File.WriteAllText(jsonOut, JsonSerializer.Serialize(rows, new JsonSerializerOptions { WriteIndented = true }) + "\n");
    Console.Error.WriteLine($"wrote {jsonOut}");
}
return rows.Any(r => r.Mismatches > 0) ? 1 : 0;

static List<byte[]> ReadLines(string path) => Compression.StructureAnalysis.Corpus.ReadLines(path);

static byte[] ToBson(byte[] json) => Compression.StructureAnalysis.Corpus.ToBson(json);

static Row Analyze(string corpus, string input, List<byte[]> documents, Options options)
{
    var random = new Random(options.Seed);
    int[] order = Enumerable.Range(0, documents.Count).ToArray();
    if (options.Split == "random") random.Shuffle(order);
    int trainingCount = Math.Max(1, (int)Math.Round(documents.Count * options.Fraction));
    var trainingPart = order[..trainingCount].Select(i => documents[i]).ToList();
    var heldOut = order[trainingCount..].Order().Select(i => documents[i]).ToList();

    // The engine's sampling caps and dictionary size rule (DictionaryOptions defaults).
    var d = new DictionaryOptions();
    var samples = new List<byte[]>();
    long sampleBytes = 0;
    foreach (byte[] document in trainingPart)
    {
        if (document.Length > d.MaxSampleDocumentSize) continue;
        if (samples.Count == d.MaxSampleCount || sampleBytes + document.Length > d.MaxSampleBytes) break;
        samples.Add(document);
        sampleBytes += document.Length;
    }
    int size = options.DictionarySize ?? d.GetTrainingSize(samples.Count, sampleBytes);
    ZstdDictionary? plain = size >= ZstdDictionary.MinimumSize && samples.Count >= d.MinSampleCount
        ? ZstdDictionaryTrainer.TryTrain(samples, size, 1000) : null;

    var row = new Row
    {
        Corpus = corpus, Input = input, Documents = documents.Count, Training = samples.Count, HeldOut = heldOut.Count,
        HeldOutBytes = heldOut.Sum(x => (long)x.Length), DictionarySize = plain?.Content.Length ?? 0,
    };
    row.PlainBytes = Stored(heldOut, doc => Frame(doc, plain, options.Level));

    if (plain is not null)
    {
        // The component's own training and per-namespace decision (held-out measurement at its default threshold).
        var stopwatch = Stopwatch.StartNew();
        StructureChoice choice = StructureTrainer.TrainAndChoose(samples, heldOut, plain, size, 2000, options.Level);
        row.TrainSeconds = stopwatch.Elapsed.TotalSeconds;
        row.FramePlainRatio = choice.Measurement.PlainRatio;
        row.FrameStructuredRatio = choice.Measurement.StructuredRatio;
        StructureModel? best = choice.Model;
        if (best is not null)
        {
            StructureModel model = best;
            row.Adopted = choice.Chosen;
            row.Shapes = model.Table.Count;
            row.ShapeTableBytes = model.Table.Serialize().Length;
            row.StructureDictionarySize = model.Dictionary.Content.Length;
            var frames = new byte[heldOut.Count][];
            var packedFlags = new bool[heldOut.Count];
            for (int i = 0; i < heldOut.Count; i++)
                (frames[i], packedFlags[i]) = StructuredFrame(heldOut[i], model, options.Level);
            row.Packed = packedFlags.Count(p => p);
            row.StructuredBytes = Stored(heldOut, doc => StructuredFrame(doc, model, options.Level).Frame);
            row.Mismatches = Check(heldOut, frames, packedFlags, model);
            row.VerifyFailures = model.Transform.VerifyFailures;
            if (options.Seconds > 0) Speed(row, heldOut, plain, model, frames, packedFlags, options);
        }
    }
    return row;
}

static byte[] Frame(byte[] document, ZstdDictionary? dictionary, int level)
{
    byte[] buffer = new byte[document.Length + document.Length / 64 + 256];
    ZstdCodec.Instance.TryCompress(document, buffer, level, dictionary, out int written);
    return buffer[..written];
}

static (byte[] Frame, bool Packed) StructuredFrame(byte[] document, StructureModel model, int level)
{
    byte[] buffer = new byte[document.Length + document.Length / 64 + 256];
    if (model.TryCompress(document, buffer, level, out int written)) return (buffer[..written], true);
    return (Frame(document, model.Dictionary, level), false);
}

// v1 envelope accounting, the same for both columns: magic + header + length varint + dictionary id (2 bytes) +
// checksum around the frame, or the stored envelope (no dictionary id) when that is smaller.
static long Stored(List<byte[]> documents, Func<byte[], byte[]> frame)
{
    long total = 0;
    foreach (byte[] document in documents)
    {
        int lengthVarint = Varint.GetLength((uint)document.Length);
        int compressed = 2 + lengthVarint + 2 + frame(document).Length + 4;
        int stored = 2 + lengthVarint + document.Length + 4;
        total += Math.Min(compressed, stored);
    }
    return total;
}

static int Check(List<byte[]> documents, byte[][] frames, bool[] packed, StructureModel model)
{
    int mismatches = 0;
    for (int i = 0; i < documents.Count; i++)
    {
        byte[] back = new byte[documents[i].Length];
        if (packed[i]) model.Decompress(frames[i], back);
        else ZstdCodec.Instance.Decompress(frames[i], back, model.Dictionary);
        if (!back.AsSpan().SequenceEqual(documents[i])) mismatches++;
    }
    return mismatches;
}

static void Speed(Row row, List<byte[]> documents, ZstdDictionary plain, StructureModel model, byte[][] frames, bool[] packed, Options options)
{
    long bytes = documents.Sum(x => (long)x.Length);
    byte[] buffer = new byte[documents.Max(x => x.Length) * 2 + 256];
    byte[][] plainFrames = documents.Select(x => Frame(x, plain, options.Level)).ToArray();
    (row.PlainCompressMBps, row.StructuredCompressMBps) = Measure(bytes, options.Seconds,
        () =>
        {
            foreach (byte[] document in documents) ZstdCodec.Instance.TryCompress(document, buffer, options.Level, plain, out _);
        },
        () =>
        {
            foreach (byte[] document in documents)
            {
                if (!model.TryCompress(document, buffer, options.Level, out _))
                    ZstdCodec.Instance.TryCompress(document, buffer, options.Level, model.Dictionary, out _);
            }
        });
    (row.PlainDecompressMBps, row.StructuredDecompressMBps) = Measure(bytes, options.Seconds,
        () =>
        {
            for (int i = 0; i < documents.Count; i++) ZstdCodec.Instance.Decompress(plainFrames[i], buffer.AsSpan(0, documents[i].Length), plain);
        },
        () =>
        {
            for (int i = 0; i < documents.Count; i++)
            {
                if (packed[i]) model.Decompress(frames[i], buffer.AsSpan(0, documents[i].Length));
                else ZstdCodec.Instance.Decompress(frames[i], buffer.AsSpan(0, documents[i].Length), model.Dictionary);
            }
        });
}

// MB/s of document bytes for two contenders, their passes interleaved (plain, structured, plain, ...) so that both see
// the same machine; after a warm-up pass each, passes go on until the budget is spent, and each one's best pass counts
// (the machine is shared: the best pass is the one least disturbed).
static (double A, double B) Measure(long bytes, double seconds, Action a, Action b)
{
    a();
    b();
    double bestA = double.MaxValue, bestB = double.MaxValue;
    var total = Stopwatch.StartNew();
    do
    {
        var one = Stopwatch.StartNew();
        a();
        bestA = Math.Min(bestA, one.Elapsed.TotalSeconds);
        one.Restart();
        b();
        bestB = Math.Min(bestB, one.Elapsed.TotalSeconds);
    } while (total.Elapsed.TotalSeconds < 2 * seconds);
    return (bytes / bestA / 1e6, bytes / bestB / 1e6);
}

internal sealed class Row
{
    public string Corpus { get; set; } = "";
    public string Input { get; set; } = "";
    public int Documents { get; set; }
    public int Training { get; set; }
    public int HeldOut { get; set; }
    public long HeldOutBytes { get; set; }
    public int DictionarySize { get; set; }
    public int StructureDictionarySize { get; set; }
    public long PlainBytes { get; set; }
    public long StructuredBytes { get; set; }
    public double PlainRatio => PlainBytes == 0 ? 0 : (double)HeldOutBytes / PlainBytes;
    public double StructuredRatio => StructuredBytes == 0 ? 0 : (double)HeldOutBytes / StructuredBytes;
    public bool Adopted { get; set; }
    public double FramePlainRatio { get; set; }
    public double FrameStructuredRatio { get; set; }
    public int Shapes { get; set; }
    public int ShapeTableBytes { get; set; }
    public int Packed { get; set; }
    public int Mismatches { get; set; }
    public long VerifyFailures { get; set; }
    public double TrainSeconds { get; set; }
    public double PlainCompressMBps { get; set; }
    public double StructuredCompressMBps { get; set; }
    public double PlainDecompressMBps { get; set; }
    public double StructuredDecompressMBps { get; set; }

    public string Summary() => string.Create(CultureInfo.InvariantCulture,
        $"{Corpus}/{Input}: plain {PlainRatio:F2}, structured {StructuredRatio:F2} (chosen: {Adopted}), packed {Packed}/{HeldOut}, shapes {Shapes}, mismatches {Mismatches}, verify failures {VerifyFailures}, " +
        $"compress {PlainCompressMBps:F0} -> {StructuredCompressMBps:F0} MB/s, decompress {PlainDecompressMBps:F0} -> {StructuredDecompressMBps:F0} MB/s");
}

internal static class Report
{
    public static string Markdown(List<Row> rows, Options options)
    {
        var s = new StringBuilder();
        string split = options.Split == "random" ? $"a seeded random {options.Fraction * 100:F0}% (seed {options.Seed})" : $"the first {options.Fraction * 100:F0}% in file order";
        string size = options.DictionarySize is { } fixedSize ? $"{fixedSize:N0} bytes" : "the engine's rule";
        s.Append(CultureInfo.InvariantCulture, $"Training on {split}, engine sampling caps; dictionary size: {size}; zstd level {options.Level}. Ratio = held-out raw bytes / stored bytes (zstd frame in a v1 envelope with checksum and a 2-byte dictionary id, or stored when smaller).\n\n");
        s.Append("| corpus | input | docs (train/held out) | dict | plain | structured | gain | frames only: plain -> structured | chosen (<= 0.97x bytes) | packed | shapes (table bytes) | compress MB/s plain -> structured | decompress MB/s plain -> structured |\n");
        s.Append("|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
        foreach (Row r in rows)
        {
            string dict = r.DictionarySize == 0 ? "none" : $"{r.DictionarySize / 1024.0:F1} KiB";
            if (r.Shapes == 0 && r.StructuredBytes == 0)
            {
                s.Append(CultureInfo.InvariantCulture, $"| {r.Corpus} | {r.Input} | {r.Training}/{r.HeldOut} | {dict} | {r.PlainRatio:F2} | n/a (no dictionary trained) | | | | | | | |\n");
                continue;
            }
            s.Append(CultureInfo.InvariantCulture,
                $"| {r.Corpus} | {r.Input} | {r.Training}/{r.HeldOut} | {dict} | {r.PlainRatio:F2} | {r.StructuredRatio:F2} | {(r.StructuredRatio / r.PlainRatio - 1) * 100:+0.0;-0.0}% | {r.FramePlainRatio:F2} -> {r.FrameStructuredRatio:F2} ({(r.FrameStructuredRatio / r.FramePlainRatio - 1) * 100:+0.0;-0.0}%) | {(r.Adopted ? "yes" : "no")} | {r.Packed}/{r.HeldOut} | {r.Shapes} ({r.ShapeTableBytes:N0} B) | {r.PlainCompressMBps:F0} -> {r.StructuredCompressMBps:F0} | {r.PlainDecompressMBps:F0} -> {r.StructuredDecompressMBps:F0} |\n");
        }
        foreach (string input in rows.Select(r => r.Input).Distinct())
        {
            var measured = rows.Where(r => r.Input == input && r.StructuredBytes > 0).ToList();
            if (measured.Count == 0) continue;
            double plain = Math.Exp(measured.Average(r => Math.Log(r.PlainRatio)));
            double structured = Math.Exp(measured.Average(r => Math.Log(r.StructuredRatio)));
            s.Append(CultureInfo.InvariantCulture, $"\nGeometric mean, {input}, {measured.Count} corpora with a dictionary: plain {plain:F2}, structured {structured:F2} ({(structured / plain - 1) * 100:+0.0;-0.0}%).");
        }
        return s.Append('\n').ToString();
    }
}

internal sealed class Options
{
    public string Split { get; private set; } = "random";
    public int Seed { get; private set; } = 42;
    public double Fraction { get; private set; } = 0.2;
    public int Level { get; private set; } = 3;
    public int? DictionarySize { get; private set; }
    public double Seconds { get; private set; } = 0.5;
    public string[] Inputs { get; private set; } = ["json", "bson"];
    public string? JsonOut { get; private set; }
    public List<string> Files { get; } = [];

    public static Options? Parse(string[] args)
    {
        var o = new Options();
        for (int i = 0; i < args.Length; i++)
        {
            string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value");
            switch (args[i])
            {
                case "--split": o.Split = Next(); break;
                case "--seed": o.Seed = int.Parse(Next(), CultureInfo.InvariantCulture); break;
                case "--fraction": o.Fraction = double.Parse(Next(), CultureInfo.InvariantCulture); break;
                case "--level": o.Level = int.Parse(Next(), CultureInfo.InvariantCulture); break;
                case "--dictionary-size": o.DictionarySize = int.Parse(Next(), CultureInfo.InvariantCulture); break;
                case "--seconds": o.Seconds = double.Parse(Next(), CultureInfo.InvariantCulture); break;
                case "--input": o.Inputs = Next() switch { "both" => ["json", "bson"], string one => [one] }; break;
                case "--json": o.JsonOut = Next(); break;
                default: o.Files.Add(args[i]); break;
            }
        }
        if (o.Files.Count == 0 || o.Split is not ("random" or "first") || o.Inputs.Any(x => x is not ("json" or "bson")) || o.Fraction is <= 0 or >= 1)
        {
            Console.Error.WriteLine("usage: Compression.StructureAnalysis [--split random|first] [--seed N] [--fraction F] [--level L] [--dictionary-size BYTES] [--input json|bson|both] [--seconds S] [--json OUT.json] FILE.jsonl...");
            return null;
        }
        foreach (string file in o.Files)
        {
            if (!File.Exists(file))
            {
                Console.Error.WriteLine($"no such file: {file}");
                return null;
            }
        }
        return o;
    }
}
