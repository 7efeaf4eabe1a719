using System.Buffers.Binary;
using System.IO.Hashing;
using System.Numerics;
using Compression.Internal;

namespace Compression.Structure;

/// <summary>
/// The shapes of one namespace: key lists of the objects its documents are made of, each referenced from a packed
/// stream by a small id (1 for the first, 0 meaning "keys written inline"). Learned from the same samples as the
/// dictionary (<see cref="ShapeTableBuilder"/>), serialized deterministically to be stored beside it, and parsed with
/// every field checked (<see cref="Parse"/>): a table read from a database is untrusted. Immutable and thread-safe.
/// Byte layout: docs/structure.md, "Shape table".
/// </summary>
internal sealed class ShapeTable
{
    /// <summary>The first four bytes of a serialized table: "SHPT".</summary>
    public static ReadOnlySpan<byte> Magic => "SHPT"u8;

    /// <summary>The only format version this code writes and reads.</summary>
    public const byte FormatVersion = 1;

    /// <summary>The most shapes a table may hold (ids 1 to this).</summary>
    public const int MaxShapes = 65_535;

    /// <summary>The most keys one shape may hold.</summary>
    public const int MaxKeysPerShape = 65_535;

    /// <summary>The default limit on a serialized table's size when it is read.</summary>
    public const int DefaultMaxSerializedLength = 1024 * 1024;

    private const int HeaderLength = 7; // magic, version, kind, reserved
    private const int ChecksumLength = 4;

    private readonly byte[] _keyBytes;
    private readonly int[] _keyStarts;   // key k is _keyBytes[_keyStarts[k].._keyStarts[k + 1]]
    private readonly int[] _firstKey;    // shape id s (1-based) has keys _firstKey[s - 1].._firstKey[s]
    private readonly byte[] _prefixBytes;  // per key, what the unpacker writes before its value (below)
    private readonly int[] _prefixStarts;
    private readonly Dictionary<ulong, int> _byHash;
    private readonly int[] _nextWithHash; // chains shapes whose key lists hash alike (index: id - 1; 0 ends the chain)

    private ShapeTable(DocumentKind kind, byte[] keyBytes, int[] keyStarts, int[] firstKey)
    {
        Kind = kind;
        _keyBytes = keyBytes;
        _keyStarts = keyStarts;
        _firstKey = firstKey;
        (_prefixBytes, _prefixStarts) = RenderPrefixes(kind, keyBytes, keyStarts, firstKey);
        _byHash = new Dictionary<ulong, int>(Count);
        _nextWithHash = new int[Count];
        for (int id = Count; id >= 1; id--)
        {
            ulong hash = HashOf(id);
            _nextWithHash[id - 1] = _byHash.TryGetValue(hash, out int next) ? next : 0;
            _byHash[hash] = id;
        }
    }

    /// <summary>What the documents are: JSON text or BSON.</summary>
    public DocumentKind Kind { get; }

    /// <summary>How many shapes the table holds; ids run from 1 to this.</summary>
    public int Count => _firstKey.Length - 1;

    /// <summary>How many keys shape <paramref name="id"/> has.</summary>
    public int KeyCount(int id) => _firstKey[id] - _firstKey[id - 1];

    /// <summary>Key <paramref name="index"/> of shape <paramref name="id"/>: raw JSON string content, or a BSON name without its NUL.</summary>
    public ReadOnlySpan<byte> Key(int id, int index)
    {
        int k = _firstKey[id - 1] + index;
        return _keyBytes.AsSpan(_keyStarts[k], _keyStarts[k + 1] - _keyStarts[k]);
    }

    /// <summary>
    /// What the unpacker writes before each value of shape <paramref name="id"/>, all members at once (for its loop):
    /// for JSON <c>{"key":</c> (the first key) or <c>,"key":</c>; for BSON the name and its NUL. The rendered bytes, and
    /// offsets into them, one more than the shape has keys: member <c>m</c>'s prefix is <c>bytes[offsets[m]..offsets[m + 1]]</c>.
    /// </summary>
    /// <remarks>
    /// <paramref name="bytes"/> runs <see cref="PrefixPadding"/> bytes past the last prefix (zeros), so that a reader can
    /// load any prefix of up to that length in one fixed-size vector.
    /// </remarks>
    public void MemberPrefixes(int id, out ReadOnlySpan<byte> bytes, out ReadOnlySpan<int> offsets)
    {
        int first = _firstKey[id - 1];
        bytes = _prefixBytes;
        offsets = _prefixStarts.AsSpan(first, _firstKey[id] - first + 1);
    }

    /// <summary>Zeros after the last member prefix (<see cref="MemberPrefixes"/>).</summary>
    public const int PrefixPadding = 32;

    private static (byte[] Bytes, int[] Starts) RenderPrefixes(DocumentKind kind, byte[] keyBytes, int[] keyStarts, int[] firstKey)
    {
        int keys = keyStarts.Length - 1;
        int extra = kind == DocumentKind.Json ? 4 : 1;
        byte[] bytes = new byte[keyBytes.Length + extra * keys + PrefixPadding];
        int[] starts = new int[keys + 1];
        int at = 0;
        for (int shape = 0; shape + 1 < firstKey.Length; shape++)
        {
            for (int k = firstKey[shape]; k < firstKey[shape + 1]; k++)
            {
                starts[k] = at;
                ReadOnlySpan<byte> key = keyBytes.AsSpan(keyStarts[k], keyStarts[k + 1] - keyStarts[k]);
                if (kind == DocumentKind.Json)
                {
                    bytes[at++] = k == firstKey[shape] ? (byte)'{' : (byte)',';
                    bytes[at++] = (byte)'"';
                    key.CopyTo(bytes.AsSpan(at));
                    at += key.Length;
                    bytes[at++] = (byte)'"';
                    bytes[at++] = (byte)':';
                }
                else
                {
                    key.CopyTo(bytes.AsSpan(at));
                    at += key.Length;
                    bytes[at++] = 0;
                }
            }
        }
        starts[keys] = at;
        return (bytes, starts);
    }

    /// <summary>The id of the shape whose keys are exactly <paramref name="keys"/> (spans of <paramref name="source"/>), or 0.</summary>
    public int Find(ReadOnlySpan<byte> source, ReadOnlySpan<KeySpan> keys, ulong hash)
    {
        if (!_byHash.TryGetValue(hash, out int id)) return 0;
        for (; id != 0; id = _nextWithHash[id - 1])
        {
            if (KeyCount(id) != keys.Length) continue;
            int first = _firstKey[id - 1];
            bool equal = true;
            for (int i = 0; i < keys.Length && equal; i++)
            {
                int k = first + i;
                equal = source.Slice(keys[i].Start, keys[i].Length).SequenceEqual(_keyBytes.AsSpan(_keyStarts[k], _keyStarts[k + 1] - _keyStarts[k]));
            }
            if (equal) return id;
        }
        return 0;
    }

    /// <summary>The hash <see cref="Find"/> takes: keys are folded in one by one, each seeding the next.</summary>
    public static ulong HashStart => 0x9E3779B97F4A7C15UL;

    /// <summary>Folds one more key into a key list's hash.</summary>
    /// <remarks>
    /// A lookup hash only (never stored: a table computes it again when loaded), and <see cref="Find"/> compares the keys
    /// of whatever it finds, so it is built for speed on short keys: every 8-byte word of the key (the last one
    /// overlapping), multiplied and rotated in.
    /// </remarks>
    public static ulong HashKey(ulong hash, ReadOnlySpan<byte> key)
    {
        const ulong Multiplier = 0x9FB21C651E98DF25UL;
        int length = key.Length;
        if (length >= 8)
        {
            int at = 0;
            for (; at + 8 < length; at += 8)
                hash = BitOperations.RotateLeft((hash ^ BinaryPrimitives.ReadUInt64LittleEndian(key[at..])) * Multiplier, 29);
            hash = BitOperations.RotateLeft((hash ^ BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 8)..])) * Multiplier, 29);
        }
        else if (length >= 4)
        {
            ulong word = BinaryPrimitives.ReadUInt32LittleEndian(key) | ((ulong)BinaryPrimitives.ReadUInt32LittleEndian(key[(length - 4)..]) << 32);
            hash = BitOperations.RotateLeft((hash ^ word) * Multiplier, 29);
        }
        else if (length > 0)
        {
            ulong word = key[0] | ((ulong)key[length >> 1] << 8) | ((ulong)key[length - 1] << 16);
            hash = BitOperations.RotateLeft((hash ^ word) * Multiplier, 29);
        }
        return (hash ^ (ulong)length) * Multiplier;
    }

    private ulong HashOf(int id)
    {
        ulong hash = HashStart;
        for (int i = 0; i < KeyCount(id); i++) hash = HashKey(hash, Key(id, i));
        return hash;
    }

    /// <summary>Creates a table from key lists, in the order given (the first gets id 1). Keys are checked as <see cref="Parse"/> checks them.</summary>
    /// <exception cref="ArgumentException">A key list breaks a limit or a rule of <paramref name="kind"/>, or appears twice.</exception>
    public static ShapeTable Create(DocumentKind kind, IReadOnlyList<IReadOnlyList<byte[]>> shapes)
    {
        ArgumentNullException.ThrowIfNull(shapes);
        byte[] serialized = Serialize(kind, shapes);
        try
        {
            return Parse(serialized, int.MaxValue);
        }
        catch (InvalidDataException ex)
        {
            throw new ArgumentException(ex.Message, nameof(shapes), ex);
        }
    }

    /// <summary>The table's bytes: deterministic (the same shapes in the same order give the same bytes).</summary>
    public byte[] Serialize()
    {
        var shapes = new List<IReadOnlyList<byte[]>>(Count);
        for (int id = 1; id <= Count; id++)
        {
            var keys = new byte[KeyCount(id)][];
            for (int i = 0; i < keys.Length; i++) keys[i] = Key(id, i).ToArray();
            shapes.Add(keys);
        }
        return Serialize(Kind, shapes);
    }

    private static byte[] Serialize(DocumentKind kind, IReadOnlyList<IReadOnlyList<byte[]>> shapes)
    {
        long length = HeaderLength + Varint.MaxLength32 + ChecksumLength;
        foreach (IReadOnlyList<byte[]> keys in shapes)
        {
            length += Varint.MaxLength32;
            foreach (byte[] key in keys) length += Varint.MaxLength32 + key.Length;
        }
        if (length > int.MaxValue) throw new ArgumentException("The shapes are too large to serialize.", nameof(shapes));
        byte[] buffer = new byte[length];
        Magic.CopyTo(buffer);
        buffer[4] = FormatVersion;
        buffer[5] = (byte)kind;
        buffer[6] = 0; // reserved
        int at = HeaderLength;
        at += Varint.Write(buffer.AsSpan(at), (uint)shapes.Count);
        foreach (IReadOnlyList<byte[]> keys in shapes)
        {
            at += Varint.Write(buffer.AsSpan(at), (uint)keys.Count);
            foreach (byte[] key in keys)
            {
                at += Varint.Write(buffer.AsSpan(at), (uint)key.Length);
                key.CopyTo(buffer, at);
                at += key.Length;
            }
        }
        BinaryPrimitives.WriteUInt32LittleEndian(buffer.AsSpan(at), XxHash32.HashToUInt32(buffer.AsSpan(0, at)));
        at += ChecksumLength;
        return buffer[..at];
    }

    /// <summary>
    /// Reads a serialized table, checking everything: size limit, magic, version, kind, flags, checksum, counts, key
    /// reserved byte, rules of the kind, no duplicate key lists, no bytes after the end.
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not a valid shape table; the message says what is wrong.</exception>
    public static ShapeTable Parse(ReadOnlySpan<byte> bytes, int maxLength = DefaultMaxSerializedLength)
    {
        if (bytes.Length > maxLength) StructureThrow.Corrupt($"Shape table has {bytes.Length} bytes; the limit is {maxLength}.");
        if (bytes.Length < HeaderLength + 1 + ChecksumLength) StructureThrow.Corrupt($"Shape table has {bytes.Length} bytes; at least {HeaderLength + 1 + ChecksumLength} are needed.");
        if (!bytes[..4].SequenceEqual(Magic)) StructureThrow.Corrupt($"Shape table does not start with the magic 'SHPT' (found {Convert.ToHexString(bytes[..4])}).");
        if (bytes[4] != FormatVersion) StructureThrow.Corrupt($"Shape table format version {bytes[4]} is not supported; this reader knows version {FormatVersion}.");
        var kind = (DocumentKind)bytes[5];
        if (kind is not DocumentKind.Json and not DocumentKind.Bson and not DocumentKind.BsonElements)
            StructureThrow.Corrupt($"Shape table kind {bytes[5]} is unknown; allowed: 1 (JSON), 2 (BSON), 3 (BSON elements).");
        if (bytes[6] != 0) StructureThrow.Corrupt($"Shape table: the reserved byte is 0x{bytes[6]:x2}; this reader knows only 0.");
        ReadOnlySpan<byte> body = bytes[..^ChecksumLength];
        uint stored = BinaryPrimitives.ReadUInt32LittleEndian(bytes[^ChecksumLength..]);
        uint actual = XxHash32.HashToUInt32(body);
        if (stored != actual) StructureThrow.Corrupt($"Shape table checksum mismatch (stored 0x{stored:x8}, computed 0x{actual:x8}).");

        int at = HeaderLength;
        // Every shape takes at least a byte (its key count) and every key at least a byte (its length): counts larger
        // than the bytes that remain are lies, refused before anything is sized from them.
        uint shapeCount = ReadCount(body, ref at, Math.Min(MaxShapes, body.Length - HeaderLength), "shape count");
        var firstKey = new int[shapeCount + 1];
        var keyStarts = new List<int>();
        var keyBytes = new List<byte>(body.Length);
        for (int s = 0; s < shapeCount; s++)
        {
            uint keyCount = ReadCount(body, ref at, Math.Min(MaxKeysPerShape, body.Length - at - 1), $"key count of shape {s + 1}");
            for (int k = 0; k < keyCount; k++)
            {
                uint keyLength = ReadCount(body, ref at, int.MaxValue, $"length of key {k} of shape {s + 1}");
                if (keyLength > body.Length - at) StructureThrow.Corrupt($"Shape table: key {k} of shape {s + 1} declares {keyLength} bytes; {body.Length - at} remain.");
                ReadOnlySpan<byte> key = body.Slice(at, (int)keyLength);
                if (!IsValidKey(kind, key)) StructureThrow.Corrupt($"Shape table: key {k} of shape {s + 1} is not a valid {kind} key ({Describe(key)}).");
                keyStarts.Add(keyBytes.Count);
                foreach (byte b in key) keyBytes.Add(b);
                at += (int)keyLength;
            }
            firstKey[s + 1] = keyStarts.Count;
        }
        if (at != body.Length) StructureThrow.Corrupt($"Shape table has {body.Length - at} bytes after its last shape.");
        keyStarts.Add(keyBytes.Count);

        var table = new ShapeTable(kind, [.. keyBytes], [.. keyStarts], firstKey);
        table.CheckNoDuplicates();
        return table;
    }

    private void CheckNoDuplicates()
    {
        // Every key list must be found as itself: a duplicate would be found under the first id.
        Span<KeySpan> keys = new KeySpan[_firstKey.Length == 1 ? 0 : MaxKeyCountOfAnyShape()];
        for (int id = 1; id <= Count; id++)
        {
            int count = KeyCount(id);
            int first = _firstKey[id - 1];
            for (int i = 0; i < count; i++) keys[i] = new KeySpan(_keyStarts[first + i], _keyStarts[first + i + 1] - _keyStarts[first + i]);
            if (Find(_keyBytes, keys[..count], HashOf(id)) != id) StructureThrow.Corrupt($"Shape table: shape {id} repeats the key list of an earlier shape.");
        }
    }

    private int MaxKeyCountOfAnyShape()
    {
        int max = 0;
        for (int id = 1; id <= Count; id++) max = Math.Max(max, KeyCount(id));
        return max;
    }

    private static uint ReadCount(ReadOnlySpan<byte> body, ref int at, int max, string what)
    {
        if (!Varint.TryRead(body[at..], out uint value, out int read)) StructureThrow.Corrupt($"Shape table: the {what} is truncated or not a minimal varint.");
        if (value > (uint)max) StructureThrow.Corrupt($"Shape table: the {what} is {value}; at most {max} allowed.");
        at += read;
        return value;
    }

    /// <summary>
    /// JSON: raw string content as it stands between the quotes (every backslash starts a two-byte escape, no unescaped
    /// quote). BSON: a name without a NUL byte.
    /// </summary>
    internal static bool IsValidKey(DocumentKind kind, ReadOnlySpan<byte> key) =>
        kind != DocumentKind.Json ? !key.Contains((byte)0) : JsonText.IsRawStringContent(key);

    private static string Describe(ReadOnlySpan<byte> key) => key.Length <= 32 ? Convert.ToHexString(key) : Convert.ToHexString(key[..32]) + "...";
}

/// <summary>A key as a span of the document it was read from.</summary>
internal readonly record struct KeySpan(int Start, int Length);
