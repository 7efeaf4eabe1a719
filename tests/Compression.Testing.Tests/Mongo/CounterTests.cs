using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

/// <summary>Byte and command counters: what benchmarks use to measure wire traffic.</summary>
public sealed class CounterTests
{
    [Fact]
    public async Task Byte_counters_grow_by_the_size_of_what_was_sent_and_received()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = new MongoClient(server.ConnectionString);
        var collection = client.GetDatabase("counters").GetCollection<BsonDocument>("c");
        await collection.InsertOneAsync(new BsonDocument("_id", "warm-up"));
        Assert.True(server.BytesReceived > 0);
        Assert.True(server.BytesSent > 0);
        Assert.True(server.CommandCounts.ContainsKey("isMaster") || server.CommandCounts.ContainsKey("hello"));

        server.ResetCounters();
        Assert.InRange(server.BytesReceived, 0, 1_000); // a heartbeat may land at any time, nothing else
        var document = new BsonDocument { { "_id", 1 }, { "payload", new string('p', 10_000) } };
        int size = document.ToBson().Length;
        await collection.InsertOneAsync(document);
        long received = server.BytesReceived, sent = server.BytesSent;
        Assert.InRange(received, size, size + 2_000);
        Assert.InRange(sent, 20, 2_000);
        Assert.Equal(1, server.CommandCounts["insert"]);

        var back = await collection.Find(new BsonDocument("_id", 1)).FirstAsync();
        Assert.Equal(document, back);
        Assert.InRange(server.BytesSent - sent, size, size + 2_000);
        Assert.InRange(server.BytesReceived - received, 20, 2_000);
        Assert.Equal(1, server.CommandCounts["find"]);
    }

    [Fact]
    public async Task Counters_reflect_compressed_versus_plain_payloads()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = new MongoClient(server.ConnectionString);
        var collection = client.GetDatabase("counters").GetCollection<BsonDocument>("c");
        await collection.InsertOneAsync(new BsonDocument("_id", "warm-up"));

        server.ResetCounters();
        await collection.InsertManyAsync(Enumerable.Range(0, 100).Select(i => new BsonDocument { { "_id", i }, { "blob", new BsonBinaryData(new byte[1_000]) } }));
        long large = server.BytesReceived;
        server.ResetCounters();
        await collection.InsertManyAsync(Enumerable.Range(100, 100).Select(i => new BsonDocument { { "_id", i }, { "blob", new BsonBinaryData(new byte[100]) } }));
        long small = server.BytesReceived;

        Assert.InRange(large - small, 85_000, 95_000); // 100 x 900 bytes fewer, give or take a heartbeat
    }
}
