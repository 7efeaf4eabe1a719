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
    public override string Name => "snappy";
    public override IReadOnlyList<int> AnalyzeLevels { get; } = [0];

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten) =>
        Snappy.TryCompress(source, destination, out bytesWritten);

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        int declared = Snappy.GetUncompressedLength(source);
        if (declared != destination.Length) ThrowLengthMismatch(declared, destination.Length);
        int n = Snappy.Decompress(source, destination);
        if (n != destination.Length) ThrowLengthMismatch(n, destination.Length);
        if (StreamLength(source, destination.Length) != source.Length)
            Internal.ThrowHelper.ThrowCorrupt("Snappy payload has bytes after the end of its stream.");
    }

    /// <summary>
    /// The preamble costs at least a byte; a copy produces at most 64 bytes for at least 3 bytes (11 for 2); a literal
    /// costs more than it produces. So a raw snappy stream never expands more than 64:3.
    /// </summary>
    public override long MaxDecodedLength(int payloadLength) => 64L * payloadLength / 3;

    /// <summary>Proves the length from the preamble and by walking the elements (lengths only, nothing copied or allocated).</summary>
    public override byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary)
    {
        int preamble = Snappy.GetUncompressedLength(source);
        if (preamble != declared) ThrowLengthMismatch(preamble, declared);
        if (StreamLength(source, declared) != source.Length)
            Internal.ThrowHelper.ThrowCorrupt("Snappy payload is corrupt, truncated, or its elements do not end with the stream.");
        return null;
    }

    /// <summary>
    /// Where the raw snappy stream that produces <paramref name="length"/> bytes ends, or -1 when its elements do not
    /// produce exactly that many (or run past the end of <paramref name="source"/>): Snappier stops once its output is
    /// complete and cannot say how much input it used, so the elements are walked here (lengths only, no copying).
    /// Safe on any input: positions and counts are 64-bit.
    /// </summary>
    private static long StreamLength(ReadOnlySpan<byte> source, int length)
    {
        long position = 0;
        while (position < source.Length && (source[(int)position++] & 0x80) != 0) { } // the length varint
        long produced = 0;
        while (produced < length && position < source.Length)
        {
            byte tag = source[(int)position++];
            switch (tag & 3)
            {
                case 0: // literal
                    long size = tag >> 2;
                    if (size >= 60)
                    {
                        int extra = (int)size - 59;
                        if (position + extra > source.Length) return -1;
                        size = 0;
                        for (int i = 0; i < extra; i++) size |= (long)source[(int)position + i] << (8 * i);
                        position += extra;
                    }
                    produced += size + 1;
                    position += size + 1;
                    break;
                case 1: // copy, 1-byte offset
                    produced += ((tag >> 2) & 7) + 4;
                    position += 1;
                    break;
                case 2: // copy, 2-byte offset
                    produced += (tag >> 2) + 1;
                    position += 2;
                    break;
                default: // copy, 4-byte offset
                    produced += (tag >> 2) + 1;
                    position += 4;
                    break;
            }
        }
        return produced == length && position <= source.Length ? position : -1;
    }
}
