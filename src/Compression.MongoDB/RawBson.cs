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

    /// <summary>A walker over the elements of <paramref name="document"/> from <paramref name="offset"/> to <paramref name="end"/> (a nested document's elements).</summary>
    public static RawBsonWalker Over(ReadOnlySpan<byte> document, int offset, int end) => new(document, offset, end);

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

/// <summary>
/// The nesting limit of BSON documents, checked without recursion: MongoDB refuses to store a document whose embedded
/// documents and arrays nest more than <see cref="MaxDepth"/> levels below its root, but it never sees inside a compressed
/// part, and every reader after us (the class map, <c>BsonDocument</c>, <c>ToJson</c>) recurses once per level: a
/// decompressed part 20,000 levels deep (15 KB) overflowed the reader's stack, which no handler can catch.
/// </summary>
internal static class BsonNesting
{
    /// <summary>The most levels of embedded documents and arrays below a document's root, as MongoDB allows.</summary>
    public const int MaxDepth = 100;

    /// <summary>
    /// Checks that <paramref name="element"/>, a top-level element of <paramref name="document"/> (level 1 when it is a
    /// document, an array or JavaScript with scope), nests at most <see cref="MaxDepth"/> levels. Iterative: its stack is
    /// <see cref="MaxDepth"/> pairs of offsets. Every nested length is checked as <see cref="RawBsonWalker"/> checks them.
    /// </summary>
    /// <returns>False when it nests deeper than the limit (nothing recursive has read it).</returns>
    /// <exception cref="InvalidDataException">A nested length, type or terminator is wrong.</exception>
    /// <remarks>
    /// Each level below a document takes at least 7 bytes (a type, an empty name's NUL, a length and a terminator), so
    /// an element too small to reach the limit is not walked: a document of 400 bytes costs one comparison. Only elements
    /// of about 700 bytes and more are walked, and within them only children large enough to reach it.
    /// </remarks>
    public static bool IsWithinLimit(ReadOnlySpan<byte> document, RawBsonElement element)
    {
        if (!IsNesting(element.Type) || CannotPassTheLimit(element, level: 1)) return true;
        Span<int> resume = stackalloc int[MaxDepth];
        Span<int> ends = stackalloc int[MaxDepth];
        int depth = 1;
        (int position, int end) = Inside(document, element);
        while (true)
        {
            RawBsonWalker level = RawBsonWalker.Over(document, position, end);
            if (level.TryNext(out RawBsonElement child))
            {
                position = child.End;
                if (!IsNesting(child.Type) || CannotPassTheLimit(child, depth + 1)) continue;
                if (depth == MaxDepth) return false;
                resume[depth - 1] = position;
                ends[depth - 1] = end;
                depth++;
                (position, end) = Inside(document, child);
            }
            else
            {
                if (--depth == 0) return true;
                position = resume[depth - 1];
                end = ends[depth - 1];
            }
        }
    }

    private static bool IsNesting(byte type) => type is 0x03 or 0x04 or 0x0F;

    /// <summary>Whether a nesting element at <paramref name="level"/> is too small to hold anything past the limit (its value's length bounds its document's).</summary>
    private static bool CannotPassTheLimit(RawBsonElement element, int level) => level + (element.End - element.ValueStart - 5) / 7 <= MaxDepth;

    /// <summary>The message of a refused document, after what names it.</summary>
    public static readonly string TooDeep = $"nests deeper than {MaxDepth} levels of embedded documents and arrays (the most MongoDB stores); it was not read";

    /// <summary>Where the elements of a nested document (or of a scope) start and end, its terminator checked.</summary>
    private static (int Start, int End) Inside(ReadOnlySpan<byte> document, RawBsonElement element)
    {
        int value = element.ValueStart;
        if (element.Type == 0x0F)
        {
            // JavaScript with scope: total length, the code as a string, then the scope document, ending with the element.
            if (element.End - value < 4 + 4 + 1 + 5) throw new InvalidDataException($"BSON JavaScript with scope at offset {element.Start} is too short.");
            int codeLength = BinaryPrimitives.ReadInt32LittleEndian(document[(value + 4)..]);
            if (codeLength < 1 || codeLength > element.End - value - 8 - 5)
                throw new InvalidDataException($"BSON JavaScript with scope at offset {element.Start} declares code of {codeLength} bytes, which does not fit.");
            value += 8 + codeLength;
        }
        int length = BinaryPrimitives.ReadInt32LittleEndian(document[value..]);
        if (length < 5 || value + length != element.End)
            throw new InvalidDataException($"BSON document at offset {value} declares {length} bytes; its element ends at {element.End}.");
        if (document[element.End - 1] != 0)
            throw new InvalidDataException($"BSON document at offset {value} does not end with its 0x00 terminator.");
        return (value + 4, element.End - 1);
    }
}
