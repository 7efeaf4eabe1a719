using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

public sealed class SmokeTests
{
    [Fact]
    public async Task Ping_and_insert_then_find()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = new MongoClient(server.ConnectionString);
        var db = client.GetDatabase("smoke");
        await db.RunCommandAsync<BsonDocument>(new BsonDocument("ping", 1));
        var c = db.GetCollection<BsonDocument>("c");
        await c.InsertOneAsync(new BsonDocument { { "_id", 1 }, { "a", "x" } });
        var found = await c.Find(new BsonDocument()).ToListAsync();
        Assert.Single(found);
        Assert.Empty(server.Failures);
        Assert.True(server.CommandCounts.ContainsKey("insert"), string.Join(",", server.CommandCounts.Keys));
    }
}
