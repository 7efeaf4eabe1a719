namespace Compression.Structure;

/// <summary>
/// The structure-aware step for one shape table: <see cref="TryEncode"/> turns a document into its packed stream (shape
/// ids instead of keys, values packed), or says it does not apply; <see cref="Decode"/> gives back exactly the
/// document's bytes. Every encoding is verified before it is returned: it is decoded again and compared byte for byte,
/// and a document that would not come back identical is "not applicable" (the caller stores it as it is).
/// Thread-safe; the per-document buffers are per thread (<see cref="PackScratch"/>, <see cref="PackBuffers"/>).
/// </summary>
internal sealed class ShapeTransform
{
    private long _verifyFailures;

    public ShapeTransform(ShapeTable table, FieldModel? fields = null)
    {
        ArgumentNullException.ThrowIfNull(table);
        Table = table;
        if (fields is not null) Fields = new FieldCoder(table, fields);
    }

    public ShapeTable Table { get; }

    /// <summary>The field model trained with the table, when there is one: documents are then written as codec 8 (<see cref="CompressionCodec.FieldZstd"/>).</summary>
    public FieldCoder? Fields { get; }

    /// <summary>The first four bytes of a table stored with its field model: "SMDL" (a table alone starts "SHPT").</summary>
    public static ReadOnlySpan<byte> ModelMagic => "SMDL"u8;

    private const byte ModelFormatVersion = 1;

    /// <summary>The most bytes a table and its field model may take in a dictionary record.</summary>
    public const int MaxStoredLength = ShapeTableBuilder.MaxStoredLength + FieldModel.MaxSerializedLength + 16;

    /// <summary>
    /// What a dictionary record stores: the table's bytes alone (<see cref="ShapeTable.Serialize()"/>), or with a field
    /// model "SMDL", version 1, the table's length as a varint, the table, then the model (docs/structure.md).
    /// </summary>
    public byte[] Serialize()
    {
        byte[] table = Table.Serialize();
        if (Fields is null) return table;
        byte[] model = Fields.Model.Serialize();
        byte[] bytes = new byte[5 + Internal.Varint.GetLength((uint)table.Length) + table.Length + model.Length];
        ModelMagic.CopyTo(bytes);
        bytes[4] = ModelFormatVersion;
        int at = 5 + Internal.Varint.Write(bytes.AsSpan(5), (uint)table.Length);
        table.CopyTo(bytes, at);
        model.CopyTo(bytes, at + table.Length);
        return bytes;
    }

    /// <summary>Reads what <see cref="Serialize"/> wrote, checking both parts.</summary>
    /// <exception cref="InvalidDataException">The bytes are not a valid table, or table and field model.</exception>
    public static ShapeTransform Parse(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length > MaxStoredLength) StructureThrow.Corrupt($"Structure model has {bytes.Length} bytes; the limit is {MaxStoredLength}.");
        if (bytes.Length < 5 || !bytes[..4].SequenceEqual(ModelMagic)) return new ShapeTransform(ShapeTable.Parse(bytes));
        if (bytes[4] != ModelFormatVersion) StructureThrow.Corrupt($"Structure model format version {bytes[4]} is not supported; this reader knows version {ModelFormatVersion}.");
        if (!Internal.Varint.TryRead(bytes[5..], out uint tableLength, out int read) || tableLength > (uint)(bytes.Length - 5 - read))
            StructureThrow.Corrupt("Structure model: the shape table's length is truncated, not minimal, or longer than the bytes.");
        int at = 5 + read;
        ShapeTable table = ShapeTable.Parse(bytes.Slice(at, (int)tableLength));
        return new ShapeTransform(table, FieldModel.Parse(bytes[(at + (int)tableLength)..], table));
    }

    /// <summary>How many encodings were refused because decoding them did not give the document back (should stay 0).</summary>
    public long VerifyFailures => Interlocked.Read(ref _verifyFailures);

    /// <summary>
    /// Packs <paramref name="document"/> into <paramref name="destination"/>. False when the transform does not apply:
    /// the document is not of the table's kind (<see cref="JsonText"/>, <see cref="BsonShapeReader"/> say which
    /// documents are), its packed form would not be smaller than the document or does not fit, or it did not decode back
    /// to the same bytes. Never throws for any input.
    /// </summary>
    public bool TryEncode(ReadOnlySpan<byte> document, Span<byte> destination, out int written)
    {
        written = 0;
        if (Table.Kind != DocumentKind.BsonElements) return TryEncodeDocument(document, destination, out written);
        // BSON elements: packed as the document they frame (its length and NUL are derived, so the stream is the same).
        if (document.Length > int.MaxValue - FramingLength) return false;
        byte[] framed = PackBuffers.Rent(PackBuffers.Slot.Framed, document.Length + FramingLength);
        try
        {
            int length = Frame(document, framed);
            return TryEncodeDocument(framed.AsSpan(0, length), destination[..Math.Min(destination.Length, Math.Max(0, document.Length - 1))], out written);
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Framed, framed);
        }
    }

    /// <summary>A BSON document's int32 length and terminating NUL: what <see cref="DocumentKind.BsonElements"/> leaves out.</summary>
    internal const int FramingLength = 5;

    /// <summary>Writes <paramref name="elements"/> framed as a BSON document into <paramref name="destination"/>; returns its length.</summary>
    internal static int Frame(ReadOnlySpan<byte> elements, Span<byte> destination)
    {
        int length = elements.Length + FramingLength;
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(destination, length);
        elements.CopyTo(destination[4..]);
        destination[length - 1] = 0;
        return length;
    }

    private bool TryEncodeDocument(ReadOnlySpan<byte> document, Span<byte> destination, out int written)
    {
        written = 0;
        if (document.Length < 2) return false;
        PackScratch scratch = PackScratch.Rent();
        try
        {
            Span<byte> target = destination[..Math.Min(destination.Length, document.Length - 1)];
            // JSON whose objects all have shapes of the table packs in one pass; anything else takes the two passes.
            int packed;
            if (Table.Kind != DocumentKind.Json || !JsonPacker.TryPack(document, target, Table, scratch, out packed))
            {
                scratch.Reset(); // the one-pass packer may have left keys pending
                if (!TryParse(document, scratch, Table)) return false;
                scratch.ResolveShapes(document, Table);
                if (!PackedEmitter.TryEmit(document, scratch, target, out packed)) return false;
            }
            if (!Verify(document, destination[..packed]))
            {
                Interlocked.Increment(ref _verifyFailures);
                return false;
            }
            written = packed;
            return true;
        }
        finally
        {
            PackScratch.Return(scratch);
        }
    }

    /// <summary>
    /// Unpacks <paramref name="packed"/> into <paramref name="destination"/> and returns how many bytes it wrote; never
    /// more than the destination's length.
    /// </summary>
    /// <exception cref="InvalidDataException">The packed stream is corrupt, does not belong to this table, or decodes to more than <paramref name="destination"/> holds.</exception>
    public int Decode(ReadOnlySpan<byte> packed, Span<byte> destination)
    {
        if (Table.Kind != DocumentKind.BsonElements) return DecodeDocument(packed, destination);
        // BSON elements: unpack the framing document, then hand out its elements.
        byte[] framed = PackBuffers.Rent(PackBuffers.Slot.Framed, destination.Length + FramingLength);
        try
        {
            int length = BsonUnpacker.Unpack(Table, packed, framed.AsSpan(0, destination.Length + FramingLength));
            if (length < FramingLength) StructureThrow.Corrupt($"Packed stream decodes to a {length}-byte BSON document; the smallest has {FramingLength}.");
            framed.AsSpan(4, length - FramingLength).CopyTo(destination);
            return length - FramingLength;
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Framed, framed);
        }
    }

    /// <summary>Unpacks the whole document (for BSON elements, the document that frames them).</summary>
    private int DecodeDocument(ReadOnlySpan<byte> packed, Span<byte> destination) => Table.Kind == DocumentKind.Json
        ? JsonUnpacker.Unpack(Table, packed, destination)
        : BsonUnpacker.Unpack(Table, packed, destination);

    /// <summary>Parses a document of <paramref name="table"/>'s kind; false when it is not one the transform can pack exactly.</summary>
    internal static bool TryParse(ReadOnlySpan<byte> document, PackScratch scratch, ShapeTable table) => table.Kind == DocumentKind.Json
        ? JsonText.TryParse(document, scratch)
        : BsonShapeReader.TryParse(document, scratch); // BsonElements are framed by the caller first

    private bool Verify(ReadOnlySpan<byte> document, ReadOnlySpan<byte> packed)
    {
        byte[] buffer = PackBuffers.Rent(PackBuffers.Slot.Verify, document.Length);
        try
        {
            int length = DecodeDocument(packed, buffer.AsSpan(0, document.Length));
            return length == document.Length && buffer.AsSpan(0, length).SequenceEqual(document);
        }
        catch (InvalidDataException)
        {
            return false;
        }
        finally
        {
            PackBuffers.Return(PackBuffers.Slot.Verify, buffer);
        }
    }
}
