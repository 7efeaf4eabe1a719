using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

public sealed class MongoTestServerTests
{
    [Fact]
    public async Task Uses_the_environment_server_or_the_loopback_one_and_drops_each_test_database()
    {
        await using var server = await MongoTestServer.StartAsync();
        Assert.Equal(string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(MongoTestServer.UriVariable)), server.IsLoopback);

        string name;
        await using (var db = server.CreateDatabase("fixture test/one"))
        {
            name = db.Name;
            Assert.StartsWith("t_fixture_test_one_", name);
            await db.Database.GetCollection<BsonDocument>("c").InsertOneAsync(new BsonDocument("x", 1));
            Assert.Contains(name, await (await server.Client.ListDatabaseNamesAsync()).ToListAsync());
            await using var other = server.CreateDatabase("fixture test/one");
            Assert.NotEqual(name, other.Name);
        }

        Assert.DoesNotContain(name, await (await server.Client.ListDatabaseNamesAsync()).ToListAsync());
    }
}
