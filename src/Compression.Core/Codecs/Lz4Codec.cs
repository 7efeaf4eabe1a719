using K4os.Compression.LZ4;

namespace Compression.Codecs;

/// <summary>LZ4 raw block through K4os.Compression.LZ4. Level 0 is the fast compressor, 3-12 the HC levels.</summary>
internal sealed class Lz4Codec : Codec
{
    public static readonly Lz4Codec Instance = new();
    public override CompressionCodec Id => CompressionCodec.Lz4;
    public override int MinLevel => 0;
    public override int MaxLevel => 12;
    public override int DefaultLevel => 0;

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        int n = LZ4Codec.Encode(source, destination, (LZ4Level)level);
        bytesWritten = Math.Max(n, 0);
        return n > 0 || source.IsEmpty;
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        int n = LZ4Codec.Decode(source, destination);
        if (n < 0) Internal.ThrowHelper.ThrowCorrupt("LZ4 payload is corrupt or decodes to more bytes than the envelope declares.");
        if (n != destination.Length) ThrowLengthMismatch(n, destination.Length);
    }
}
