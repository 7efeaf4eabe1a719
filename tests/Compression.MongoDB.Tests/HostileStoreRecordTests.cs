using System.Collections.Concurrent;
using System.Text;
using Compression.Dictionaries;
using Compression.Tests.Shared;
using Compression.Testing.Mongo;
using Microsoft.Extensions.Logging;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>
/// One record a peer writes to the shared store must never block another client's namespace: records whose version is
/// not a whole number in range are never current, records that do not read or do not validate are skipped and reported
/// once, the newest valid version is current, and publication goes past versions held by invalid records. Through the
/// real driver against the loopback server (or COMPRESSION_TEST_MONGODB_URI).
/// </summary>
public sealed class HostileStoreRecordTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private const string Ns = "shop.orders";

    private static byte[] Movie(Random random, int i) => Encoding.UTF8.GetBytes(
        $$"""{"title":"The {{Pick(random, Words)}} {{Pick(random, Words)}} {{i}}","year":{{1950 + random.Next(75)}},"genres":["{{Pick(random, Genres)}}","{{Pick(random, Genres)}}"],"rating":{{random.Next(100) / 10.0:0.0}},"plot":"{{string.Join(' ', Enumerable.Range(0, 10 + random.Next(10)).Select(_ => Pick(random, Words)))}}"}""");

    private static byte[] Reading(Random random, int i) => Encoding.UTF8.GetBytes(
        $$"""{"sensor":"st-{{random.Next(40):000}}","region":"{{Pick(random, Regions)}}","seq":{{i}},"celsius":{{random.Next(-200, 400) / 10.0:0.0}},"status":"{{Pick(random, Statuses)}}","firmware":"v2.{{random.Next(9)}}.{{random.Next(20)}}","tags":["{{Pick(random, Statuses)}}","calibrated"]}""");

    private static readonly string[] Words = ["a", "young", "detective", "returns", "to", "the", "small", "town", "where", "her", "family", "hides", "old", "secret"];
    private static readonly string[] Genres = ["Drama", "Comedy", "Action", "Thriller", "Romance", "Horror"];
    private static readonly string[] Regions = ["eu-west-1", "us-east-2", "ap-south-1", "sa-east-1"];
    private static readonly string[] Statuses = ["nominal", "degraded", "offline", "maintenance"];

    private static string Pick(Random random, string[] from) => from[random.Next(from.Length)];

    /// <summary>An engine that has published version 1 of <see cref="Ns"/> into the database's store.</summary>
    private static async Task<DictionaryRecord> PublishVersionOneAsync(IMongoDatabase database)
    {
        await using var engine = new CompressionEngine(new MongoDictionaryStore(database));
        CompressionNamespace ns = engine.GetNamespace(Ns);
        var random = new Random(1);
        for (int i = 0; i < 600; i++) ns.Compress(Movie(random, i));
        await engine.WhenIdleAsync();
        Assert.Equal(1, ns.CurrentDictionary?.Version);
        return (await new MongoDictionaryStore(database).GetCurrentAsync(Ns))!;
    }

    private static IMongoCollection<BsonDocument> Raw(IMongoDatabase database) => database.GetCollection<BsonDocument>(MongoDictionaryStore.CollectionName);

    /// <summary>A copy of version 1 under another id, with its <c>v</c> replaced.</summary>
    private static async Task InsertCopyAsync(IMongoDatabase database, DictionaryRecord v1, long id, BsonValue version, Action<BsonDocument>? damage = null)
    {
        BsonDocument copy = await Raw(database).Find(new BsonDocument("_id", (long)v1.Id)).FirstAsync();
        copy["_id"] = id;
        copy["v"] = version;
        damage?.Invoke(copy);
        await Raw(database).InsertOneAsync(copy);
    }

    public static TheoryData<string, BsonValue> VersionsAboveEveryValidOne() => new()
    {
        { "a string", "x" },
        { "a huge double", 1e300 },
        { "a huge Decimal128", new BsonDecimal128(Decimal128.Parse("1E+30")) },
        { "a long past Int32", 5_000_000_000L },
        { "Int32.MaxValue", int.MaxValue },
        { "one past the ceiling", DictionaryRecord.MaxVersion + 1 },
    };

    [Theory]
    [MemberData(nameof(VersionsAboveEveryValidOne))]
    public async Task PeerRecordWithAVersionOutOfRange_IsNeverCurrent_NewClientsAdoptV1_AndTrainingPublishesV2(string what, BsonValue version)
    {
        // Found by review: such a record sorted above every valid version; GetCurrentAsync returned it and refused it, a new
        // client never adopted v1, and every training ended in PublishFailed. At int.MaxValue (a valid copy of v1) it was
        // adopted, and every later publication failed because Version + 1 wrapped.
        await using var db = fixture.Server.CreateDatabase("hostile-v");
        DictionaryRecord v1 = await PublishVersionOneAsync(db.Database);
        await InsertCopyAsync(db.Database, v1, id: 4_000_000_001, version);

        var logs = new CollectingLoggerProvider();
        using var loggerFactory = LoggerFactory.Create(b => b.AddProvider(logs));
        await using var engine = new CompressionEngine(new MongoDictionaryStore(db.Database), loggerFactory: loggerFactory);
        CompressionNamespace ns = engine.GetNamespace(Ns);
        await ns.RefreshAsync();
        Assert.Equal((v1.Id, 1), (ns.CurrentDictionary!.Id, ns.CurrentDictionary.Version));

        // Documents of another kind: a candidate clearly better than v1, so training publishes.
        var random = new Random(2);
        for (int i = 0; i < 600; i++) ns.Compress(Reading(random, i));
        await engine.WhenIdleAsync();
        // (Background training during those writes publishes version 2; a run now may publish 3.)
        TrainingResult result = await ns.TrainAsync();
        Assert.True(ns.CurrentDictionary.Version >= 2, $"{what}: current is version {ns.CurrentDictionary.Version}, last training {result.Outcome}");
        DictionaryRecord current = (await new MongoDictionaryStore(db.Database).GetCurrentAsync(Ns))!;
        Assert.Equal((ns.CurrentDictionary.Id, ns.CurrentDictionary.Version), (current.Id, current.Version));
        Assert.DoesNotContain(logs.Messages, m => m.Contains("Publishing dictionary", StringComparison.Ordinal) && m.Contains("failed", StringComparison.Ordinal));
    }

    [Fact]
    public async Task PeerRecordsThatDoNotReadOrDoNotValidate_AreSkippedAndReportedOnce_AndPublicationGoesAboveThem()
    {
        await using var db = fixture.Server.CreateDatabase("hostile-broken");
        DictionaryRecord v1 = await PublishVersionOneAsync(db.Database);
        await InsertCopyAsync(db.Database, v1, id: 4_000_000_002, 2, d => d["content"] = new BsonBinaryData([9, 9, 9, 9])); // content does not match its hash
        await InsertCopyAsync(db.Database, v1, id: 4_000_000_003, 3, d => d.Remove("codec"));                             // does not read
        await InsertCopyAsync(db.Database, v1, id: 4_000_000_004, 4.0);                                                    // v a double: not a version

        var logs = new CollectingLoggerProvider();
        using var loggerFactory = LoggerFactory.Create(b => b.AddProvider(logs));
        await using var engine = new CompressionEngine(new MongoDictionaryStore(db.Database), loggerFactory: loggerFactory);
        CompressionNamespace ns = engine.GetNamespace(Ns);
        await ns.RefreshAsync();
        await ns.RefreshAsync();
        Assert.Equal((v1.Id, 1), (ns.CurrentDictionary!.Id, ns.CurrentDictionary.Version));
        string[] skipped = [.. logs.Messages.Where(m => m.Contains("was skipped", StringComparison.Ordinal))];
        Assert.Equal(2, skipped.Length); // versions 2 and 3, once each over two refreshes; the double is never seen
        Assert.Contains(skipped, m => m.Contains("_id 4000000003", StringComparison.Ordinal) && m.Contains("field 'codec' is missing", StringComparison.Ordinal));
        Assert.Contains(skipped, m => m.Contains("content does not match its hash", StringComparison.Ordinal));

        var random = new Random(3);
        for (int i = 0; i < 600; i++) ns.Compress(Reading(random, i));
        await engine.WhenIdleAsync();
        await ns.TrainAsync();
        // Versions 2 and 3 are held by the broken records (never deleted), 4 by the double: what was published is above them.
        Assert.True(ns.CurrentDictionary.Version >= 5, $"current is version {ns.CurrentDictionary.Version}");
        Assert.Equal(ns.CurrentDictionary.Id, (await new MongoDictionaryStore(db.Database).GetCurrentAsync(Ns))!.Id);
        Assert.DoesNotContain(logs.Messages, m => m.Contains("Publishing dictionary", StringComparison.Ordinal) && m.Contains("failed", StringComparison.Ordinal));
        foreach (long id in new[] { 4_000_000_002L, 4_000_000_003L, 4_000_000_004L }) Assert.Equal(1, await Raw(db.Database).CountDocumentsAsync(new BsonDocument("_id", id)));
        await using var cold = new CompressionEngine(new MongoDictionaryStore(db.Database));
        await cold.GetNamespace(Ns).RefreshAsync();
        Assert.Equal(ns.CurrentDictionary.Id, cold.GetNamespace(Ns).CurrentDictionary!.Id);
    }

    [Fact]
    public async Task Publish_AtTheCeiling_IsRefused_AndTheNamespaceKeepsItsDictionary()
    {
        await using var db = fixture.Server.CreateDatabase("hostile-ceiling");
        var store = new MongoDictionaryStore(db.Database);
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await store.PublishAsync(MongoDictionaryStoreTests.Record(50, Ns, DictionaryRecord.MaxVersion + 1)));
        Assert.Equal(DictionaryRecord.MaxVersion, (await store.PublishAsync(MongoDictionaryStoreTests.Record(51, Ns, DictionaryRecord.MaxVersion))).Version);
        Assert.Equal(51u, (await store.GetCurrentAsync(Ns))!.Id);
    }

    [Fact]
    public async Task Store_PublishesDurably_AndReadsOnlyMajorityCommittedRecords()
    {
        // What the driver sends (command events, against any server), and what the loopback server recorded it was asked.
        await using var db = fixture.Server.CreateDatabase("store-concerns");
        var sent = new ConcurrentQueue<BsonDocument>();
        var client = new MongoClient(fixture.Server.CreateClientSettings(s => s.ClusterConfigurator = c =>
            c.Subscribe<global::MongoDB.Driver.Core.Events.CommandStartedEvent>(e => sent.Enqueue(e.Command.DeepClone().AsBsonDocument))));
        fixture.Server.Loopback?.ResetCounters();
        var store = new MongoDictionaryStore(client.GetDatabase(db.Name));
        await store.PublishAsync(MongoDictionaryStoreTests.Record(60, Ns, 1));
        Assert.NotNull(await store.GetCurrentAsync(Ns));
        Assert.NotNull(await store.GetAsync(60));
        Assert.NotNull(store.Get(60));

        BsonDocument[] commands = [.. sent.Where(c => c.GetElement(0).Value == MongoDictionaryStore.CollectionName)];
        BsonDocument insert = Assert.Single(commands, c => c.GetElement(0).Name == "insert");
        Assert.Equal(new BsonDocument { { "w", "majority" }, { "j", true } }, insert["writeConcern"]);
        BsonDocument[] finds = [.. commands.Where(c => c.GetElement(0).Name == "find")];
        Assert.Equal(3, finds.Length);
        Assert.All(finds, f => Assert.Equal(new BsonDocument("level", "majority"), f["readConcern"]));

        if (fixture.Server.Loopback is { } server)
        {
            RecordedConcern[] asked = [.. server.Concerns.Where(c => c.Database == db.Name && c.Collection == MongoDictionaryStore.CollectionName)];
            Assert.Equal(insert["writeConcern"], Assert.Single(asked, c => c.Command == "insert").WriteConcern);
            Assert.Equal(3, asked.Count(c => c.Command == "find" && c.ReadConcern == new BsonDocument("level", "majority")));
        }
    }
}
