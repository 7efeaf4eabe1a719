using Snappier;

namespace Compression.Codecs;

/// <summary>Snappy raw format through Snappier (1.3.1 or newer). Snappy has no levels.</summary>
internal sealed class SnappyCodec : Codec
{
    public static readonly SnappyCodec Instance = new();
    public override CompressionCodec Id => CompressionCodec.Snappy;
    public override int MinLevel => 0;
    public override int MaxLevel => 0;
    public override int DefaultLevel => 0;

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten) =>
        Snappy.TryCompress(source, destination, out bytesWritten);

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        int declared = Snappy.GetUncompressedLength(source);
        if (declared != destination.Length) ThrowLengthMismatch(declared, destination.Length);
        int n = Snappy.Decompress(source, destination);
        if (n != destination.Length) ThrowLengthMismatch(n, destination.Length);
    }
}
