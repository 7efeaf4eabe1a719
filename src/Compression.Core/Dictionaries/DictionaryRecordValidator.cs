using Compression.Codecs;
using Compression.Structure;

namespace Compression.Dictionaries;

/// <summary>
/// Checks a record read from a <see cref="DictionaryStore"/> before anything uses it: stores are untrusted, and a record
/// that lies about its id, namespace or version could make a client write envelopes no other client can read.
/// </summary>
internal static class DictionaryRecordValidator
{
    /// <summary>
    /// Returns the dictionary a record holds, or throws <see cref="InvalidDataException"/> naming the store and the problem.
    /// </summary>
    /// <param name="record">What the store returned.</param>
    /// <param name="store">The store, named in the message.</param>
    /// <param name="expectedId">The id asked for, when a record was asked for by id.</param>
    /// <param name="expectedNamespace">The namespace it must belong to, when it is to be adopted for writing.</param>
    /// <param name="maxDictionaryBytes">The largest dictionary accepted.</param>
    public static ZstdDictionary Validate(DictionaryRecord record, DictionaryStore store, uint? expectedId, string? expectedNamespace, int maxDictionaryBytes)
    {
        Check(record, store, expectedId, expectedNamespace, maxDictionaryBytes);
        ShapeTransform? shapes = null;
        try
        {
            if (!record.Shapes.IsEmpty) shapes = ShapeTransform.Parse(record.Shapes.Span);
        }
        catch (InvalidDataException ex)
        {
            throw Invalid(record, store, $"its shape table is not usable: {ex.Message}", ex);
        }
        try
        {
            return ZstdDictionary.Create(record.Id, record.Content.Span, maxDictionaryBytes, shapes);
        }
        catch (InvalidDataException ex)
        {
            throw Invalid(record, store, ex.Message, ex);
        }
    }

    /// <summary>Checks every field of the record (not yet that zstd can load the content); throws <see cref="InvalidDataException"/>.</summary>
    public static void Check(DictionaryRecord record, DictionaryStore store, uint? expectedId, string? expectedNamespace, int maxDictionaryBytes)
    {
        string? problem = FindProblem(record, expectedId, expectedNamespace, maxDictionaryBytes);
        if (problem is not null) throw Invalid(record, store, problem, null);
    }

    private static string? FindProblem(DictionaryRecord record, uint? expectedId, string? expectedNamespace, int maxDictionaryBytes)
    {
        if (expectedId is uint id && record.Id != id) return $"asked for id {id}, the record says {record.Id}";
        if (record.Id == 0) return "id 0 is not a dictionary id";
        if (string.IsNullOrEmpty(record.Namespace)) return "the record names no namespace";
        if (expectedNamespace is not null && !string.Equals(record.Namespace, expectedNamespace, StringComparison.Ordinal))
            return $"it belongs to namespace '{record.Namespace}', not '{expectedNamespace}'";
        if (record.Version is < 1 or > DictionaryRecord.MaxVersion) return $"version {record.Version} is not a version (1 to {DictionaryRecord.MaxVersion})";
        if (record.Codec != CompressionCodec.Zstd) return $"codec {record.Codec} is not zstd";
        if (record.Level < ZstdCodec.MinimumLevel || record.Level > ZstdCodec.MaximumLevel)
            return $"level {record.Level} is out of zstd's range ({ZstdCodec.MinimumLevel} to {ZstdCodec.MaximumLevel})";
        if (record.SampleCount < 0) return $"sample count {record.SampleCount} is negative";
        if (!double.IsFinite(record.Ratio) || record.Ratio < 0) return $"ratio {record.Ratio} is not a ratio";
        if (record.Content.Length > maxDictionaryBytes) return $"{record.Content.Length} bytes, over MaxDictionaryBytes ({maxDictionaryBytes})";
        if (DictionaryRecord.ComputeContentHash(record.Content.Span) != record.ContentHash)
            return $"the content does not match its hash (0x{record.ContentHash:X16})";
        if (record.Shapes.Length > ShapeTransform.MaxStoredLength)
            return $"its shape table has {record.Shapes.Length} bytes, over {ShapeTransform.MaxStoredLength}";
        if (record.Shapes.IsEmpty ? record.ShapesHash != 0 : DictionaryRecord.ComputeContentHash(record.Shapes.Span) != record.ShapesHash)
            return record.Shapes.IsEmpty
                ? $"its shape table is missing (the record has its hash, 0x{record.ShapesHash:X16})"
                : $"the shape table does not match its hash (0x{record.ShapesHash:X16})";
        return null;
    }

    private static InvalidDataException Invalid(DictionaryRecord record, DictionaryStore store, string problem, Exception? inner) =>
        new($"Dictionary record {record.Id} (namespace '{record.Namespace}', version {record.Version}) from {store.Location} is invalid and was not used: {problem}.", inner);
}
