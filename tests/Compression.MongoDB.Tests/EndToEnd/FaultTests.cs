using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests.EndToEnd;

public sealed class FaultLoadWriter;

public sealed class FaultLoadReader;

public sealed class StoreDownWriter;

public sealed class StoreDownReader;

public sealed class MissingWriter;

public sealed class MissingReader;

/// <summary>A store that can be switched off (every call fails as an unreachable server would) and counts lookups by id.</summary>
internal sealed class SwitchableStore(DictionaryStore inner) : DictionaryStore
{
    private int _gets;

    public volatile bool Down;

    public int Gets => Volatile.Read(ref _gets);

    public override string Location => inner.Location;

    public override bool CanGetSynchronously => inner.CanGetSynchronously;

    public override DictionaryRecord? Get(uint id)
    {
        Interlocked.Increment(ref _gets);
        ThrowIfDown();
        return inner.Get(id);
    }

    public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _gets);
        ThrowIfDown();
        return inner.GetAsync(id, cancellationToken);
    }

    public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        ThrowIfDown();
        return inner.GetCurrentAsync(@namespace, cancellationToken);
    }

    public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ThrowIfDown();
        return inner.PublishAsync(candidate, cancellationToken);
    }

    public override IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default)
    {
        ThrowIfDown();
        return inner.ListAsync(@namespace, cancellationToken);
    }

    private void ThrowIfDown()
    {
        if (Down) throw new TimeoutException($"{Location} is unreachable (test fault).");
    }
}

/// <summary>
/// Faults through the real driver. They need the loopback server's fault switches, so each test runs its own loopback
/// server whatever COMPRESSION_TEST_MONGODB_URI says. Nothing waits on the clock: faults fire at write counts.
/// </summary>
public sealed class FaultTests(Xunit.Abstractions.ITestOutputHelper output)
{
    private static MongoClient Client(MongoLoopbackServer server) => new(new MongoClientSettings
    {
        Server = new MongoServerAddress("127.0.0.1", server.Port),
        DirectConnection = true,
        ServerSelectionTimeout = TimeSpan.FromSeconds(10),
        ConnectTimeout = TimeSpan.FromSeconds(5),
        HeartbeatInterval = TimeSpan.FromMilliseconds(500),
    });

    /// <summary>What an application does on a network error: try again; a duplicate key means an earlier attempt landed.</summary>
    private static async Task<int> InsertWithRetriesAsync<T>(IMongoCollection<T> collection, T document)
    {
        for (int attempt = 0; ; attempt++)
        {
            try
            {
                await collection.InsertOneAsync(document);
                return attempt;
            }
            catch (MongoWriteException e) when (e.WriteError.Category == ServerErrorCategory.DuplicateKey)
            {
                return attempt; // the attempt whose reply was lost had landed
            }
            catch (Exception e) when (e is MongoConnectionException or TimeoutException or MongoNodeIsRecoveringException && attempt < 20)
            {
            }
        }
    }

    [Fact]
    public async Task ConnectionsDroppedMidLoad_AndServerRestarted_EveryAcknowledgedDocumentIsThereAndReadable()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = Client(server);
        var database = client.GetDatabase("faults");
        await using var engine = E2e.Engine(database);
        CompressedDocumentSerializer.Register<Film<FaultLoadWriter>>(engine.GetNamespace("faults.films"));
        var films = database.GetCollection<Film<FaultLoadWriter>>("films");

        var acknowledged = new System.Collections.Concurrent.ConcurrentDictionary<ObjectId, byte[]>();
        int completed = 0, retried = 0, dropped = 0;
        Task restart = Task.CompletedTask;
        using var start = new ManualResetEventSlim();
        async Task Writer(int writer)
        {
            start.Wait();
            var random = new Random(writer);
            for (int i = 0; i < 300; i++)
            {
                var film = E2e.NewFilm<FaultLoadWriter>(random, writer);
                if (await InsertWithRetriesAsync(films, film) > 0) Interlocked.Increment(ref retried);
                acknowledged[film.Id] = E2e.PlainBson(film);
                int done = Interlocked.Increment(ref completed);
                if (done == 300) Volatile.Write(ref dropped, server.DropAllConnections());
                if (done == 700) restart = Task.Run(async () => { await server.StopAsync(); await server.StartAsync(); });
            }
        }

        var writers = Enumerable.Range(1, 4).Select(w => Task.Run(() => Writer(w))).ToArray();
        start.Set();
        await Task.WhenAll(writers);
        await restart;
        await engine.WhenIdleAsync();

        output.WriteLine($"{dropped} connections dropped, {retried} writes retried, {server.ConnectionsAccepted} connections accepted.");
        Assert.True(dropped > 0, "connections were open when they were dropped");
        Assert.True(retried > 0, "some writes saw the faults and were retried");
        Assert.Equal(1200, acknowledged.Count);
        Assert.Equal(1200, await database.GetCollection<BsonDocument>("films").CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));

        // A cold client after the faults reads every acknowledged document, byte for byte.
        using var coldClient = Client(server);
        var coldDatabase = coldClient.GetDatabase("faults");
        await using var cold = E2e.Engine(coldDatabase);
        CompressedDocumentSerializer.Register<Film<FaultLoadReader>>(cold.GetNamespace("faults.films"));
        var all = await coldDatabase.GetCollection<Film<FaultLoadReader>>("films").Find(FilterDefinition<Film<FaultLoadReader>>.Empty).ToListAsync();
        Assert.Equal(acknowledged.Count, all.Count);
        Assert.All(all, f => Assert.Equal(acknowledged[f.Id], E2e.PlainBson(f)));
        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task DictionaryStoreUnreachable_WritesGoOn_AndPublicationHappensWhenItComesBack()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = Client(server);
        var database = client.GetDatabase("storedown");
        var store = new SwitchableStore(new MongoDictionaryStore(database)) { Down = true };
        await using var engine = E2e.Engine(database, store);
        CompressionNamespace ns = engine.GetNamespace("storedown.films");
        CompressedDocumentSerializer.Register<Film<StoreDownWriter>>(ns);
        var films = database.GetCollection<Film<StoreDownWriter>>("films");
        var expected = new Dictionary<ObjectId, byte[]>();
        var random = new Random(7);

        for (int i = 0; i < 600; i++)
        {
            var film = E2e.NewFilm<StoreDownWriter>(random);
            await films.InsertOneAsync(film); // never blocked or failed by the store
            expected.Add(film.Id, E2e.PlainBson(film));
        }
        await engine.WhenIdleAsync();
        Assert.Null(ns.CurrentDictionary); // trained, but nothing unpublished is ever used
        var dictionaries = database.GetCollection<BsonDocument>(MongoDictionaryStore.CollectionName);
        Assert.Equal(0, await dictionaries.CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));

        store.Down = false;
        for (int i = 0; i < 50; i++)
        {
            var film = E2e.NewFilm<StoreDownWriter>(random);
            await films.InsertOneAsync(film);
            expected.Add(film.Id, E2e.PlainBson(film));
        }
        await engine.WhenIdleAsync();
        Assert.NotNull(ns.CurrentDictionary);
        Assert.True(await dictionaries.CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty) >= 1);
        var after = E2e.NewFilm<StoreDownWriter>(random);
        await films.InsertOneAsync(after);
        expected.Add(after.Id, E2e.PlainBson(after));
        var stored = await database.GetCollection<BsonDocument>("films").Find(new BsonDocument("_id", after.Id)).SingleAsync();
        Assert.True(DocumentEnvelope.TryReadHeader(E2e.Envelope(stored), out EnvelopeHeader header));
        Assert.Equal(ns.CurrentDictionary!.Id, header.DictionaryId);

        using var coldClient = Client(server);
        var coldDatabase = coldClient.GetDatabase("storedown");
        await using var cold = E2e.Engine(coldDatabase);
        CompressedDocumentSerializer.Register<Film<StoreDownReader>>(cold.GetNamespace("storedown.films"));
        var all = await coldDatabase.GetCollection<Film<StoreDownReader>>("films").Find(FilterDefinition<Film<StoreDownReader>>.Empty).ToListAsync();
        Assert.Equal(expected.Count, all.Count);
        Assert.All(all, f => Assert.Equal(expected[f.Id], E2e.PlainBson(f)));
    }

    [Fact]
    public async Task MissingDictionary_FailsTheReadNamingTheIdAndTheDictionary_AndTheStoreIsAskedOnce()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = Client(server);
        var database = client.GetDatabase("missing");
        await using var engine = E2e.Engine(database);
        CompressionNamespace ns = engine.GetNamespace("missing.films");
        CompressedDocumentSerializer.Register<Film<MissingWriter>>(ns);
        var films = database.GetCollection<Film<MissingWriter>>("films");
        var random = new Random(8);
        await films.InsertManyAsync(Enumerable.Range(0, 400).Select(_ => E2e.NewFilm<MissingWriter>(random)));
        await engine.WhenIdleAsync();
        uint dictionaryId = ns.CurrentDictionary?.Id ?? throw new InvalidOperationException("no dictionary was trained");
        var named = Enumerable.Range(0, 5).Select(_ => E2e.NewFilm<MissingWriter>(random)).ToList();
        await films.InsertManyAsync(named);

        // The dictionary is lost (someone deleted it by hand: this library never does).
        await database.GetCollection<BsonDocument>(MongoDictionaryStore.CollectionName).DeleteManyAsync(FilterDefinition<BsonDocument>.Empty);

        using var coldClient = Client(server);
        var coldDatabase = coldClient.GetDatabase("missing");
        var store = new SwitchableStore(new MongoDictionaryStore(coldDatabase));
        await using var cold = E2e.Engine(coldDatabase, store);
        CompressedDocumentSerializer.Register<Film<MissingReader>>(cold.GetNamespace("missing.films"));
        var reader = coldDatabase.GetCollection<Film<MissingReader>>("films");
        await cold.WhenIdleAsync();
        int getsBefore = store.Gets;

        foreach (var film in named)
        {
            Exception ex = await Assert.ThrowsAnyAsync<Exception>(() => reader.Find(f => f.Id == film.Id).SingleAsync());
            var missing = Assert.IsType<DictionaryNotFoundException>(ex is DictionaryNotFoundException ? ex : ex.InnerException);
            Assert.Equal(dictionaryId, missing.DictionaryId);
            Assert.Contains($"Zstd dictionary {dictionaryId} was not found in namespace 'missing.films'", missing.Message, StringComparison.Ordinal);
            Assert.Contains($"document _id {film.Id} needs it", missing.Message, StringComparison.Ordinal);
        }
        Assert.Equal(1, store.Gets - getsBefore); // one lookup; the miss is remembered for the others
    }
}
