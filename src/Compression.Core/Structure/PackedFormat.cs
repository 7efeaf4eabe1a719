using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;

namespace Compression.Structure;

/// <summary>What a shape table and its packed streams describe: JSON text or BSON documents.</summary>
internal enum DocumentKind : byte
{
    /// <summary>Compact UTF-8 JSON text (no whitespace between tokens), an object at the root.</summary>
    Json = 1,

    /// <summary>A BSON document (the MongoDB serializer with envelope format v1: BinData 0x80).</summary>
    Bson = 2,

    /// <summary>
    /// A BSON document's elements alone, without its int32 length and terminating NUL: what the MongoDB serializer
    /// compresses with envelope formats v2 and v3 (BinData 0x81). Packed exactly as the document they frame would be.
    /// </summary>
    BsonElements = 3,
}

/// <summary>
/// The tags of the packed value stream (docs/structure.md, "Packed stream"). One byte before every value but the root
/// object; a decimal's scale and a short string's length are folded into its tag.
/// </summary>
internal static class PackedTag
{
    public const byte Null = 0x00;
    public const byte False = 0x01;
    public const byte True = 0x02;
    public const byte Object = 0x03;     // shape reference, then the members' values
    public const byte Array = 0x04;      // varint count, then the elements
    public const byte String = 0x05;     // varint length, bytes (JSON: the raw text between the quotes, escapes kept); 224 bytes or more
    public const byte Integer = 0x06;    // zigzag varint (JSON integer; BSON int32)
    public const byte Int64 = 0x07;      // zigzag varint (BSON int64)
    public const byte NumberText = 0x08; // varint length, the number's text (JSON numbers kept as written)
    public const byte Double = 0x09;     // 8 bytes, little-endian (BSON double without a short decimal form)
    public const byte DateTime = 0x0A;   // zigzag varint, milliseconds (BSON UTC datetime)
    public const byte ObjectId = 0x0B;   // 12 bytes (BSON)
    public const byte Binary = 0x0C;     // varint length, subtype byte, bytes (BSON)
    public const byte BsonRaw = 0x0D;    // BSON type byte, varint length, the value's bytes as stored (the rare BSON types)
    public const byte Decimal = 0x10;    // 0x10 + scale (0-15), zigzag varint mantissa: mantissa / 10^scale
    public const int MaxScale = 15;
    public const byte ShortString = 0x20; // 0x20 + length (0-223), bytes: a string's length folded into its tag
    public const int MaxShortString = 0xFF - ShortString;

    /// <summary>The BSON types a <see cref="BsonRaw"/> value may carry.</summary>
    public static bool IsRawBsonType(byte type) => type is 0x06 or 0x0B or 0x0C or 0x0D or 0x0E or 0x0F or 0x11 or 0x13 or 0x7F or 0xFF;
}

/// <summary>Copies of the short spans packing is made of (keys, small strings), without a call into the runtime's memmove.</summary>
internal static class ShortCopy
{
    /// <summary>
    /// Copies <paramref name="source"/> to the start of <paramref name="destination"/>, which must be at least as long
    /// (span bounds checks throw otherwise) and must not overlap it.
    /// </summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    public static void To(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        int length = source.Length;
        if (length >= 8 && length <= 16)
        {
            // Two 8-byte moves, overlapping when the length is under 16.
            ulong head = BinaryPrimitives.ReadUInt64LittleEndian(source);
            ulong tail = BinaryPrimitives.ReadUInt64LittleEndian(source[(length - 8)..]);
            BinaryPrimitives.WriteUInt64LittleEndian(destination, head);
            BinaryPrimitives.WriteUInt64LittleEndian(destination[(length - 8)..], tail);
        }
        else if (length < 8)
        {
            for (int i = 0; i < length; i++) destination[i] = source[i];
        }
        else
        {
            source.CopyTo(destination);
        }
    }
}

/// <summary>Unsigned LEB128 of 64-bit values, and zigzag for signed ones. Readers accept only minimal encodings.</summary>
internal static class Varint64
{
    public const int MaxLength = 10;

    public static int GetLength(ulong value)
    {
        int n = 1;
        while (value >= 0x80) { value >>= 7; n++; }
        return n;
    }

    public static ulong ZigZag(long value) => (ulong)((value << 1) ^ (value >> 63));

    public static long UnZigZag(ulong value) => (long)(value >> 1) ^ -(long)(value & 1);

    /// <summary>Writes <paramref name="value"/>; false when it does not fit.</summary>
    public static bool TryWrite(Span<byte> destination, ulong value, out int written)
    {
        int i = 0;
        while (value >= 0x80)
        {
            if (i >= destination.Length) { written = 0; return false; }
            destination[i++] = (byte)(value | 0x80);
            value >>= 7;
        }
        if (i >= destination.Length) { written = 0; return false; }
        destination[i++] = (byte)value;
        written = i;
        return true;
    }

    /// <summary>Reads a value; false when truncated, over-long, overflowing 64 bits or not minimal.</summary>
    public static bool TryRead(ReadOnlySpan<byte> source, out ulong value, out int read)
    {
        value = 0;
        read = 0;
        for (int i = 0, shift = 0; i < MaxLength; i++, shift += 7)
        {
            if (i >= source.Length) return false;
            byte b = source[i];
            if (i == MaxLength - 1 && b > 0x01) return false;
            value |= (ulong)(b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                if (i > 0 && b == 0) return false;
                read = i + 1;
                return true;
            }
        }
        return false;
    }
}

internal static class StructureThrow
{
    [DoesNotReturn]
    public static void Corrupt(string message) => throw new InvalidDataException(message);

    [DoesNotReturn]
    public static T Corrupt<T>(string message) => throw new InvalidDataException(message);
}
