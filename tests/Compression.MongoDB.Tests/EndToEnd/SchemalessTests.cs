using System.Reflection;
using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests.EndToEnd;

/// <summary>
/// <c>IMongoCollection&lt;BsonDocument&gt;</c> and <c>&lt;RawBsonDocument&gt;</c> compressed through
/// <see cref="CompressedCollections.GetCompressedCollection{TDocument}"/>, with the real driver over real sockets.
/// </summary>
public sealed class SchemalessTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private static readonly CompressedDocumentOptions ClearTitleAndYear = new() { ClearFields = ["title", "year"] };

    private MongoTestServer Server => fixture.Server;

    /// <summary>A document of many BSON types whose clear field <c>title</c> does not lead it: its place must survive.</summary>
    private static BsonDocument Movie(int i) => new()
    {
        { "_id", ObjectId.GenerateNewId() },
        { "plot", $"Movie {i}: a retired detective returns to the harbor town where she grew up to find the truth about her brother." },
        { "title", $"Title {i}" },
        { "cast", new BsonArray { "Ana Lopez", "Mei Lin", i } },
        { "year", 1950 + i % 70 },
        { "genre", i % 3 == 0 ? "Drama" : "Comedy" },
        { "ratings", new BsonDocument { { "imdb", 7.5 + i % 10 / 10.0 }, { "votes", (long)i * 1_000_003 }, { "box", new Decimal128(12.5m + i) } } },
        { "released", new BsonDateTime(new DateTime(2001, 1, 1, 0, 0, 0, DateTimeKind.Utc).AddDays(i)) },
        { "poster", new BsonBinaryData([1, 2, 3, (byte)i]) },
        { "awards", BsonNull.Value },
        { "minusZero", -0.0 },
    };

    private static byte[] Bytes(BsonDocument document) => document.ToBson();

    [Fact]
    public async Task BsonDocument_RoundTripsByteForByte_StoredAsClearFieldsAndAnEnvelope()
    {
        await using var db = Server.CreateDatabase("schemaless-roundtrip");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);

        var written = Enumerable.Range(0, 6).Select(Movie).ToList();
        await movies.InsertManyAsync(written.Take(5).Select(d => d.DeepClone().AsBsonDocument));
        await movies.InsertOneAsync(written[5].DeepClone().AsBsonDocument);

        foreach (BsonDocument stored in await db.Database.GetCollection<BsonDocument>("movies").Find(FilterDefinition<BsonDocument>.Empty).ToListAsync())
        {
            Assert.Equal(["_id", "title", "year", "_z"], stored.Names.ToArray());
            Assert.Equal((BsonBinarySubType)0x81, stored["_z"].AsBsonBinaryData.SubType);
        }
        var read = await movies.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync();
        Assert.Equal(written.Select(Bytes), read.OrderBy(d => written.FindIndex(w => w["_id"] == d["_id"])).Select(Bytes));

        // Without an _id, the document gets one on insert, as with the driver's own serializer, and reads back with it.
        var withoutId = new BsonDocument { { "title", "No id" }, { "plot", "Nobody gave it one." } };
        await movies.InsertOneAsync(withoutId);
        Assert.Equal(BsonType.ObjectId, withoutId["_id"].BsonType);
        Assert.Equal(Bytes(withoutId), Bytes(await movies.Find(Builders<BsonDocument>.Filter.Eq("title", "No id")).SingleAsync()));
    }

    [Fact]
    public async Task ManyDocuments_TrainADictionary_AndAColdClientReadsEveryOneBack()
    {
        await using var db = Server.CreateDatabase("schemaless-dictionary");
        var written = Enumerable.Range(0, 600).Select(Movie).ToList();
        await using (var engine = E2e.Engine(db.Database))
        {
            IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);
            await movies.InsertManyAsync(written.Take(300).Select(d => d.DeepClone().AsBsonDocument));
            await engine.WhenIdleAsync();
            Assert.NotNull(engine.GetNamespace($"{db.Name}.movies").CurrentDictionary);
            await movies.InsertManyAsync(written.Skip(300).Select(d => d.DeepClone().AsBsonDocument));
        }

        await using var cold = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> reader = db.Database.GetCompressedCollection<BsonDocument>("movies", cold, ClearTitleAndYear);
        var byId = written.ToDictionary(d => d["_id"]);
        var read = await reader.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync();
        Assert.Equal(600, read.Count);
        Assert.All(read, d => Assert.Equal(Bytes(byId[d["_id"]]), Bytes(d)));
    }

    [Fact]
    public async Task FiltersSortsAndIndexes_OnClearFields_Work_AndACompressedFieldIsRefusedByName()
    {
        await using var db = Server.CreateDatabase("schemaless-query");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);
        var written = Enumerable.Range(0, 40).Select(Movie).ToList();
        await movies.InsertManyAsync(written.Select(d => d.DeepClone().AsBsonDocument));

        string index = await movies.Indexes.CreateOneAsync(new CreateIndexModel<BsonDocument>(Builders<BsonDocument>.IndexKeys.Ascending("year")));
        Assert.Equal("year_1", index);
        var filter = Builders<BsonDocument>.Filter.Gte("year", 1960) & Builders<BsonDocument>.Filter.Lt("year", 1975);
        var found = await movies.Find(filter).Sort(Builders<BsonDocument>.Sort.Descending("year")).ToListAsync();
        var expected = written.Where(d => d["year"].AsInt32 is >= 1960 and < 1975).OrderByDescending(d => d["year"].AsInt32).ToList();
        Assert.NotEmpty(expected);
        Assert.Equal(expected.Select(Bytes), found.Select(Bytes));
        Assert.Equal(1, await movies.CountDocumentsAsync(new BsonDocument("title", "Title 7")));

        var byFilter = Assert.Throws<InvalidOperationException>(() => movies.Find(Builders<BsonDocument>.Filter.Eq("genre", "Drama")).ToList());
        Assert.Equal($"Field 'genre' is compressed (stored inside '_z' of '{db.Name}.movies'), so filters, sorts, projections, indexes and updates cannot use it. " +
            $"Add it to Compression:Namespaces:{db.Name}.movies:ClearFields (top-level element names) to query it.", byFilter.Message);
        Assert.Throws<InvalidOperationException>(() => movies.Indexes.CreateOne(new CreateIndexModel<BsonDocument>(Builders<BsonDocument>.IndexKeys.Ascending("plot"))));
        Assert.Throws<InvalidOperationException>(() => movies.UpdateOne(Builders<BsonDocument>.Filter.Eq("title", "Title 7"), Builders<BsonDocument>.Update.Inc("genre", 1)));
    }

    [Fact]
    public async Task UpdateOfAClearField_IsAppliedByTheServer_AndTheDocumentKeepsItsOrder()
    {
        await using var db = Server.CreateDatabase("schemaless-update");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);
        BsonDocument movie = Movie(1);
        await movies.InsertOneAsync(movie.DeepClone().AsBsonDocument);

        await movies.UpdateOneAsync(Builders<BsonDocument>.Filter.Eq("_id", movie["_id"]), Builders<BsonDocument>.Update.Set("title", "Renamed").Inc("year", 1));
        movie["title"] = "Renamed";
        movie["year"] = movie["year"].AsInt32 + 1;
        Assert.Equal(Bytes(movie), Bytes(await movies.Find(Builders<BsonDocument>.Filter.Eq("title", "Renamed")).SingleAsync()));
    }

    [Fact]
    public async Task ReplaceFindOneAndReplaceBulkWriteAndAggregate_WriteCompressed_AndReadBackByteForByte()
    {
        await using var db = Server.CreateDatabase("schemaless-paths");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);
        IMongoCollection<BsonDocument> plain = db.Database.GetCollection<BsonDocument>("movies");
        BsonDocument first = Movie(1), second = Movie(2), third = Movie(3);
        await movies.BulkWriteAsync([new InsertOneModel<BsonDocument>(first.DeepClone().AsBsonDocument), new InsertOneModel<BsonDocument>(second.DeepClone().AsBsonDocument)]);

        BsonDocument replacement = Movie(4);
        replacement["_id"] = first["_id"];
        await movies.ReplaceOneAsync(Builders<BsonDocument>.Filter.Eq("_id", first["_id"]), replacement.DeepClone().AsBsonDocument);
        BsonDocument secondReplacement = Movie(5);
        secondReplacement["_id"] = second["_id"];
        BsonDocument before = await movies.FindOneAndReplaceAsync(Builders<BsonDocument>.Filter.Eq("_id", second["_id"]), secondReplacement.DeepClone().AsBsonDocument);
        Assert.Equal(Bytes(second), Bytes(before));
        third["_id"] = second["_id"];
        await movies.BulkWriteAsync([new ReplaceOneModel<BsonDocument>(Builders<BsonDocument>.Filter.Eq("title", "Title 5"), third.DeepClone().AsBsonDocument)]);

        Assert.All(await plain.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync(), stored => Assert.Equal(["_id", "title", "year", "_z"], stored.Names.ToArray()));
        var aggregated = await movies.Aggregate().Match(Builders<BsonDocument>.Filter.Gte("year", 1950)).Sort(Builders<BsonDocument>.Sort.Ascending("year")).ToListAsync();
        Assert.Equal(new[] { third, replacement }.Select(Bytes), aggregated.Select(Bytes));
    }

    [Fact]
    public async Task LegacyPlainDocuments_AndAnApplicationFieldNamedZ_ReadAsTheyAre()
    {
        await using var db = Server.CreateDatabase("schemaless-legacy");
        await using var engine = E2e.Engine(db.Database);
        BsonDocument legacy = Movie(1);
        await db.Database.GetCollection<BsonDocument>("movies").InsertOneAsync(legacy.DeepClone().AsBsonDocument);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);

        Assert.Equal(Bytes(legacy), Bytes(await movies.Find(Builders<BsonDocument>.Filter.Eq("_id", legacy["_id"])).SingleAsync()));

        // Its own _z (not BinData 0x80 or 0x81) is a field like any other: compressed on writing, given back on reading.
        BsonDocument withZ = Movie(2).Add("_z", 42);
        await movies.InsertOneAsync(withZ.DeepClone().AsBsonDocument);
        BsonDocument stored = await db.Database.GetCollection<BsonDocument>("movies").Find(Builders<BsonDocument>.Filter.Eq("_id", withZ["_id"])).SingleAsync();
        Assert.Equal(BsonType.Binary, stored["_z"].BsonType);
        Assert.Equal(Bytes(withZ), Bytes(await movies.Find(Builders<BsonDocument>.Filter.Eq("_id", withZ["_id"])).SingleAsync()));
    }

    [Fact]
    public async Task CompressionSwitchedOff_WritesPlainDocuments_AndEveryDocumentStaysReadable()
    {
        await using var db = Server.CreateDatabase("schemaless-off");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> on = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);
        IMongoCollection<BsonDocument> off = db.Database.GetCompressedCollection<BsonDocument>("movies", engine,
            new CompressedDocumentOptions { ClearFields = ClearTitleAndYear.ClearFields, Compress = false });
        IMongoCollection<BsonDocument> plain = db.Database.GetCollection<BsonDocument>("movies");
        BsonDocument compressed = Movie(1), written = Movie(2);
        await on.InsertOneAsync(compressed.DeepClone().AsBsonDocument);
        await off.InsertOneAsync(written.DeepClone().AsBsonDocument);

        Assert.True((await plain.Find(Builders<BsonDocument>.Filter.Eq("_id", compressed["_id"])).SingleAsync()).Contains("_z"));
        // Written while off: plain, so that any reader (the plain collection, another driver) reads it.
        Assert.Equal(Bytes(written), Bytes(await plain.Find(Builders<BsonDocument>.Filter.Eq("_id", written["_id"])).SingleAsync()));
        foreach (IMongoCollection<BsonDocument> reader in new[] { on, off })
        {
            Assert.Equal(Bytes(compressed), Bytes(await reader.Find(Builders<BsonDocument>.Filter.Eq("_id", compressed["_id"])).SingleAsync()));
            Assert.Equal(Bytes(written), Bytes(await reader.Find(Builders<BsonDocument>.Filter.Eq("_id", written["_id"])).SingleAsync()));
        }
    }

    [Fact]
    public async Task RawBsonDocument_RoundTripsItsBytes_Compressed()
    {
        await using var db = Server.CreateDatabase("schemaless-raw");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<RawBsonDocument> movies = db.Database.GetCompressedCollection<RawBsonDocument>("movies", engine, ClearTitleAndYear);
        byte[] bytes = Bytes(Movie(1));
        using var document = new RawBsonDocument(bytes);
        await movies.InsertOneAsync(document);

        BsonDocument stored = await db.Database.GetCollection<BsonDocument>("movies").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(["_id", "title", "year", "_z"], stored.Names.ToArray());
        using RawBsonDocument read = await movies.Find(Builders<RawBsonDocument>.Filter.Eq("title", "Title 1")).SingleAsync();
        Assert.Equal(bytes, read.ToBson());
    }

    [Fact]
    public async Task TwoCollections_EachWithItsNamespaceAndClearFields_AndGetCollectionStaysPlain()
    {
        await using var db = Server.CreateDatabase("schemaless-two");
        var options = E2e.FastOptions();
        options.Defaults.AdapterSettings.Remove("ClearFields");
        options.Namespaces[$"{db.Name}.movies"] = new NamespaceOptions { AdapterSettings = { ["ClearFields"] = ["title"] } };
        options.Namespaces[$"{db.Name}.products"] = new NamespaceOptions { AdapterSettings = { ["ClearFields"] = ["sku"] } };
        await using var engine = E2e.Engine(db.Database, options: options);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine);
        IMongoCollection<BsonDocument> products = db.Database.GetCompressedCollection<BsonDocument>("products", engine);

        BsonDocument movie = Movie(1);
        var product = new BsonDocument { { "_id", 7 }, { "sku", "A-7" }, { "title", "Lamp" }, { "description", "A brass lamp with a green glass shade." } };
        await movies.InsertOneAsync(movie.DeepClone().AsBsonDocument);
        await products.InsertOneAsync(product.DeepClone().AsBsonDocument);
        await db.Database.GetCollection<BsonDocument>("others").InsertOneAsync(product.DeepClone().AsBsonDocument);

        Assert.Equal(["_id", "title", "_z"], (await db.Database.GetCollection<BsonDocument>("movies").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync()).Names.ToArray());
        Assert.Equal(["_id", "sku", "_z"], (await db.Database.GetCollection<BsonDocument>("products").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync()).Names.ToArray());
        Assert.Equal(Bytes(product), Bytes(await db.Database.GetCollection<BsonDocument>("others").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync()));

        Assert.Equal(Bytes(movie), Bytes(await movies.Find(Builders<BsonDocument>.Filter.Eq("title", "Title 1")).SingleAsync()));
        Assert.Equal(Bytes(product), Bytes(await products.Find(Builders<BsonDocument>.Filter.Eq("sku", "A-7")).SingleAsync()));
        var wrongCollection = Assert.Throws<InvalidOperationException>(() => movies.Find(Builders<BsonDocument>.Filter.Eq("sku", "A-7")).ToList());
        Assert.Contains($"of '{db.Name}.movies'", wrongCollection.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => products.Find(Builders<BsonDocument>.Filter.Eq("title", "Lamp")).ToList());
    }

    [Fact]
    public async Task WithReadPreferenceReadConcernAndWriteConcern_KeepTheCompressedSerializer()
    {
        await using var db = Server.CreateDatabase("schemaless-with");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine, ClearTitleAndYear);
        BsonDocument movie = Movie(1);

        await movies.WithWriteConcern(WriteConcern.WMajority).InsertOneAsync(movie.DeepClone().AsBsonDocument);
        Assert.True((await db.Database.GetCollection<BsonDocument>("movies").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync()).Contains("_z"));
        IMongoCollection<BsonDocument> reader = movies.WithReadPreference(ReadPreference.Primary).WithReadConcern(ReadConcern.Majority);
        Assert.Same(movies.DocumentSerializer.GetType(), reader.DocumentSerializer.GetType());
        Assert.Equal(Bytes(movie), Bytes(await reader.Find(FilterDefinition<BsonDocument>.Empty).SingleAsync()));
    }

    [Fact]
    public async Task ADatabaseThatIsNotTheDriversOwn_IsRefusedWhenTheCollectionIsMade_AndOfTypeIsRefused()
    {
        await using var db = Server.CreateDatabase("schemaless-refused");
        await using var engine = E2e.Engine(db.Database);
        var wrapped = DispatchProxy.Create<IMongoDatabase, ForwardingDatabase>();
        ((ForwardingDatabase)(object)wrapped).Inner = db.Database;
        var ex = Assert.Throws<NotSupportedException>(() => wrapped.GetCompressedCollection<BsonDocument>("movies", engine));
        Assert.Contains("has no constructor taking a document serializer", ex.Message, StringComparison.Ordinal);

        IMongoCollection<BsonDocument> movies = db.Database.GetCompressedCollection<BsonDocument>("movies", engine);
        Assert.Throws<NotSupportedException>(() => movies.OfType<RawBsonDocument>());
    }

    /// <summary>An <see cref="IMongoDatabase"/> of someone else's (instrumentation, a test double) whose collections wrap the driver's.</summary>
    public class ForwardingDatabase : DispatchProxy
    {
        public IMongoDatabase Inner { get; set; } = null!;

        protected override object? Invoke(MethodInfo? targetMethod, object?[]? args)
        {
            object? result = targetMethod!.Invoke(Inner, args);
            if (result is IMongoCollection<BsonDocument> collection)
            {
                var forwarding = DispatchProxy.Create<IMongoCollection<BsonDocument>, ForwardingCollection>();
                ((ForwardingCollection)(object)forwarding).Inner = collection;
                return forwarding;
            }
            return result;
        }
    }

    public class ForwardingCollection : DispatchProxy
    {
        public IMongoCollection<BsonDocument> Inner { get; set; } = null!;

        protected override object? Invoke(MethodInfo? targetMethod, object?[]? args) => targetMethod!.Invoke(Inner, args);
    }

    [Fact]
    public async Task AClearFieldThatIsNotATopLevelName_IsRefused()
    {
        await using var db = Server.CreateDatabase("schemaless-bad");
        await using var engine = E2e.Engine(db.Database);
        var ex = Assert.Throws<ArgumentException>(() => db.Database.GetCompressedCollection<BsonDocument>("movies", engine, new CompressedDocumentOptions { ClearFields = ["ratings.imdb"] }));
        Assert.StartsWith($"'ratings.imdb' is not a clear field of '{db.Name}.movies'; allowed: top-level field names", ex.Message, StringComparison.Ordinal);
    }
}
