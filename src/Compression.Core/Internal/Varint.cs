namespace Compression.Internal;

/// <summary>Unsigned LEB128, at most 5 bytes for a 32-bit value.</summary>
internal static class Varint
{
    public const int MaxLength32 = 5;

    public static int GetLength(uint value)
    {
        int n = 1;
        while (value >= 0x80) { value >>= 7; n++; }
        return n;
    }

    public static int Write(Span<byte> destination, uint value)
    {
        int i = 0;
        while (value >= 0x80)
        {
            destination[i++] = (byte)(value | 0x80);
            value >>= 7;
        }
        destination[i++] = (byte)value;
        return i;
    }

    /// <summary>Reads a value; returns false when the input is truncated, over-long (more than 5 bytes) or overflows 32 bits.</summary>
    public static bool TryRead(ReadOnlySpan<byte> source, out uint value, out int bytesRead)
    {
        value = 0;
        bytesRead = 0;
        for (int shift = 0, i = 0; i < MaxLength32; i++, shift += 7)
        {
            if (i >= source.Length) return false;
            byte b = source[i];
            if (i == MaxLength32 - 1 && b > 0x0F) return false; // would overflow 32 bits, or continues past 5 bytes
            value |= (uint)(b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                // Reject non-minimal encodings (a trailing zero group) so every value has exactly one encoding.
                if (i > 0 && b == 0) return false;
                bytesRead = i + 1;
                return true;
            }
        }
        return false;
    }
}
