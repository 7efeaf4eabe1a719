using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests.EndToEnd;

/// <summary>Tag of the typed collection of <see cref="BulkLoadTrainingTests"/>: its own CLR type, so its own serializer registration.</summary>
public sealed class BulkLoadTag;

/// <summary>
/// <c>collection.TrainCompressionAsync(batch)</c> before a bulk load (issue #40: 2,300 of the sample's 3,201 documents
/// went out before background training had a dictionary): the batch goes out with a dictionary trained from what the
/// serializer compresses, with the real driver over real sockets.
/// </summary>
public sealed class BulkLoadTrainingTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private MongoTestServer Server => fixture.Server;

    [Fact]
    public async Task TypedCollection_ABatchTrainedFromBeforeItIsWritten_GoesOutWithTheDictionary()
    {
        await using var db = Server.CreateDatabase("bulk-typed");
        await using var engine = E2e.Engine(db.Database);
        CompressedDocumentSerializer.Register<Film<BulkLoadTag>>(engine.GetNamespace($"{db.Name}.films"), new CompressedDocumentOptions { ClearFields = E2e.ClearFields });
        IMongoCollection<Film<BulkLoadTag>> films = db.Database.GetCollection<Film<BulkLoadTag>>("films");
        var random = new Random(5);
        List<Film<BulkLoadTag>> batch = [.. Enumerable.Range(0, 300).Select(_ => E2e.NewFilm<BulkLoadTag>(random))];

        TrainingResult training = await films.TrainCompressionAsync(batch);

        Assert.Equal(TrainingOutcome.Adopted, training.Outcome);
        await films.InsertManyAsync(batch);
        await AssertEveryEnvelopeNamesAsync(db.Database.GetCollection<RawBsonDocument>("films"), training.Dictionary!.Id, batch.Count);
        var back = await films.Find(FilterDefinition<Film<BulkLoadTag>>.Empty).ToListAsync();
        Assert.Equal(batch.Select(Fields), back.OrderBy(f => batch.FindIndex(b => b.Id == f.Id)).Select(Fields));
    }

    [Fact]
    public async Task SchemalessCollection_ABatchTrainedFromBeforeItIsWritten_GoesOutWithTheDictionary()
    {
        await using var db = Server.CreateDatabase("bulk-raw");
        await using var engine = E2e.Engine(db.Database);
        IMongoCollection<BsonDocument> events = db.Database.GetCompressedCollection<BsonDocument>("events", engine, new CompressedDocumentOptions { ClearFields = ["kind"] });
        List<BsonDocument> batch = [.. Enumerable.Range(0, 300).Select(i => new BsonDocument
        {
            { "_id", i },
            { "kind", i % 4 == 0 ? "login" : "view" },
            { "path", $"/catalog/items/{i % 37}/reviews?page={i % 5}" },
            { "agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36" },
            { "at", new BsonDateTime(new DateTime(2026, 12, 7, 0, 0, 0, DateTimeKind.Utc).AddSeconds(i * 17)) },
        })];

        TrainingResult training = await events.TrainCompressionAsync(batch);

        Assert.Equal(TrainingOutcome.Adopted, training.Outcome);
        await events.InsertManyAsync(batch.Select(d => d.DeepClone().AsBsonDocument));
        await AssertEveryEnvelopeNamesAsync(db.Database.GetCollection<RawBsonDocument>("events"), training.Dictionary!.Id, batch.Count);
        var back = await events.Find(FilterDefinition<BsonDocument>.Empty).SortBy(d => d["_id"]).ToListAsync();
        Assert.Equal(batch.Select(d => d.ToBson()), back.Select(d => d.ToBson()));
    }

    [Fact]
    public async Task APlainCollection_IsRefused_SayingWhatToDo()
    {
        await using var db = Server.CreateDatabase("bulk-plain");
        IMongoCollection<BsonDocument> plain = db.Database.GetCollection<BsonDocument>("plain");

        var ex = await Assert.ThrowsAsync<ArgumentException>(() => plain.TrainCompressionAsync([new BsonDocument("a", 1)]));

        Assert.Contains($"Collection '{db.Name}.plain' is not compressed", ex.Message, StringComparison.Ordinal);
        Assert.Contains("GetCompressedCollection", ex.Message, StringComparison.Ordinal);
    }

    private static string Fields(Film<BulkLoadTag> f) =>
        $"{f.Id}|{f.Title}|{f.Year}|{f.Genre}|{f.Plot}|{string.Join(',', f.Cast)}|{f.Rating?.ToString(System.Globalization.CultureInfo.InvariantCulture)}|{f.Writer}";

    private static async Task AssertEveryEnvelopeNamesAsync(IMongoCollection<RawBsonDocument> stored, uint dictionaryId, int count)
    {
        int seen = 0;
        foreach (RawBsonDocument document in await stored.Find(FilterDefinition<RawBsonDocument>.Empty).ToListAsync())
        {
            Assert.True(DocumentEnvelope.TryReadHeader(document["_z"].AsBsonBinaryData.Bytes, out EnvelopeHeader header));
            Assert.Equal(dictionaryId, header.DictionaryId);
            seen++;
        }
        Assert.Equal(count, seen);
    }
}
