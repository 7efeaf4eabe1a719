using System.Text.Json;
using MongoDB.Bson;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary><c>recompress</c>: cold documents first, with the newest dictionary and a higher level; readable by a client that never saw that dictionary.</summary>
public sealed class RecompressTests(LiveFixture fixture) : IClassFixture<LiveFixture>
{
    [Fact]
    public async Task Recompress_Level19WithNewDictionary_SmallerAndReadableByAClientThatNeverSawIt()
    {
        await using var db = fixture.Server.CreateDatabase("recompress");
        string ns = $"{db.Name}.movies";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(db.Database, "movies", 5000);
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, ns);

        // Compressed first without any dictionary (as an application does before its first one is trained).
        var migrated = Docz.Run("migrate", "--no-train", "--config", config, "--format", "json");
        Assert.True(migrated.Exit == 0, migrated.Error + migrated.Output);
        long before = (await LiveData.ReadAllAsync(db.Database, "movies")).Values.Sum(b => (long)b.Length);

        // An application client reads now: it has seen no dictionary, and keeps running while one is published.
        await using var reader = new AdapterReader(fixture.Server.ConnectionString, db.Name, ns);
        foreach (var (id, bytes) in (await LiveData.ReadAllAsync(db.Database, "movies")).Take(10))
            Assert.Equal(originals[id.AsObjectId], reader.Read(bytes).ToPlainBson());

        var train = Docz.Run("train", "--config", config, "--format", "json");
        Assert.True(train.Exit == 0, train.Error + train.Output);
        JsonElement dictionary = JsonDocument.Parse(train.Output).RootElement.GetProperty("namespaces")[0].GetProperty("dictionary");
        Assert.Equal(1, dictionary.GetProperty("version").GetInt32());

        // The cold half first: documents whose ObjectId is older than 2020-01-01T00:00:25Z (the first 2,500).
        var cold = Docz.Run("recompress", "--level", "19", "--older-than", "2020-01-01T00:00:25Z", "--config", config, "--format", "json");
        Assert.True(cold.Exit == 0, cold.Error + cold.Output);
        JsonElement coldResult = JsonDocument.Parse(cold.Output).RootElement.GetProperty("namespaces")[0];
        Assert.Equal(2500, coldResult.GetProperty("scanned").GetInt64());
        Assert.Equal(2500, coldResult.GetProperty("written").GetInt64());
        Dictionary<BsonValue, byte[]> half = await LiveData.ReadAllAsync(db.Database, "movies");
        Assert.Equal(2500, half.Count(d => UsesDictionary(d.Value)));
        Assert.All(half.Where(d => UsesDictionary(d.Value)), d => Assert.True(d.Key.AsObjectId.Timestamp < 1_577_836_825));

        var all = Docz.Run("recompress", "--level", "19", "--config", config, "--format", "json");
        Assert.True(all.Exit == 0, all.Error + all.Output);
        JsonElement result = JsonDocument.Parse(all.Output).RootElement.GetProperty("namespaces")[0];
        Assert.Equal(2500, result.GetProperty("written").GetInt64());
        Assert.Equal(2500, result.GetProperty("unchanged").GetInt64()); // the cold half: not smaller again

        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        long after = stored.Values.Sum(b => (long)b.Length);
        Assert.True(after < before * 0.8, $"before {before} B, after {after} B");
        Assert.All(stored.Values, bytes => Assert.True(UsesDictionary(bytes)));
        foreach (var (id, original) in originals) Assert.Equal(original, reader.Read(stored[id]).ToPlainBson());

        var verify = Docz.Run("verify", "--config", config, "--format", "json");
        Assert.True(verify.Exit == 0, verify.Error + verify.Output);
    }

    private static bool UsesDictionary(byte[] stored)
    {
        var document = global::MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(stored);
        return document.TryGetValue("_z", out BsonValue z)
            && DocumentEnvelope.TryReadHeader(z.AsBsonBinaryData.Bytes, out EnvelopeHeader header)
            && header.DictionaryId is not null;
    }
}
