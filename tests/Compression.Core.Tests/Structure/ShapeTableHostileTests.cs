using System.Buffers.Binary;
using System.IO.Hashing;
using System.Numerics;
using System.Text;
using Compression.Internal;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// A shape table is read from a database a hostile peer may write to. Whatever it holds, parsing it and looking shapes
/// up take near-linear work: at most <see cref="ShapeTable.MaxShapes"/> shapes (what training produces), duplicates
/// found by sorting, and at most <see cref="ShapeTable.MaxShapesPerHash"/> key lists compared a lookup. Work is counted
/// (comparisons, chain lengths), never timed. The attacks are built against the lookup hash this code had before
/// (<see cref="OldShapeHash"/>, invertible), and, because the hash is now keyed per table, also with a hash that puts
/// every key list on one value (<see cref="ShapeHashKey.Constant"/>), the worst any table could do.
/// </summary>
public sealed class ShapeTableHostileTests
{
    [Fact]
    public void Parse_MoreShapesThanTrainingProduces_RefusedNamingTheLimit()
    {
        byte[][][] shapes = [.. Enumerable.Range(0, 4097).Select(i => new[] { Encoding.UTF8.GetBytes($"k{i}") })];
        Assert.Equal(4096, ShapeTable.Parse(Record(DocumentKind.Json, shapes[..^1])).Count);

        var ex = Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(Record(DocumentKind.Json, shapes)));
        Assert.Contains("shape count is 4097; the limit is 4096", ex.Message, StringComparison.Ordinal);
        Assert.Equal(4096, ShapeTable.MaxShapes);
    }

    [Fact]
    public void Parse_WorstRecordUnderTheSizeCapCollidingOnTheOldHash_RefusedForItsShapeCount()
    {
        // As many key lists as fit in a stored record (13 bytes each), every one hashing to one value of the old hash:
        // the old reader accepted it after about n^2 / 2 key-list comparisons (seconds, on every load).
        var shapes = new List<byte[][]>();
        int length = 7 + 3 + 4;
        foreach (byte[][] keys in OldShapeHash.Colliding([], target: 0x0123456789ABCDEF))
        {
            int shapeLength = 1 + keys.Sum(k => 1 + k.Length);
            if (length + shapeLength > ShapeTableBuilder.MaxStoredLength) break;
            length += shapeLength;
            shapes.Add(keys);
        }
        byte[] record = Record(DocumentKind.Json, shapes);
        Assert.True(record.Length <= ShapeTableBuilder.MaxStoredLength);
        Assert.True(shapes.Count > 20_000, $"{shapes.Count} shapes");
        Assert.All(shapes.Take(100), keys => Assert.Equal(0x0123456789ABCDEFUL, OldShapeHash.Of(keys)));

        var ex = Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(record, ShapeTableBuilder.MaxStoredLength));
        Assert.Contains("the limit is 4096", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_OldHashCollisionsUpToTheLimit_SpreadByTheKeyedHash_EveryShapeFound()
    {
        List<byte[][]> shapes = [.. OldShapeHash.Colliding([], target: 42).Take(ShapeTable.MaxShapes)];
        ShapeTable table = ShapeTable.Parse(Record(DocumentKind.Json, shapes));

        Assert.Equal(0, table.Unindexed);
        for (int id = 1; id <= table.Count; id++)
        {
            (byte[] source, KeySpan[] keys) = Spans(shapes[id - 1]);
            ulong hash = table.Hash(source, keys);
            Assert.True(table.ChainLength(hash) <= 2, $"shape {id}: {table.ChainLength(hash)} key lists on its hash");
            Assert.Equal(id, table.Find(source, keys, hash));
        }
        AssertNearNLogN(table);
    }

    [Fact]
    public void Parse_EveryKeyListOnOneHash_IndexesOnlyTheBound_AndSortsForDuplicates()
    {
        byte[][][] shapes = [.. Enumerable.Range(0, ShapeTable.MaxShapes).Select(i => new[] { "shared first key"u8.ToArray(), Encoding.UTF8.GetBytes($"k{i}") })];
        ShapeTable table = ShapeTable.Parse(Record(DocumentKind.Json, shapes), ShapeTable.DefaultMaxSerializedLength, ShapeHashKey.Constant);

        Assert.Equal(ShapeTable.MaxShapes, table.Count);
        Assert.Equal(ShapeTable.MaxShapesPerHash, table.ChainLength(0));
        Assert.Equal(ShapeTable.MaxShapes - ShapeTable.MaxShapesPerHash, table.Unindexed);
        AssertNearNLogN(table);
        for (int id = 1; id <= table.Count; id++)
        {
            (byte[] source, KeySpan[] keys) = Spans(shapes[id - 1]);
            Assert.Equal(0UL, table.Hash(source, keys));
            Assert.Equal(id <= ShapeTable.MaxShapesPerHash ? id : 0, table.Find(source, keys, 0));
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Parse_DuplicateAmongKeyListsThatAllHashAlike_Refused(bool constantHash)
    {
        byte[][][] shapes = [.. Enumerable.Range(0, ShapeTable.MaxShapes).Select(i => new[] { Encoding.UTF8.GetBytes($"k{i}") })];
        shapes[3999] = shapes[2];
        shapes[4000] = shapes[2];
        ShapeHashKey hashKey = constantHash ? ShapeHashKey.Constant : ShapeHashKey.Random();
        var ex = Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(Record(DocumentKind.Json, shapes), ShapeTable.DefaultMaxSerializedLength, hashKey));
        Assert.Contains("shape 4000 repeats the key list of shape 3", ex.Message, StringComparison.Ordinal);

        // Two lists that are each other's prefix, or equal but for a key boundary, are not duplicates.
        ShapeTable table = ShapeTable.Create(DocumentKind.Json, [["ab"u8.ToArray(), "c"u8.ToArray()], ["a"u8.ToArray(), "bc"u8.ToArray()], ["ab"u8.ToArray()], ["ab"u8.ToArray(), "c"u8.ToArray(), ""u8.ToArray()]], hashKey);
        Assert.Equal(4, table.Count);
    }

    [Fact]
    public void TryEncode_JsonObjectsOfAShapeBeyondTheChainBound_KeysInline_AndDecodeToTheSameBytes()
    {
        byte[][][] shapes = [.. Enumerable.Range(0, 12).Select(i => new[] { Encoding.UTF8.GetBytes($"a{i}"), "value"u8.ToArray() })];
        var allOnOneHash = new ShapeTransform(ShapeTable.Create(DocumentKind.Json, shapes, ShapeHashKey.Constant));
        var keyed = new ShapeTransform(ShapeTable.Create(DocumentKind.Json, shapes));

        byte[] indexed = "{\"a2\":\"a string of some length\",\"value\":12345}"u8.ToArray();
        byte[] beyond = "{\"a10\":\"a string of some length\",\"value\":12345}"u8.ToArray();
        byte[] nested = "{\"a1\":{\"a11\":[1,2,{\"a0\":true,\"value\":null}],\"value\":\"x\"},\"value\":{\"a10\":1,\"value\":2}}"u8.ToArray();

        Assert.Equal(3, ShapeTransformTests.Encode(allOnOneHash, indexed)[0]); // shape id 3
        byte[] packed = ShapeTransformTests.Encode(allOnOneHash, beyond);
        Assert.Equal(0, packed[0]); // keys inline
        Assert.Equal(11, ShapeTransformTests.Encode(keyed, beyond)[0]); // found under a keyed hash
        foreach (byte[] document in new[] { indexed, beyond, nested })
        {
            Assert.Equal(document, ShapeTransformTests.Decode(allOnOneHash, ShapeTransformTests.Encode(allOnOneHash, document), document.Length));
            // Decoding by id does not go through the index: a stream naming shape 11 decodes with either table.
            Assert.Equal(document, ShapeTransformTests.Decode(allOnOneHash, ShapeTransformTests.Encode(keyed, document), document.Length));
        }
        Assert.Equal(0, allOnOneHash.VerifyFailures);
    }

    [Fact]
    public void TryEncode_BsonObjectOfAShapeBeyondTheChainBound_KeysInline_AndDecodesToTheSameBytes()
    {
        byte[][][] shapes = [.. Enumerable.Range(0, 12).Select(i => new[] { Encoding.UTF8.GetBytes($"a{i}"), "value"u8.ToArray() })];
        var transform = new ShapeTransform(ShapeTable.Create(DocumentKind.Bson, shapes, ShapeHashKey.Constant));
        foreach (int shape in new[] { 2, 10 })
        {
            var d = new Bson.Document();
            d.Add($"a{shape}", Bson.String("a string of some length"));
            d.Add("value", Bson.Int32(12345));
            byte[] document = d.Value().Value;
            byte[] packed = ShapeTransformTests.Encode(transform, document);
            Assert.Equal(shape < ShapeTable.MaxShapesPerHash ? shape + 1 : 0, packed[0]);
            Assert.Equal(document, ShapeTransformTests.Decode(transform, packed, document.Length));
        }
        Assert.Equal(0, transform.VerifyFailures);
    }

    [Fact]
    public void Find_VictimsKeyListBehindThousandsOfOldHashCollisions_ComparesAtMostTheBound()
    {
        // A victim's document, and a table an attacker published for its namespace: 3,199 key lists with the victim's
        // key count and first keys, colliding with the victim's list under the old hash, then the victim's list. The old
        // lookup compared all 3,199 (each through the shared keys) for every object of that shape.
        byte[] document = "{\"_id\":1,\"title\":\"The Night of the Hunter\",\"year\":1955,\"rated\":\"APPROVED\",\"runtime\":92,\"genres\":\"Drama\",\"director\":\"Charles Laughton\",\"writer\":\"James Agee\",\"cast\":\"Robert Mitchum\",\"plot\":\"A religious fanatic marries a gullible widow.\"}"u8.ToArray();
        byte[][] victim = [.. new[] { "_id", "title", "year", "rated", "runtime", "genres", "director", "writer", "cast", "plot" }.Select(Encoding.UTF8.GetBytes)];
        List<byte[][]> shapes = [.. OldShapeHash.Colliding(victim[..^2], OldShapeHash.Of(victim)).Take(3199), victim];
        byte[] record = Record(DocumentKind.Json, shapes);
        Assert.True(record.Length <= ShapeTableBuilder.MaxStoredLength);
        Assert.All(shapes, keys => Assert.Equal(OldShapeHash.Of(victim), OldShapeHash.Of(keys)));

        (byte[] source, KeySpan[] keys) = Spans(victim);
        foreach (ShapeHashKey hashKey in new[] { ShapeHashKey.Random(), ShapeHashKey.Constant })
        {
            ShapeTable table = ShapeTable.Parse(record, ShapeTableBuilder.MaxStoredLength, hashKey);
            ulong hash = table.Hash(source, keys);
            Assert.True(table.ChainLength(hash) <= ShapeTable.MaxShapesPerHash);
            var transform = new ShapeTransform(table);
            byte[] packed = ShapeTransformTests.Encode(transform, document);
            Assert.Equal(document, ShapeTransformTests.Decode(transform, packed, document.Length));
            if (hashKey == ShapeHashKey.Constant)
            {
                Assert.Equal(0, table.Find(source, keys, hash)); // behind the bound: written with its keys inline
                Assert.Equal(0, packed[0]);
            }
            else
            {
                Assert.Equal(0, table.Unindexed); // the keyed hash spreads them
                Assert.Equal(1, table.ChainLength(hash));
                Assert.Equal(3200, table.Find(source, keys, hash));
            }
        }
    }

    [Fact]
    public void Hash_TwoTablesOfTheSameBytes_AreKeyedApart()
    {
        byte[] bytes = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray(), "b"u8.ToArray()]]).Serialize();
        ShapeTable one = ShapeTable.Parse(bytes), two = ShapeTable.Parse(bytes);
        (byte[] source, KeySpan[] keys) = Spans(["a"u8.ToArray(), "b"u8.ToArray()]);
        Assert.NotEqual(one.Hash(source, keys), two.Hash(source, keys));
        Assert.Equal(1, one.Find(source, keys, one.Hash(source, keys)));
        Assert.Equal(1, two.Find(source, keys, two.Hash(source, keys)));
    }

    [Fact]
    public void Build_MaxShapesAboveWhatAReaderAccepts_StopsAtTheTableLimit()
    {
        var builder = new ShapeTableBuilder(DocumentKind.Json) { MaxShapes = 10_000 };
        for (int i = 0; i < 4106; i++)
        {
            byte[] document = Encoding.UTF8.GetBytes($"{{\"k{i}\":1}}");
            builder.Add(document);
            builder.Add(document);
        }
        ShapeTable table = builder.Build();
        Assert.Equal(4096, table.Count);
        Assert.Equal(4096, ShapeTable.Parse(table.Serialize()).Count);
        Assert.Equal(ShapeTable.MaxShapes, new ShapeTableBuilder(DocumentKind.Json).MaxShapes);
    }

    /// <summary>Duplicates were found in O(n log n) key-list comparisons (the old check made up to n^2 / 2).</summary>
    private static void AssertNearNLogN(ShapeTable table)
    {
        long n = table.Count;
        long bound = 2 * n * (BitOperations.Log2((ulong)n) + 1);
        Assert.InRange(table.DuplicateCheckComparisons, 1, bound);
    }

    /// <summary>The keys laid end to end, and their spans: what <see cref="ShapeTable.Find"/> takes.</summary>
    private static (byte[] Source, KeySpan[] Keys) Spans(byte[][] keys)
    {
        byte[] source = [.. keys.SelectMany(k => k)];
        var spans = new KeySpan[keys.Length];
        for (int i = 0, at = 0; i < keys.Length; at += keys[i].Length, i++) spans[i] = new KeySpan(at, keys[i].Length);
        return (source, spans);
    }

    /// <summary>A serialized table of <paramref name="shapes"/> as an attacker writes it (no check), with a valid checksum.</summary>
    internal static byte[] Record(DocumentKind kind, IEnumerable<byte[][]> shapes)
    {
        var bytes = new List<byte>();
        bytes.AddRange("SHPT"u8.ToArray());
        bytes.AddRange([ShapeTable.FormatVersion, (byte)kind, 0]);
        List<byte[][]> list = [.. shapes];
        AddVarint(bytes, (uint)list.Count);
        foreach (byte[][] keys in list)
        {
            AddVarint(bytes, (uint)keys.Length);
            foreach (byte[] key in keys)
            {
                AddVarint(bytes, (uint)key.Length);
                bytes.AddRange(key);
            }
        }
        byte[] checksum = new byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(checksum, XxHash32.HashToUInt32([.. bytes]));
        return [.. bytes, .. checksum];
    }

    private static void AddVarint(List<byte> bytes, uint value)
    {
        byte[] buffer = new byte[Varint.MaxLength32];
        bytes.AddRange(buffer[..Varint.Write(buffer, value)]);
    }
}

/// <summary>
/// The lookup hash shape tables had before it was keyed per table (commit 01b24ca): a fixed start and a
/// multiply-rotate fold. Each step is a bijection of the running hash, so the last key of a list can be solved for to
/// give any hash wanted: how an attacker builds key lists that all collide.
/// </summary>
internal static class OldShapeHash
{
    private const ulong Multiplier = 0x9FB21C651E98DF25UL;
    private const ulong Start = 0x9E3779B97F4A7C15UL;
    private static readonly ulong Inverse = Invert(Multiplier);

    public static ulong Key(ulong hash, ReadOnlySpan<byte> key)
    {
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

    public static ulong Of(IEnumerable<byte[]> keys)
    {
        ulong hash = Start;
        foreach (byte[] key in keys) hash = Key(hash, key);
        return hash;
    }

    /// <summary>
    /// Key lists <paramref name="prefix"/>, a distinct two-byte key, then an 8-byte key solved for the list to hash to
    /// <paramref name="target"/>; lists whose solved key holds a quote, a backslash or a NUL are skipped (valid JSON and
    /// BSON keys only). About 60,000 of them.
    /// </summary>
    public static IEnumerable<byte[][]> Colliding(byte[][] prefix, ulong target)
    {
        ulong before = Of(prefix);
        byte[] allowed = [.. Enumerable.Range(1, 255).Select(b => (byte)b).Where(b => b is not (byte)'"' and not (byte)'\\')];
        foreach (byte first in allowed)
        {
            foreach (byte second in allowed)
            {
                byte[] varying = [first, second];
                ulong h = Key(before, varying);
                // Key(h, w) for 8 bytes: (RotateLeft((h ^ w) * M, 29) ^ 8) * M = target; solved for w.
                ulong w = (BitOperations.RotateRight((target * Inverse) ^ 8, 29) * Inverse) ^ h;
                byte[] last = new byte[8];
                BinaryPrimitives.WriteUInt64LittleEndian(last, w);
                if (last.AsSpan().IndexOfAny((byte)'"', (byte)'\\', (byte)0) >= 0) continue;
                yield return [.. prefix, varying, last];
            }
        }
    }

    private static ulong Invert(ulong odd)
    {
        ulong inverse = odd; // Newton's iteration: each step doubles the correct low bits (3 to start with)
        for (int i = 0; i < 5; i++) inverse *= 2 - odd * inverse;
        return inverse;
    }
}
