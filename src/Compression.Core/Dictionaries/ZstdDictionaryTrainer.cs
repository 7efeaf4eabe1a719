using ZstdSharp;

namespace Compression.Dictionaries;

/// <summary>Trains zstd dictionaries from sample documents (zstd's fastcover trainer through ZstdSharp).</summary>
internal static class ZstdDictionaryTrainer
{
    /// <summary>The smallest total sample size zstd can train from.</summary>
    public const int MinimumSampleBytes = 128;

    /// <summary>
    /// Trains a dictionary of at most <paramref name="dictionarySize"/> bytes from <paramref name="samples"/>.
    /// zstd suggests about 100 times the dictionary size in samples; with too few or too small samples training fails,
    /// which is an expected outcome here: the method returns <see langword="null"/> and the caller keeps compressing without.
    /// </summary>
    /// <param name="samples">Serialized documents.</param>
    /// <param name="dictionarySize">The dictionary capacity in bytes (at least <see cref="ZstdDictionary.MinimumSize"/>).</param>
    /// <param name="id">The id the trained dictionary will carry.</param>
    public static ZstdDictionary? TryTrain(IReadOnlyCollection<byte[]> samples, int dictionarySize, uint id)
    {
        ArgumentNullException.ThrowIfNull(samples);
        ArgumentOutOfRangeException.ThrowIfLessThan(dictionarySize, ZstdDictionary.MinimumSize);
        long total = 0;
        foreach (byte[] s in samples) total += s.Length;
        if (samples.Count < 8 || total < MinimumSampleBytes) return null;
        try
        {
            byte[] content = DictBuilder.TrainFromBuffer(samples, dictionarySize);
            if (content.Length < ZstdDictionary.MinimumSize) return null;
            return ZstdDictionary.Create(id, content, Math.Max(dictionarySize, ZstdDictionary.MinimumSize));
        }
        catch (Exception ex) when (ex is ZstdException or InvalidDataException)
        {
            return null; // not enough distinct content to train from: keep compressing without a dictionary
        }
    }
}
