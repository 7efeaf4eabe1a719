using Compression.Testing.Mongo;
using System.Text.Json;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>Exit code 2 and a message for bad usage; the application's appsettings.json is read as the application reads it.</summary>
public sealed class LiveUsageTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    [Theory]
    [InlineData("verify", "--bogus")]
    [InlineData("verify", "-n", "nodot", "--connection", "mongodb://127.0.0.1:1/")]
    [InlineData("verify", "-n", "db.c")]
    [InlineData("stats", "--connection", "mongodb://127.0.0.1:1/")]
    [InlineData("migrate", "-n", "db.c", "--connection", "mongodb://127.0.0.1:1/", "--batch-size", "0")]
    [InlineData("recompress", "-n", "db.c", "--connection", "mongodb://127.0.0.1:1/", "--older-than", "yesterday")]
    [InlineData("train", "-n", "db.c", "--connection", "mongodb://127.0.0.1:1/", "--from", "/nonexistent/file.jsonl")]
    [InlineData("verify", "-n", "db.c", "--connection", "not a connection string")]
    [InlineData("verify", "--config", "/")]
    public void Command_BadUsage_Exit2WithAMessageAndNoStackTrace(params string[] args)
    {
        var (exit, output, error) = Docz.Run(args);
        Assert.True(exit == 2, $"exit {exit}: {error}{output}");
        Assert.False(string.IsNullOrWhiteSpace(error));
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
    }

    [Fact]
    public void Recompress_LevelOutOfRange_Exit2NamingTheSetting()
    {
        string directory = Directory.CreateTempSubdirectory("cfg-").FullName;
        string config = Docz.WriteConfig(directory, "mongodb://127.0.0.1:1/", "shop.orders");
        var (exit, _, error) = Docz.Run("recompress", "--config", config, "--level", "99");
        Assert.Equal(2, exit);
        Assert.Contains("Compression:Namespaces:shop.orders", error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Migrate_AnIndexOnAFieldThatWouldBeCompressed_RefusesNamingItAndWritesNothing()
    {
        // An index on a field moved inside _z no longer sees it (a TTL index stops expiring, a unique one refuses the
        // second document): migrate refuses before writing, naming the index and the field.
        await using var db = fixture.Server.CreateDatabase("indexed");
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(db.Database, "movies", 50);
        var movies = db.Database.GetCollection<BsonDocument>("movies");
        await movies.Indexes.CreateOneAsync(new CreateIndexModel<BsonDocument>(new BsonDocument("year", 1), new CreateIndexOptions { Name = "by_year" }));
        await movies.Indexes.CreateOneAsync(new CreateIndexModel<BsonDocument>(new BsonDocument { { "title", 1 }, { "year", -1 } }, new CreateIndexOptions { Name = "by_title" }));
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, $"{db.Name}.movies"); // clear: year

        var (exit, output, error) = Docz.Run("migrate", "--config", config);
        Assert.True(exit == 2, $"exit {exit}: {error}{output}");
        Assert.Contains("index 'by_title' on 'title'", error, StringComparison.Ordinal);
        Assert.DoesNotContain("'by_year'", error, StringComparison.Ordinal); // year is clear
        Assert.Contains("ClearFields", error, StringComparison.Ordinal);
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        foreach (var (id, bytes) in originals) Assert.Equal(bytes, stored[id]);

        await movies.Indexes.DropOneAsync("by_title");
        (exit, output, error) = Docz.Run("migrate", "--config", config);
        Assert.True(exit == 0, error + output);
    }

    [Fact]
    public async Task Migrate_ConfigFile_UsesItsConnectionNamespacesAndClearFields()
    {
        await using var db = fixture.Server.CreateDatabase("config");
        await LiveData.InsertMoviesAsync(db.Database, "movies", 300);
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, $"{db.Name}.movies", clearField: "title");

        var (exit, output, error) = Docz.Run("migrate", "--config", config, "--format", "json");
        Assert.True(exit == 0, error + output);
        using var json = JsonDocument.Parse(output);
        Assert.Equal("migrate", json.RootElement.GetProperty("command").GetString());
        Assert.Equal(300, json.RootElement.GetProperty("namespaces")[0].GetProperty("written").GetInt64());

        // { _id, title (clear, so queryable), _z }: what CompressedDocumentSerializer stores with ClearFields ["title"].
        BsonDocument stored = await db.Database.GetCollection<BsonDocument>("movies").Find(FilterDefinition<BsonDocument>.Empty).FirstAsync();
        Assert.Equal(["_id", "title", "_z"], stored.Names);
        Assert.Equal((BsonBinarySubType)0x81, stored["_z"].AsBsonBinaryData.SubType); // envelope format v2: the elements alone
        Assert.Equal(1, await db.Database.GetCollection<BsonDocument>("movies").CountDocumentsAsync(new BsonDocument("title", stored["title"])));
    }

    [Fact]
    public async Task Migrate_DamagedCheckpoint_Exit1NamingIt_RestartStartsOver()
    {
        await using var db = fixture.Server.CreateDatabase("checkpoint");
        await LiveData.InsertMoviesAsync(db.Database, "movies", 200);
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, $"{db.Name}.movies");
        await db.Database.GetCollection<BsonDocument>("_compression.migrations").InsertOneAsync(new BsonDocument
        {
            { "_id", "movies:compress" }, { "ns", $"{db.Name}.movies" }, { "parameters", "" }, { "done", "no" }, { "after", 5 },
        });

        var (exit, output, error) = Docz.Run("migrate", "--config", config);
        Assert.True(exit == 1, error + output);
        Assert.Contains("'movies:compress'", error, StringComparison.Ordinal);
        Assert.Contains("--restart", error, StringComparison.Ordinal);
        Assert.Equal(0, (await LiveData.ReadAllAsync(db.Database, "movies")).Values.Count(LiveData.IsCompressed));

        var restarted = Docz.Run("migrate", "--restart", "--config", config, "--format", "json");
        Assert.True(restarted.Exit == 0, restarted.Error + restarted.Output);
        Assert.Equal(200, JsonDocument.Parse(restarted.Output).RootElement.GetProperty("namespaces")[0].GetProperty("written").GetInt64());
    }

    [Fact]
    public async Task Train_FromFile_PublishesAVersionThatStatsReports()
    {
        await using var db = fixture.Server.CreateDatabase("trainfile");
        string directory = Directory.CreateTempSubdirectory("cfg-").FullName;
        string config = Docz.WriteConfig(directory, fixture.Server.ConnectionString, $"{db.Name}.movies");
        var random = new Random(3);
        string file = Path.Combine(directory, "movies.jsonl");
        File.WriteAllLines(file, Enumerable.Range(0, 1000).Select(i => LiveMovie.Make(i, random).ToPlainBson())
            .Select(b => global::MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(b).ToJson()).Append("not json"));

        var (exit, output, error) = Docz.Run("train", "--config", config, "--from", file, "--format", "json");
        Assert.True(exit == 0, error + output);
        JsonElement trained = JsonDocument.Parse(output).RootElement.GetProperty("namespaces")[0];
        Assert.Equal(1001, trained.GetProperty("documents").GetInt64());
        Assert.Equal(1, trained.GetProperty("skipped").GetInt64());
        Assert.Equal("adopted", trained.GetProperty("outcome").GetString());
        Assert.Equal(1, await db.Database.GetCollection<BsonDocument>("_compression.dictionaries").CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));

        var again = Docz.Run("train", "--config", config, "--from", file, "--format", "json");
        Assert.Equal(0, again.Exit);
        Assert.Equal("not-better", JsonDocument.Parse(again.Output).RootElement.GetProperty("namespaces")[0].GetProperty("outcome").GetString());
    }
}
