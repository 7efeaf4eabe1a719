using ZstdSharp;

namespace Compression.Dictionaries;

/// <summary>Trains zstd dictionaries from sample documents (zstd's fastcover trainer through ZstdSharp).</summary>
internal static unsafe class ZstdDictionaryTrainer
{
    /// <summary>
    /// Below this average sample length, the trainer searches harder: segments of 6 bytes instead of 8 (the fields of
    /// small records are short) and 40 segment sizes instead of 4. Measured on the shared corpora (20% trains, 80%
    /// measured, level 3): flights +2.6%, movies +1.9%, earthquakes +1.1%, emoji +1.1%; on the large documents of
    /// countries (2.4 KB) no change and caniuse (8.5 KB) 2.3% worse, so they keep zstd's default. Training takes about
    /// 8 times longer (about 1 s a MB of samples here), in the background, within the sample byte cap and the rate limit,
    /// and only from <see cref="SearchMinSamples"/> samples on.
    /// </summary>
    internal const int SmallSampleLength = 1024;

    /// <summary>
    /// The search is for the dictionaries that stay: from this many samples on. A namespace's first dictionaries come from
    /// a few hundred samples and are soon replaced; they keep zstd's default, which trains 100 samples in about 20 ms
    /// instead of about 175 ms, so the first dictionary is in use as early as before.
    /// </summary>
    internal const int SearchMinSamples = 1000;

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
    /// <param name="shapes">The shape table the samples were packed with, carried by the dictionary; <see langword="null"/> for none.</param>
    public static ZstdDictionary? TryTrain(IReadOnlyCollection<byte[]> samples, int dictionarySize, uint id, Structure.ShapeTransform? shapes = null)
    {
        ArgumentNullException.ThrowIfNull(samples);
        ArgumentOutOfRangeException.ThrowIfLessThan(dictionarySize, ZstdDictionary.MinimumSize);
        long total = 0;
        foreach (byte[] s in samples) total += s.Length;
        if (samples.Count < 8 || total < MinimumSampleBytes) return null;
        try
        {
            byte[]? content = total / samples.Count < SmallSampleLength && samples.Count >= SearchMinSamples
                ? TrainSmallSamples(samples, total, dictionarySize)
                : DictBuilder.TrainFromBuffer(samples, dictionarySize);
            if (content is null || content.Length < ZstdDictionary.MinimumSize) return null;
            return ZstdDictionary.Create(id, content, Math.Max(dictionarySize, ZstdDictionary.MinimumSize), shapes);
        }
        catch (Exception ex) when (ex is ZstdException or InvalidDataException)
        {
            return null; // not enough distinct content to train from: keep compressing without a dictionary
        }
    }

    /// <summary>zstd's fastcover trainer with its parameter search, d = 6 and 40 steps; null when it fails.</summary>
    private static byte[]? TrainSmallSamples(IReadOnlyCollection<byte[]> samples, long total, int dictionarySize)
    {
        byte[] all = new byte[total];
        var sizes = new nuint[samples.Count];
        int offset = 0, i = 0;
        foreach (byte[] sample in samples)
        {
            sample.CopyTo(all, offset);
            offset += sample.Length;
            sizes[i++] = (nuint)sample.Length;
        }
        var parameters = new ZstdSharp.Unsafe.ZDICT_fastCover_params_t
        {
            d = 6,
            steps = 40,
            f = 20,
            accel = 1,
            zParams = new ZstdSharp.Unsafe.ZDICT_params_t { compressionLevel = 3 },
        };
        byte[] dictionary = new byte[dictionarySize];
        nuint result;
        fixed (byte* buffer = dictionary)
        fixed (byte* content = all)
        fixed (nuint* lengths = sizes)
        {
            result = ZstdSharp.Unsafe.Methods.ZDICT_optimizeTrainFromBuffer_fastCover(buffer, (nuint)dictionarySize, content, lengths, (uint)sizes.Length, &parameters);
        }
        return ZstdSharp.Unsafe.Methods.ZDICT_isError(result) ? null : dictionary[..(int)result];
    }
}
