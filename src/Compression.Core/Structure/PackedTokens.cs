namespace Compression.Structure;

/// <summary>Token-level facts of the packed stream the field coder needs.</summary>
internal static class PackedTokens
{
    /// <summary>
    /// The length of the scalar value (tag and payload) at the start of <paramref name="token"/>; -1 for an object or an
    /// array, -2 when it is not a well-formed value (unknown tag, truncated, non-minimal varint).
    /// </summary>
    public static int ScalarLength(ReadOnlySpan<byte> token)
    {
        if (token.IsEmpty) return -2;
        byte tag = token[0];
        if (tag >= PackedTag.ShortString) return 1 + tag - PackedTag.ShortString <= token.Length ? 1 + tag - PackedTag.ShortString : -2;
        switch (tag)
        {
            case PackedTag.Null or PackedTag.False or PackedTag.True: return 1;
            case PackedTag.Object or PackedTag.Array: return -1;
            case PackedTag.String or PackedTag.NumberText:
                return LengthPrefixed(token, 1, 0);
            case PackedTag.Integer or PackedTag.Int64 or PackedTag.DateTime:
            case >= PackedTag.Decimal and <= PackedTag.Decimal + PackedTag.MaxScale:
                return Varint64.TryRead(token[1..], out _, out int read) ? 1 + read : -2;
            case PackedTag.Double: return token.Length >= 9 ? 9 : -2;
            case PackedTag.ObjectId: return token.Length >= 13 ? 13 : -2;
            case PackedTag.Binary: return LengthPrefixed(token, 1, 1);
            case PackedTag.BsonRaw: return token.Length >= 2 ? LengthPrefixed(token, 2, 0) : -2;
            default: return -2;
        }
    }

    /// <summary>A varint length at <paramref name="at"/>, <paramref name="extra"/> bytes, then that many bytes.</summary>
    private static int LengthPrefixed(ReadOnlySpan<byte> token, int at, int extra)
    {
        if (!Varint64.TryRead(token[at..], out ulong length, out int read)) return -2;
        long total = (long)at + read + extra + (long)Math.Min(length, int.MaxValue);
        return length <= int.MaxValue && total <= token.Length ? (int)total : -2;
    }

    /// <summary>The content of a string token (short, its length in the tag; or long, a varint length first); false for any other token.</summary>
    public static bool TryGetString(ReadOnlySpan<byte> token, out ReadOnlySpan<byte> text)
    {
        text = default;
        if (token.IsEmpty) return false;
        if (token[0] >= PackedTag.ShortString) text = token[1..];
        else if (token[0] == PackedTag.String && Varint64.TryRead(token[1..], out _, out int read)) text = token[(1 + read)..];
        else return false;
        return true;
    }

    /// <summary>Tags whose payload is one zigzag varint: what a field's range may code.</summary>
    public static bool IsRangeTag(byte tag) => tag is PackedTag.Integer or PackedTag.Int64 or PackedTag.DateTime
        or (>= PackedTag.Decimal and <= PackedTag.Decimal + PackedTag.MaxScale);
}
