using Compression.Testing.Mongo;
using Compression.Tool.Live;
using MongoDB.Bson;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>A rewrite's checkpoint is only good while no other command rewrites the collection.</summary>
public sealed class CheckpointModesTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    [Fact]
    public async Task MigrateDecompress_AfterAnInterruptedDecompressAndAFullMigrate_DecompressesEveryDocument()
    {
        // Found by review: the second --decompress resumed after the first one's checkpoint, though the migrate between
        // them had compressed the documents before it again: it reported success and left documents 1-5 compressed.
        await using var db = fixture.Server.CreateDatabase("checkpoint-modes");
        string ns = $"{db.Name}.items";
        await db.Database.GetCollection<BsonDocument>("items").InsertManyAsync(Enumerable.Range(1, 20).Select(i => new BsonDocument
            { { "_id", i }, { "title", $"item {i}" }, { "plot", string.Concat(Enumerable.Repeat("a detective returns to the town ", 8)) } }));
        Dictionary<BsonValue, byte[]> originals = await LiveData.ReadAllAsync(db.Database, "items");
        string config = Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, ns);
        var migrate = Docz.Run("migrate", "--config", config, "--batch-size", "5", "--no-train");
        Assert.True(migrate.Exit == 0, migrate.Error + migrate.Output);

        // An interrupted --decompress: documents 1-5 plain again, its checkpoint left unfinished at _id 5.
        var settings = new LiveSettings { ConfigPath = config, BatchSize = 5 };
        await using (LiveSession session = LiveSession.Open(settings))
        {
            LiveNamespace live = Assert.Single(session.Namespaces);
            StoredDocumentCodec codec = await session.OpenAsync(live, CancellationToken.None);
            int batches = 0;
            var rewriter = new CollectionRewriter(session, live, codec, new RewriteOptions { Mode = RewriteMode.Decompress }, settings)
            {
                BeforeWrite = _ => ++batches == 2 ? throw new IOException("interrupted (test)") : Task.CompletedTask,
            };
            await Assert.ThrowsAsync<IOException>(() => rewriter.RunAsync(CancellationToken.None));
        }
        migrate = Docz.Run("migrate", "--config", config, "--batch-size", "5", "--no-train"); // all 20 compressed again
        Assert.True(migrate.Exit == 0, migrate.Error + migrate.Output);

        var undo = Docz.Run("migrate", "--decompress", "--config", config, "--batch-size", "5", "--format", "json");
        Assert.True(undo.Exit == 0, undo.Error + undo.Output);
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "items");
        var compressed = stored.Where(s => LiveData.IsCompressed(s.Value)).Select(s => s.Key.ToString()).ToList();
        Assert.True(compressed.Count == 0, $"migrate --decompress reported done, but left compressed: {string.Join(", ", compressed)}; {undo.Output}");
        foreach (var (id, bytes) in originals) Assert.Equal(bytes, stored[id]);
    }
}
