using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace Compression.Structure;

/// <summary>
/// Reads compact JSON text into <see cref="PackScratch"/> nodes, keeping everything needed to write the same bytes
/// again: strings are kept raw (escapes as written), numbers as integers or decimals only when their text is the one
/// those print back to (otherwise as text). Anything else (whitespace between tokens, a root that is not an object,
/// nesting deeper than <see cref="PackScratch.MaxDepth"/>, text that is not JSON) is "not applicable": false, no exception.
/// </summary>
internal ref struct JsonText
{
    private readonly ReadOnlySpan<byte> _source;
    private readonly PackScratch _scratch;
    private int _at;

    private JsonText(ReadOnlySpan<byte> source, PackScratch scratch)
    {
        _source = source;
        _scratch = scratch;
    }

    /// <summary>Parses <paramref name="source"/> into <paramref name="scratch"/>; false when it is not compact JSON with an object at the root.</summary>
    public static bool TryParse(ReadOnlySpan<byte> source, PackScratch scratch)
    {
        if (source.IsEmpty || source[0] != (byte)'{') return false;
        var reader = new JsonText(source, scratch);
        return reader.TryObject(1) && reader._at == source.Length;
    }

    /// <summary>
    /// Whether <paramref name="content"/> can stand between two quotes as written: every backslash begins a two-byte
    /// escape and no quote is unescaped. (Escapes are not otherwise checked: they are kept, not interpreted.)
    /// </summary>
    public static bool IsRawStringContent(ReadOnlySpan<byte> content)
    {
        if (content.Length <= ShortScan)
        {
            for (int i = 0; i < content.Length; i++)
            {
                if (content[i] == (byte)'"') return false;
                if (content[i] == (byte)'\\' && ++i >= content.Length) return false;
            }
            return true;
        }
        while (true)
        {
            int i = content.IndexOfAny((byte)'"', (byte)'\\');
            if (i < 0) return true;
            if (content[i] == (byte)'"' || i + 1 >= content.Length) return false;
            content = content[(i + 2)..];
        }
    }

    /// <summary>
    /// Copies the first <paramref name="length"/> (at most 32) bytes of <paramref name="source"/> to
    /// <paramref name="destination"/> when none of them is a quote or a backslash, which makes them raw string content
    /// (<see cref="IsRawStringContent"/>) without looking further; <see langword="false"/>, having written nothing that
    /// counts, otherwise. One 32-byte load and store: both spans must hold 32 bytes, and the destination's bytes past
    /// <paramref name="length"/> are overwritten (the caller writes over them next).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryCopyPlainShort(ReadOnlySpan<byte> source, Span<byte> destination, int length)
    {
        Vector256<byte> text = Vector256.Create(source);
        Vector256<byte> special = Vector256.Equals(text, Vector256.Create((byte)'"')) | Vector256.Equals(text, Vector256.Create((byte)'\\'));
        if ((special.ExtractMostSignificantBits() & (uint)((1UL << length) - 1)) != 0) return false;
        text.CopyTo(destination);
        return true;
    }

    /// <summary>The longest string <see cref="TryCopyPlainShort"/> takes.</summary>
    public const int PlainShortLength = 32;

    /// <summary>How many bytes of a string are scanned one by one before a vectorized search takes over.</summary>
    private const int ShortScan = 16;

    /// <summary>Whether a byte may appear in a number's text.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsNumberByte(byte b) => (uint)(b - '0') <= 9 || b is (byte)'-' or (byte)'+' or (byte)'.' or (byte)'e' or (byte)'E';

    private bool TryValue(int depth)
    {
        if (_at >= _source.Length) return false;
        switch (_source[_at])
        {
            case (byte)'{':
                return TryObject(depth + 1);
            case (byte)'[':
                return TryArray(depth + 1);
            case (byte)'"':
                if (!TryString(out KeySpan s)) return false;
                int n = _scratch.AddNode(PackedTag.String);
                _scratch.Nodes[n].Start = s.Start;
                _scratch.Nodes[n].Length = s.Length;
                return true;
            case (byte)'t':
                return TryLiteral("true"u8, PackedTag.True);
            case (byte)'f':
                return TryLiteral("false"u8, PackedTag.False);
            case (byte)'n':
                return TryLiteral("null"u8, PackedTag.Null);
            default:
                return TryNumber();
        }
    }

    private bool TryObject(int depth)
    {
        if (depth > PackScratch.MaxDepth) return false;
        int node = _scratch.AddNode(PackedTag.Object);
        int pendingBase = _scratch.PendingCount;
        _at++; // '{'
        if (_at < _source.Length && _source[_at] == (byte)'}')
        {
            _at++;
        }
        else
        {
            while (true)
            {
                if (_at >= _source.Length || _source[_at] != (byte)'"' || !TryString(out KeySpan key)) return false;
                _scratch.PushKey(key);
                if (_at >= _source.Length || _source[_at] != (byte)':') return false;
                _at++;
                if (!TryValue(depth)) return false;
                if (_at >= _source.Length) return false;
                byte next = _source[_at++];
                if (next == (byte)'}') break;
                if (next != (byte)',') return false;
            }
        }
        int count = _scratch.PendingCount - pendingBase;
        int start = _scratch.CommitKeys(pendingBase);
        _scratch.Nodes[node].Start = start;
        _scratch.Nodes[node].Length = count;
        return true;
    }

    private bool TryArray(int depth)
    {
        if (depth > PackScratch.MaxDepth) return false;
        int node = _scratch.AddNode(PackedTag.Array);
        _at++; // '['
        int count = 0;
        if (_at < _source.Length && _source[_at] == (byte)']')
        {
            _at++;
        }
        else
        {
            while (true)
            {
                if (!TryValue(depth)) return false;
                count++;
                if (_at >= _source.Length) return false;
                byte next = _source[_at++];
                if (next == (byte)']') break;
                if (next != (byte)',') return false;
            }
        }
        _scratch.Nodes[node].Length = count;
        return true;
    }

    /// <summary>At a quote: the raw content up to the closing quote, which is consumed.</summary>
    private bool TryString(out KeySpan content)
    {
        if (!TryScanString(_source, _at, out content, out int next)) return false;
        _at = next;
        return true;
    }

    /// <summary>
    /// At the quote at <paramref name="quote"/>: the raw content up to the closing quote (escapes kept), and the position
    /// after that quote; false when the string does not end.
    /// </summary>
    internal static bool TryScanString(ReadOnlySpan<byte> source, int quote, out KeySpan content, out int next)
    {
        int start = quote + 1;
        int at = start;
        // Most strings (every key) are short: a plain loop over their first bytes costs less than a vectorized search.
        for (int end = Math.Min(source.Length, start + ShortScan); at < end;)
        {
            byte b = source[at];
            if (b == (byte)'"')
            {
                content = new KeySpan(start, at - start);
                next = at + 1;
                return true;
            }
            at += b == (byte)'\\' ? 2 : 1;
        }
        while (true)
        {
            int i = at < source.Length ? source[at..].IndexOfAny((byte)'"', (byte)'\\') : -1;
            if (i < 0)
            {
                content = default;
                next = 0;
                return false;
            }
            at += i;
            if (source[at] == (byte)'"') break;
            at += 2; // a backslash and the byte it escapes
        }
        content = new KeySpan(start, at - start);
        next = at + 1;
        return true;
    }

    private bool TryLiteral(ReadOnlySpan<byte> literal, byte tag)
    {
        if (!_source[_at..].StartsWith(literal)) return false;
        _at += literal.Length;
        _scratch.AddNode(tag);
        return true;
    }

    private bool TryNumber()
    {
        int start = _at;
        byte tag = ScanNumber(_source, start, out int end, out long value);
        if (end == start) return false;
        _at = end;
        int node = _scratch.AddNode(tag);
        if (tag == PackedTag.NumberText)
        {
            _scratch.Nodes[node].Start = start;
            _scratch.Nodes[node].Length = end - start;
        }
        else
        {
            _scratch.Nodes[node].Value = value;
        }
        return true;
    }

    /// <summary>
    /// A number at <paramref name="start"/>, in one pass: <c>-?(0|[1-9][0-9]*)(\.[0-9]+)?</c> with at most
    /// <see cref="MaxDigits"/> digits, at most <see cref="PackedTag.MaxScale"/> after the point and not a negative zero is
    /// packed as an integer or a decimal (exactly the texts <see cref="TryFormatDecimal"/> writes back): its tag, and the
    /// mantissa in <paramref name="value"/>; any other run of number bytes stays text (<see cref="PackedTag.NumberText"/>).
    /// <paramref name="end"/> is where the number bytes end (<paramref name="start"/> when there are none: not a number).
    /// </summary>
    internal static byte ScanNumber(ReadOnlySpan<byte> source, int start, out int end, out long value)
    {
        int i = start;
        bool negative = i < source.Length && source[i] == (byte)'-';
        if (negative) i++;
        ulong digits = 0;
        int count = 0, scale = 0;
        bool packable = i < source.Length;
        if (packable && source[i] == (byte)'0')
        {
            i++;
            count = 1;
        }
        else
        {
            while (i < source.Length && (uint)(source[i] - '0') <= 9)
            {
                digits = (digits * 10) + (uint)(source[i++] - '0');
                count++;
            }
            packable = count > 0;
        }
        if (packable && i < source.Length && source[i] == (byte)'.')
        {
            int first = ++i;
            while (i < source.Length && (uint)(source[i] - '0') <= 9)
            {
                digits = (digits * 10) + (uint)(source[i++] - '0');
                count++;
            }
            scale = i - first;
            packable = scale is > 0 and <= PackedTag.MaxScale;
        }
        // Whatever number bytes follow (an exponent, a second sign, a leading zero's digits) make it text.
        end = i;
        while (end < source.Length && IsNumberByte(source[end])) end++;
        if (packable && end == i && count <= MaxDigits && !(negative && digits == 0))
        {
            value = negative ? -(long)digits : (long)digits;
            return scale == 0 ? PackedTag.Integer : (byte)(PackedTag.Decimal + scale);
        }
        value = 0;
        return PackedTag.NumberText;
    }

    /// <summary>The most digits a packed number may have (it then fits a long).</summary>
    public const int MaxDigits = 18;

    /// <summary>Writes mantissa / 10^scale as JSON text (scale 0: an integer); false when it does not fit.</summary>
    public static bool TryFormatDecimal(long mantissa, int scale, Span<byte> destination, out int written)
    {
        written = 0;
        Span<byte> digits = stackalloc byte[20];
        ulong magnitude = mantissa < 0 ? (ulong)(-(mantissa + 1)) + 1 : (ulong)mantissa;
        magnitude.TryFormat(digits, out int n, default, System.Globalization.CultureInfo.InvariantCulture);
        int padded = Math.Max(n, scale + 1);
        int length = (mantissa < 0 ? 1 : 0) + padded + (scale > 0 ? 1 : 0);
        if (length > destination.Length) return false;
        int at = 0;
        if (mantissa < 0) destination[at++] = (byte)'-';
        int zeros = padded - n; // "0.0042": zeros before the first digit
        int whole = padded - scale;
        // Integer part: the leading zero, or the digits before the point.
        for (int z = 0; z < Math.Min(zeros, whole); z++) destination[at++] = (byte)'0';
        int fromDigits = whole - Math.Min(zeros, whole);
        digits[..fromDigits].CopyTo(destination[at..]);
        at += fromDigits;
        if (scale > 0)
        {
            destination[at++] = (byte)'.';
            for (int z = whole; z < zeros; z++) destination[at++] = (byte)'0';
            digits[fromDigits..n].CopyTo(destination[at..]);
            at += n - fromDigits;
        }
        written = at;
        return true;
    }
}
