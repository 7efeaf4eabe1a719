using System.Buffers.Binary;
using System.IO.Hashing;
using System.Text;
using Compression.Internal;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// Shape tables are serialized deterministically and, read back as untrusted bytes, every corruption is refused with
/// an <see cref="InvalidDataException"/> saying what is wrong.
/// </summary>
public sealed class ShapeTableTests
{
    private static ShapeTable JsonTable() => ShapeTransformTests.Learn(DocumentKind.Json, StructureDocuments.JsonDocuments(300, 10, seed: 7)).Table;

    [Fact]
    public void Serialize_SameSamplesInAnotherOrder_SameBytes()
    {
        var samples = StructureDocuments.JsonDocuments(300, 10, seed: 7);
        var shuffled = samples.ToArray();
        new Random(3).Shuffle(shuffled);
        byte[] a = ShapeTransformTests.Learn(DocumentKind.Json, samples).Table.Serialize();
        byte[] b = ShapeTransformTests.Learn(DocumentKind.Json, shuffled).Table.Serialize();
        Assert.Equal(a, b);
        Assert.True(a.Length > 100);
    }

    [Fact]
    public void Parse_SerializedTable_GivesTheSameTableAndBytes()
    {
        ShapeTable table = JsonTable();
        byte[] bytes = table.Serialize();
        ShapeTable back = ShapeTable.Parse(bytes);
        Assert.Equal(table.Kind, back.Kind);
        Assert.Equal(table.Count, back.Count);
        for (int id = 1; id <= table.Count; id++)
        {
            Assert.Equal(table.KeyCount(id), back.KeyCount(id));
            for (int k = 0; k < table.KeyCount(id); k++) Assert.Equal(table.Key(id, k).ToArray(), back.Key(id, k).ToArray());
        }
        Assert.Equal(bytes, back.Serialize());
    }

    [Fact]
    public void Build_MostFrequentKeyListGetsIdOne_RareOnesLeftOut()
    {
        var builder = new ShapeTableBuilder(DocumentKind.Json);
        for (int i = 0; i < 5; i++) builder.Add(Encoding.UTF8.GetBytes($"{{\"rare\":{i},\"x\":{{\"a\":1}}}}"));
        for (int i = 0; i < 9; i++) builder.Add(Encoding.UTF8.GetBytes($"{{\"common\":{i}}}"));
        builder.Add("{\"once\":1}"u8);
        ShapeTable table = builder.Build();
        Assert.Equal(3, table.Count);
        Assert.Equal("common"u8.ToArray(), table.Key(1, 0).ToArray());
        Assert.Equal(15, builder.Accepted);
    }

    [Fact]
    public void Parse_EveryBitFlip_Refused()
    {
        byte[] bytes = JsonTable().Serialize();
        for (int bit = 0; bit < bytes.Length * 8; bit++)
        {
            byte[] mutant = [.. bytes];
            mutant[bit / 8] ^= (byte)(1 << (bit % 8));
            Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(mutant));
        }
    }

    [Fact]
    public void Parse_EveryTruncationAndAnAppendedByte_Refused()
    {
        byte[] bytes = JsonTable().Serialize();
        for (int length = 0; length < bytes.Length; length++)
            Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(bytes.AsSpan(0, length)));
        Assert.Throws<InvalidDataException>(() => ShapeTable.Parse([.. bytes, 0]));
    }

    [Fact]
    public void Parse_OverTheSizeLimit_RefusedBeforeReading()
    {
        byte[] bytes = JsonTable().Serialize();
        var ex = Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(bytes, maxLength: bytes.Length - 1));
        Assert.Contains("limit", ex.Message, StringComparison.Ordinal);
    }

    public static TheoryData<string, byte[], string> ValidChecksumButInvalid() => new()
    {
        { "magic", Table(b => b[0] = (byte)'X'), "magic" },
        { "version", Table(b => b[4] = 2), "format version 2" },
        { "kind", Table(b => b[5] = 4), "kind 4" },
        { "reserved byte", Table(b => b[6] = 1), "reserved byte" },
        { "too many shapes", Raw(DocumentKind.Json, [.. Varint32(70_000)]), "shape count" },
        { "more shapes than bytes", Raw(DocumentKind.Json, [.. Varint32(5), 0]), "shape count" },
        { "key longer than the table", Raw(DocumentKind.Json, [1, 1, .. Varint32(1000), (byte)'a']), "declares 1000 bytes" },
        { "non-minimal varint", Raw(DocumentKind.Json, [0x81, 0x00]), "varint" },
        { "bytes after the last shape", Raw(DocumentKind.Json, [1, 1, 1, (byte)'a', 9]), "after its last shape" },
        { "JSON key with an unescaped quote", Raw(DocumentKind.Json, [1, 1, 3, (byte)'a', (byte)'"', (byte)'b']), "not a valid Json key" },
        { "JSON key ending in a lone backslash", Raw(DocumentKind.Json, [1, 1, 2, (byte)'a', (byte)'\\']), "not a valid Json key" },
        { "BSON key with a NUL", Raw(DocumentKind.Bson, [1, 1, 3, (byte)'a', 0, (byte)'b']), "not a valid Bson key" },
        { "duplicate key lists", Raw(DocumentKind.Json, [2, 1, 1, (byte)'a', 1, 1, (byte)'a']), "repeats the key list" },
    };

    [Theory]
    [MemberData(nameof(ValidChecksumButInvalid))]
    public void Parse_ValidChecksumButInvalidContent_RefusedWithAClearMessage(string why, byte[] bytes, string message)
    {
        var ex = Assert.Throws<InvalidDataException>(() => ShapeTable.Parse(bytes));
        Assert.Contains(message, ex.Message, StringComparison.Ordinal);
        Assert.False(string.IsNullOrEmpty(why));
    }

    [Fact]
    public void Parse_EmptyTableAndEmptyKeyList_Accepted()
    {
        Assert.Equal(0, ShapeTable.Parse(Raw(DocumentKind.Json, [0])).Count);
        ShapeTable table = ShapeTable.Parse(Raw(DocumentKind.Bson, [2, 0, 1, 0]));
        Assert.Equal(2, table.Count);
        Assert.Equal(0, table.KeyCount(1));
        Assert.Equal(1, table.KeyCount(2));
        Assert.Equal(0, table.Key(2, 0).Length);
    }

    [Fact]
    public void Create_DuplicateOrInvalidKeyLists_ArgumentException()
    {
        byte[][] a = ["a"u8.ToArray()];
        Assert.Throws<ArgumentException>(() => ShapeTable.Create(DocumentKind.Json, [a, a]));
        Assert.Throws<ArgumentException>(() => ShapeTable.Create(DocumentKind.Bson, [[[(byte)'x', 0]]]));
    }

    [Fact]
    public void Find_KnownAndUnknownKeyLists()
    {
        ShapeTable table = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray(), "b"u8.ToArray()], ["b"u8.ToArray(), "a"u8.ToArray()], []]);
        byte[] source = "abc"u8.ToArray();
        KeySpan[] ab = [new(0, 1), new(1, 1)];
        KeySpan[] ba = [new(1, 1), new(0, 1)];
        KeySpan[] ac = [new(0, 1), new(2, 1)];
        Assert.Equal(1, table.Find(source, ab, table.Hash(source, ab)));
        Assert.Equal(2, table.Find(source, ba, table.Hash(source, ba)));
        Assert.Equal(3, table.Find(source, [], table.Hash(source, [])));
        Assert.Equal(0, table.Find(source, ac, table.Hash(source, ac)));
    }

    /// <summary>A serialized table of one shape with its bytes changed by <paramref name="change"/>, then its checksum recomputed.</summary>
    private static byte[] Table(Action<byte[]> change)
    {
        byte[] bytes = ShapeTable.Create(DocumentKind.Json, [["key"u8.ToArray()]]).Serialize();
        change(bytes);
        return WithChecksum(bytes.AsSpan(0, bytes.Length - 4));
    }

    /// <summary>A table from its raw body (after magic, version, kind and reserved byte), with a valid checksum.</summary>
    private static byte[] Raw(DocumentKind kind, byte[] body) => WithChecksum([.. "SHPT"u8, 1, (byte)kind, 0, .. body]);

    private static byte[] WithChecksum(ReadOnlySpan<byte> body)
    {
        byte[] bytes = [.. body, 0, 0, 0, 0];
        BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(body.Length), XxHash32.HashToUInt32(body));
        return bytes;
    }

    private static byte[] Varint32(uint value)
    {
        byte[] bytes = new byte[5];
        return bytes[..Varint.Write(bytes, value)];
    }
}
