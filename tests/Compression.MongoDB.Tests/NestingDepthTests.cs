using System.Buffers.Binary;
using System.Text;
using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>A type with a member the driver reads recursively.</summary>
public sealed class DeepHolder
{
    [BsonId] public int Id { get; set; }

    [BsonElement("payload")] public BsonDocument Payload { get; set; } = [];
}

/// <summary>
/// A compressed part nested deeper than MongoDB stores (100 levels of embedded documents and arrays below the root) is
/// refused, naming the <c>_id</c>, before anything recursive reads it: the server never sees inside <c>_z</c>. Found by
/// review: a 15 KB <c>_z</c> nested 20,000 levels deep overflowed the reader's stack (exit 134, at the same document on
/// every rerun); at 5,000 levels reads succeeded.
/// </summary>
public sealed class NestingDepthTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private const string Ns = "deep.items";

    // The driver's registry is global per type: one engine and one registration for the whole class.
    private static readonly CompressionEngine Engine = Registered();
    private readonly CompressionEngine _engine = Engine;

    private static CompressionEngine Registered()
    {
        var engine = new CompressionEngine(new InMemoryDictionaryStore());
        CompressedDocumentSerializer.Register<DeepHolder>(engine.GetNamespace(Ns));
        return engine;
    }

    private async Task<IMongoCollection<DeepHolder>> StoreAsync(MongoTestDatabase db, int levels, byte type = 0x03)
    {
        byte[] envelope = _engine.GetNamespace(Ns).Compress(DeepBson.PayloadElement(levels, type));
        var raw = db.Database.GetCollection<BsonDocument>("items");
        await raw.InsertOneAsync(new BsonDocument { { "_id", levels }, { "_z", new BsonBinaryData(envelope, (BsonBinarySubType)0x81) } });
        return db.Database.GetCollection<DeepHolder>("items");
    }

    private static int Depth(BsonDocument document)
    {
        int depth = 1;
        for (BsonValue value = document; value is BsonDocument { ElementCount: 1 } d && d[0] is BsonDocument or BsonArray; depth++)
            value = d[0];
        return depth;
    }

    [Fact]
    public async Task Read_OneHundredLevels_ReadsWhole()
    {
        await using var db = fixture.Server.CreateDatabase("deep-100");
        IMongoCollection<DeepHolder> items = await StoreAsync(db, BsonNesting.MaxDepth);
        DeepHolder read = await items.Find(d => d.Id == BsonNesting.MaxDepth).FirstAsync();
        Assert.Equal(BsonNesting.MaxDepth, Depth(read.Payload));
    }

    [Theory]
    [InlineData(101, 0x03)]
    [InlineData(101, 0x04)]
    [InlineData(5_000, 0x03)]
    [InlineData(20_000, 0x03)]
    [InlineData(20_000, 0x04)]
    public async Task Read_DeeperThanMongoDbStores_IsRefusedNamingTheId_InsteadOfOverflowingTheStack(int levels, byte type)
    {
        await using var db = fixture.Server.CreateDatabase("deep");
        IMongoCollection<DeepHolder> items = await StoreAsync(db, levels, type);
        Exception ex = await Assert.ThrowsAnyAsync<Exception>(() => items.Find(d => d.Id == levels).FirstAsync());
        InvalidDataException refused = Assert.IsType<InvalidDataException>(ex is InvalidDataException ? ex : ex.InnerException);
        Assert.Contains($"Document _id {levels} in '{Ns}' nests deeper than 100 levels", refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("a")]
    [InlineData("a longer name")]
    public void IsWithinLimit_TheSmallestDocumentsOfEachDepth_AreJudgedExactly(string childName)
    {
        // Elements too small to pass the limit are not walked (each level takes at least 7 bytes): the tightest ones,
        // with empty names, must still be judged right at the boundary.
        foreach (byte type in new byte[] { 0x03, 0x04 })
        {
            foreach ((int levels, bool within) in new[] { (99, true), (100, true), (101, false), (102, false), (1_000, false) })
            {
                byte[] element = DeepBson.PayloadElement(levels, type, childName);
                var walker = RawBsonWalker.OverElements(element);
                Assert.True(walker.TryNext(out RawBsonElement payload));
                Assert.True(BsonNesting.IsWithinLimit(element, payload) == within, $"{levels} levels, names '{childName}', type {type}");
            }
        }
    }

    [Fact]
    public void Write_TheDriverRefusesToWriteDeeperThanItReads()
    {
        // So a compressed document written through the serializer always reads back: the driver's writer stops at 100
        // levels (BsonDefaults.MaxSerializationDepth), the reader at 100 levels below the root.
        var serializer = new CompressedDocumentSerializer<DeepHolder>(_engine.GetNamespace(Ns));
        BsonDocument deepest = BsonSerializer.Deserialize<BsonDocument>(Document(DeepBson.PayloadElement(BsonNesting.MaxDepth - 1)));
        BsonDocument tooDeep = BsonSerializer.Deserialize<BsonDocument>(Document(DeepBson.PayloadElement(BsonNesting.MaxDepth)));
        byte[] written = Write(serializer, new DeepHolder { Id = 1, Payload = deepest["payload"].AsBsonDocument });
        Assert.Equal(BsonNesting.MaxDepth - 1, Depth(BsonSerializer.Deserialize<DeepHolder>(written).Payload));
        Assert.ThrowsAny<Exception>(() => Write(serializer, new DeepHolder { Id = 2, Payload = tooDeep["payload"].AsBsonDocument }));
        Assert.Equal(BsonNesting.MaxDepth, BsonDefaults.MaxSerializationDepth);
    }

    private static byte[] Document(byte[] elements)
    {
        byte[] document = new byte[elements.Length + 5];
        BinaryPrimitives.WriteInt32LittleEndian(document, document.Length);
        elements.CopyTo(document, 4);
        return document;
    }

    private static byte[] Write(CompressedDocumentSerializer<DeepHolder> serializer, DeepHolder value)
    {
        using var stream = new MemoryStream();
        using (var writer = new BsonBinaryWriter(stream))
        {
            serializer.Serialize(BsonSerializationContext.CreateRoot(writer), value);
        }
        return stream.ToArray();
    }
}
