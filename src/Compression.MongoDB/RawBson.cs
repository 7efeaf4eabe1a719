using System.Buffers.Binary;

namespace Compression.MongoDB;

/// <summary>One top-level element of a raw BSON document: where it starts and ends, its type and its name.</summary>
internal readonly record struct RawBsonElement(byte Type, int Start, int NameStart, int NameLength, int ValueStart, int End)
{
    public ReadOnlySpan<byte> Name(ReadOnlySpan<byte> document) => document.Slice(NameStart, NameLength);

    public ReadOnlySpan<byte> Value(ReadOnlySpan<byte> document) => document[ValueStart..End];

    public ReadOnlySpan<byte> Bytes(ReadOnlySpan<byte> document) => document[Start..End];
}

/// <summary>
/// Walks the top-level elements of a BSON document in place, without materializing values. Every length is checked
/// against the document, so untrusted bytes give an <see cref="InvalidDataException"/>, never an out-of-range read.
/// Nested documents are not walked: their own readers check them.
/// </summary>
internal ref struct RawBsonWalker
{
    private readonly ReadOnlySpan<byte> _document;
    private readonly int _end;
    private int _offset;

    /// <exception cref="InvalidDataException">The length prefix or the terminator is wrong.</exception>
    public RawBsonWalker(ReadOnlySpan<byte> document)
    {
        if (document.Length < 5)
            throw new InvalidDataException($"A BSON document needs at least 5 bytes; got {document.Length}.");
        int declared = BinaryPrimitives.ReadInt32LittleEndian(document);
        if (declared != document.Length)
            throw new InvalidDataException($"The BSON document declares {declared} bytes but holds {document.Length}.");
        if (document[^1] != 0)
            throw new InvalidDataException("The BSON document does not end with its 0x00 terminator.");
        _document = document;
        _offset = 4;
        _end = document.Length - 1;
    }

    private RawBsonWalker(ReadOnlySpan<byte> elements, int offset, int end)
    {
        _document = elements;
        _offset = offset;
        _end = end;
    }

    /// <summary>
    /// A walker over elements alone, without a document's length prefix and terminator (the compressed part of envelope
    /// formats v2 and v3): every element must end within <paramref name="elements"/>, the last one at its end.
    /// </summary>
    public static RawBsonWalker OverElements(ReadOnlySpan<byte> elements) => new(elements, 0, elements.Length);

    /// <summary>Reads the next element; false at the terminator.</summary>
    /// <exception cref="InvalidDataException">The element is cut, has an unknown type or a length out of range.</exception>
    public bool TryNext(out RawBsonElement element)
    {
        int end = _end;
        if (_offset >= end)
        {
            element = default;
            return false;
        }
        int start = _offset;
        byte type = _document[start];
        int nameStart = start + 1;
        int nameLength = CStringLength(_document, nameStart, end);
        int value = nameStart + nameLength + 1;
        long valueLength = type switch
        {
            0x01 or 0x09 or 0x11 or 0x12 => 8, // double, UTC datetime, timestamp, int64
            0x02 or 0x0D or 0x0E => 4 + (long)Int32At(value, end, minimum: 1), // string, JavaScript, symbol
            0x03 or 0x04 or 0x0F => Int32At(value, end, minimum: 5), // document, array, code with scope
            0x05 => 5 + (long)Int32At(value, end, minimum: 0), // binary: length, subtype, bytes
            0x06 or 0x0A or 0x7F or 0xFF => 0, // undefined, null, max key, min key
            0x07 => 12, // ObjectId
            0x08 => 1, // boolean
            0x0B => RegexLength(value, end),
            0x0C => 4 + (long)Int32At(value, end, minimum: 1) + 12, // DBPointer
            0x10 => 4, // int32
            0x13 => 16, // decimal128
            _ => throw new InvalidDataException($"BSON element at offset {start} has the unknown type 0x{type:x2}."),
        };
        long elementEnd = value + valueLength;
        if (elementEnd > end)
            throw new InvalidDataException($"BSON element at offset {start} (type 0x{type:x2}) runs past the end of its document ({elementEnd} > {end}).");
        _offset = (int)elementEnd;
        element = new RawBsonElement(type, start, nameStart, nameLength, value, (int)elementEnd);
        return true;
    }

    private readonly int Int32At(int offset, int end, int minimum)
    {
        if (offset + 4 > end)
            throw new InvalidDataException($"BSON length at offset {offset} is cut by the end of its document.");
        int length = BinaryPrimitives.ReadInt32LittleEndian(_document[offset..]);
        if (length < minimum)
            throw new InvalidDataException($"BSON length {length} at offset {offset} is below the minimum {minimum}.");
        return length;
    }

    private readonly long RegexLength(int offset, int end)
    {
        int pattern = CStringLength(_document, offset, end) + 1;
        int options = CStringLength(_document, offset + pattern, end) + 1;
        return pattern + options;
    }

    private static int CStringLength(ReadOnlySpan<byte> document, int offset, int end)
    {
        // Names are short: a plain loop finds their terminator sooner than the vectorized search sets itself up.
        int scalarEnd = Math.Min(end, offset + 24);
        for (int i = offset; i < scalarEnd; i++)
        {
            if (document[i] == 0) return i - offset;
        }
        int length = scalarEnd < end ? document[scalarEnd..end].IndexOf((byte)0) : -1;
        if (length >= 0) length += scalarEnd - offset;
        if (length < 0)
            throw new InvalidDataException($"BSON name or string at offset {offset} has no 0x00 terminator inside its document.");
        return length;
    }
}
