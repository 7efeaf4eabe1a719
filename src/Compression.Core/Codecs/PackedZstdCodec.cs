using Compression.Structure;

namespace Compression.Codecs;

/// <summary>
/// Codec 7 (<see cref="CompressionCodec.PackedZstd"/>, formats v2 and v3 only): the document's packed stream (docs/structure.md)
/// compressed as one raw zstd block with the envelope's dictionary, whose shape table the packing used. The declared
/// length and the checksum are the document's; the packed stream is always shorter than the document, and documents
/// over 128 KiB are never packed, so a payload is decoded into at most 128 KiB - 1 bytes and unpacked into exactly the
/// declared length, never past it.
/// </summary>
internal sealed class PackedZstdCodec : Codec
{
    public static readonly PackedZstdCodec Instance = new();

    /// <summary>The largest document written packed: one zstd block (<see cref="ZstdBlockCodec.MaxBlockLength"/>).</summary>
    public const int MaxDocumentLength = ZstdBlockCodec.MaxBlockLength;

    public override CompressionCodec Id => CompressionCodec.PackedZstd;
    public override int MinLevel => ZstdCodec.MinimumLevel;
    public override int MaxLevel => ZstdCodec.MaximumLevel;
    public override int DefaultLevel => 3;
    public override string Name => "packed_zstd";
    public override bool IsStructured => true;
    public override IReadOnlyList<int> AnalyzeLevels => [];

    /// <summary>
    /// Packs <paramref name="source"/> with the dictionary's shape table (verified byte for byte) and compresses the packed
    /// stream; <see langword="false"/> when the dictionary has no table, the packing does not apply, or the block does
    /// not fit (the caller then writes zstd with the same dictionary, or stores).
    /// </summary>
    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        bytesWritten = 0;
        if (dictionary?.Shapes is not { } shapes || source.Length is < 2 or > MaxDocumentLength) return false;
        byte[] packed = PackBuffers.Rent(PackBuffers.Slot.Packed, source.Length);
        try
        {
            return shapes.TryEncode(source, packed.AsSpan(0, source.Length), out int packedLength)
                && ZstdBlockCodec.Instance.TryCompress(packed.AsSpan(0, packedLength), destination, level, dictionary, out bytesWritten);
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Packed, packed);
        }
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        if (destination.Length > MaxDocumentLength)
            Internal.ThrowHelper.ThrowCorrupt($"A packed envelope declares {destination.Length} bytes; documents over {MaxDocumentLength} are never packed.");
        if (dictionary is null) throw new InvalidDataException("A packed envelope needs the dictionary it names, and none was given.");
        ShapeTransform shapes = dictionary.Shapes
            ?? throw new InvalidDataException($"The envelope is packed with the shape table of dictionary {dictionary.Id}, and that dictionary's record has none.");

        // A packed stream is always shorter than its document: a block that decodes to as much is corrupt.
        int capacity = Math.Max(0, destination.Length - 1);
        byte[] packed = PackBuffers.Rent(PackBuffers.Slot.Packed, capacity);
        try
        {
            int packedLength = ZstdBlockCodec.DecompressBlock(source, packed.AsSpan(0, capacity), dictionary);
            int length = shapes.Decode(packed.AsSpan(0, packedLength), destination);
            if (length != destination.Length) ThrowLengthMismatch(length, destination.Length);
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Packed, packed);
        }
    }

    /// <summary>
    /// Unpacking expands past zstd's bound (a one-byte shape id stands for all of its keys), so the bound is the largest
    /// document ever packed: any declared length up to it is decoded straight into its destination (it is under the
    /// 256 KiB direct-decode limit), and above it the envelope is corrupt.
    /// </summary>
    public override long MaxDecodedLength(int payloadLength) => MaxDocumentLength;
}
