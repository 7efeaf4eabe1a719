using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests.EndToEnd;

public sealed class ClientA;

public sealed class ClientB;

public sealed class ClientC;

public sealed class ClientD;

/// <summary>
/// Independent application servers sharing one database: each client has its own <c>MongoClient</c>, its own engine and
/// store object, and starts cold. In one process each needs its own CLR type (the serializer registry is global), so
/// they write <see cref="Film{TTag}"/> of different tags: the same BSON in the same collection.
/// </summary>
public sealed class MultiClientTests(MongoFixture fixture, Xunit.Abstractions.ITestOutputHelper output) : IClassFixture<MongoFixture>
{
    private const int DocumentsPerWriter = 1500;

    private sealed class Client<T> : IAsyncDisposable
    {
        public Client(MongoTestServer server, string database, string collection)
        {
            Mongo = new MongoClient(server.CreateClientSettings());
            Database = Mongo.GetDatabase(database);
            Engine = E2e.Engine(Database);
            Namespace = Engine.GetNamespace($"{database}.{collection}");
            CompressedDocumentSerializer.Register<Film<T>>(Namespace);
            Collection = Database.GetCollection<Film<T>>(collection);
        }

        public MongoClient Mongo { get; }

        public IMongoDatabase Database { get; }

        public CompressionEngine Engine { get; }

        public CompressionNamespace Namespace { get; }

        public IMongoCollection<Film<T>> Collection { get; }

        public async ValueTask DisposeAsync()
        {
            await Engine.DisposeAsync();
            Mongo.Dispose();
        }
    }

    [Fact]
    public async Task ThreeClientsWritingAtOnce_PublishOneVersionPerRace_AndAFourthColdClientReadsEveryDocumentByteForByte()
    {
        await using var db = fixture.Server.CreateDatabase("e2e-clients");
        await using var a = new Client<ClientA>(fixture.Server, db.Name, "films");
        await using var b = new Client<ClientB>(fixture.Server, db.Name, "films");
        await using var c = new Client<ClientC>(fixture.Server, db.Name, "films");

        int[] trainings = new int[3];
        a.Engine.TrainingStarting = _ => Interlocked.Increment(ref trainings[0]);
        b.Engine.TrainingStarting = _ => Interlocked.Increment(ref trainings[1]);
        c.Engine.TrainingStarting = _ => Interlocked.Increment(ref trainings[2]);
        var expected = new Dictionary<ObjectId, byte[]>();
        var gate = new Lock();
        using var start = new ManualResetEventSlim();
        async Task Write<T>(Client<T> client, int writer)
        {
            start.Wait();
            var random = new Random(100 + writer);
            for (int i = 0; i < DocumentsPerWriter; i += 10)
            {
                var batch = Enumerable.Range(0, 10).Select(_ => E2e.NewFilm<T>(random, writer)).ToList();
                await client.Collection.InsertManyAsync(batch);
                lock (gate)
                {
                    foreach (var film in batch) expected.Add(film.Id, E2e.PlainBson(film));
                }
            }
        }

        var writers = new[] { Task.Run(() => Write(a, 1)), Task.Run(() => Write(b, 2)), Task.Run(() => Write(c, 3)) };
        start.Set();
        await Task.WhenAll(writers);
        await Task.WhenAll(a.Engine.WhenIdleAsync(), b.Engine.WhenIdleAsync(), c.Engine.WhenIdleAsync());

        // Every client trained, so every client took part in the race for version 1 (and lost it or won it cleanly).
        Assert.All(trainings, t => Assert.True(t > 0));

        // The store: versions 1..n of the namespace, one document each, no gaps, whoever won each race.
        var store = new MongoDictionaryStore(db.Database);
        var versions = new List<DictionaryRecord>();
        await foreach (var record in store.ListAsync($"{db.Name}.films")) versions.Add(record);
        Assert.NotEmpty(versions);
        Assert.Equal(Enumerable.Range(1, versions.Count), versions.Select(v => v.Version));
        Assert.Equal(versions.Count, versions.Select(v => v.Id).Distinct().Count());
        Assert.Equal(versions.Count, await db.Database.GetCollection<BsonDocument>(MongoDictionaryStore.CollectionName).CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));

        // Every dictionary an envelope names was published: nothing was written that others cannot read.
        var raw = await db.Database.GetCollection<BsonDocument>("films").Find(FilterDefinition<BsonDocument>.Empty).ToListAsync();
        Assert.Equal(3 * DocumentsPerWriter, raw.Count);
        var named = raw.Select(d => { DocumentEnvelope.TryReadHeader(E2e.Envelope(d), out EnvelopeHeader h); return h.DictionaryId; }).Where(id => id is not null).Select(id => id!.Value).ToHashSet();
        Assert.NotEmpty(named);
        Assert.Subset(versions.Select(v => v.Id).ToHashSet(), named);
        output.WriteLine($"{versions.Count} version(s) published; envelopes name {named.Count} dictionary id(s); training runs per client: {string.Join(", ", trainings)}.");

        // After a refresh the three clients agree on the newest version.
        await Task.WhenAll(a.Namespace.RefreshAsync(), b.Namespace.RefreshAsync(), c.Namespace.RefreshAsync());
        Assert.All(new[] { a.Namespace, b.Namespace, c.Namespace }, ns => Assert.Equal(versions[^1].Id, ns.CurrentDictionary?.Id));

        // A fourth client, cold: its own client, engine and store object, nothing cached; reads every document.
        await using var d = new Client<ClientD>(fixture.Server, db.Name, "films");
        int read = 0;
        using (var cursor = await d.Collection.Find(FilterDefinition<Film<ClientD>>.Empty).ToCursorAsync())
        {
            while (await cursor.MoveNextAsync())
            {
                foreach (var film in cursor.Current)
                {
                    Assert.Equal(expected[film.Id], E2e.PlainBson(film));
                    read++;
                }
            }
        }
        Assert.Equal(expected.Count, read);
    }
}
