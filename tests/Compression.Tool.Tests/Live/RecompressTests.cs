using Compression.Testing.Mongo;
using System.Text.Json;
using MongoDB.Bson;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Tool.Tests.Live;

/// <summary><c>recompress</c>: cold documents first, with the newest dictionary and a higher level; readable by a client that never saw that dictionary.</summary>
public sealed class RecompressTests(MongoFixture fixture, ITestOutputHelper log) : IClassFixture<MongoFixture>
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

        // With the new dictionary at the configured level (3): every document, since none uses it yet.
        JsonElement current = Recompress(config);
        Assert.Equal(5000, current.GetProperty("written").GetInt64());
        Dictionary<BsonValue, byte[]> atLevel3 = await LiveData.ReadAllAsync(db.Database, "movies");
        long level3 = atLevel3.Values.Sum(b => (long)b.Length);
        Assert.All(atLevel3.Values, bytes => Assert.True(UsesDictionary(bytes)));

        // Then level 19, the cold half first: documents whose ObjectId is older than 2020-01-01T00:00:25Z (the first 2,500).
        JsonElement cold = Recompress(config, "--level", "19", "--older-than", "2020-01-01T00:00:25Z");
        Assert.Equal(2500, cold.GetProperty("scanned").GetInt64());
        long coldWritten = cold.GetProperty("written").GetInt64();
        Assert.Equal(2500, coldWritten + cold.GetProperty("unchanged").GetInt64());
        Dictionary<BsonValue, byte[]> half = await LiveData.ReadAllAsync(db.Database, "movies");
        var changed = half.Where(d => !d.Value.AsSpan().SequenceEqual(atLevel3[d.Key])).ToList();
        Assert.Equal(coldWritten, changed.Count);
        Assert.All(changed, d => Assert.True(d.Key.AsObjectId.Timestamp < 1_577_836_825 && d.Value.Length < atLevel3[d.Key].Length));

        JsonElement all = Recompress(config, "--level", "19");
        Assert.Equal(5000, all.GetProperty("scanned").GetInt64());
        Assert.True(all.GetProperty("written").GetInt64() > 0);
        Assert.Equal(0, all.GetProperty("failed").GetInt64());

        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        long after = stored.Values.Sum(b => (long)b.Length);
        long plain = originals.Values.Sum(b => (long)b.Length);
        log.WriteLine($"5,000 movies, plain {plain:N0} B; compressed without a dictionary (level 3): {before:N0} B; dictionary v1 level 3: {level3:N0} B; " +
            $"dictionary v1 level 19: {after:N0} B ({(double)after / level3:0.000}x of level 3; {coldWritten:N0} of the 2,500 cold ones rewritten first, " +
            $"{all.GetProperty("written").GetInt64():N0} in the second pass, {all.GetProperty("unchanged").GetInt64():N0} left as not smaller)");
        Assert.True(level3 < before * 0.8, $"no dictionary {before} B, dictionary v1 {level3} B");
        Assert.True(after < level3, $"level 3 {level3} B, level 19 {after} B");

        // Again: nothing left to gain, nothing written.
        Assert.Equal(0, Recompress(config, "--level", "19").GetProperty("written").GetInt64());
        foreach (var (id, original) in originals) Assert.Equal(original, reader.Read(stored[id]).ToPlainBson());

        var verify = Docz.Run("verify", "--config", config, "--format", "json");
        Assert.True(verify.Exit == 0, verify.Error + verify.Output);
    }

    private static JsonElement Recompress(string config, params string[] args)
    {
        var (exit, output, error) = Docz.Run(["recompress", "--config", config, "--format", "json", .. args]);
        Assert.True(exit == 0, error + output);
        return JsonDocument.Parse(output).RootElement.GetProperty("namespaces")[0].Clone();
    }

    private static bool UsesDictionary(byte[] stored)
    {
        var document = global::MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(stored);
        return document.TryGetValue("_z", out BsonValue z)
            && DocumentEnvelope.TryReadHeader(z.AsBsonBinaryData.Bytes, out EnvelopeHeader header)
            && header.DictionaryId is not null;
    }
}
