using System.Buffers;
using System.IO.Compression;

namespace Compression.Codecs;

/// <summary>Brotli through System.IO.Compression's one-shot encoder and decoder. Quality 0-11.</summary>
internal sealed class BrotliCodec : Codec
{
    public static readonly BrotliCodec Instance = new();
    private const int WindowBits = 22;

    public override CompressionCodec Id => CompressionCodec.Brotli;
    public override int MinLevel => 0;
    public override int MaxLevel => 11;
    public override int DefaultLevel => 4;

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten) =>
        BrotliEncoder.TryCompress(source, destination, out bytesWritten, level, WindowBits);

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        using var decoder = new BrotliDecoder();
        OperationStatus status = decoder.Decompress(source, destination, out int consumed, out int n);
        if (status != OperationStatus.Done)
            Internal.ThrowHelper.ThrowCorrupt($"Brotli payload is corrupt, truncated, or decodes to more bytes than the envelope declares ({status}).");
        if (consumed != source.Length)
            Internal.ThrowHelper.ThrowCorrupt($"Brotli payload has {source.Length - consumed} bytes after the end of its stream.");
        if (n != destination.Length) ThrowLengthMismatch(n, destination.Length);
    }
}
