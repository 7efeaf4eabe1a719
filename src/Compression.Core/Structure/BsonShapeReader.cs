using System.Buffers.Binary;
using System.Globalization;

namespace Compression.Structure;

/// <summary>
/// Reads a BSON document into <see cref="PackScratch"/> nodes. Everything BSON derives (document and string lengths,
/// array keys, terminators) must be what a writer derives, so that the packed form, which leaves them out, gives the
/// same bytes back: arrays must have the keys "0", "1", ...; booleans must be 0 or 1; lengths must match. A document
/// that breaks a rule, or that is not valid BSON, is "not applicable": false, no exception.
/// </summary>
internal ref struct BsonShapeReader
{
    private readonly ReadOnlySpan<byte> _source;
    private readonly PackScratch _scratch;

    private BsonShapeReader(ReadOnlySpan<byte> source, PackScratch scratch)
    {
        _source = source;
        _scratch = scratch;
    }

    /// <summary>Parses <paramref name="source"/>, which must be exactly one BSON document.</summary>
    public static bool TryParse(ReadOnlySpan<byte> source, PackScratch scratch)
    {
        if (source.Length < 5 || BinaryPrimitives.ReadInt32LittleEndian(source) != source.Length) return false;
        var reader = new BsonShapeReader(source, scratch);
        return reader.TryDocument(0, isArray: false, depth: 1, out int end) && end == source.Length;
    }

    private bool TryDocument(int start, bool isArray, int depth, out int end)
    {
        end = 0;
        if (depth > PackScratch.MaxDepth || _source.Length - start < 5) return false;
        int length = BinaryPrimitives.ReadInt32LittleEndian(_source[start..]);
        if (length < 5 || length > _source.Length - start || _source[start + length - 1] != 0) return false;
        int last = start + length - 1; // the terminating NUL
        int node = _scratch.AddNode(isArray ? PackedTag.Array : PackedTag.Object);
        int pendingBase = _scratch.PendingCount;
        int at = start + 4;
        int count = 0;
        Span<byte> index = stackalloc byte[11];
        while (at < last)
        {
            byte type = _source[at++];
            int nameLength = _source[at..last].IndexOf((byte)0);
            if (nameLength < 0) return false;
            if (isArray)
            {
                count.TryFormat(index, out int indexLength, provider: CultureInfo.InvariantCulture);
                if (!_source.Slice(at, nameLength).SequenceEqual(index[..indexLength])) return false;
            }
            else
            {
                _scratch.PushKey(new KeySpan(at, nameLength));
            }
            at += nameLength + 1;
            if (!TryValue(type, ref at, last, depth)) return false;
            count++;
        }
        if (at != last) return false;
        if (isArray)
        {
            _scratch.Nodes[node].Length = count;
        }
        else
        {
            int keyCount = _scratch.PendingCount - pendingBase;
            _scratch.Nodes[node].Start = _scratch.CommitKeys(pendingBase);
            _scratch.Nodes[node].Length = keyCount;
        }
        end = start + length;
        return true;
    }

    private bool TryValue(byte type, ref int at, int last, int depth)
    {
        ReadOnlySpan<byte> rest = _source[at..last];
        int node;
        switch (type)
        {
            case 0x01: // double
                if (rest.Length < 8) return false;
                long bits = BinaryPrimitives.ReadInt64LittleEndian(rest);
                if (TryDecimal(BitConverter.Int64BitsToDouble(bits), out long mantissa, out int scale))
                {
                    node = _scratch.AddNode((byte)(PackedTag.Decimal + scale));
                    _scratch.Nodes[node].Value = mantissa;
                }
                else
                {
                    node = _scratch.AddNode(PackedTag.Double);
                    _scratch.Nodes[node].Value = bits;
                }
                at += 8;
                return true;
            case 0x02: // string
                if (!TryStringLength(rest, out int stringLength)) return false;
                node = _scratch.AddNode(PackedTag.String);
                _scratch.Nodes[node].Start = at + 4;
                _scratch.Nodes[node].Length = stringLength - 1;
                at += 4 + stringLength;
                return true;
            case 0x03 or 0x04:
                if (!TryDocument(at, type == 0x04, depth + 1, out int end) || end > last) return false;
                at = end;
                return true;
            case 0x05: // binary
                if (rest.Length < 5) return false;
                int binaryLength = BinaryPrimitives.ReadInt32LittleEndian(rest);
                if (binaryLength < 0 || binaryLength > rest.Length - 5) return false;
                node = _scratch.AddNode(PackedTag.Binary);
                _scratch.Nodes[node].Extra = rest[4];
                _scratch.Nodes[node].Start = at + 5;
                _scratch.Nodes[node].Length = binaryLength;
                at += 5 + binaryLength;
                return true;
            case 0x07: // ObjectId
                if (rest.Length < 12) return false;
                node = _scratch.AddNode(PackedTag.ObjectId);
                _scratch.Nodes[node].Start = at;
                _scratch.Nodes[node].Length = 12;
                at += 12;
                return true;
            case 0x08: // boolean
                if (rest.Length < 1 || rest[0] > 1) return false;
                _scratch.AddNode(rest[0] == 1 ? PackedTag.True : PackedTag.False);
                at += 1;
                return true;
            case 0x09: // UTC datetime
                if (rest.Length < 8) return false;
                node = _scratch.AddNode(PackedTag.DateTime);
                _scratch.Nodes[node].Value = BinaryPrimitives.ReadInt64LittleEndian(rest);
                at += 8;
                return true;
            case 0x0A:
                _scratch.AddNode(PackedTag.Null);
                return true;
            case 0x10: // int32
                if (rest.Length < 4) return false;
                node = _scratch.AddNode(PackedTag.Integer);
                _scratch.Nodes[node].Value = BinaryPrimitives.ReadInt32LittleEndian(rest);
                at += 4;
                return true;
            case 0x12: // int64
                if (rest.Length < 8) return false;
                node = _scratch.AddNode(PackedTag.Int64);
                _scratch.Nodes[node].Value = BinaryPrimitives.ReadInt64LittleEndian(rest);
                at += 8;
                return true;
            default:
                if (!PackedTag.IsRawBsonType(type)) return false;
                int rawLength = RawValueLength(type, rest);
                if (rawLength < 0) return false;
                node = _scratch.AddNode(PackedTag.BsonRaw);
                _scratch.Nodes[node].Extra = type;
                _scratch.Nodes[node].Start = at;
                _scratch.Nodes[node].Length = rawLength;
                at += rawLength;
                return true;
        }
    }

    /// <summary>A BSON string's int32 length (counting its NUL), checked against what follows; the NUL must be there.</summary>
    private static bool TryStringLength(ReadOnlySpan<byte> rest, out int length)
    {
        length = 0;
        if (rest.Length < 5) return false;
        length = BinaryPrimitives.ReadInt32LittleEndian(rest);
        return length >= 1 && length <= rest.Length - 4 && rest[4 + length - 1] == 0;
    }

    /// <summary>
    /// The length of a value of one of the rare types kept raw (<see cref="PackedTag.IsRawBsonType"/>), framed as BSON
    /// frames it, or -1 when <paramref name="rest"/> does not hold one. Used on both sides: a raw value read from a
    /// packed stream must have exactly this length.
    /// </summary>
    public static int RawValueLength(byte type, ReadOnlySpan<byte> rest)
    {
        switch (type)
        {
            case 0x06 or 0x7F or 0xFF: // undefined, max key, min key
                return 0;
            case 0x0B: // regex: two cstrings
                int pattern = rest.IndexOf((byte)0);
                if (pattern < 0) return -1;
                int options = rest[(pattern + 1)..].IndexOf((byte)0);
                return options < 0 ? -1 : pattern + 1 + options + 1;
            case 0x0C: // DBPointer: string, 12 bytes
                return TryStringLength(rest, out int pointer) && rest.Length - 4 - pointer >= 12 ? 4 + pointer + 12 : -1;
            case 0x0D or 0x0E: // JavaScript code, symbol
                return TryStringLength(rest, out int code) ? 4 + code : -1;
            case 0x0F: // code with scope: int32 total, string, document
                if (rest.Length < 4) return -1;
                int total = BinaryPrimitives.ReadInt32LittleEndian(rest);
                if (total < 14 || total > rest.Length) return -1;
                ReadOnlySpan<byte> inner = rest[4..total];
                if (!TryStringLength(inner, out int scopeCode)) return -1;
                ReadOnlySpan<byte> scope = inner[(4 + scopeCode)..];
                return scope.Length >= 5 && BinaryPrimitives.ReadInt32LittleEndian(scope) == scope.Length && scope[^1] == 0 ? total : -1;
            case 0x11: // timestamp
                return rest.Length >= 8 ? 8 : -1;
            case 0x13: // decimal128
                return rest.Length >= 16 ? 16 : -1;
            default:
                return -1;
        }
    }

    private static readonly double[] s_powersOfTen = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

    /// <summary>The largest mantissa a packed double may have: every integer up to it is exact in a double.</summary>
    public const long MaxDoubleMantissa = (1L << 53) - 1;

    /// <summary>
    /// A double as mantissa / 10^scale (scale 0 to 15, |mantissa| at most 2^53-1) when that quotient, computed in
    /// IEEE arithmetic (<see cref="DecimalToDouble"/>), gives back exactly the same bits: the shortest text that
    /// round-trips decides the digits. Negative zero, NaN, infinities and values without such a form stay 8 bytes.
    /// </summary>
    public static bool TryDecimal(double value, out long mantissa, out int scale)
    {
        mantissa = 0;
        scale = 0;
        if (!double.IsFinite(value)) return false;
        if (value == Math.Floor(value) && Math.Abs(value) <= MaxDoubleMantissa)
        {
            mantissa = (long)value;
        }
        else
        {
            Span<byte> text = stackalloc byte[32];
            if (!value.TryFormat(text, out int length, "R", CultureInfo.InvariantCulture)) return false;
            if (!TryDigits(text[..length], out mantissa, out scale)) return false;
        }
        return BitConverter.DoubleToInt64Bits(DecimalToDouble(mantissa, scale)) == BitConverter.DoubleToInt64Bits(value);
    }

    /// <summary>mantissa / 10^scale, correctly rounded: both are exact doubles (|mantissa| &lt; 2^53, scale &lt;= 15).</summary>
    public static double DecimalToDouble(long mantissa, int scale) => mantissa / s_powersOfTen[scale];

    /// <summary>Digits and scale of .NET's shortest round-trip text ("-1.25", "1E-05"); false outside the packed range.</summary>
    private static bool TryDigits(ReadOnlySpan<byte> text, out long mantissa, out int scale)
    {
        mantissa = 0;
        scale = 0;
        int i = 0;
        bool negative = text[0] == (byte)'-';
        if (negative) i++;
        long digits = 0;
        int fraction = 0;
        bool point = false;
        int count = 0;
        for (; i < text.Length && text[i] != (byte)'E'; i++)
        {
            if (text[i] == (byte)'.') { point = true; continue; }
            if ((uint)(text[i] - '0') > 9 || ++count > 17) return false;
            digits = digits * 10 + (text[i] - '0');
            if (point) fraction++;
        }
        int exponent = 0;
        if (i < text.Length)
        {
            if (!int.TryParse(text[(i + 1)..], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out exponent)) return false;
        }
        scale = fraction - exponent;
        if (scale < 0)
        {
            // 1.5E+17 and the like: whole, but over the fast path above only when beyond 2^53; leave them as 8 bytes.
            return false;
        }
        if (scale > PackedTag.MaxScale || digits > MaxDoubleMantissa) return false;
        mantissa = negative ? -digits : digits;
        return true;
    }
}
