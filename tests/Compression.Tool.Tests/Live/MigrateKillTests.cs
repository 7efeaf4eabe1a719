using Compression.Testing.Mongo;
using System.Net;
using System.Text.Json;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>migrate</c> on 100,000 plain documents, run as a child process and killed at 20 or more seeded random operation
/// boundaries (before a command reaches the server, or after the server did it and before the tool read the reply), restarted
/// each time: at the end every document is compressed exactly once, none lost or doubled, each equal to its original when
/// read by a cold application client; <c>verify</c> agrees; <c>migrate --decompress</c> restores every original byte for byte.
/// </summary>
public sealed class MigrateKillTests(MongoFixture fixture, ITestOutputHelper log) : IClassFixture<MongoFixture>, IDisposable
{
    private const int Count = 100_000;
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-kill-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task Migrate_KilledAtRandomOperationBoundaries_EveryDocumentCompressedExactlyOnce_DecompressRestoresBytes()
    {
        using var guard = new CancellationTokenSource(TimeSpan.FromMinutes(45)); // a last resort; each run has its own hang guard (KilledRuns.RunGuard)
        await using var db = fixture.Server.CreateDatabase("kill");
        string ns = $"{db.Name}.movies";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(db.Database, "movies", Count);

        MongoServerAddress address = MongoUrl.Create(fixture.Server.ConnectionString).Server;
        await using var proxy = new KillSwitchProxy(new IPEndPoint(IPAddress.Parse(address.Host == "localhost" ? "127.0.0.1" : address.Host), address.Port));
        string direct = Docz.WriteConfig(Directory.CreateDirectory(Path.Combine(_directory, "direct")).FullName, fixture.Server.ConnectionString, ns);
        string proxied = Docz.WriteConfig(Directory.CreateDirectory(Path.Combine(_directory, "proxied")).FullName,
            $"mongodb://127.0.0.1:{proxy.Port}/?directConnection=true", ns);

        // The first dictionary (train is not what is killed here).
        var train = Docz.Run("train", "--config", direct, "--format", "json");
        Assert.True(train.Exit == 0, train.Error + train.Output);

        var kills = new List<string>();
        JsonElement summary = await KilledRuns.RunUntilDoneAsync(proxy, kills, new Random(20261124), maxKillAt: 20, guard.Token,
            "migrate", "--config", proxied, "--batch-size", "2000", "--format", "json", "--no-progress");

        log.WriteLine($"{kills.Count} kills, then a run to the end; killed at: {string.Join(", ", kills)}");
        Assert.True(kills.Count >= 20, $"only {kills.Count} kills");
        Assert.Contains(kills, k => k.StartsWith("update", StringComparison.Ordinal) && k.Contains("reply lost", StringComparison.Ordinal));
        Assert.Contains(kills, k => k.StartsWith("getMore", StringComparison.Ordinal) || k.StartsWith("find", StringComparison.Ordinal));
        Assert.Equal(0, summary.GetProperty("failed").GetInt64());
        Assert.Equal(Count, summary.GetProperty("written").GetInt64() + summary.GetProperty("skipped").GetInt64());

        // Every document there once, compressed once, and equal to its original through a cold application client.
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        Assert.Equal(Count, stored.Count);
        await using (var reader = new AdapterReader(fixture.Server.ConnectionString, db.Name, ns))
        {
            foreach (var (id, original) in originals)
            {
                Assert.True(stored.TryGetValue(id, out byte[]? bytes), $"_id {id} is missing");
                Assert.True(LiveData.IsCompressed(bytes), $"_id {id} is not compressed");
                Assert.Equal(original, reader.Read(bytes).ToPlainBson()); // compressed twice would not read as a movie
            }
        }
        long storedBytes = stored.Values.Sum(b => (long)b.Length), rawBytes = originals.Values.Sum(b => (long)b.Length);
        log.WriteLine($"stored {storedBytes:N0} B for {rawBytes:N0} B plain: ratio {(double)rawBytes / storedBytes:0.00}");
        Assert.True(storedBytes < rawBytes / 2, $"stored {storedBytes} B, plain {rawBytes} B");

        var verify = Docz.Run("verify", "--config", direct, "--format", "json");
        Assert.True(verify.Exit == 0, verify.Error + verify.Output);
        JsonElement verified = JsonDocument.Parse(verify.Output).RootElement.GetProperty("namespaces")[0];
        Assert.Equal(Count, verified.GetProperty("documents").GetInt64());
        Assert.Equal(Count, verified.GetProperty("compressed").GetInt64());
        Assert.Equal(0, verified.GetProperty("failed").GetInt64());

        var undo = Docz.Run("migrate", "--decompress", "--config", direct, "--format", "json", "--batch-size", "5000");
        Assert.True(undo.Exit == 0, undo.Error + undo.Output);
        Assert.Equal(Count, JsonDocument.Parse(undo.Output).RootElement.GetProperty("namespaces")[0].GetProperty("written").GetInt64());
        Dictionary<BsonValue, byte[]> restored = await LiveData.ReadAllAsync(db.Database, "movies");
        Assert.Equal(Count, restored.Count);
        foreach (var (id, original) in originals) Assert.Equal(original, restored[id]);
    }
}
