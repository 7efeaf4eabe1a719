namespace Compression.Codecs;

/// <summary>One codec's raw payload work. Implementations are stateless singletons and thread-safe.</summary>
internal abstract class Codec
{
    public abstract CompressionCodec Id { get; }

    public abstract int MinLevel { get; }

    public abstract int MaxLevel { get; }

    public abstract int DefaultLevel { get; }

    /// <summary>Compresses into <paramref name="destination"/>; returns false when it does not fit.</summary>
    public abstract bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten);

    /// <summary>
    /// Decompresses <paramref name="source"/> into exactly <paramref name="destination"/>.Length bytes.
    /// Throws <see cref="InvalidDataException"/> (or lets the library's own exception escape, which the caller
    /// wraps) when the payload is corrupt or does not decode to exactly that length.
    /// </summary>
    public abstract void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary);

    public static Codec For(CompressionCodec codec) => codec switch
    {
        CompressionCodec.Stored => StoredCodec.Instance,
        CompressionCodec.Zstd => ZstdCodec.Instance,
        CompressionCodec.Lz4 => Lz4Codec.Instance,
        CompressionCodec.Snappy => SnappyCodec.Instance,
        CompressionCodec.Deflate => ZlibFamilyCodec.Deflate,
        CompressionCodec.Gzip => ZlibFamilyCodec.Gzip,
        CompressionCodec.Brotli => BrotliCodec.Instance,
        _ => throw new ArgumentOutOfRangeException(nameof(codec), codec, "Unknown codec."),
    };

    protected static void ThrowLengthMismatch(int produced, int declared) =>
        Internal.ThrowHelper.ThrowCorrupt($"Payload decodes to {produced} bytes, the envelope declares {declared}.");
}

internal sealed class StoredCodec : Codec
{
    public static readonly StoredCodec Instance = new();
    public override CompressionCodec Id => CompressionCodec.Stored;
    public override int MinLevel => 0;
    public override int MaxLevel => 0;
    public override int DefaultLevel => 0;

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        bytesWritten = 0;
        if (!source.TryCopyTo(destination)) return false;
        bytesWritten = source.Length;
        return true;
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        if (source.Length != destination.Length) ThrowLengthMismatch(source.Length, destination.Length);
        source.CopyTo(destination);
    }
}
