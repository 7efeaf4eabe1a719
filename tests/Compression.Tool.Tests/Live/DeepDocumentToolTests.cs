using System.Text.Json;
using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>verify</c> and <c>migrate --decompress</c> on a compressed part nested deeper than MongoDB stores: the document is
/// reported by its <c>_id</c> and left as it is; the others are done. Found by review: both aborted the process (stack
/// overflow, exit 134) at the same document on every rerun.
/// </summary>
public sealed class DeepDocumentToolTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    [Theory]
    [InlineData(101)]
    [InlineData(20_000)]
    public async Task VerifyAndDecompress_ADocumentNestedTooDeep_ReportItById_AndFinishTheRest(int levels)
    {
        await using var db = fixture.Server.CreateDatabase("deep-docz");
        string ns = $"{db.Name}.items";
        var items = db.Database.GetCollection<BsonDocument>("items");
        await items.InsertManyAsync(Enumerable.Range(1, 20).Select(i => new BsonDocument
            { { "_id", i }, { "title", $"item {i}" }, { "plot", string.Concat(Enumerable.Repeat("a detective returns to the town ", 8)) } }));
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, ns);
        var migrate = Docz.Run("migrate", "--config", config, "--no-train");
        Assert.True(migrate.Exit == 0, migrate.Error + migrate.Output);

        // A peer's document: a compressed part any client can decompress (zstd, no dictionary), 'levels' deep.
        await using (var engine = new CompressionEngine(new InMemoryDictionaryStore()))
        {
            byte[] envelope = engine.GetNamespace(ns).Compress(DeepBson.PayloadElement(levels));
            await items.InsertOneAsync(new BsonDocument { { "_id", 1000 }, { "_z", new BsonBinaryData(envelope, (BsonBinarySubType)0x81) } });
        }
        byte[] deep = (await LiveData.ReadAllAsync(db.Database, "items"))[1000];

        var verify = Docz.Run("verify", "--config", config);
        Assert.Equal(1, verify.Exit);
        Assert.Contains("_id 1000: The document nests deeper than 100 levels", verify.Output, StringComparison.Ordinal);

        var undo = Docz.Run("migrate", "--decompress", "--config", config, "--format", "json");
        Assert.Equal(1, undo.Exit);
        JsonElement summary = JsonDocument.Parse(undo.Output).RootElement.GetProperty("namespaces")[0];
        Assert.Equal(20, summary.GetProperty("written").GetInt64());
        Assert.Equal(1, summary.GetProperty("failed").GetInt64());
        Assert.Contains("nests deeper than 100 levels", undo.Output, StringComparison.Ordinal);
        Dictionary<BsonValue, byte[]> after = await LiveData.ReadAllAsync(db.Database, "items");
        Assert.Equal(deep, after[1000]); // left as it was
        Assert.Equal(20, after.Count(a => !LiveData.IsCompressed(a.Value)));
    }
}
