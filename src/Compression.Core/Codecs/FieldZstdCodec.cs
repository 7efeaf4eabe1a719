using Compression.Internal;
using Compression.Structure;

namespace Compression.Codecs;

/// <summary>
/// Codec 8 (<see cref="CompressionCodec.FieldZstd"/>, formats v2 and v3 only): the document's packed stream split by
/// the dictionary's field model (<see cref="FieldCoder"/>). Payload: a varint <c>(sectionLength &lt;&lt; 1) | zstd</c>,
/// the residual section (one raw zstd block with the envelope's dictionary when <c>zstd</c> is 1, the residual as it
/// is when 0), then the rANS stream of the model's symbols to the end. Decoding bounds every step by the declared
/// length: the residual and the packed stream are shorter than the document, the document is exactly its length.
/// Codec 9 (<see cref="CompressionCodec.FieldZstdFoldedChecksum"/>, format v3 only) is the same payload with the
/// document's checksum (the low 16 bits of its XxHash3) folded into the rANS stream's initial state, which the envelope
/// then does not repeat after the payload: the stream's end gives the checksum back (a document coding no symbol has
/// the checksum alone as its 2-byte stream), checked here against the decoded document.
/// </summary>
internal sealed class FieldZstdCodec : Codec
{
    public static readonly FieldZstdCodec Instance = new(foldsChecksum: false);

    /// <summary>Codec 9: the checksum inside the stream.</summary>
    public static readonly FieldZstdCodec FoldedChecksum = new(foldsChecksum: true);

    private readonly bool _foldsChecksum;

    private FieldZstdCodec(bool foldsChecksum) => _foldsChecksum = foldsChecksum;

    [ThreadStatic] private static RansEncoder? t_symbols;

    public override CompressionCodec Id => _foldsChecksum ? CompressionCodec.FieldZstdFoldedChecksum : CompressionCodec.FieldZstd;
    public override int MinLevel => ZstdCodec.MinimumLevel;
    public override int MaxLevel => ZstdCodec.MaximumLevel;
    public override int DefaultLevel => 3;
    public override string Name => _foldsChecksum ? "field_zstd_folded_checksum" : "field_zstd";
    public override EnvelopeFormat FirstFormat => _foldsChecksum ? EnvelopeFormat.V3 : EnvelopeFormat.V2;
    public override bool ChecksumInPayload => _foldsChecksum;
    public override bool IsStructured => true;
    public override IReadOnlyList<int> AnalyzeLevels => [];

    /// <summary>
    /// Packs <paramref name="source"/> (verified), splits the packed stream with the field model (verified by joining it
    /// back), compresses the residual; <see langword="false"/> when the dictionary has no field model, a step does not
    /// apply, or the payload does not fit (the caller then writes zstd with the same dictionary, or stores).
    /// </summary>
    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        bytesWritten = 0;
        if (dictionary?.Shapes is not { Fields: { } fields } shapes || source.Length is < 2 or > PackedZstdCodec.MaxDocumentLength) return false;
        byte[] packed = PackBuffers.Rent(PackBuffers.Slot.Packed, source.Length);
        byte[] residual = PackBuffers.Rent(PackBuffers.Slot.Residual, source.Length);
        RansEncoder symbols = t_symbols ??= new RansEncoder();
        try
        {
            if (!shapes.TryEncode(source, packed.AsSpan(0, source.Length), out int packedLength)) return false;
            symbols.Reset();
            if (!fields.TrySplit(packed.AsSpan(0, packedLength), residual.AsSpan(0, packedLength), out int residualLength, symbols)) return false;
            ushort checksum = _foldsChecksum ? DocumentEnvelope.ShortChecksum(source, EnvelopeFormat.V3) : (ushort)0;
            ReadOnlySpan<byte> stream = _foldsChecksum ? symbols.EncodeFolded(checksum) : symbols.Encode();
            if (!Verify(fields, residual.AsSpan(0, residualLength), stream, packed.AsSpan(0, packedLength), _foldsChecksum, checksum)) return false;

            // The residual as one zstd block after the header, when that is smaller than the residual itself.
            int headerRoom = Varint.GetLength((uint)residualLength << 1 | 1);
            if (destination.Length < headerRoom) return false;
            int blockLength = 0;
            bool zstd = residualLength > 0
                && ZstdBlockCodec.Instance.TryCompress(residual.AsSpan(0, residualLength), destination[headerRoom..], level, dictionary, out blockLength)
                && blockLength < residualLength;
            int section;
            if (zstd)
            {
                section = blockLength;
            }
            else
            {
                section = residualLength;
                if (destination.Length < headerRoom + section) return false;
                residual.AsSpan(0, residualLength).CopyTo(destination[headerRoom..]);
            }
            uint header = (uint)section << 1 | (zstd ? 1u : 0u);
            int headerLength = Varint.GetLength(header);
            if (headerLength != headerRoom) destination.Slice(headerRoom, section).CopyTo(destination[headerLength..]);
            Varint.Write(destination, header);
            int end = headerLength + section;
            if (destination.Length - end < stream.Length) return false;
            stream.CopyTo(destination[end..]);
            bytesWritten = end + stream.Length;
            return true;
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Packed, packed);
            PackBuffers.Return(PackBuffers.Slot.Residual, residual);
        }
    }

    private static bool Verify(FieldCoder fields, ReadOnlySpan<byte> residual, ReadOnlySpan<byte> stream, ReadOnlySpan<byte> packed,
        bool foldsChecksum, ushort checksum)
    {
        byte[] joined = PackBuffers.Rent(PackBuffers.Slot.Joined, packed.Length);
        try
        {
            ushort back = 0;
            int length = foldsChecksum
                ? fields.JoinFolded(residual, stream, joined.AsSpan(0, packed.Length), out back)
                : fields.Join(residual, stream, joined.AsSpan(0, packed.Length));
            return length == packed.Length && back == checksum && joined.AsSpan(0, packed.Length).SequenceEqual(packed);
        }
        catch (InvalidDataException)
        {
            return false;
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Joined, joined);
        }
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        if (destination.Length > PackedZstdCodec.MaxDocumentLength)
            ThrowHelper.ThrowCorrupt($"A field-coded envelope declares {destination.Length} bytes; documents over {PackedZstdCodec.MaxDocumentLength} are never written so.");
        if (dictionary is null) throw new InvalidDataException("A field-coded envelope needs the dictionary it names, and none was given.");
        ShapeTransform shapes = dictionary.Shapes
            ?? throw new InvalidDataException($"The envelope is coded with the field model of dictionary {dictionary.Id}, and that dictionary's record has no shape table.");
        FieldCoder fields = shapes.Fields
            ?? throw new InvalidDataException($"The envelope is coded with the field model of dictionary {dictionary.Id}, and that dictionary's record has none.");

        if (!Varint.TryRead(source, out uint header, out int headerLength))
            ThrowHelper.ThrowCorrupt("A field-coded payload's header is truncated or not a minimal varint.");
        uint section = header >> 1;
        if (section > (uint)(source.Length - headerLength))
            ThrowHelper.ThrowCorrupt($"A field-coded payload declares a {section}-byte residual; {source.Length - headerLength} bytes follow its header.");
        ReadOnlySpan<byte> sectionBytes = source.Slice(headerLength, (int)section);
        ReadOnlySpan<byte> stream = source[(headerLength + (int)section)..];

        // The residual and the packed stream are each shorter than the document.
        int capacity = Math.Max(0, destination.Length - 1);
        byte[] residual = PackBuffers.Rent(PackBuffers.Slot.Residual, capacity);
        byte[] packed = PackBuffers.Rent(PackBuffers.Slot.Packed, capacity);
        try
        {
            ReadOnlySpan<byte> residualBytes;
            if ((header & 1) != 0)
            {
                int residualLength = ZstdBlockCodec.DecompressBlock(sectionBytes, residual.AsSpan(0, capacity), dictionary);
                residualBytes = residual.AsSpan(0, residualLength);
            }
            else
            {
                if (sectionBytes.Length > capacity) ThrowHelper.ThrowCorrupt($"A field-coded payload's residual has {sectionBytes.Length} bytes, more than its {destination.Length}-byte document's packed stream can.");
                residualBytes = sectionBytes;
            }
            ushort checksum = 0;
            int packedLength = _foldsChecksum
                ? fields.JoinFolded(residualBytes, stream, packed.AsSpan(0, capacity), out checksum)
                : fields.Join(residualBytes, stream, packed.AsSpan(0, capacity));
            int length = shapes.Decode(packed.AsSpan(0, packedLength), destination);
            if (length != destination.Length)
                ThrowHelper.ThrowCorrupt($"A field-coded payload decodes to {length} bytes; the envelope declares {destination.Length}.");
            if (_foldsChecksum && DocumentEnvelope.ShortChecksum(destination, EnvelopeFormat.V3) != checksum)
                ThrowHelper.ThrowCorrupt("Checksum mismatch: the decompressed document does not match the checksum its field stream holds (the low 16 bits of its XxHash3).");
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Residual, residual);
            PackBuffers.Return(PackBuffers.Slot.Packed, packed);
        }
    }

    /// <summary>As codec 7's: the largest document ever written so; above it the envelope is corrupt.</summary>
    public override long MaxDecodedLength(int payloadLength) => PackedZstdCodec.MaxDocumentLength;
}
