using Compression.Testing.Mongo;
using Compression.MongoDB;
using Compression.Tool.Backends.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// Every replacement <c>migrate</c> sends is a compare-and-swap on the document as it read it: what another client does
/// between the tool's read and its write (compress a document, change one, delete one) is neither overwritten nor doubled.
/// </summary>
public sealed class ConcurrentWriterTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    [Fact]
    public async Task Migrate_AnotherClientWritesBetweenReadAndWrite_NothingOverwrittenNothingCompressedTwice()
    {
        await using var db = fixture.Server.CreateDatabase("concurrent");
        string ns = $"{db.Name}.movies";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(db.Database, "movies", 100);
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, ns);
        var train = Docz.Run("train", "--config", config);
        Assert.True(train.Exit == 0, train.Error + train.Output);

        var settings = new LiveSettings { ConfigPath = config, BatchSize = 50 };
        await using MongoSession session = MongoSession.Open(settings);
        MongoNamespace live = Assert.Single(session.Namespaces);
        StoredDocumentCodec codec = await session.OpenAsync(live, CancellationToken.None);
        var raw = db.Database.GetCollection<RawBsonDocument>("movies");
        var movies = db.Database.GetCollection<BsonDocument>("movies");
        ObjectId[] ids = [.. originals.Keys.Order().Take(3)];
        (ObjectId compressedByApp, ObjectId changed, ObjectId deleted) = (ids[0], ids[1], ids[2]);
        LiveMovie appVersion = BsonSerializer.Deserialize<LiveMovie>(originals[compressedByApp]);
        appVersion.Title = "Rewritten by the application";

        bool interfered = false;
        var rewriter = new CollectionRewriter(session, live, codec, new RewriteOptions { Mode = RewriteMode.Compress }, settings)
        {
            BeforeWrite = async batch =>
            {
                if (interfered) return;
                interfered = true;
                Assert.Contains(batch, d => d.Id == compressedByApp); // read plain, by the tool
                using (var document = new RawBsonDocument(codec.Compress(appVersion.ToPlainBson())))
                    await raw.ReplaceOneAsync(new BsonDocument("_id", compressedByApp), document);
                await movies.UpdateOneAsync(new BsonDocument("_id", changed), new BsonDocument("$set", new BsonDocument("rating", 99.5)));
                await movies.DeleteOneAsync(new BsonDocument("_id", deleted));
            },
        };
        RewriteResult result = await rewriter.RunAsync(new LiveOutput(TextWriter.Null, TextWriter.Null, settings), CancellationToken.None);

        Assert.True(interfered);
        Assert.Equal(0, result.Failed);
        Assert.Equal(98, result.Written); // 97 as read, and the changed one from its new form
        Assert.Equal(2, result.Skipped); // compressed by the application meanwhile, and deleted meanwhile

        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        Assert.Equal(99, stored.Count);
        Assert.DoesNotContain(deleted, stored.Keys.Select(k => k.AsObjectId));
        await using var reader = new AdapterReader(fixture.Server.ConnectionString, db.Name, ns);
        Assert.Equal("Rewritten by the application", reader.Read(stored[compressedByApp]).Title);
        Assert.Equal(99.5, reader.Read(stored[changed]).Rating);
        foreach (var (id, bytes) in stored.Where(s => s.Key != compressedByApp && s.Key != changed))
            Assert.Equal(originals[id.AsObjectId], reader.Read(bytes).ToPlainBson());
        Assert.All(stored.Values, bytes => Assert.True(LiveData.IsCompressed(bytes)));
    }

    [Fact]
    public async Task Migrate_AnotherClientAddsAFieldOrChangesADottedOne_BetweenReadAndWrite_NothingIsLost()
    {
        // Found by review: the compare-and-swap filtered on each field the tool had read, so a field added by $set
        // meanwhile, or a change to a field whose name holds a dot (which a filter cannot name), still matched, and
        // the compressed copy of the old document replaced the new one. The filter is now the whole document.
        await using var db = fixture.Server.CreateDatabase("concurrent-added");
        string ns = $"{db.Name}.movies";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(db.Database, "movies", 40);
        var movies = db.Database.GetCollection<BsonDocument>("movies");
        var dotted = new BsonDocument { { "_id", ObjectId.GenerateNewId() }, { "title", "Dotted" }, { "price.usd", 10 } };
        await movies.InsertOneAsync(dotted);
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, ns);
        var settings = new LiveSettings { ConfigPath = config, BatchSize = 50 };
        await using MongoSession session = MongoSession.Open(settings);
        MongoNamespace live = Assert.Single(session.Namespaces);
        StoredDocumentCodec codec = await session.OpenAsync(live, CancellationToken.None);
        ObjectId added = originals.Keys.Order().First();

        var rewriter = new CollectionRewriter(session, live, codec, new RewriteOptions { Mode = RewriteMode.Compress }, settings)
        {
            BeforeWrite = async batch =>
            {
                Assert.Contains(batch, d => d.Id == added);
                await movies.UpdateOneAsync(new BsonDocument("_id", added), new BsonDocument("$set", new BsonDocument("addedByApp", "kept")));
                await movies.ReplaceOneAsync(new BsonDocument("_id", dotted["_id"]), new BsonDocument(dotted) { ["price.usd"] = 12 });
            },
        };
        RewriteResult result = await rewriter.RunAsync(new LiveOutput(TextWriter.Null, TextWriter.Null, settings), CancellationToken.None);

        Assert.Equal(0, result.Failed);
        Assert.Equal(41, result.Written); // the two changed ones from their new form
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        Assert.All(stored.Values, bytes => Assert.True(LiveData.IsCompressed(bytes)));
        BsonDocument addedNow = BsonSerializer.Deserialize<BsonDocument>(codec.Decode(stored[added]));
        Assert.Equal("kept", addedNow.GetValue("addedByApp", BsonNull.Value));
        BsonDocument dottedNow = BsonSerializer.Deserialize<BsonDocument>(codec.Decode(stored[dotted["_id"]]));
        Assert.Equal(12, dottedNow["price.usd"].AsInt32);
        foreach (var (id, bytes) in originals.Where(o => o.Key != added)) Assert.Equal(bytes, codec.Decode(stored[id]));
    }
}
