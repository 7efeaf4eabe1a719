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
    public override string Name => "lz4";
    public override IReadOnlyList<int> AnalyzeLevels { get; } = [0, 9];

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

    /// <summary>
    /// A sequence costs at least 3 bytes (token and offset) for at most 19 bytes of match, and every further match-length
    /// byte adds at most 255; literals cost at least their own length. So an LZ4 block never expands more than 255:1.
    /// </summary>
    public override long MaxDecodedLength(int payloadLength) => 255L * payloadLength;

    /// <summary>Proves the length by walking the block's sequences (lengths only, nothing copied or allocated).</summary>
    public override byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary)
    {
        long produced = BlockLength(source, declared);
        if (produced < 0) Internal.ThrowHelper.ThrowCorrupt("LZ4 payload is corrupt or truncated (walking its sequences).");
        if (produced > declared) ThrowLongerThanDeclared(declared);
        if (produced != declared) ThrowLengthMismatch((int)produced, declared);
        return null;
    }

    /// <summary>
    /// The number of bytes the raw LZ4 block <paramref name="source"/> decodes to, computed from its sequence headers
    /// alone; stops as soon as it passes <paramref name="limit"/> (returning a value over it). -1 when the block is
    /// malformed: truncated, or a match reaching before the start of the output.
    /// </summary>
    internal static long BlockLength(ReadOnlySpan<byte> source, int limit)
    {
        int position = 0;
        long produced = 0;
        while (true)
        {
            if (position >= source.Length) return -1;
            int token = source[position++];
            long literals = token >> 4;
            if (literals == 15)
            {
                byte b;
                do
                {
                    if (position >= source.Length) return -1;
                    b = source[position++];
                    literals += b;
                } while (b == 255);
            }
            if (literals > source.Length - position) return -1;
            position += (int)literals;
            produced += literals;
            if (position == source.Length) return produced; // the last sequence holds literals only
            if (source.Length - position < 2) return -1;
            int offset = source[position] | (source[position + 1] << 8);
            position += 2;
            if (offset == 0 || offset > produced) return -1;
            long match = token & 15;
            if (match == 15)
            {
                byte b;
                do
                {
                    if (position >= source.Length) return -1;
                    b = source[position++];
                    match += b;
                } while (b == 255);
            }
            produced += match + 4;
            if (produced > limit) return produced;
        }
    }
}
