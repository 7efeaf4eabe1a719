using System.Globalization;
using System.Text.Json;
using Compression;
using Compression.StorageLoad;
using MongoDB.Bson;

// StorageLoad FILE.jsonl OUTDIR [--seed N] [--envelope-format v1|v2] [--train-first N]
// Writes OUTDIR/plain.bson ({_id, ...document} per line) and OUTDIR/compressed.bson (what Compression.MongoDB's
// serializer writes: {_id, _z: BinData(0x81, envelope)}, 0x80 with format v1), BSON documents one after the other, in file order; checks that
// every compressed document reads back through the serializer to the plain one; prints one JSON object of counts and
// the per-document overhead of the compressed form. --train-first N: the first N documents train a dictionary before any
// is written (a bulk load's collection.TrainCompressionAsync(firstBatch)); 0, the default, is the write path alone.
// _id: the document's own top-level _id when it has one (large.jsonl does), else its line number from 1 (an Int32).
//
// StorageLoad --overhead [--seed N] [--envelope-format v1|v2|both] FILE.jsonl...
// The per-document byte accounting alone (no files, no WiredTiger): a Markdown table of the average bytes per document
// of every part of the serializer's documents (BSON wrapper, envelope fields, zstd frame and block headers, content,
// and what the compressed part's own BSON length and terminator cost after compression), per corpus and format.

int seed = 42;
string formatArgument = "v3"; // the library's default (v2 stores as many bytes: only the checksum's hash differs)
bool overheadOnly = false;
int trainFirst = 0;
var positional = new List<string>();
for (int i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--seed" when i + 1 < args.Length: seed = int.Parse(args[++i], CultureInfo.InvariantCulture); break;
        case "--envelope-format" when i + 1 < args.Length: formatArgument = args[++i].ToLowerInvariant(); break;
        case "--overhead": overheadOnly = true; break;
        case "--train-first" when i + 1 < args.Length: trainFirst = int.Parse(args[++i], CultureInfo.InvariantCulture); break;
        default: positional.Add(args[i]); break;
    }
}
EnvelopeFormat[] formats = formatArgument switch
{
    "v1" => [EnvelopeFormat.V1],
    "v2" => [EnvelopeFormat.V2],
    "v3" => [EnvelopeFormat.V3],
    "both" when overheadOnly => [EnvelopeFormat.V1, EnvelopeFormat.V2],
    _ => [],
};
if (formats.Length == 0 || (overheadOnly ? positional.Count == 0 : positional.Count != 2))
{
    Console.Error.WriteLine("usage: StorageLoad FILE.jsonl OUTDIR [--seed N] [--envelope-format v1|v2|v3]");
    Console.Error.WriteLine("       StorageLoad --overhead [--seed N] [--envelope-format v1|v2|v3|both (v1 and v2)] FILE.jsonl...");
    return 2;
}
foreach (string file in overheadOnly ? positional : positional.Take(1))
{
    if (!File.Exists(file))
    {
        Console.Error.WriteLine($"StorageLoad: no such file: {file}");
        return 1;
    }
}

if (overheadOnly)
{
    var columns = new List<(string Title, IReadOnlyList<(string Title, string Value)> Rows)>();
    foreach (string file in positional)
    {
        foreach (EnvelopeFormat format in formats)
        {
            Serialized? run = await Serialized.RunAsync(file, seed, format, measureInnerFraming: true);
            if (run is null) return 1;
            columns.Add(($"{Path.GetFileNameWithoutExtension(file)}, {format.ToString().ToLowerInvariant()}", run.Overhead.Rows()));
        }
    }
    Console.WriteLine("| bytes per document | " + string.Join(" | ", columns.Select(c => c.Title)) + " |");
    Console.WriteLine("|---|" + string.Concat(columns.Select(_ => "---:|")));
    for (int row = 0; row < columns[0].Rows.Count; row++)
        Console.WriteLine($"| {columns[0].Rows[row].Title} | " + string.Join(" | ", columns.Select(c => c.Rows[row].Value)) + " |");
    return 0;
}

string input = positional[0], outDir = positional[1];
Directory.CreateDirectory(outDir);
Serialized? result = await Serialized.RunAsync(input, seed, formats[0], measureInnerFraming: false, trainFirst);
if (result is null) return 1;

WriteAll(Path.Combine(outDir, "plain.bson"), result.Plain);
WriteAll(Path.Combine(outDir, "compressed.bson"), result.Stored);

using (var json = new Utf8JsonWriter(Console.OpenStandardOutput()))
{
    json.WriteStartObject();
    json.WriteString("corpus", Path.GetFileNameWithoutExtension(input));
    json.WriteString("envelopeFormat", formats[0].ToString().ToLowerInvariant());
    json.WriteNumber("documents", result.Plain.Count);
    json.WriteNumber("trainFirst", Math.Min(trainFirst, result.Plain.Count));
    json.WriteNumber("jsonBytes", new FileInfo(input).Length);
    json.WriteNumber("bsonBytes", result.Plain.Sum(d => (long)d.Length));
    json.WriteNumber("storedBytes", result.Stored.Sum(d => (long)d.Length));
    json.WriteStartArray("dictionaryVersions");
    foreach (var (v, after) in result.Versions)
    {
        json.WriteStartObject();
        json.WriteNumber("version", v);
        json.WriteNumber("afterDocuments", after);
        json.WriteEndObject();
    }
    json.WriteEndArray();
    result.Overhead.Write(json);
    Wire.Write(json, result.Plain, result.Stored);
    result.Decode?.Write(json);
    json.WriteEndObject();
}
Console.WriteLine();
return 0;

static void WriteAll(string path, List<byte[]> documents)
{
    using var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 20);
    foreach (byte[] document in documents) file.Write(document);
}

/// <summary>One corpus through the serializer, in file order: the plain and stored documents, their accounting, the dictionary versions.</summary>
internal sealed record Serialized(List<byte[]> Plain, List<byte[]> Stored, Overhead Overhead, List<(int Version, int AfterDocuments)> Versions)
{
    /// <summary>Serializes every line of <paramref name="input"/>; null (after a message on stderr) when the corpus is unusable or does not read back.</summary>
    public static async Task<Serialized?> RunAsync(string input, int seed, EnvelopeFormat format, bool measureInnerFraming, int trainFirst = 0)
    {
        var plainDocuments = new List<byte[]>();
        var storedDocuments = new List<byte[]>();
        var versions = new List<(int Version, int AfterDocuments)>();
        await using SerializerPath path = await SerializerPath.CreateAsync(seed, format);
        var overhead = new Overhead { InnerFraming = measureInnerFraming && format == EnvelopeFormat.V1 ? path.InnerFramingCost : null };
        var documents = new List<StoredDocument>();
        int lineNumber = 0, version = 0;
        foreach (string line in File.ReadLines(input))
        {
            lineNumber++;
            if (string.IsNullOrWhiteSpace(line)) continue;
            BsonDocument fields;
            try
            {
                fields = BsonDocument.Parse(line);
            }
            catch (Exception ex) when (ex is FormatException or InvalidOperationException or BsonException)
            {
                Console.Error.WriteLine($"StorageLoad: {input}:{lineNumber}: not a JSON object: {ex.Message}");
                return null;
            }
            BsonValue id = new BsonInt32(documents.Count + 1);
            if (fields.TryGetValue("_id", out BsonValue own))
            {
                id = own;
                fields.Remove("_id");
            }
            documents.Add(new StoredDocument { Id = id, Fields = fields });
        }
        if (trainFirst > 0)
        {
            await path.TrainFirstAsync(documents.Take(trainFirst)).ConfigureAwait(false);
            if (path.DictionaryVersion != 0) versions.Add((version = path.DictionaryVersion, 0));
        }

        foreach (StoredDocument document in documents)
        {
            var plain = new BsonDocument("_id", document.Id);
            plain.AddRange(document.Fields);
            byte[] plainBytes = plain.ToBson();
            byte[] stored = path.Serialize(document);
            plainDocuments.Add(plainBytes);
            storedDocuments.Add(stored);
            overhead.Add(plainBytes, stored);
            if (path.DictionaryVersion != version)
            {
                version = path.DictionaryVersion;
                versions.Add((version, plainDocuments.Count));
            }
        }

        // Everything written must read back, byte for byte, as the plain document.
        for (int i = 0; i < storedDocuments.Count; i++)
        {
            StoredDocument back = path.Deserialize(storedDocuments[i]);
            var rebuilt = new BsonDocument("_id", back.Id);
            rebuilt.AddRange(back.Fields);
            if (!rebuilt.ToBson().AsSpan().SequenceEqual(plainDocuments[i]))
            {
                Console.Error.WriteLine($"StorageLoad: document {i + 1} of {input} does not read back through the serializer as written");
                return null;
            }
        }
        return new Serialized(plainDocuments, storedDocuments, overhead, versions)
        {
            Decode = measureInnerFraming ? null : DecodeCost.Measure(plainDocuments, storedDocuments, path),
        };
    }

    /// <summary>The client's decode cost (null with --overhead).</summary>
    public DecodeCost? Decode { get; init; }
}

/// <summary>
/// What reading a document costs the client, plain against ours, side by side in one process: every document of the
/// corpus read in file order by the driver's class map from plain BSON, then by the serializer from what it stored
/// (decompression included), alternating, at least <see cref="MinPasses"/> passes each and at least
/// <see cref="MinSeconds"/> in all (so the JIT has tiered both paths up even on a busy machine; the serializer's path
/// is already warm from the read-back check, the plain one is not); the fastest pass of each, in nanoseconds a document.
/// Each pass is timed twice: by the wall clock, and by the process's CPU time (clock_gettime(CLOCK_PROCESS_CPUTIME_ID),
/// which a busy machine inflates far less: on a shared machine the CPU figures are the ones to quote).
/// A harness figure for the storage report; the BenchmarkDotNet figures are SerializerOverheadBenchmarks'.
/// </summary>
internal sealed partial record DecodeCost(double PlainNs, double OursNs, double PlainCpuNs, double OursCpuNs, int Passes)
{
    public const int MinPasses = 10;
    public const double MinSeconds = 3;

    public static DecodeCost Measure(List<byte[]> plain, List<byte[]> stored, SerializerPath path)
    {
        double bestPlain = double.MaxValue, bestOurs = double.MaxValue, cpuPlain = double.MaxValue, cpuOurs = double.MaxValue;
        long begin = System.Diagnostics.Stopwatch.GetTimestamp();
        int pass = 0;
        for (; pass < MinPasses || System.Diagnostics.Stopwatch.GetElapsedTime(begin).TotalSeconds < MinSeconds; pass++)
        {
            long start = System.Diagnostics.Stopwatch.GetTimestamp();
            double cpu = CpuNanoseconds();
            foreach (byte[] document in plain) SerializerPath.DeserializePlain(document);
            cpuPlain = Math.Min(cpuPlain, (CpuNanoseconds() - cpu) / plain.Count);
            bestPlain = Math.Min(bestPlain, System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalNanoseconds / plain.Count);
            start = System.Diagnostics.Stopwatch.GetTimestamp();
            cpu = CpuNanoseconds();
            foreach (byte[] document in stored) path.Deserialize(document);
            cpuOurs = Math.Min(cpuOurs, (CpuNanoseconds() - cpu) / stored.Count);
            bestOurs = Math.Min(bestOurs, System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalNanoseconds / stored.Count);
        }
        return new DecodeCost(bestPlain, bestOurs, cpuPlain, cpuOurs, pass);
    }

    public void Write(Utf8JsonWriter json)
    {
        json.WriteStartObject("decode");
        json.WriteNumber("passes", Passes);
        json.WriteNumber("plainNsPerDocument", Math.Round(PlainNs, 1));
        json.WriteNumber("oursNsPerDocument", Math.Round(OursNs, 1));
        json.WriteNumber("plainCpuNsPerDocument", Math.Round(PlainCpuNs, 1));
        json.WriteNumber("oursCpuNsPerDocument", Math.Round(OursCpuNs, 1));
        json.WriteEndObject();
    }

    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    private const int ClockProcessCpuTimeId = 2; // Linux

    [System.Runtime.InteropServices.LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, out Timespec time);

    private static double CpuNanoseconds() =>
        ClockGetTime(ClockProcessCpuTimeId, out Timespec t) == 0 ? t.Seconds * 1e9 + t.Nanoseconds : throw new InvalidOperationException("clock_gettime failed");
}
