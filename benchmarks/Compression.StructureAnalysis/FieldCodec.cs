using System.Diagnostics;
using System.Globalization;
using System.Text;
using Compression.Dictionaries;
using Compression.Structure;
using MongoDB.Bson;

namespace Compression.StructureAnalysis;

/// <summary>
/// `fieldcodec FILE.jsonl...`: the field model (codec 9 in v3: codec 8 with the checksum in its stream) against the packed stream alone (codec 7) and the plain
/// dictionary (codec 1), each measured as what the engine writes: v3 envelopes with checksum, zstd level 3, on the
/// same seeded 80% held out, the models trained on the other 20% with the engine's sampling caps and size rule. Every
/// envelope is decoded again and compared byte for byte. Issue #37.
/// </summary>
internal static class FieldCodec
{
    public static int Run(string[] files)
    {
        int mismatches = 0;
        Console.WriteLine("| corpus | input | held-out docs | raw B/doc | plain dict B/doc | packed (7) B/doc | fields (9) B/doc | 9 vs 7 | 9 vs plain | written as 9 | model bytes | compress MB/s 7 / 9 | decompress MB/s 7 / 9 |");
        Console.WriteLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (string file in files)
        {
            List<byte[]> lines = ReadLines(file);
            foreach (string input in new[] { "json", "bson" })
            {
                List<byte[]> documents = input == "json" ? lines : [.. lines.Select(ToBson)];
                mismatches += Measure(Path.GetFileNameWithoutExtension(file), input, documents);
            }
        }
        return mismatches == 0 ? 0 : 1;
    }

    private static int Measure(string corpus, string input, List<byte[]> documents)
    {
        var random = new Random(42);
        int[] order = [.. Enumerable.Range(0, documents.Count)];
        // FIELDCODEC_SPLIT=first: train on the first 20% in file order, as a live collection does (timestamps grow).
        if (Environment.GetEnvironmentVariable("FIELDCODEC_SPLIT") != "first") random.Shuffle(order);
        int trainingCount = Math.Max(1, (int)Math.Round(documents.Count * 0.2));
        var heldOut = order[trainingCount..].Order().Select(i => documents[i]).ToList();
        var d = new DictionaryOptions();
        var samples = new List<byte[]>();
        long sampleBytes = 0;
        foreach (byte[] document in order[..trainingCount].Select(i => documents[i]))
        {
            if (document.Length > d.MaxSampleDocumentSize) continue;
            if (samples.Count == d.MaxSampleCount || sampleBytes + document.Length > d.MaxSampleBytes) break;
            samples.Add(document);
            sampleBytes += document.Length;
        }
        int size = d.GetTrainingSize(samples.Count, sampleBytes);
        DocumentKind? kind = input == "json" ? DocumentKind.Json : DocumentKind.BsonElements;
        ZstdDictionary? plain = ZstdDictionaryTrainer.TryTrain(samples, size, 10);
        StructureModel? packed = StructureTrainer.TryTrain(samples, size, 11, kind, fieldModel: false);
        StructureModel? fields = StructureTrainer.TryTrain(samples, size, 12, kind, fieldModel: true);
        if (plain is null || packed is null || fields is null)
        {
            Console.WriteLine($"| {corpus} | {input} | {heldOut.Count:N0} | no dictionary | | | | | | | | | |");
            return 0;
        }
        var compressor = new DocumentCompressor(new DocumentCompressorOptions());
        long raw = heldOut.Sum(x => (long)x.Length);
        int mismatches = 0;
        (long plainBytes, _, _, _) = Encode(compressor, heldOut, plain.Id == 0 ? null : plain, ref mismatches);
        (long packedBytes, _, double c7, double d7) = Encode(compressor, heldOut, packed.Dictionary, ref mismatches);
        (long fieldBytes, int as8, double c8, double d8) = Encode(compressor, heldOut, fields.Dictionary, ref mismatches);
        byte[] serialized = fields.Dictionary.Shapes!.Serialize();
        int modelBytes = serialized.Length;
        // What a reader holds for the table and model: the managed bytes parsing them allocates (stderr).
        long before = GC.GetAllocatedBytesForCurrentThread();
        ShapeTransform parsed = ShapeTransform.Parse(serialized);
        long parsedBytes = GC.GetAllocatedBytesForCurrentThread() - before;
        GC.KeepAlive(parsed);
        Console.Error.WriteLine($"{corpus} {input}: table and model {modelBytes:N0} B stored, {parsedBytes:N0} B allocated when read; dictionary {fields.Dictionary.Content.Length:N0} B");
        double n = heldOut.Count;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {corpus} | {input} | {heldOut.Count:N0} | {raw / n:F1} | {plainBytes / n:F1} | {packedBytes / n:F1} | {fieldBytes / n:F1} | {(double)fieldBytes / packedBytes:F3} | {(double)fieldBytes / plainBytes:F3} | {as8:N0} | {modelBytes:N0} | {c7:F0} / {c8:F0} | {d7:F0} / {d8:F0} |"));
        Breakdown(corpus, input, heldOut, fields);
        if (mismatches > 0) Console.Error.WriteLine($"{corpus} {input}: {mismatches} documents did not come back identical");
        return mismatches;
    }

    private static (long Bytes, int Field, double CompressMBps, double DecompressMBps) Encode(DocumentCompressor compressor, List<byte[]> documents, ZstdDictionary? dictionary, ref int mismatches)
    {
        var envelopes = new byte[documents.Count][];
        long total = 0, raw = 0;
        int field = 0;
        byte[] buffer = new byte[DocumentCompressor.GetMaxEnvelopeLength(documents.Max(x => x.Length))];
        for (int i = 0; i < documents.Count; i++)
        {
            compressor.TryCompress(documents[i], buffer, out int written, dictionary);
            envelopes[i] = buffer[..written];
            total += written;
            raw += documents[i].Length;
            if ((buffer[1] & 0x0F) is (int)CompressionCodec.FieldZstd or (int)CompressionCodec.FieldZstdFoldedChecksum) field++;
        }
        byte[] output = new byte[documents.Max(x => x.Length)];
        for (int i = 0; i < documents.Count; i++)
        {
            compressor.TryDecompress(envelopes[i], output, out int length, dictionary);
            if (!output.AsSpan(0, length).SequenceEqual(documents[i])) mismatches++;
        }
        // Speed: the best of five passes each way (a shared machine: ratios of the columns, not absolute figures).
        double bestCompress = double.MaxValue, bestDecompress = double.MaxValue;
        for (int pass = 0; pass < 5; pass++)
        {
            var watch = Stopwatch.StartNew();
            foreach (byte[] document in documents) compressor.TryCompress(document, buffer, out _, dictionary);
            bestCompress = Math.Min(bestCompress, watch.Elapsed.TotalSeconds);
            watch.Restart();
            foreach (byte[] envelope in envelopes) compressor.TryDecompress(envelope, output, out _, dictionary);
            bestDecompress = Math.Min(bestDecompress, watch.Elapsed.TotalSeconds);
        }
        return (total, field, raw / 1e6 / bestCompress, raw / 1e6 / bestDecompress);
    }

    /// <summary>Where codec 8's bytes go, per document: the packed stream, the residual, its zstd block, the rANS stream (stderr).</summary>
    private static void Breakdown(string corpus, string input, List<byte[]> documents, StructureModel model)
    {
        ShapeTransform shapes = model.Dictionary.Shapes!;
        if (shapes.Fields is null)
        {
            Console.Error.WriteLine($"{corpus} {input}: no field pays");
            return;
        }
        long packedTotal = 0, residualTotal = 0, blockTotal = 0, ransTotal = 0, symbolsTotal = 0;
        int zstdSections = 0, n = 0;
        byte[] packed = new byte[documents.Max(x => x.Length)];
        byte[] residual = new byte[packed.Length];
        byte[] block = new byte[packed.Length * 2 + 64];
        var symbols = new RansEncoder();
        foreach (byte[] document in documents)
        {
            if (!shapes.TryEncode(document, packed, out int packedLength)) continue;
            symbols.Reset();
            if (!shapes.Fields!.TrySplit(packed.AsSpan(0, packedLength), residual, out int residualLength, symbols)) continue;
            n++;
            packedTotal += packedLength;
            residualTotal += residualLength;
            symbolsTotal += symbols.Count;
            ransTotal += symbols.Encode().Length;
            if (residualLength > 0 && Compression.Codecs.ZstdBlockCodec.Instance.TryCompress(residual.AsSpan(0, residualLength), block, 3, model.Dictionary, out int b) && b < residualLength)
            {
                blockTotal += b;
                zstdSections++;
            }
            else
            {
                blockTotal += residualLength;
            }
        }
        if (Environment.GetEnvironmentVariable("FIELDCODEC_VERBOSE") is not null)
        {
            FieldModel m = shapes.Fields.Model;
            var names = new Dictionary<int, string>();
            for (int id = 1; id <= shapes.Table.Count; id++)
                for (int k = 0; k < shapes.Table.KeyCount(id); k++) names[shapes.Table.FirstKey(id) + k] = Encoding.UTF8.GetString(shapes.Table.Key(id, k));
            for (int f = 0; f < m.FieldCount; f++)
            {
                FieldModel.Field field = m[f];
                Console.Error.WriteLine($"  field {names.GetValueOrDefault(field.Key)}{(field.Items ? "[]" : "")}: {field.ValueCount} values, {field.Templates.Length} templates, range tag 0x{field.RangeTag:x2} bits {field.RangeBits}, escape {field.Frequency(field.EscapeSymbol)}/4096"
                    + (field.SourceKey >= 0 ? $", source {names.GetValueOrDefault(field.SourceKey >> 1)}{((field.SourceKey & 1) != 0 ? "[]" : "")} (key {field.SourceKey >> 1}){(field.RangeRelative ? ", relative range" : "")}{(field.CopyDelimiter != 0 ? $", copies the part after its last '{(char)field.CopyDelimiter}'" + (field.CopySkip > 0 ? $" less {field.CopySkip} bytes" : "") : "")}" : "") + $" (key {field.Key})");
            }
        }
        Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{corpus} {input}: per document: packed {packedTotal / (double)n:F1} B, residual {residualTotal / (double)n:F1} B, section {blockTotal / (double)n:F1} B ({zstdSections} of {n} zstd), rANS {ransTotal / (double)n:F1} B for {symbolsTotal / (double)n:F1} symbols"));
    }

    private static List<byte[]> ReadLines(string path) => Corpus.ReadLines(path);

    /// <summary>The elements, as the serializer compresses them (formats v2 and v3): the document without its length and NUL.</summary>
    private static byte[] ToBson(byte[] json) => Corpus.ToBson(json)[4..^1];
}
