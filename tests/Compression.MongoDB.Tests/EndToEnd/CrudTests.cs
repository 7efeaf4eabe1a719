using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using MongoDB.Driver.Linq;
using Xunit;

namespace Compression.MongoDB.Tests.EndToEnd;

public sealed class CrudTag;

public sealed class CrudOffTag;

/// <summary>One database and one engine for <see cref="CrudTests"/>; the serializers are registered once per process.</summary>
public sealed class CrudFixture : IAsyncLifetime
{
    private static readonly Lock Gate = new();
    private static CrudFixture? s_registered;

    public MongoTestServer Server { get; private set; } = null!;

    public MongoTestDatabase Db { get; private set; } = null!;

    public CompressionEngine Engine { get; private set; } = null!;

    public string Namespace => $"{Db.Name}.films";

    public IMongoCollection<Film<CrudTag>> Films => Db.Database.GetCollection<Film<CrudTag>>("films");

    /// <summary>The same collection through a type registered with compression switched off.</summary>
    public IMongoCollection<Film<CrudOffTag>> FilmsPlain => Db.Database.GetCollection<Film<CrudOffTag>>("films");

    public IMongoCollection<BsonDocument> Raw => Db.Database.GetCollection<BsonDocument>("films");

    public async Task InitializeAsync()
    {
        Server = await MongoTestServer.StartAsync();
        Db = Server.CreateDatabase("e2e-crud");
        Engine = E2e.Engine(Db.Database);
        lock (Gate)
        {
            if (s_registered is not null) throw new InvalidOperationException("CrudFixture is created once per process: its types' serializers are global.");
            s_registered = this;
            CompressionNamespace ns = Engine.GetNamespace(Namespace);
            CompressedDocumentSerializer.Register<Film<CrudTag>>(ns);
            CompressedDocumentSerializer.Register<Film<CrudOffTag>>(ns, new CompressedDocumentOptions { ClearFields = [.. ns.AdapterSettings["ClearFields"]], Compress = false });
        }
    }

    public async Task DisposeAsync()
    {
        await Engine.DisposeAsync();
        await Db.DisposeAsync();
        var failures = Server.Loopback?.Failures ?? [];
        await Server.DisposeAsync();
        Assert.Empty(failures);
    }
}

/// <summary>Every CRUD operation through <c>MongoClient</c> for a compressed type, against the loopback server or a real one.</summary>
[Collection(nameof(CrudTests))]
public sealed class CrudTests(CrudFixture fixture) : IClassFixture<CrudFixture>
{
    private IMongoCollection<Film<CrudTag>> Films => fixture.Films;

    private static void AssertSame(Film<CrudTag> expected, Film<CrudTag> actual) => Assert.Equal(E2e.PlainBson(expected), E2e.PlainBson(actual));

    [Fact]
    public async Task InsertFindReplaceUpdateDelete_RoundTrip_WithOnlyClearFieldsVisibleToTheServer()
    {
        var random = new Random(1);
        var film = E2e.NewFilm<CrudTag>(random);
        await Films.InsertOneAsync(film);

        BsonDocument stored = await fixture.Raw.Find(new BsonDocument("_id", film.Id)).SingleAsync();
        Assert.Equal(["_id", "Title", "Year", "genre", "Writer", "_z"], stored.Names.ToArray());
        Assert.Equal((BsonBinarySubType)0x81, stored["_z"].AsBsonBinaryData.SubType); // envelope format v2: elements only
        AssertSame(film, await Films.Find(f => f.Id == film.Id).SingleAsync());

        var replacement = E2e.NewFilm<CrudTag>(random);
        replacement.Id = film.Id;
        ReplaceOneResult replaced = await Films.ReplaceOneAsync(f => f.Id == film.Id, replacement);
        Assert.Equal(1, replaced.ModifiedCount);
        AssertSame(replacement, await Films.Find(f => f.Id == film.Id).SingleAsync());

        // $set on a clear field: the server changes it in place, the compressed part is untouched and the new value wins.
        UpdateResult updated = await Films.UpdateOneAsync(f => f.Id == film.Id, Builders<Film<CrudTag>>.Update.Set(f => f.Genre, "Noir").Inc(f => f.Year, 1));
        Assert.Equal(1, updated.ModifiedCount);
        Film<CrudTag> afterUpdate = await Films.Find(f => f.Id == film.Id).SingleAsync();
        Assert.Equal("Noir", afterUpdate.Genre);
        Assert.Equal(replacement.Year + 1, afterUpdate.Year);
        Assert.Equal(replacement.Plot, afterUpdate.Plot);

        Film<CrudTag> returned = await Films.FindOneAndUpdateAsync(f => f.Id == film.Id, Builders<Film<CrudTag>>.Update.Set(f => f.Title, "Renamed"),
            new FindOneAndUpdateOptions<Film<CrudTag>> { ReturnDocument = ReturnDocument.After });
        Assert.Equal("Renamed", returned.Title);
        Assert.Equal(replacement.Cast, returned.Cast);
        Film<CrudTag> before = await Films.FindOneAndUpdateAsync(f => f.Id == film.Id, Builders<Film<CrudTag>>.Update.Set(f => f.Writer, 9));
        Assert.Equal("Renamed", before.Title);
        Assert.Equal(0, before.Writer);

        Assert.Equal(1, await Films.CountDocumentsAsync(f => f.Title == "Renamed"));
        DeleteResult deleted = await Films.DeleteOneAsync(f => f.Id == film.Id);
        Assert.Equal(1, deleted.DeletedCount);
        Assert.Equal(0, await Films.CountDocumentsAsync(f => f.Id == film.Id));
        Assert.Null(await Films.FindOneAndDeleteAsync(f => f.Id == film.Id));
    }

    [Fact]
    public async Task FiltersSortsAndLinq_OnClearFields_MatchWhatTheDocumentsSay()
    {
        var random = new Random(2);
        var films = Enumerable.Range(0, 300).Select(_ => E2e.NewFilm<CrudTag>(random)).ToList();
        foreach (var f in films) f.Writer = 2; // this test's documents
        await Films.InsertManyAsync(films);

        var drama = await Films.Find(f => f.Writer == 2 && f.Genre == "Drama" && f.Year >= 1990).SortByDescending(f => f.Year).ThenBy(f => f.Title).ToListAsync();
        var expected = films.Where(f => f.Genre == "Drama" && f.Year >= 1990).OrderByDescending(f => f.Year).ThenBy(f => f.Title, StringComparer.Ordinal).ToList();
        Assert.NotEmpty(expected);
        Assert.Equal(expected.Select(E2e.PlainBson), drama.Select(E2e.PlainBson));

        var linq = await Films.AsQueryable().Where(f => f.Writer == 2 && f.Year < 1970).OrderBy(f => f.Year).ThenBy(f => f.Title).Take(7).ToListAsync();
        Assert.Equal(films.Where(f => f.Year < 1970).OrderBy(f => f.Year).ThenBy(f => f.Title, StringComparer.Ordinal).Take(7).Select(E2e.PlainBson), linq.Select(E2e.PlainBson));

        string[] genres = ["Comedy", "Action"];
        Assert.Equal(films.Count(f => genres.Contains(f.Genre)), await Films.CountDocumentsAsync(Builders<Film<CrudTag>>.Filter.In(f => f.Genre, genres) & Builders<Film<CrudTag>>.Filter.Eq(f => f.Writer, 2)));
        Assert.Equal(films.Count(f => f.Year > 2000), await Films.AsQueryable().Where(f => f.Writer == 2 && f.Year > 2000).CountAsync());
        var page = await Films.Find(f => f.Writer == 2).SortBy(f => f.Title).Skip(10).Limit(5).ToListAsync();
        Assert.Equal(films.OrderBy(f => f.Title, StringComparer.Ordinal).Skip(10).Take(5).Select(f => f.Title), page.Select(f => f.Title));
    }

    [Fact]
    public async Task LinqExpressionOrStringFilterOnACompressedField_FailsLoudly()
    {
        await Films.InsertOneAsync(new Film<CrudTag> { Id = ObjectId.GenerateNewId(), Plot = "findable plot", Writer = 3 });

        var linq = Assert.Throws<InvalidOperationException>(() => Films.AsQueryable().Where(f => f.Plot == "findable plot").ToList());
        Assert.Contains("Member 'Plot' of Film`1 is compressed", linq.Message, StringComparison.Ordinal);
        var expression = Assert.Throws<InvalidOperationException>(() => Films.Find(f => f.Rating > 5).ToList());
        Assert.Contains("'Rating'", expression.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => Films.Find(f => f.Writer == 3).SortBy(f => f.Plot).ToList());

        // MongoDB.Driver 3.14 resolves a string field name through the serializer too, so it fails the same way (it does not
        // silently match nothing); only a filter sent through an untyped collection can name a field the server cannot see.
        var byName = await Assert.ThrowsAsync<InvalidOperationException>(() => Films.CountDocumentsAsync(Builders<Film<CrudTag>>.Filter.Eq("Plot", "findable plot")));
        Assert.Contains("Member 'Plot'", byName.Message, StringComparison.Ordinal);
        Assert.Equal(0, await fixture.Raw.CountDocumentsAsync(new BsonDocument("Plot", "findable plot")));
    }

    [Fact]
    public async Task BulkWriteOf10000Documents_TrainsADictionary_AndEveryDocumentReadsBack()
    {
        var random = new Random(4);
        var films = Enumerable.Range(0, 10_000).Select(_ => E2e.NewFilm<CrudTag>(random, writer: 4)).ToList();
        BulkWriteResult<Film<CrudTag>> result = await Films.BulkWriteAsync(films.Select(f => new InsertOneModel<Film<CrudTag>>(f)));
        Assert.Equal(10_000, result.InsertedCount);
        await fixture.Engine.WhenIdleAsync();

        Assert.NotNull(fixture.Engine.GetNamespace(fixture.Namespace).CurrentDictionary);
        var byId = films.ToDictionary(f => f.Id);
        int read = 0;
        using (var cursor = await Films.Find(f => f.Writer == 4).ToCursorAsync())
        {
            while (await cursor.MoveNextAsync())
            {
                foreach (var film in cursor.Current)
                {
                    Assert.Equal(E2e.PlainBson(byId[film.Id]), E2e.PlainBson(film));
                    read++;
                }
            }
        }
        Assert.Equal(10_000, read);

        // Documents written after the adoption name the dictionary in their envelopes. (Not the bulk's last one: training
        // runs in the background, and on a loaded machine the bulk can finish before the dictionary is adopted.)
        var after = E2e.NewFilm<CrudTag>(random, writer: 7);
        await Films.InsertOneAsync(after);
        var last = await fixture.Raw.Find(new BsonDocument("_id", after.Id)).SingleAsync();
        Assert.True(DocumentEnvelope.TryReadHeader(E2e.Envelope(last), out EnvelopeHeader header));
        Assert.NotNull(header.DictionaryId);
        Assert.NotNull(await new MongoDictionaryStore(fixture.Db.Database).GetAsync(header.DictionaryId!.Value));
    }

    [Fact]
    public async Task LegacyPlainDocuments_InsertedAsBsonDocument_ReadThroughTheCompressedType()
    {
        var random = new Random(5);
        var legacy = Enumerable.Range(0, 20).Select(_ => E2e.NewFilm<CrudTag>(random, writer: 5)).ToList();
        await fixture.Raw.InsertManyAsync(legacy.Select(f => BsonDocument.Parse("{}").AddRange(new RawBsonDocument(E2e.PlainBson(f)))));
        var compressed = E2e.NewFilm<CrudTag>(random, writer: 5);
        await Films.InsertOneAsync(compressed);

        var all = await Films.Find(f => f.Writer == 5).ToListAsync();
        Assert.Equal(legacy.Append(compressed).Select(E2e.PlainBson).Order(ByteArrays.Comparer), all.Select(E2e.PlainBson).Order(ByteArrays.Comparer));
        Assert.Equal(20, await fixture.Raw.CountDocumentsAsync(new BsonDocument { { "Writer", 5 }, { "_z", new BsonDocument("$exists", false) } }));
    }

    [Fact]
    public async Task CompressionSwitchedOffAndOn_EveryDocumentStaysReadableThroughEitherType()
    {
        var random = new Random(6);
        var on1 = Enumerable.Range(0, 10).Select(_ => E2e.NewFilm<CrudTag>(random, writer: 6)).ToList();
        await Films.InsertManyAsync(on1);
        var off = Enumerable.Range(0, 10).Select(_ => E2e.NewFilm<CrudOffTag>(random, writer: 6)).ToList();
        await fixture.FilmsPlain.InsertManyAsync(off); // switched off: written plain
        var on2 = Enumerable.Range(0, 10).Select(_ => E2e.NewFilm<CrudTag>(random, writer: 6)).ToList();
        await Films.InsertManyAsync(on2); // and on again

        Assert.Equal(10, await fixture.Raw.CountDocumentsAsync(new BsonDocument { { "Writer", 6 }, { "_z", new BsonDocument("$exists", false) } }));
        var expected = on1.Select(E2e.PlainBson).Concat(off.Select(E2e.PlainBson)).Concat(on2.Select(E2e.PlainBson)).Order(ByteArrays.Comparer).ToList();
        Assert.Equal(expected, (await Films.Find(f => f.Writer == 6).ToListAsync()).Select(E2e.PlainBson).Order(ByteArrays.Comparer));
        Assert.Equal(expected, (await fixture.FilmsPlain.Find(f => f.Writer == 6).ToListAsync()).Select(E2e.PlainBson).Order(ByteArrays.Comparer));
    }
}

internal sealed class ByteArrays : IComparer<byte[]>
{
    public static readonly ByteArrays Comparer = new();

    public int Compare(byte[]? x, byte[]? y) => x.AsSpan().SequenceCompareTo(y);
}
