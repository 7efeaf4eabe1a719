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
    public override string Name => "brotli";
    public override IReadOnlyList<int> AnalyzeLevels { get; } = [1, 4, 9];

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

    /// <summary>
    /// Brotli has no useful fixed ratio (a compressed meta-block produces up to 16 MiB from a few bytes), but every
    /// compressed meta-block costs more than 4 bytes (its length field and three prefix codes alone take over 50 bits),
    /// uncompressed meta-blocks cost what they produce, and metadata produces nothing. So at most 16 MiB per started
    /// 4 payload bytes: a loose bound that still refuses a few bytes declaring 64 MiB.
    /// </summary>
    public override long MaxDecodedLength(int payloadLength) => ((payloadLength + 3L) / 4) * MaxMetaBlockLength;

    private const long MaxMetaBlockLength = 1 << 24;

    /// <summary>Decodes chunk by chunk into a growing pooled buffer, so allocation follows the output actually produced.</summary>
    public override byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary)
    {
        var output = new GrowingBuffer(declared);
        try
        {
            using var decoder = new BrotliDecoder();
            int read = 0;
            while (true)
            {
                OperationStatus status = decoder.Decompress(source[read..], output.Free, out int consumed, out int written);
                read += consumed;
                output.Length += written;
                if (status == OperationStatus.Done) break;
                if (status != OperationStatus.DestinationTooSmall)
                    Internal.ThrowHelper.ThrowCorrupt($"Brotli payload is corrupt or truncated ({status}).");
                if (output.AtDeclared) ThrowLongerThanDeclared(declared);
                output.Grow();
            }
            if (read != source.Length)
                Internal.ThrowHelper.ThrowCorrupt($"Brotli payload has {source.Length - read} bytes after the end of its stream.");
            if (output.Length != declared) ThrowLengthMismatch(output.Length, declared);
            return output.Detach();
        }
        finally
        {
            output.Release();
        }
    }
}
