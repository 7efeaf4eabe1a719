using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using Compression.Internal;

namespace Compression.Structure;

/// <summary>
/// The shapes of one namespace: key lists of the objects its documents are made of, each referenced from a packed
/// stream by a small id (1 for the first, 0 meaning "keys written inline"). Learned from the same samples as the
/// dictionary (<see cref="ShapeTableBuilder"/>), serialized deterministically to be stored beside it, and parsed with
/// every field checked (<see cref="Parse(ReadOnlySpan{byte}, int)"/>): a table read from a database is untrusted.
/// Immutable and thread-safe. Byte layout: docs/structure.md, "Shape table".
/// </summary>
/// <remarks>
/// Whatever a table holds, reading it and looking shapes up take near-linear time: at most <see cref="MaxShapes"/>
/// shapes, duplicates found by sorting (not by hash), a lookup hash keyed by a secret drawn for each instance, and at
/// most <see cref="MaxShapesPerHash"/> shapes indexed under one hash value (a shape past that bound is never found,
/// so its objects are written with their keys inline: lossless, and decoding by id is unaffected).
/// </remarks>
internal sealed class ShapeTable
{
    /// <summary>The first four bytes of a serialized table: "SHPT".</summary>
    public static ReadOnlySpan<byte> Magic => "SHPT"u8;

    /// <summary>The only format version this code writes and reads.</summary>
    public const byte FormatVersion = 1;

    /// <summary>
    /// The most shapes a table may hold (ids 1 to this): what training produces at most
    /// (<see cref="ShapeTableBuilder.MaxShapes"/>), so a record holding more was not trained and is refused.
    /// </summary>
    public const int MaxShapes = 4096;

    /// <summary>
    /// The most shapes indexed under one hash value; <see cref="Find"/> compares at most this many key lists. A trained
    /// table never meets it (its hash is 64 bits, keyed per instance); a hostile table whose key lists all hash alike
    /// gets its first shapes under that hash indexed and the others written with their keys inline: it can cost
    /// ratio on those shapes, never lookup time.
    /// </summary>
    public const int MaxShapesPerHash = 8;

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
    private readonly ulong _hashStart;
    private readonly ulong _hashMultiplier;
    private readonly Dictionary<ulong, int> _byHash; // the first (lowest) id of each hash value
    private readonly int[] _nextWithHash; // chains shapes whose key lists hash alike, ids ascending (index: id - 1; 0 ends the chain)

    private ShapeTable(DocumentKind kind, byte[] keyBytes, int[] keyStarts, int[] firstKey, ShapeHashKey hashKey)
    {
        Kind = kind;
        _keyBytes = keyBytes;
        _keyStarts = keyStarts;
        _firstKey = firstKey;
        (_prefixBytes, _prefixStarts) = RenderPrefixes(kind, keyBytes, keyStarts, firstKey);
        _hashStart = hashKey.Start;
        _hashMultiplier = hashKey.Multiplier;
        _byHash = new Dictionary<ulong, int>(Count);
        _nextWithHash = new int[Count];
        // Lowest ids first (the most frequent shapes), at most MaxShapesPerHash of them a hash value: the chain's last
        // id and its length are kept under its first id.
        int[] chainEnd = new int[Count];
        int[] chainLength = new int[Count];
        for (int id = 1; id <= Count; id++)
        {
            ref int first = ref CollectionsMarshal.GetValueRefOrAddDefault(_byHash, HashOf(id), out bool exists);
            if (!exists)
            {
                first = id;
                chainEnd[id - 1] = id;
                chainLength[id - 1] = 1;
            }
            else if (chainLength[first - 1] < MaxShapesPerHash)
            {
                _nextWithHash[chainEnd[first - 1] - 1] = id;
                chainEnd[first - 1] = id;
                chainLength[first - 1]++;
            }
            else
            {
                Unindexed++;
            }
        }
    }

    /// <summary>What the documents are: JSON text or BSON.</summary>
    public DocumentKind Kind { get; }

    /// <summary>How many shapes the table holds; ids run from 1 to this.</summary>
    public int Count => _firstKey.Length - 1;

    /// <summary>How many keys shape <paramref name="id"/> has.</summary>
    public int KeyCount(int id) => _firstKey[id] - _firstKey[id - 1];

    /// <summary>The table-wide index of shape <paramref name="id"/>'s first key: its keys are numbered from it in order (a field model names fields by these numbers).</summary>
    public int FirstKey(int id) => _firstKey[id - 1];

    /// <summary>How many keys all the shapes hold together.</summary>
    public int TotalKeys => _firstKey[^1];

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

    /// <summary>
    /// The id of the shape whose keys are exactly <paramref name="keys"/> (spans of <paramref name="source"/>), or 0;
    /// <paramref name="hash"/> is theirs as this table hashes them (<see cref="Hash"/>, or <see cref="HashStart"/> and
    /// <see cref="HashKey"/>). Compares at most <see cref="MaxShapesPerHash"/> key lists; a shape not indexed (see
    /// there) is not found.
    /// </summary>
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

    /// <summary>How many shapes are not indexed, because <see cref="MaxShapesPerHash"/> shapes before them hash alike (0 for a trained table).</summary>
    internal int Unindexed { get; }

    /// <summary>How many key lists <see cref="Find"/> compares at most for <paramref name="hash"/>: the length of its chain.</summary>
    internal int ChainLength(ulong hash)
    {
        int length = 0;
        if (_byHash.TryGetValue(hash, out int id))
            for (; id != 0; id = _nextWithHash[id - 1]) length++;
        return length;
    }

    /// <summary>How many key lists <see cref="Parse(ReadOnlySpan{byte}, int)"/> compared to find duplicates (near n log n; for tests).</summary>
    internal long DuplicateCheckComparisons { get; private init; }

    /// <summary>The hash of no keys: <see cref="HashKey"/> folds keys into it one by one, each seeding the next.</summary>
    public ulong HashStart => _hashStart;

    /// <summary>Folds one more key into a key list's hash.</summary>
    /// <remarks>
    /// A lookup hash only (never stored: a table computes it again when loaded), keyed by a secret of this instance
    /// (<see cref="ShapeHashKey"/>) so that key lists that hash alike cannot be computed from the table's bytes, and
    /// <see cref="Find"/> compares the keys of whatever it finds. Built for speed on short keys: every 8-byte word of
    /// the key (the last one overlapping) goes through a folded multiply (the 128-bit product's halves XORed) by the
    /// secret multiplier, the last one by a multiplier that also depends on the key's length. (The fold it replaces, a
    /// fixed start and a multiply-rotate, was a bijection at each step: the last key of a list could be solved for any
    /// hash wanted, and a record of 10,922 lists on one hash took 2.3 s to parse.)
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ulong HashKey(ulong hash, ReadOnlySpan<byte> key)
    {
        ulong multiplier = _hashMultiplier;
        int length = key.Length;
        ulong word;
        if (length >= 8)
        {
            for (int at = 0; at + 8 < length; at += 8)
                hash = FoldedMultiply(hash ^ BinaryPrimitives.ReadUInt64LittleEndian(key[at..]), multiplier);
            word = BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 8)..]);
        }
        else if (length >= 4)
        {
            word = BinaryPrimitives.ReadUInt32LittleEndian(key) | ((ulong)BinaryPrimitives.ReadUInt32LittleEndian(key[(length - 4)..]) << 32);
        }
        else
        {
            word = length == 0 ? 0 : key[0] | ((ulong)key[length >> 1] << 8) | ((ulong)key[length - 1] << 16);
        }
        return FoldedMultiply(hash ^ word, multiplier * (2 * (ulong)length + 1));
    }

    /// <summary>The hash of <paramref name="keys"/> (spans of <paramref name="source"/>) as <see cref="Find"/> takes it.</summary>
    public ulong Hash(ReadOnlySpan<byte> source, ReadOnlySpan<KeySpan> keys)
    {
        ulong hash = _hashStart;
        foreach (KeySpan key in keys) hash = HashKey(hash, source.Slice(key.Start, key.Length));
        return hash;
    }

    private static ulong FoldedMultiply(ulong a, ulong b)
    {
        ulong high = Math.BigMul(a, b, out ulong low);
        return high ^ low;
    }

    private ulong HashOf(int id)
    {
        ulong hash = _hashStart;
        for (int i = 0; i < KeyCount(id); i++) hash = HashKey(hash, Key(id, i));
        return hash;
    }

    /// <summary>Creates a table from key lists, in the order given (the first gets id 1). Keys are checked as <see cref="Parse(ReadOnlySpan{byte}, int)"/> checks them.</summary>
    /// <exception cref="ArgumentException">A key list breaks a limit or a rule of <paramref name="kind"/>, or appears twice.</exception>
    public static ShapeTable Create(DocumentKind kind, IReadOnlyList<IReadOnlyList<byte[]>> shapes) =>
        Create(kind, shapes, ShapeHashKey.Random());

    /// <summary><see cref="Create(DocumentKind, IReadOnlyList{IReadOnlyList{byte[]}})"/> with the lookup hash keyed by <paramref name="hashKey"/> (tests).</summary>
    internal static ShapeTable Create(DocumentKind kind, IReadOnlyList<IReadOnlyList<byte[]>> shapes, ShapeHashKey hashKey)
    {
        ArgumentNullException.ThrowIfNull(shapes);
        byte[] serialized = Serialize(kind, shapes);
        try
        {
            return Parse(serialized, int.MaxValue, hashKey);
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
    /// reserved byte, rules of the kind, no duplicate key lists, no bytes after the end. Near-linear in the bytes
    /// whatever they hold (see the type).
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not a valid shape table; the message says what is wrong.</exception>
    public static ShapeTable Parse(ReadOnlySpan<byte> bytes, int maxLength = DefaultMaxSerializedLength) =>
        Parse(bytes, maxLength, ShapeHashKey.Random());

    /// <summary><see cref="Parse(ReadOnlySpan{byte}, int)"/> with the lookup hash keyed by <paramref name="hashKey"/> (tests).</summary>
    internal static ShapeTable Parse(ReadOnlySpan<byte> bytes, int maxLength, ShapeHashKey hashKey)
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
        uint shapeCount = ReadCount(body, ref at, int.MaxValue, "shape count");
        if (shapeCount > MaxShapes) StructureThrow.Corrupt($"Shape table: the shape count is {shapeCount}; the limit is {MaxShapes} (the most shapes training produces).");
        if (shapeCount > body.Length - at) StructureThrow.Corrupt($"Shape table: the shape count is {shapeCount}; only {body.Length - at} bytes remain.");
        var firstKey = new int[shapeCount + 1];
        var shapeStarts = new int[shapeCount + 1]; // shape s + 1 is body[shapeStarts[s]..shapeStarts[s + 1]]
        var keyStarts = new List<int>();
        var keyBytes = new List<byte>(body.Length);
        for (int s = 0; s < shapeCount; s++)
        {
            shapeStarts[s] = at;
            // A one-byte count is read in place: the message of a refused count is built only for one (building it for
            // every key cost more than the rest of the parse).
            int maxKeys = Math.Min(MaxKeysPerShape, body.Length - at - 1);
            uint keyCount = at < body.Length && body[at] < 0x80 && body[at] <= maxKeys
                ? body[at++]
                : ReadCount(body, ref at, maxKeys, $"key count of shape {s + 1}");
            for (int k = 0; k < keyCount; k++)
            {
                uint keyLength = at < body.Length && body[at] < 0x80
                    ? body[at++]
                    : ReadCount(body, ref at, int.MaxValue, $"length of key {k} of shape {s + 1}");
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
        shapeStarts[shapeCount] = at;
        keyStarts.Add(keyBytes.Count);

        long comparisons = CheckNoDuplicates(body.ToArray(), shapeStarts);
        return new ShapeTable(kind, [.. keyBytes], [.. keyStarts], firstKey, hashKey) { DuplicateCheckComparisons = comparisons };
    }

    /// <summary>
    /// Refuses a key list that repeats an earlier one; returns how many pairs of lists it compared. Not by hash (a table
    /// may be built for its key lists to hash alike, and the index holds only <see cref="MaxShapesPerHash"/> of them):
    /// a list has exactly one encoding (minimal varints), so equal lists are equal byte runs of the table, and the ids
    /// are sorted by their runs, bytewise, which makes equal ones neighbours: O(n log n) comparisons (introsort), each a
    /// vectorized comparison of at most the shorter run.
    /// </summary>
    private static long CheckNoDuplicates(byte[] body, int[] shapeStarts)
    {
        int count = shapeStarts.Length - 1;
        ReadOnlySpan<byte> Run(int id) => body.AsSpan(shapeStarts[id - 1], shapeStarts[id] - shapeStarts[id - 1]);
        int[] ids = new int[count];
        for (int i = 0; i < ids.Length; i++) ids[i] = i + 1;
        long comparisons = 0;
        Array.Sort(ids, (x, y) =>
        {
            comparisons++;
            int order = Run(x).SequenceCompareTo(Run(y));
            return order != 0 ? order : x.CompareTo(y);
        });
        int repeat = 0, original = 0;
        for (int i = 1, runStart = 0; i < ids.Length; i++)
        {
            comparisons++;
            if (!Run(ids[runStart]).SequenceEqual(Run(ids[i])))
            {
                runStart = i;
            }
            else if (repeat == 0 || ids[i] < repeat)
            {
                (repeat, original) = (ids[i], ids[runStart]); // equal lists are sorted by id: the run's first is the earliest
            }
        }
        if (repeat != 0) StructureThrow.Corrupt($"Shape table: shape {repeat} repeats the key list of shape {original}.");
        return comparisons;
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

/// <summary>
/// The secret of one table's lookup hash (<see cref="ShapeTable.HashKey"/>): where it starts and what it multiplies by.
/// Drawn at random for every table loaded or created, never stored, so that key lists built to hash alike under one
/// table's hash hash apart under another's.
/// </summary>
internal readonly record struct ShapeHashKey(ulong Start, ulong Multiplier)
{
    /// <summary>A secret from the cryptographic random generator (the multiplier odd).</summary>
    public static ShapeHashKey Random()
    {
        Span<ulong> words = stackalloc ulong[2];
        RandomNumberGenerator.Fill(MemoryMarshal.AsBytes(words));
        return new ShapeHashKey(words[0], words[1] | 1);
    }

    /// <summary>For tests only: every key list hashes to 0, so every shape of a table shares one hash value.</summary>
    public static ShapeHashKey Constant => new(0, 0);
}

/// <summary>A key as a span of the document it was read from.</summary>
internal readonly record struct KeySpan(int Start, int Length);
