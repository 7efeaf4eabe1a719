using System.Buffers;
using Compression.Codecs;
using Compression.Dictionaries;

namespace Compression.Structure;

/// <summary>What one setting gave on held-out documents: frame bytes (a document is counted stored when that is smaller).</summary>
/// <param name="Documents">Held-out documents measured.</param>
/// <param name="RawBytes">Their total size.</param>
/// <param name="PlainBytes">zstd frames with the plain dictionary (trained on the documents as they are).</param>
/// <param name="StructuredBytes">Frames with the structure model: packed where the transform applies, the document as it is elsewhere.</param>
/// <param name="Packed">How many documents the transform applied to.</param>
internal readonly record struct StructureMeasurement(int Documents, long RawBytes, long PlainBytes, long StructuredBytes, int Packed)
{
    public double PlainRatio => PlainBytes == 0 ? 0 : (double)RawBytes / PlainBytes;

    public double StructuredRatio => StructuredBytes == 0 ? 0 : (double)RawBytes / StructuredBytes;

    /// <summary>Whether the structure model is worth adopting: at most <paramref name="threshold"/> times the plain bytes.</summary>
    public bool StructureWins(double threshold) => StructuredBytes <= PlainBytes * threshold;
}

/// <summary>
/// The outcome of <see cref="StructureTrainer.TrainAndChoose"/>: the model trained (null when none could be), whether it
/// is chosen over the plain dictionary, and what it measured against it on held-out documents.
/// </summary>
internal sealed record StructureChoice(StructureModel? Model, bool Chosen, StructureMeasurement Measurement);

/// <summary>
/// Trains structure models and measures them against the plain dictionary on held-out documents: the measurement a
/// training coordinator uses to choose, per namespace, whether the transform is used (docs/structure.md).
/// </summary>
internal static class StructureTrainer
{
    /// <summary>
    /// The structure model is chosen when its held-out bytes are at most this fraction of the plain dictionary's: 5%
    /// smaller, the margin a new dictionary version needs too (<c>AdoptionThreshold</c>). A table costs write time, and
    /// its dictionary holds values only, so it generalizes less to documents unlike the samples: on emoji in file order
    /// a table 4% better on the held-out samples wrote 7% more bytes online (docs/structure.md, "Choosing").
    /// </summary>
    public const double DefaultThreshold = 0.95;

    /// <summary>
    /// Learns a shape table from <paramref name="samples"/> and trains a zstd dictionary of at most
    /// <paramref name="dictionarySize"/> bytes on what the writer would compress: the packed stream of each sample, or
    /// the sample itself where the transform does not apply. Null when the samples are not documents of one kind or
    /// zstd cannot train on them.
    /// </summary>
    public static StructureModel? TryTrain(IReadOnlyList<byte[]> samples, int dictionarySize, uint id, DocumentKind? kind = null) =>
        TryTrain(samples, dictionarySize, id, kind, fieldModel: false);

    /// <summary>
    /// As <see cref="TryTrain(IReadOnlyList{byte[]}, int, uint, DocumentKind?)"/>; with <paramref name="fieldModel"/>,
    /// also learns a field model from the samples' packed streams (docs/field-model.md) and trains the dictionary on what
    /// codec 8 compresses: each sample's residual (the packed stream without the values the model codes).
    /// </summary>
    public static StructureModel? TryTrain(IReadOnlyList<byte[]> samples, int dictionarySize, uint id, DocumentKind? kind, bool fieldModel)
    {
        ArgumentNullException.ThrowIfNull(samples);
        kind ??= ShapeTableBuilder.DetectKind(samples);
        if (kind is not { } documentKind) return null;
        var builder = new ShapeTableBuilder(documentKind);
        foreach (byte[] sample in samples) builder.Add(sample);
        if (builder.Accepted == 0) return null;
        var transform = new ShapeTransform(builder.Build());
        var training = new List<byte[]>(samples.Count);
        byte[] buffer = new byte[samples.Count == 0 ? 1 : samples.Max(s => s.Length)];
        foreach (byte[] sample in samples)
            training.Add(transform.TryEncode(sample, buffer, out int packed) ? buffer[..packed] : sample);
        if (fieldModel && TryLearnFields(transform.Table, samples, training, dictionarySize) is { } fields)
        {
            var withFields = new ShapeTransform(transform.Table, fields.Model);
            var residuals = new List<byte[]>(training);
            for (int i = 0; i < residuals.Count; i++)
            {
                if (ReferenceEquals(residuals[i], samples[i])) continue; // not packed: compressed as it is
                var symbols = new RansEncoder();
                byte[] residual = new byte[residuals[i].Length];
                if (fields.TrySplit(residuals[i], residual, out int length, symbols)) residuals[i] = residual[..length];
            }
            // What the model leaves can be too little for zstd to train on (every value of a record coded): the
            // dictionary is then trained on the packed streams, which codec 8's residuals are parts of.
            if ((ZstdDictionaryTrainer.TryTrain(residuals, dictionarySize, id, withFields)
                ?? ZstdDictionaryTrainer.TryTrain(training, dictionarySize, id, withFields)) is { } withFieldsDictionary)
                return new StructureModel(withFields, withFieldsDictionary);
        }
        ZstdDictionary? dictionary = ZstdDictionaryTrainer.TryTrain(training, dictionarySize, id, transform);
        return dictionary is null ? null : new StructureModel(transform, dictionary);
    }

    /// <summary>
    /// The field model of the packed samples (<paramref name="training"/> holds each sample's packed stream, or the
    /// sample where it did not pack), its fields chosen by measurement: a model is learned from three quarters of the
    /// packed samples, and each of its fields in turn is added only when coding it makes the other quarter smaller (the residual's zstd block with a dictionary trained on the first three quarters' packed streams, plus
    /// the rANS stream). Fields whose values zstd codes better in context (caniuse's runs of support flags) stay with
    /// zstd. The chosen fields are then learned again from every packed sample. Null when no field pays.
    /// </summary>
    private static FieldCoder? TryLearnFields(ShapeTable table, IReadOnlyList<byte[]> samples, IReadOnlyList<byte[]> training, int dictionarySize)
    {
        var packed = new List<byte[]>();
        for (int i = 0; i < training.Count; i++)
        {
            if (!ReferenceEquals(training[i], samples[i])) packed.Add(training[i]);
        }
        var all = new FieldModelBuilder(table);
        foreach (byte[] stream in packed) all.Add(stream);
        List<FieldModel.FieldDefinition> definitions = all.BuildDefinitions();
        if (definitions.Count == 0) return null;

        var learn = new List<byte[]>();
        var check = new List<byte[]>();
        for (int i = 0; i < packed.Count; i++) (i % 4 == 3 ? check : learn).Add(packed[i]);
        ZstdDictionary? dictionary = check.Count == 0 ? null : ZstdDictionaryTrainer.TryTrain(learn, dictionarySize, 0);
        if (dictionary is not null)
        {
            var partial = new FieldModelBuilder(table);
            foreach (byte[] stream in learn) partial.Add(stream);
            // Forward: from no field (the packed stream alone), add each field that makes the check quarter smaller, the
            // fields that code the most bytes first. (Dropping fields one by one from all of them keeps fields that only
            // pay together with their neighbours gone: a run of flags zstd codes as one match.)
            List<FieldModel.FieldDefinition> candidates = [.. partial.BuildDefinitions().OrderByDescending(d => d.Coded).ThenBy(d => d.Key * 2 + (d.Items ? 1 : 0))];
            // The first field pays the rANS stream's state for all: it is counted as paid, so each field is judged on what
            // it codes, and the model as a whole is judged against none at the end.
            var kept = new List<FieldModel.FieldDefinition>();
            long none = MeasureFields(table, partial, kept, check, dictionary);
            long best = none + (long)Rans.StateLength * check.Count;
            foreach (FieldModel.FieldDefinition candidate in candidates)
            {
                List<FieldModel.FieldDefinition> with = [.. kept, candidate];
                with.Sort((x, y) => (x.Key * 2 + (x.Items ? 1 : 0)).CompareTo(y.Key * 2 + (y.Items ? 1 : 0)));
                long bytes = MeasureFields(table, partial, with, check, dictionary);
                // A field must save clearly, not by the noise of a few check samples: an eighth of a byte a document and
                // 0.1% of the bytes (in file order, earthquakes kept eight fields more without this, and lost 13%; a
                // quarter of a byte and 0.2% cost movies 3%).
                if (bytes < best - Math.Max(check.Count / 8, best / 1000)) (kept, best) = (with, bytes);
            }
            if (best >= none) kept.Clear();
            var chosen = new HashSet<(int, bool)>(kept.Select(d => (d.Key, d.Items)));
            definitions = [.. definitions.Where(d => chosen.Contains((d.Key, d.Items)))];
        }
        return all.Build(definitions) is { } model ? new FieldCoder(table, model) : null;
    }

    /// <summary>What codec 8 would write for <paramref name="streams"/> (packed) with a model of <paramref name="definitions"/>: section and rANS bytes.</summary>
    private static long MeasureFields(ShapeTable table, FieldModelBuilder builder, IReadOnlyList<FieldModel.FieldDefinition> definitions,
        IReadOnlyList<byte[]> streams, ZstdDictionary dictionary)
    {
        long total = 0;
        FieldModel? model = builder.Build(definitions);
        if (model is null) return streams.Sum(stream => (long)Section(stream, stream.Length, dictionary));
        var coder = new FieldCoder(table, model);
        var symbols = new RansEncoder();
        int max = streams.Max(stream => stream.Length);
        byte[] residual = new byte[max];
        foreach (byte[] stream in streams)
        {
            symbols.Reset();
            if (!coder.TrySplit(stream, residual, out int length, symbols))
            {
                total += stream.Length;
                continue;
            }
            total += Section(residual, length, dictionary) + symbols.Encode().Length;
        }
        return total;
    }

    private static int Section(byte[] residual, int length, ZstdDictionary dictionary)
    {
        if (length == 0) return 1;
        byte[] block = ArrayPool<byte>.Shared.Rent(length + 64);
        try
        {
            bool zstd = ZstdBlockCodec.Instance.TryCompress(residual.AsSpan(0, length), block, 3, dictionary, out int written) && written < length;
            return 1 + (zstd ? written : length);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(block);
        }
    }

    /// <summary>Frame bytes of <paramref name="documents"/> with the plain dictionary and with <paramref name="model"/>.</summary>
    public static StructureMeasurement Measure(IReadOnlyList<byte[]> documents, ZstdDictionary? plain, StructureModel? model, int level)
    {
        ArgumentNullException.ThrowIfNull(documents);
        int max = documents.Count == 0 ? 0 : documents.Max(d => d.Length);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(ZstdBound(max));
        try
        {
            long raw = 0, plainBytes = 0, structured = 0;
            int packed = 0;
            foreach (byte[] document in documents)
            {
                raw += document.Length;
                long plainFrame = Frame(document, plain, level, buffer);
                plainBytes += plainFrame;
                if (model is null)
                {
                    structured += plainFrame;
                }
                else if (model.TryCompress(document, buffer, level, out int written) && written < document.Length)
                {
                    structured += written;
                    packed++;
                }
                else
                {
                    structured += Frame(document, model.Dictionary, level, buffer);
                }
            }
            return new StructureMeasurement(documents.Count, raw, plainBytes, structured, packed);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer, clearArray: true);
        }
    }

    /// <summary>
    /// The per-namespace choice: trains a structure model on <paramref name="training"/>, measures it and the plain
    /// dictionary on <paramref name="holdout"/> (documents it was not trained on), and chooses it when its bytes are at
    /// most <paramref name="threshold"/> times the plain dictionary's.
    /// </summary>
    public static StructureChoice TrainAndChoose(IReadOnlyList<byte[]> training, IReadOnlyList<byte[]> holdout, ZstdDictionary? plain,
        int dictionarySize, uint id, int level, double threshold = DefaultThreshold)
    {
        StructureModel? model = TryTrain(training, dictionarySize, id);
        StructureMeasurement measurement = Measure(holdout, plain, model, level);
        return new StructureChoice(model, model is not null && measurement.StructureWins(threshold), measurement);
    }

    private static int ZstdBound(int length) => length + (length >> 7) + 128;

    private static long Frame(ReadOnlySpan<byte> document, ZstdDictionary? dictionary, int level, byte[] buffer)
    {
        if (document.IsEmpty) return 0;
        return ZstdCodec.Instance.TryCompress(document, buffer, level, dictionary, out int written) ? Math.Min(written, document.Length) : document.Length;
    }
}
