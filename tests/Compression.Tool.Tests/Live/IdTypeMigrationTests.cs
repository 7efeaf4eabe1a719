using System.Net;
using System.Text.Json;
using Compression.Testing.Mongo;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>migrate</c>, its resume and its undo on every <c>_id</c> type MongoDB allows, compound (document) keys first: the
/// <c>_id</c> a scan takes from a document must outlive the document's buffer (it is used by the checkpoint, the
/// compare-and-swap re-read and the failure reports). Arrays, regular expressions and <c>undefined</c> are refused as
/// <c>_id</c> by the server itself (code 53, InvalidIdField), so they never reach a collection.
/// </summary>
public sealed class IdTypeMigrationTests(MongoFixture fixture, ITestOutputHelper log) : IClassFixture<MongoFixture>, IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-ids-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static BsonDocument Body(BsonValue id, int i) => new()
    {
        { "_id", id },
        { "title", $"The returning detective {i}" },
        { "year", 1950 + i % 75 },
        { "plot", string.Join(' ', Enumerable.Range(0, 12 + i % 9).Select(w => Words[(i + w * 7) % Words.Length])) },
    };

    private static readonly string[] Words = ["a", "young", "detective", "returns", "to", "the", "small", "town", "where", "her", "family", "hides", "old", "secret"];

    [Fact]
    public async Task Migrate_CompoundIds_KilledAtRandomPoints_ResumesThenUndoesByteForByte()
    {
        // Found by review: every run exited 1 with ObjectDisposedException ('RawBsonDocument') at the first checkpoint,
        // 1,000 of 2,500 documents compressed, and --decompress crashed the same way.
        // A last-resort guard for the whole test; each child run has its own hang guard (KilledRuns.RunGuard). A loaded
        // machine (CI beside other builds, at a load average of 30) took over 10 minutes for the two series.
        using var guard = new CancellationTokenSource(TimeSpan.FromMinutes(45));
        await using var db = fixture.Server.CreateDatabase("compound-ids");
        string ns = $"{db.Name}.orders";
        const int Count = 2500;
        await db.Database.GetCollection<BsonDocument>("orders").InsertManyAsync(
            Enumerable.Range(0, Count).Select(i => Body(new BsonDocument { { "tenant", "t" + i % 3 }, { "n", i } }, i)));
        Dictionary<BsonValue, byte[]> originals = await LiveData.ReadAllAsync(db.Database, "orders");

        MongoServerAddress address = MongoUrl.Create(fixture.Server.ConnectionString).Server;
        await using var proxy = new KillSwitchProxy(new IPEndPoint(IPAddress.Parse(address.Host == "localhost" ? "127.0.0.1" : address.Host), address.Port));
        string direct = Docz.WriteConfig(Directory.CreateDirectory(Path.Combine(_directory, "direct")).FullName, fixture.Server.ConnectionString, ns);
        string proxied = Docz.WriteConfig(Directory.CreateDirectory(Path.Combine(_directory, "proxied")).FullName,
            $"mongodb://127.0.0.1:{proxy.Port}/?directConnection=true", ns);

        var kills = new List<string>();
        JsonElement summary = await KilledRuns.RunUntilDoneAsync(proxy, kills, new Random(20261127), maxKillAt: 20, guard.Token,
            "migrate", "--no-train", "--config", proxied, "--batch-size", "50", "--format", "json", "--no-progress");
        log.WriteLine($"{kills.Count} kills, then a run to the end; killed at: {string.Join(", ", kills)}");
        Assert.True(kills.Count >= 8, $"only {kills.Count} kills");
        Assert.Contains(kills, k => k.StartsWith("update", StringComparison.Ordinal));
        Assert.Equal(0, summary.GetProperty("failed").GetInt64());
        Assert.Equal(Count, summary.GetProperty("written").GetInt64() + summary.GetProperty("skipped").GetInt64());

        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "orders");
        Assert.Equal(Count, stored.Count);
        Assert.All(stored, s => Assert.True(LiveData.IsCompressed(s.Value), $"_id {s.Key} is not compressed"));
        var verify = Docz.Run("verify", "--config", direct, "--format", "json");
        Assert.True(verify.Exit == 0, verify.Error + verify.Output);
        Assert.Equal(Count, JsonDocument.Parse(verify.Output).RootElement.GetProperty("namespaces")[0].GetProperty("compressed").GetInt64());

        // The undo, killed too, then run to the end: every original byte back.
        kills.Clear();
        summary = await KilledRuns.RunUntilDoneAsync(proxy, kills, new Random(7), maxKillAt: 20, guard.Token,
            "migrate", "--decompress", "--config", proxied, "--batch-size", "50", "--format", "json", "--no-progress");
        log.WriteLine($"undo: {kills.Count} kills; killed at: {string.Join(", ", kills)}");
        Assert.True(kills.Count >= 4, $"only {kills.Count} kills of the undo");
        Assert.Equal(0, summary.GetProperty("failed").GetInt64());
        Dictionary<BsonValue, byte[]> restored = await LiveData.ReadAllAsync(db.Database, "orders");
        Assert.Equal(Count, restored.Count);
        foreach (var (id, original) in originals) Assert.Equal(original, restored[id]);
    }

    /// <summary>One value of every BSON type MongoDB accepts as <c>_id</c>, several of each, mixed in one collection.</summary>
    public static IEnumerable<BsonValue> EveryAllowedIdType()
    {
        var when = new DateTime(2026, 11, 27, 0, 0, 0, DateTimeKind.Utc);
        for (int i = 0; i < 4; i++)
        {
            yield return i;
            yield return 10_000_000_000L + i;
            yield return 0.5 + i;
            yield return new BsonDecimal128(Decimal128.Parse($"12345.678{i}"));
            yield return $"key-{i}";
            yield return (BsonSymbol)$"symbol-{i}";
            yield return new BsonDocument { { "tenant", $"t{i}" }, { "n", i }, { "nested", new BsonDocument("deep", new BsonArray { i, "x" }) } };
            yield return new BsonBinaryData([(byte)i, 1, 2, 3]);
            yield return new BsonBinaryData(Guid.Parse($"6f1d7c2a-0000-4000-8000-00000000000{i}"), GuidRepresentation.Standard);
            yield return ObjectId.Parse($"5f0000000000000000000a{i:x2}");
            yield return new BsonDateTime(when.AddDays(i));
            yield return new BsonTimestamp(1_700_000_000 + i, i);
            yield return new BsonJavaScript($"function() {{ return {i}; }}");
            yield return new BsonJavaScriptWithScope($"function() {{ return x + {i}; }}", new BsonDocument("x", i));
        }
        yield return true;
        yield return false;
        yield return BsonNull.Value;
        yield return BsonMinKey.Value;
        yield return BsonMaxKey.Value;
    }

    [Fact]
    public async Task Migrate_EveryIdTypeTheServerAllows_InterruptedResumedAndUndone_ByteForByte()
    {
        await using var db = fixture.Server.CreateDatabase("every-id-type");
        string ns = $"{db.Name}.items";
        var collection = db.Database.GetCollection<BsonDocument>("items");
        await collection.InsertManyAsync(EveryAllowedIdType().Select(Body));
        Dictionary<BsonValue, byte[]> originals = await LiveData.ReadAllAsync(db.Database, "items");
        string config = Docz.WriteConfig(Directory.CreateDirectory(Path.Combine(_directory, "every")).FullName, fixture.Server.ConnectionString, ns);

        // Interrupted after its first batch (the checkpoint holds an _id of whatever type ended it), then resumed.
        await RewriteInterruption.AtSecondBatchAsync(config, RewriteMode.Compress);
        var migrate = Docz.Run("migrate", "--config", config, "--batch-size", "5", "--no-train", "--format", "json");
        Assert.True(migrate.Exit == 0, migrate.Error + migrate.Output);
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "items");
        Assert.Equal(originals.Count, stored.Count);
        Assert.All(stored, s => Assert.True(LiveData.IsCompressed(s.Value), $"_id {s.Key} ({s.Key.BsonType}) is not compressed"));
        var verify = Docz.Run("verify", "--config", config, "--format", "json");
        Assert.True(verify.Exit == 0, verify.Error + verify.Output);

        await RewriteInterruption.AtSecondBatchAsync(config, RewriteMode.Decompress);
        var undo = Docz.Run("migrate", "--decompress", "--config", config, "--batch-size", "5", "--format", "json");
        Assert.True(undo.Exit == 0, undo.Error + undo.Output);
        Dictionary<BsonValue, byte[]> restored = await LiveData.ReadAllAsync(db.Database, "items");
        Assert.Equal(originals.Count, restored.Count);
        foreach (var (id, original) in originals) Assert.Equal(original, restored[id]);
    }

    [Theory]
    [InlineData("array")]
    [InlineData("regex")]
    [InlineData("undefined")]
    public async Task Insert_IdOfATypeMongoDbRefuses_IsRefusedByTheServer_SoNoCollectionHoldsOne(string type)
    {
        await using var db = fixture.Server.CreateDatabase("refused-id");
        BsonValue id = type switch
        {
            "array" => new BsonArray { 1, 2 },
            "regex" => new BsonRegularExpression("^a"),
            _ => BsonUndefined.Value,
        };
        var error = await Assert.ThrowsAsync<MongoWriteException>(() => db.Database.GetCollection<BsonDocument>("items").InsertOneAsync(Body(id, 1)));
        Assert.Equal(53, error.WriteError.Code);
    }
}
