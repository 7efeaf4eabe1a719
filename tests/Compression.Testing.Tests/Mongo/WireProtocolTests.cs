using System.Buffers.Binary;
using System.Text;
using Compression.Testing.Mongo;
using Compression.Testing.Mongo.Internal;
using MongoDB.Bson;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

/// <summary>Framing the driver does not exercise: OP_QUERY handshake, CRC-32C checksums, moreToCome, kind 1 sections.</summary>
public sealed class WireProtocolTests
{
    [Fact]
    public void Crc32C_matches_the_Castagnoli_check_value()
    {
        byte[] check = Encoding.ASCII.GetBytes("123456789");
        Assert.Equal(0xE3069283u, Crc32C.Compute(check));
        Assert.Equal(0xE3069283u, Crc32C.ComputeWithTable(check));
        var random = new byte[1000];
        new Random(7).NextBytes(random);
        Assert.Equal(Crc32C.ComputeWithTable(random), Crc32C.Compute(random));
    }

    [Fact]
    public async Task OP_QUERY_hello_on_admin_cmd_is_answered_with_OP_REPLY()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        await wire.SendAsync(RawWire.OpQuery(7, "admin.$cmd", new BsonDocument { { "isMaster", 1 }, { "helloOk", true } }));
        var (responseTo, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal((7, 1), (responseTo, opCode));
        Assert.Equal(1, BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(32))); // numberReturned
        var reply = MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(message.AsSpan(36).ToArray());
        Assert.True(reply["ismaster"].AsBoolean);
        Assert.True(reply["helloOk"].AsBoolean);
        Assert.Equal(21, reply["maxWireVersion"].AsInt32);
        Assert.Equal(16_777_216, reply["maxBsonObjectSize"].AsInt32);
        Assert.Equal(48_000_000, reply["maxMessageSizeBytes"].AsInt32);
        Assert.Equal(100_000, reply["maxWriteBatchSize"].AsInt32);
        Assert.False(reply.Contains("setName"));
        Assert.False(reply.Contains("compression"));

        await wire.SendAsync(RawWire.OpQuery(8, "admin.$cmd", new BsonDocument("find", "c")));
        var (_, _, refused) = await wire.ReceiveAsync();
        var error = MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(refused.AsSpan(36).ToArray());
        Assert.Equal(352, error["code"].AsInt32);
    }

    [Fact]
    public async Task Checksummed_OP_MSG_is_verified_and_answered_with_a_checksum()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        await wire.SendAsync(RawWire.OpMsg(1, 1, new BsonDocument { { "ping", 1 }, { "$db", "admin" } }));
        var (responseTo, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal((1, 2013), (responseTo, opCode));
        Assert.Equal(1u, BinaryPrimitives.ReadUInt32LittleEndian(message.AsSpan(16)) & 1);
        Assert.Equal(Crc32C.Compute(message.AsSpan(0, message.Length - 4)), BinaryPrimitives.ReadUInt32LittleEndian(message.AsSpan(message.Length - 4)));
        Assert.Equal(1.0, RawWire.MsgBody(message)["ok"].AsDouble);
        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task Bad_checksum_closes_the_connection_and_is_recorded()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        var message = RawWire.OpMsg(1, 1, new BsonDocument { { "ping", 1 }, { "$db", "admin" } });
        message[^1] ^= 0xFF;
        await wire.SendAsync(message);
        Assert.True(await wire.IsClosedByServerAsync());
        Assert.Contains("checksum mismatch", Assert.Single(server.Failures));
    }

    [Fact]
    public async Task MoreToCome_gets_no_reply_and_kind1_sequences_insert_the_client_bytes()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        var docs = Enumerable.Range(0, 3).Select(i => new BsonDocument { { "_id", i }, { "v", $"value {i}" } }).ToList();
        await wire.SendAsync(RawWire.OpMsg(1, 2, new BsonDocument { { "insert", "c" }, { "$db", "w" }, { "writeConcern", new BsonDocument("w", 0) } }, "documents", docs));
        // The next reply on this connection answers the next request: the unacknowledged insert produced none.
        var reply = await wire.CommandAsync(new BsonDocument { { "find", "c" }, { "$db", "w" } });
        var batch = reply["cursor"]["firstBatch"].AsBsonArray;
        Assert.Equal(docs, batch.Select(d => d.AsBsonDocument));

        var acknowledged = await wire.CommandAsync(new BsonDocument { { "insert", "c" }, { "$db", "w" }, { "documents", new BsonArray { new BsonDocument("_id", 9) } } });
        Assert.Equal(1, acknowledged["n"].AsInt32);
        Assert.Equal(2, server.CommandCounts["insert"]);
    }

    [Fact]
    public async Task Messages_and_replies_of_every_size_on_one_connection_are_read_and_answered_whole()
    {
        // A connection reuses its incoming and reply buffers from one message to the next: a small message after a large
        // one must be read to its own length only (a checksum over the stale tail would fail, a section walk would read
        // past it), and a small reply after a large one must be sent at its own length.
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        string text = new('x', 400);
        for (int round = 0; round < 3; round++)
        {
            var docs = Enumerable.Range(round * 2000, 2000).Select(i => new BsonDocument { { "_id", i }, { "text", text } }).ToList();
            int id = wire.NextRequestId();
            await wire.SendAsync(RawWire.OpMsg(id, 1, new BsonDocument { { "insert", "c" }, { "$db", "w" } }, "documents", docs)); // 850 KB, checksummed
            var (responseTo, _, inserted) = await wire.ReceiveAsync();
            Assert.Equal(id, responseTo);
            Assert.Equal(2000, RawWire.MsgBody(inserted)["n"].AsInt32);

            id = wire.NextRequestId();
            await wire.SendAsync(RawWire.OpMsg(id, 1, new BsonDocument { { "ping", 1 }, { "$db", "admin" } })); // small, checksummed
            var (_, _, pong) = await wire.ReceiveAsync();
            Assert.Equal(Crc32C.Compute(pong.AsSpan(0, pong.Length - 4)), BinaryPrimitives.ReadUInt32LittleEndian(pong.AsSpan(pong.Length - 4)));
            Assert.Equal(new BsonDocument("ok", 1.0), RawWire.MsgBody(pong));
            Assert.Equal(pong.Length, 21 + RawWire.MsgBody(pong).ToBson().Length + 4); // header, flags, kind byte, body, checksum: nothing stale

            var found = await wire.CommandAsync(new BsonDocument { { "find", "c" }, { "$db", "w" }, { "batchSize", 10000 }, { "singleBatch", true } });
            Assert.Equal((round + 1) * 2000, found["cursor"]["firstBatch"].AsBsonArray.Count); // a reply of up to 2.5 MB
            var count = await wire.CommandAsync(new BsonDocument { { "count", "c" }, { "$db", "w" } });
            Assert.Equal((round + 1) * 2000, count["n"].AsInt32);
        }

        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task Unknown_opcode_and_section_kind_close_the_connection()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using (var wire = new RawWire(server.Port))
        {
            var message = RawWire.OpMsg(1, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" } });
            BinaryPrimitives.WriteInt32LittleEndian(message.AsSpan(12), 2010); // OP_COMMAND, removed in MongoDB 4.2
            await wire.SendAsync(message);
            Assert.True(await wire.IsClosedByServerAsync());
        }

        using (var wire = new RawWire(server.Port))
        {
            var message = RawWire.OpMsg(1, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" } });
            message[20] = 5;
            await wire.SendAsync(message);
            Assert.True(await wire.IsClosedByServerAsync());
        }

        Assert.Equal(2, server.Failures.Count);
        Assert.Contains(server.Failures, f => f.Contains("opCode 2010"));
        Assert.Contains(server.Failures, f => f.Contains("section kind 5"));
    }

    [Fact]
    public async Task Replies_are_split_at_16_MiB()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        var big = new string('x', 3 * 1024 * 1024);
        for (int i = 0; i < 7; i++)
        {
            var r = await wire.CommandAsync(new BsonDocument { { "insert", "big" }, { "$db", "w" }, { "documents", new BsonArray { new BsonDocument { { "_id", i }, { "s", big } } } } });
            Assert.Equal(1, r["n"].AsInt32);
        }

        var first = await wire.CommandAsync(new BsonDocument { { "find", "big" }, { "$db", "w" } });
        Assert.Equal(5, first["cursor"]["firstBatch"].AsBsonArray.Count); // 5 x 3 MiB fit in 16 MiB, 6 do not
        var more = await wire.CommandAsync(new BsonDocument { { "getMore", first["cursor"]["id"].AsInt64 }, { "collection", "big" }, { "$db", "w" } });
        Assert.Equal(2, more["cursor"]["nextBatch"].AsBsonArray.Count);
        Assert.Equal(0L, more["cursor"]["id"].AsInt64);
    }
}
