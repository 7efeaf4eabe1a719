using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>The store contract through the real driver, against the loopback server (or COMPRESSION_TEST_MONGODB_URI).</summary>
public sealed class MongoDictionaryStoreTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private MongoTestServer Server => fixture.Server;

    internal static DictionaryRecord Record(uint id, string ns, int version, byte[]? content = null)
    {
        content ??= [1, 2, 3, (byte)id];
        return new()
        {
            Id = id, Namespace = ns, Version = version, Content = content, ContentHash = DictionaryRecord.ComputeContentHash(content),
            Created = new DateTimeOffset(2026, 11, 24, 10, 0, 0, TimeSpan.Zero), Level = 3, SampleCount = 10, Ratio = 2.5,
        };
    }

    [Fact]
    public async Task Publish_InsertsVersionsInOrder_AndReadsThemBack()
    {
        await using var db = Server.CreateDatabase("store-order");
        var store = new MongoDictionaryStore(db.Database);
        Assert.Null(await store.GetCurrentAsync("db.a"));
        Assert.Equal(10u, (await store.PublishAsync(Record(10, "db.a", 1))).Id);
        Assert.Equal(11u, (await store.PublishAsync(Record(11, "db.a", 2))).Id);
        Assert.Equal(12u, (await store.PublishAsync(Record(12, "db.b/x y", 1))).Id);
        Assert.Equal(uint.MaxValue, (await store.PublishAsync(Record(uint.MaxValue, "db.c", 1))).Id);

        var current = await store.GetCurrentAsync("db.a");
        Assert.Equal(11u, current!.Id);
        Assert.Equal(2, current.Version);
        var byId = await store.GetAsync(10);
        Assert.Equal(Record(10, "db.a", 1) with { Content = default }, byId! with { Content = default }); // every field but the bytes, compared below
        Assert.Equal(new byte[] { 1, 2, 3, 10 }, byId.Content.ToArray());
        Assert.Equal(new byte[] { 1, 2, 3, 10 }, store.Get(10)!.Content.ToArray()); // the synchronous API
        Assert.True(store.CanGetSynchronously);
        Assert.Null(await store.GetAsync(99));
        Assert.Null(store.Get(99));
        Assert.Equal(12u, (await store.GetCurrentAsync("db.b/x y"))!.Id);
        Assert.Equal(uint.MaxValue, store.Get(uint.MaxValue)!.Id);

        var all = new List<DictionaryRecord>();
        await foreach (var r in store.ListAsync()) all.Add(r);
        Assert.Equal([10u, 11u, 12u, uint.MaxValue], all.Select(r => r.Id).ToArray());
        var a = new List<int>();
        await foreach (var r in store.ListAsync("db.a")) a.Add(r.Version);
        Assert.Equal([1, 2], a);
        Assert.Equal($"MongoDB collection {db.Name}._compression.dictionaries", store.Location);
    }

    [Fact]
    public async Task Publish_StoresTheDocumentLayoutOfTheArchitecture()
    {
        await using var db = Server.CreateDatabase("store-layout");
        await new MongoDictionaryStore(db.Database).PublishAsync(Record(7, "shop.orders", 1));
        var stored = await db.Database.GetCollection<BsonDocument>("_compression.dictionaries").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(["_id", "ns", "v", "content", "hash", "created", "codec", "level", "samples", "ratio"], stored.Names.ToArray());
        Assert.Equal(7L, stored["_id"].AsInt64);
        Assert.Equal(BsonBinarySubType.Binary, stored["content"].AsBsonBinaryData.SubType);
        Assert.Equal("Zstd", stored["codec"].AsString);

        var indexes = await (await db.Database.GetCollection<BsonDocument>("_compression.dictionaries").Indexes.ListAsync()).ToListAsync();
        var index = Assert.Single(indexes, i => i["name"] == "ns_1_v_1");
        Assert.True(index["unique"].ToBoolean());
        Assert.Equal(new BsonDocument { { "ns", 1 }, { "v", 1 } }, index["key"].AsBsonDocument);
    }

    [Fact]
    public async Task Publish_SameVersionTwice_ReturnsTheWinnerAndOverwritesNothing()
    {
        await using var db = Server.CreateDatabase("store-winner");
        var store = new MongoDictionaryStore(db.Database);
        await store.PublishAsync(Record(20, "db.a", 1));
        var winner = await store.PublishAsync(Record(21, "db.a", 1));
        Assert.Equal(20u, winner.Id);
        Assert.Null(await store.GetAsync(21));
        Assert.Equal(20u, (await store.GetCurrentAsync("db.a"))!.Id);

        // The same record again (an attempt whose reply was lost after the insert landed): it is the winner.
        var again = await new MongoDictionaryStore(db.Database).PublishAsync(Record(22, "db.b", 1));
        Assert.Equal(22u, again.Id);
        var retried = await new MongoDictionaryStore(db.Database).PublishAsync(Record(22, "db.b", 1));
        Assert.Equal(22u, retried.Id);
    }

    [Fact]
    public async Task Publish_TakenId_IsRefused_AndAVersionAboveAGapIsInserted()
    {
        await using var db = Server.CreateDatabase("store-refused");
        var store = new MongoDictionaryStore(db.Database);
        await store.PublishAsync(Record(30, "db.a", 1));
        var conflict = await Assert.ThrowsAsync<DictionaryIdConflictException>(async () => await store.PublishAsync(Record(30, "db.b", 1)));
        Assert.Equal(30u, conflict.Id);
        // A gap is what the engine leaves when it publishes past a version held by an invalid record: allowed.
        Assert.Equal(31u, (await store.PublishAsync(Record(31, "db.a", 3))).Id);
        Assert.Equal(3, (await store.GetCurrentAsync("db.a"))!.Version);
    }

    [Fact]
    public async Task ConcurrentPublishersOfOneVersion_OwnClients_ExactlyOneWins()
    {
        await using var db = Server.CreateDatabase("store-race");
        // Each publisher has its own client (own connection pool), as separate application servers would.
        var clients = Enumerable.Range(0, 4).Select(_ => new MongoClient(Server.CreateClientSettings())).ToArray();
        try
        {
            var stores = clients.Select(c => new MongoDictionaryStore(c.GetDatabase(db.Name))).ToArray();
            for (int round = 1; round <= 25; round++)
            {
                int version = round;
                using var start = new ManualResetEventSlim();
                var tasks = stores.Select((s, i) => Task.Run(async () =>
                {
                    start.Wait();
                    return await s.PublishAsync(Record((uint)(1000 * round + i), "db.race", version));
                })).ToArray();
                start.Set();
                var results = await Task.WhenAll(tasks);
                Assert.Single(results.Select(r => r.Id).Distinct());
                Assert.All(results, r => Assert.Equal(version, r.Version));
            }

            var versions = new List<int>();
            await foreach (var r in stores[0].ListAsync("db.race")) versions.Add(r.Version);
            Assert.Equal(Enumerable.Range(1, 25), versions);
            Assert.Equal(25, await db.Database.GetCollection<BsonDocument>("_compression.dictionaries").CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));
        }
        finally
        {
            foreach (var c in clients) c.Dispose();
        }
    }

    public static TheoryData<string, string, BsonValue, string> Tampered() => new()
    {
        { "version as a string", "v", "1", "field 'v' is a String, not an Int32 or Int64" },
        { "namespace missing", "ns", BsonNull.Value, "field 'ns' is a Null, not a String" },
        { "content as a string", "content", "AAEC", "field 'content' is a String, not a Binary" },
        { "content of another subtype", "content", new BsonBinaryData([1, 2, 3], BsonBinarySubType.UserDefined), "'content' is BinData(0x80), not BinData(0)" },
        { "hash as a double", "hash", 1.5, "field 'hash' is a Double, not an Int64" },
        { "codec unknown", "codec", "Zip", "'codec' is 'Zip', not a codec name" },
        { "codec as a number", "codec", "1", "'codec' is '1', not a codec name" },
        { "version zero", "v", 0, "version 0 is not a version" },
        { "created as a string", "created", "yesterday", "field 'created' is a String, not a DateTime" },
        { "samples negative", "samples", -4, "sample count -4 is out of range" },
    };

    [Theory]
    [MemberData(nameof(Tampered))]
    public async Task TamperedDocument_IsRefusedNamingTheCollectionAndTheId(string what, string field, BsonValue value, string expected)
    {
        await using var db = Server.CreateDatabase("store-tamper");
        var store = new MongoDictionaryStore(db.Database);
        await store.PublishAsync(Record(40, "db.a", 1));
        var raw = db.Database.GetCollection<BsonDocument>("_compression.dictionaries");
        var update = value.IsBsonNull ? Builders<BsonDocument>.Update.Unset(field) : Builders<BsonDocument>.Update.Set(field, value);
        await raw.UpdateOneAsync(new BsonDocument("_id", 40L), update);

        var ex = await Assert.ThrowsAsync<InvalidDataException>(async () => await store.GetAsync(40));
        Assert.Contains($"Dictionary document _id 40 in MongoDB collection {db.Name}._compression.dictionaries is invalid", ex.Message, StringComparison.Ordinal);
        Assert.Contains(value.IsBsonNull ? "field 'ns' is missing" : expected, ex.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidDataException>(() => store.Get(40));
        // Current: a version that is not a whole number in range is never seen; any other damage is skipped and, with
        // nothing valid below it, thrown.
        if (field == "v") Assert.Null(await store.GetCurrentAsync("db.a"));
        else if (field != "ns") await Assert.ThrowsAsync<InvalidDataException>(async () => await store.GetCurrentAsync("db.a"));
        _ = what; // names the case in the test list
    }

    [Fact]
    public async Task TamperedContent_PassesTheStoreButTheEngineRefusesIt_NamingTheStore()
    {
        await using var db = Server.CreateDatabase("store-hash");
        var store = new MongoDictionaryStore(db.Database);
        await store.PublishAsync(Record(41, "db.a", 1));
        await db.Database.GetCollection<BsonDocument>("_compression.dictionaries")
            .UpdateOneAsync(new BsonDocument("_id", 41L), Builders<BsonDocument>.Update.Set("content", new BsonBinaryData(new byte[] { 9, 9, 9, 9 })));

        await using var engine = new CompressionEngine(store);
        var ex = await Assert.ThrowsAsync<InvalidDataException>(() => engine.GetNamespace("db.a").RefreshAsync());
        Assert.Contains($"from MongoDB collection {db.Name}._compression.dictionaries is invalid and was not used: the content does not match its hash", ex.Message, StringComparison.Ordinal);
        Assert.Null(engine.GetNamespace("db.a").CurrentDictionary);
    }

    [Fact]
    public async Task ShapeTable_IsStoredWithItsDictionary_AndReadBack_AndAnOversizedOneIsRefused()
    {
        await using var db = Server.CreateDatabase("store-shapes");
        var store = new MongoDictionaryStore(db.Database);
        byte[] shapes = [0x53, 0x48, 0x50, 0x54, 1, 1, 0, 1, 1, 1, (byte)'a', 9, 9, 9, 9];
        await store.PublishAsync(Record(60, "db.a", 1) with { Shapes = shapes, ShapesHash = DictionaryRecord.ComputeContentHash(shapes) });
        await store.PublishAsync(Record(61, "db.b", 1));

        var cold = new MongoDictionaryStore(db.Database);
        DictionaryRecord read = (await cold.GetAsync(60))!;
        Assert.Equal(shapes, read.Shapes.ToArray());
        Assert.Equal(DictionaryRecord.ComputeContentHash(shapes), read.ShapesHash);
        Assert.True((await cold.GetAsync(61))!.Shapes.IsEmpty);

        // The largest a shape table (256 KiB) and its field model (512 KiB) take together, and one byte more.
        byte[] huge = new byte[Compression.Structure.ShapeTransform.MaxStoredLength + 1];
        await store.PublishAsync(Record(62, "db.c", 1) with { Shapes = huge, ShapesHash = DictionaryRecord.ComputeContentHash(huge) });
        var ex = await Assert.ThrowsAsync<InvalidDataException>(async () => await cold.GetAsync(62));
        Assert.Contains($"'shapes' has {huge.Length} bytes", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task OversizedDocument_IsRefusedBeforeItsFieldsAreRead()
    {
        await using var db = Server.CreateDatabase("store-size");
        var small = new MongoDictionaryStore(db.Database, maxDictionaryBytes: 4096);
        // Over what a record of 4 KiB of dictionary and the largest shape table and field model (768 KiB) can take.
        await new MongoDictionaryStore(db.Database).PublishAsync(Record(50, "db.a", 1, new byte[800 * 1024]));

        var ex = await Assert.ThrowsAsync<InvalidDataException>(async () => await small.GetAsync(50));
        Assert.Contains($"Dictionary document _id 50 in MongoDB collection {db.Name}._compression.dictionaries has 819", ex.Message, StringComparison.Ordinal);
        Assert.Contains("it was not read", ex.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidDataException>(() => small.Get(50));
    }

    [Fact]
    public async Task DocumentUnderAnotherId_OrAnotherNamespace_IsRefused()
    {
        await using var db = Server.CreateDatabase("store-lie");
        var store = new MongoDictionaryStore(db.Database);
        var raw = db.Database.GetCollection<BsonDocument>("_compression.dictionaries");
        var document = MongoDictionaryStore.ToDocument(Record(60, "db.a", 1));
        document["_id"] = -5L;
        await raw.InsertOneAsync(document);
        var ex = await Assert.ThrowsAsync<InvalidDataException>(async () => await store.GetCurrentAsync("db.a"));
        Assert.Contains("_id -5 is not a dictionary id", ex.Message, StringComparison.Ordinal);
    }
}
