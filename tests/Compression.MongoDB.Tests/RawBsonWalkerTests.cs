using MongoDB.Bson;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>The walker reads decompressed bytes, which are untrusted: every mutation gives elements or InvalidDataException.</summary>
public sealed class RawBsonWalkerTests
{
    private static readonly byte[] Sample = new BsonDocument
    {
        { "_id", ObjectId.GenerateNewId() },
        { "text", "héllo" },
        { "int", 7 },
        { "long", 8L },
        { "double", 1.5 },
        { "flag", true },
        { "when", new BsonDateTime(1_700_000_000_000) },
        { "none", BsonNull.Value },
        { "nested", new BsonDocument("a", new BsonArray { 1, "two" }) },
        { "bytes", new BsonBinaryData([1, 2, 3], BsonBinarySubType.UserDefined) },
        { "regex", new BsonRegularExpression("^a.*", "i") },
        { "decimal", new BsonDecimal128(1.25m) },
        { "stamp", new BsonTimestamp(5, 6) },
        { "code", new BsonJavaScript("x => x") },
        { "scoped", new BsonJavaScriptWithScope("y", new BsonDocument("y", 1)) },
        { "min", BsonMinKey.Value },
        { "max", BsonMaxKey.Value },
    }.ToBson();

    [Fact]
    public void EveryElementType_IsWalkedWithItsExactBounds()
    {
        var names = new List<string>();
        var walker = new RawBsonWalker(Sample);
        int previousEnd = 4;
        while (walker.TryNext(out RawBsonElement element))
        {
            Assert.Equal(previousEnd, element.Start);
            names.Add(System.Text.Encoding.UTF8.GetString(element.Name(Sample)));
            previousEnd = element.End;
        }
        Assert.Equal(Sample.Length - 1, previousEnd);
        Assert.Equal(BsonSerializerNames(), names);
    }

    [Fact]
    public void TwentyThousandMutations_GiveElementsOrInvalidDataException()
    {
        var random = new Random(20261123);
        int rejected = 0;
        for (int i = 0; i < 20_000; i++)
        {
            byte[] bytes = (byte[])Sample.Clone();
            int edits = random.Next(1, 4);
            for (int e = 0; e < edits && bytes.Length > 0; e++)
            {
                switch (random.Next(3))
                {
                    case 0: bytes[random.Next(bytes.Length)] = (byte)random.Next(256); break;
                    case 1: bytes[random.Next(bytes.Length)] ^= (byte)(1 << random.Next(8)); break;
                    default: Array.Resize(ref bytes, random.Next(bytes.Length)); break;
                }
            }
            try
            {
                var walker = new RawBsonWalker(bytes);
                while (walker.TryNext(out RawBsonElement element))
                {
                    Assert.InRange(element.End, element.Start + 2, bytes.Length - 1); // type, name terminator at least
                }
            }
            catch (InvalidDataException)
            {
                rejected++;
            }
        }
        Assert.InRange(rejected, 1, 20_000); // most mutations are caught; none escaped as another exception
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(23)]
    [InlineData(24)]
    [InlineData(25)]
    [InlineData(200)]
    public void NamesOfEveryLength_AreFound_AndANameWithoutTerminatorIsRefused(int nameLength)
    {
        string name = new('n', nameLength);
        byte[] bytes = new BsonDocument { { name, 1 }, { "after", "x" } }.ToBson();
        var walker = new RawBsonWalker(bytes);
        Assert.True(walker.TryNext(out RawBsonElement first));
        Assert.Equal(name, System.Text.Encoding.UTF8.GetString(first.Name(bytes)));
        Assert.True(walker.TryNext(out RawBsonElement second));
        Assert.Equal("after", System.Text.Encoding.UTF8.GetString(second.Name(bytes)));
        Assert.False(walker.TryNext(out _));

        // The same name cut before its terminator: the walker must not read past the document.
        byte[] cut = new byte[4 + 1 + nameLength + 1];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(cut, cut.Length);
        cut[4] = 0x10;
        System.Text.Encoding.ASCII.GetBytes(name).CopyTo(cut, 5);
        Assert.Throws<InvalidDataException>(() =>
        {
            var cutWalker = new RawBsonWalker(cut);
            cutWalker.TryNext(out _);
        });
    }

    [Fact]
    public void OverElements_WalksElementsWithoutLengthOrTerminator_AndRefusesOneCutByTheEnd()
    {
        byte[] document = Sample;
        byte[] elements = document[4..^1];
        var walker = RawBsonWalker.OverElements(elements);
        var names = new List<string>();
        int previousEnd = 0;
        while (walker.TryNext(out RawBsonElement element))
        {
            Assert.Equal(previousEnd, element.Start);
            names.Add(System.Text.Encoding.UTF8.GetString(element.Name(elements)));
            previousEnd = element.End;
        }
        Assert.Equal(elements.Length, previousEnd);
        Assert.Equal(BsonSerializerNames(), names);

        Assert.Throws<InvalidDataException>(() =>
        {
            var cutWalker = RawBsonWalker.OverElements(elements.AsSpan(0, elements.Length - 1));
            while (cutWalker.TryNext(out _))
            {
            }
        });
    }

    private static List<string> BsonSerializerNames() => [.. global::MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(Sample).Names];
}
