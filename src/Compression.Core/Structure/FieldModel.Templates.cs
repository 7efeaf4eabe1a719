using System.Runtime.CompilerServices;

namespace Compression.Structure;

// String templates: splitting a string into literals and digit-run slots, and the parts a copy slot copies.
internal sealed partial class FieldModel
{
    /// <summary>The most templates a field holds.</summary>
    public const int MaxTemplatesPerField = 64;

    /// <summary>The most slots a template holds.</summary>
    public const int MaxSlots = 16;

    /// <summary>The widest slot: 18 digits (under 2^60).</summary>
    public const int MaxSlotWidth = 18;

    /// <summary>The most bits a slot's number takes above its minimum (18 digits need 60).</summary>
    public const int MaxSlotBits = 60;

    /// <summary>The longest string a template matches (and the longest it may describe).</summary>
    public const int MaxTemplateLength = 256;

    /// <summary>The room a template key of a string of up to <see cref="MaxTemplateLength"/> bytes may need.</summary>
    public const int MaxKeyLength = MaxTemplateLength + 2 * (MaxSlots + 1) + MaxSlots;

    /// <summary>
    /// Splits <paramref name="text"/> into a template key (written to <paramref name="key"/>, at least
    /// <see cref="MaxKeyLength"/> bytes) and its slots' numbers (<paramref name="numbers"/>, at least
    /// <see cref="MaxSlots"/>): maximal runs of ASCII digits are slots. False when the text is longer than
    /// <see cref="MaxTemplateLength"/>, has no digit run, more than <see cref="MaxSlots"/>, or a run over
    /// <see cref="MaxSlotWidth"/> digits.
    /// </summary>
    public static bool TrySplitTemplate(ReadOnlySpan<byte> text, Span<byte> key, out int keyLength, Span<long> numbers, out int slots) =>
        TrySplitTemplate(text, -1, 0, key, out keyLength, numbers, out slots);

    /// <summary>
    /// As <see cref="TrySplitTemplate(ReadOnlySpan{byte}, Span{byte}, out int, Span{long}, out int)"/>, with the
    /// <paramref name="copyLength"/> bytes at <paramref name="copyStart"/> (when it is not negative) as a copy slot (width
    /// 0, number 0): digit runs are the maximal runs before it and after it, never across it.
    /// </summary>
    public static bool TrySplitTemplate(ReadOnlySpan<byte> text, int copyStart, int copyLength, Span<byte> key, out int keyLength, Span<long> numbers, out int slots)
    {
        keyLength = 0;
        slots = 0;
        if (text.Length > MaxTemplateLength) return false;
        int literalStart = 0, i = 0;
        bool copyPending = copyStart >= 0;
        while (true)
        {
            int limit = copyPending ? copyStart : text.Length;
            while (i < limit && (uint)(text[i] - '0') > 9) i++;
            ReadOnlySpan<byte> literal = text[literalStart..i];
            Varint64.TryWrite(key[keyLength..], (ulong)literal.Length, out int n);
            keyLength += n;
            literal.CopyTo(key[keyLength..]);
            keyLength += literal.Length;
            if (i == limit && copyPending)
            {
                if (slots == MaxSlots) return false;
                key[keyLength++] = 0;
                numbers[slots++] = 0;
                i = literalStart = copyStart + copyLength;
                copyPending = false;
                continue;
            }
            if (i == text.Length) break;
            int runStart = i;
            long value = 0;
            while (i < limit && (uint)(text[i] - '0') <= 9 && i - runStart < MaxSlotWidth) value = value * 10 + (text[i++] - '0');
            if (i < limit && (uint)(text[i] - '0') <= 9) return false; // a run over MaxSlotWidth digits
            if (slots == MaxSlots) return false;
            key[keyLength++] = (byte)(i - runStart);
            numbers[slots++] = value;
            literalStart = i;
        }
        return slots > 0;
    }

    /// <summary>A template key's literals and slot widths (0: the copy slot).</summary>
    public static (List<byte[]> Literals, List<byte> Widths) PartsOfKey(ReadOnlySpan<byte> key)
    {
        var literals = new List<byte[]>();
        var widths = new List<byte>();
        var reader = new PackedReader(key);
        while (true)
        {
            literals.Add(reader.Bytes((int)reader.Varint()).ToArray());
            if (reader.Remaining == 0) break;
            widths.Add(reader.Byte());
        }
        return (literals, widths);
    }

    /// <summary>
    /// The part of a source's string a copy slot copies: all of it when <paramref name="delimiter"/> is 0; else what
    /// follows the last occurrence of <paramref name="delimiter"/>, less its first <paramref name="skip"/> bytes. False when
    /// the string holds no such delimiter or the part would start past its end.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryCopyPart(ReadOnlySpan<byte> source, byte delimiter, byte skip, out ReadOnlySpan<byte> part)
    {
        part = source;
        if (delimiter == 0) return true;
        int at = source.LastIndexOf(delimiter);
        if (at < 0 || at + 1 + skip > source.Length) return false;
        part = source[(at + 1 + skip)..];
        return true;
    }

    /// <summary>The bytes a copy part's delimiter may be: ASCII punctuation and space (never a letter or a digit, which a part's text holds).</summary>
    public static bool IsCopyDelimiter(byte b) => b is >= 0x20 and < 0x7F && !char.IsAsciiLetterOrDigit((char)b);
}
