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
    public static StructureModel? TryTrain(IReadOnlyList<byte[]> samples, int dictionarySize, uint id, DocumentKind? kind = null)
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
        ZstdDictionary? dictionary = ZstdDictionaryTrainer.TryTrain(training, dictionarySize, id, transform);
        return dictionary is null ? null : new StructureModel(transform, dictionary);
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
