using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

/// <summary>What the double does not implement fails loudly, naming it; real error codes come back through the driver.</summary>
public sealed class ErrorTests : IAsyncLifetime
{
    private MongoLoopbackServer _server = null!;
    private MongoClient _client = null!;
    private IMongoDatabase _db = null!;

    public async Task InitializeAsync()
    {
        _server = await MongoLoopbackServer.StartAsync();
        _client = new MongoClient(_server.ConnectionString);
        _db = _client.GetDatabase("errors");
        await _db.GetCollection<BsonDocument>("c").InsertOneAsync(new BsonDocument { { "_id", 1 }, { "name", "ada" } });
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
        Assert.Empty(_server.Failures);
    }

    [Fact]
    public async Task Unknown_command_is_CommandNotFound_naming_it()
    {
        var e = await Assert.ThrowsAsync<MongoCommandException>(() => _db.RunCommandAsync<BsonDocument>(new BsonDocument("xyz", 1)));
        Assert.Equal(59, e.Code);
        Assert.Equal("CommandNotFound", e.CodeName);
        Assert.Contains("no such command: 'xyz'", e.Message);
    }

    [Fact]
    public async Task Real_command_not_implemented_is_refused_by_name()
    {
        var e = await Assert.ThrowsAsync<MongoCommandException>(() => _db.RunCommandAsync<BsonDocument>(new BsonDocument { { "distinct", "c" }, { "key", "name" } }));
        Assert.Equal(238, e.Code);
        Assert.Contains("'distinct'", e.Message);
    }

    [Fact]
    public async Task Expressions_and_collations_the_double_lacks_are_refused_by_name()
    {
        var c = _db.GetCollection<BsonDocument>("c");
        var size = await Assert.ThrowsAsync<MongoCommandException>(() => c.Find(new BsonDocument("$expr", new BsonDocument("$bsonSize", "$$ROOT"))).ToListAsync());
        Assert.Equal(238, size.Code);
        Assert.Contains("$bsonSize", size.Message);
        var variable = await Assert.ThrowsAsync<MongoCommandException>(() => c.Find(new BsonDocument("$expr", "$$NOW")).ToListAsync());
        Assert.Contains("$$NOW", variable.Message);
        var collation = await Assert.ThrowsAsync<MongoBulkWriteException<BsonDocument>>(() => c.BulkWriteAsync(
            [new ReplaceOneModel<BsonDocument>(new BsonDocument("_id", 1), new BsonDocument("name", "ADA")) { Collation = new Collation("en", strength: CollationStrength.Secondary) }]));
        Assert.Contains("collation", Assert.Single(collation.WriteErrors).Message);
        Assert.Equal("ada", (await c.Find(new BsonDocument("_id", 1)).SingleAsync())["name"].AsString);
    }

    [Fact]
    public async Task Unknown_query_operator_is_BadValue_naming_it()
    {
        var c = _db.GetCollection<BsonDocument>("c");
        var e = await Assert.ThrowsAsync<MongoCommandException>(() => c.Find(new BsonDocument("name", new BsonDocument("$regex", "^a"))).ToListAsync());
        Assert.Equal(2, e.Code);
        Assert.Contains("unknown operator: $regex", e.Message);

        var elemMatch = await Assert.ThrowsAsync<MongoCommandException>(() => c.CountDocumentsAsync(Builders<BsonDocument>.Filter.ElemMatch<BsonDocument>("xs", new BsonDocument("a", 1))));
        Assert.Contains("$elemMatch", elemMatch.Message);

        var regexValue = await Assert.ThrowsAsync<MongoCommandException>(() => c.Find(Builders<BsonDocument>.Filter.Regex("name", "^a")).ToListAsync());
        Assert.Contains("$regex", regexValue.Message);

        var topLevel = await Assert.ThrowsAsync<MongoCommandException>(() => c.Find(new BsonDocument("$where", "true")).ToListAsync());
        Assert.Contains("unknown top level operator: $where", topLevel.Message);
    }

    [Fact]
    public async Task Unknown_operator_in_an_update_statement_is_a_write_error_naming_it()
    {
        var c = _db.GetCollection<BsonDocument>("c");
        var e = await Assert.ThrowsAsync<MongoWriteException>(() => c.UpdateOneAsync(new BsonDocument("_id", 1), Builders<BsonDocument>.Update.Push("xs", 1)));
        Assert.Equal(9, e.WriteError.Code);
        Assert.Contains("Unknown modifier: $push", e.WriteError.Message);

        var filter = await Assert.ThrowsAsync<MongoWriteException>(() => c.DeleteOneAsync(new BsonDocument("name", new BsonDocument("$size", 1))));
        Assert.Contains("unknown operator: $size", filter.WriteError.Message);
    }

    [Fact]
    public async Task Unimplemented_pipeline_stage_and_options_are_refused_by_name()
    {
        var c = _db.GetCollection<BsonDocument>("c");
        var stage = await Assert.ThrowsAsync<MongoCommandException>(() => c.Aggregate().Lookup("other", "a", "b", "joined").ToListAsync());
        Assert.Contains("$lookup", stage.Message);

        var collation = await Assert.ThrowsAsync<MongoCommandException>(() => c.Find(FilterDefinition<BsonDocument>.Empty, new FindOptions { Collation = new Collation("fr") }).ToListAsync());
        Assert.Contains("'collation'", collation.Message);

        var create = await Assert.ThrowsAsync<MongoCommandException>(() => _db.CreateCollectionAsync("capped", new CreateCollectionOptions { Capped = true, MaxSize = 4096 }));
        Assert.Contains("'capped'", create.Message);

        var index = await Assert.ThrowsAsync<MongoCommandException>(() => c.Indexes.CreateOneAsync(new CreateIndexModel<BsonDocument>(Builders<BsonDocument>.IndexKeys.Text("name"))));
        Assert.Contains("\"text\"", index.Message);
    }

    [Fact]
    public async Task Missing_cursor_and_missing_namespace_have_their_codes()
    {
        var cursor = await Assert.ThrowsAsync<MongoCommandException>(() => _db.RunCommandAsync<BsonDocument>(new BsonDocument { { "getMore", 12345L }, { "collection", "c" } }));
        Assert.Equal(43, cursor.Code);
        Assert.Equal("CursorNotFound", cursor.CodeName);

        var ns = await Assert.ThrowsAsync<MongoCommandException>(() => _db.RunCommandAsync<BsonDocument>(new BsonDocument("listIndexes", "nope")));
        Assert.Equal(26, ns.Code);
        Assert.Contains("errors.nope", ns.Message);
    }
}
