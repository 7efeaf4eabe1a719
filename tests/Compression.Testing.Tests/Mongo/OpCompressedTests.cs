using System.Buffers.Binary;
using System.IO.Compression;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Testing.Tests.Mongo;

/// <summary>OP_COMPRESSED: negotiation in the handshake, the driver's own snappy, zlib and zstd messages decoded and
/// answered in kind, the byte counters counting compressed bytes, and malformed messages refused loudly.</summary>
public sealed class OpCompressedTests(ITestOutputHelper output)
{
    private static BsonDocument Repetitive(int i) => new()
    {
        { "_id", i },
        { "customer", $"customer-{i % 10}" },
        { "address", new BsonDocument { { "street", "221B Baker Street" }, { "city", "London" }, { "postcode", "NW1 6XE" } } },
        { "status", i % 3 == 0 ? "shipped" : "pending" },
        { "tags", new BsonArray { "retail", "priority", "gift-wrapped" } },
        { "notes", "Leave the parcel with the neighbour at number 219 if nobody answers the door." },
    };

    private static string Uri(MongoLoopbackServer server, string compressors) =>
        $"mongodb://127.0.0.1:{server.Port}/?directConnection=true&compressors={compressors}";

    [Theory]
    [InlineData("snappy")]
    [InlineData("zlib")]
    [InlineData("zstd")]
    public async Task Find_with_compressor_round_trips_and_sends_less_than_half_the_bytes(string compressor)
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var compressedClient = new MongoClient(Uri(server, compressor));
        using var plainClient = new MongoClient(server.ConnectionString);
        var documents = Enumerable.Range(0, 1000).Select(Repetitive).ToList();
        var compressed = compressedClient.GetDatabase("opc").GetCollection<BsonDocument>("orders");
        var plain = plainClient.GetDatabase("opc").GetCollection<BsonDocument>("orders");

        await compressed.InsertManyAsync(documents);
        Assert.True(server.CompressedMessagesReceived.GetValueOrDefault(compressor) >= 1);
        Assert.Equal([compressor], server.CompressedMessagesReceived.Keys);
        await plain.Find(new BsonDocument("_id", 0)).FirstAsync(); // both clients connected before measuring

        server.ResetCounters();
        var viaCompressed = await compressed.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync();
        long compressedBytes = server.BytesSent;
        Assert.True(server.CompressedMessagesSent.GetValueOrDefault(compressor) >= 1);
        Assert.Equal(server.CommandCounts.GetValueOrDefault("find") + server.CommandCounts.GetValueOrDefault("getMore"),
            server.CompressedMessagesReceived.GetValueOrDefault(compressor));

        server.ResetCounters();
        var viaPlain = await plain.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync();
        long plainBytes = server.BytesSent;
        Assert.Empty(server.CompressedMessagesSent);
        Assert.Empty(server.CompressedMessagesReceived);

        Assert.Equal(documents, viaCompressed);
        Assert.Equal(documents, viaPlain);
        Assert.True(plainBytes > 100_000, $"plain find sent {plainBytes} bytes");
        double ratio = (double)compressedBytes / plainBytes;
        output.WriteLine($"{compressor}: find sent {compressedBytes} bytes compressed, {plainBytes} plain (ratio {ratio:F3})");
        Assert.True(ratio < 0.5, $"{compressor}: {compressedBytes} bytes against {plainBytes} plain (ratio {ratio:F3})");
        Assert.Empty(server.Failures);
    }

    [Theory]
    [InlineData("snappy", "zstd")] // the server offers snappy only, the client asks for zstd
    [InlineData("", "snappy")] // compression turned off on the server
    public async Task Client_asking_for_a_compressor_the_server_does_not_offer_gets_uncompressed_traffic(string offered, string asked)
    {
        var options = new MongoLoopbackServerOptions { Compressors = offered.Length == 0 ? [] : offered.Split(',') };
        await using var server = await MongoLoopbackServer.StartAsync(options);
        using var client = new MongoClient(Uri(server, asked));
        var collection = client.GetDatabase("opc").GetCollection<BsonDocument>("orders");
        var documents = Enumerable.Range(0, 200).Select(Repetitive).ToList();

        await collection.InsertManyAsync(documents);
        Assert.Equal(documents, await collection.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync());

        Assert.Empty(server.CompressedMessagesReceived);
        Assert.Empty(server.CompressedMessagesSent);
        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task Handshake_offers_the_common_compressors_in_the_clients_order_and_is_never_compressed()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = new RawWire(server.Port);
        await wire.SendAsync(RawWire.OpQuery(1, "admin.$cmd", new BsonDocument { { "isMaster", 1 }, { "compression", new BsonArray { "zstd", "lz4", "snappy" } } }));
        var (_, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal(1, opCode); // OP_REPLY, not OP_COMPRESSED
        var hello = MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(message.AsSpan(36).ToArray());
        Assert.Equal(new BsonArray { "zstd", "snappy" }, hello["compression"]);

        // A compressed command is answered compressed, with the request's compressor.
        await wire.SendAsync(Compressed(RawWire.OpMsg(2, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" } }), 1));
        (int responseTo, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal((2, 2012), (responseTo, opCode));
        Assert.Equal(2013, BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(16)));
        Assert.Equal(1, message[24]);
        Assert.Equal(new BsonDocument("ok", 1.0), RawWire.MsgBody(Decompressed(message)));

        await wire.SendAsync(Compressed(RawWire.OpMsg(3, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" } }), 3));
        (_, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal((2012, 3), (opCode, (int)message[24]));
        Assert.Equal(new BsonDocument("ok", 1.0), RawWire.MsgBody(Decompressed(message)));

        // hello sent compressed is still answered uncompressed, with the negotiated list.
        await wire.SendAsync(Compressed(RawWire.OpMsg(4, 0, new BsonDocument { { "hello", 1 }, { "compression", new BsonArray { "zlib" } }, { "$db", "admin" } }), 1));
        (_, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal(2013, opCode);
        Assert.Equal(new BsonArray { "zstd", "snappy" }, RawWire.MsgBody(message)["compression"]);

        // An uncompressed request gets an uncompressed reply.
        Assert.Equal(1.0, (await wire.CommandAsync(new BsonDocument { { "ping", 1 }, { "$db", "admin" } }))["ok"].AsDouble);
        Assert.Equal(new Dictionary<string, long> { ["snappy"] = 2, ["zstd"] = 1 }, server.CompressedMessagesReceived);
        Assert.Equal(new Dictionary<string, long> { ["snappy"] = 1, ["zstd"] = 1 }, server.CompressedMessagesSent);
        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task Driver_handshake_reply_is_uncompressed_and_later_replies_are_compressed()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var client = new MongoClient(Uri(server, "zstd"));
        await client.GetDatabase("admin").RunCommandAsync<BsonDocument>(new BsonDocument("ping", 1));

        // Every hello/isMaster (handshakes, heartbeats) went out uncompressed; only the ping came back compressed.
        Assert.True(server.CommandCounts.GetValueOrDefault("isMaster") + server.CommandCounts.GetValueOrDefault("hello") >= 2);
        Assert.Equal(new Dictionary<string, long> { ["zstd"] = 1 }, server.CompressedMessagesSent);
        Assert.Equal(new Dictionary<string, long> { ["zstd"] = 1 }, server.CompressedMessagesReceived);
        Assert.Empty(server.Failures);
    }

    [Theory]
    [InlineData(1, 10)]
    [InlineData(1, -10)]
    [InlineData(2, 10)]
    [InlineData(2, -10)]
    [InlineData(3, 10)]
    [InlineData(3, -10)]
    public async Task OP_COMPRESSED_with_a_lying_uncompressedSize_closes_the_connection_and_is_recorded(byte compressorId, int lie)
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = await NegotiatedAsync(server, "snappy", "zlib", "zstd");
        var ping = RawWire.OpMsg(2, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" }, { "pad", new string('x', 200) } });
        await wire.SendAsync(Compressed(ping, compressorId, declaredSize: ping.Length - 16 + lie));

        Assert.True(await wire.IsClosedByServerAsync());
        string failure = Assert.Single(server.Failures);
        Assert.Contains($"uncompressedSize {ping.Length - 16 + lie}", failure);
        Assert.Empty(server.CompressedMessagesReceived);
    }

    [Theory]
    [InlineData(7, "snappy", "compressorId 7 is unknown")]
    [InlineData(3, "snappy", "compressor zstd (3), which this connection's handshake did not negotiate (negotiated: snappy)")]
    [InlineData(1, "", "compressor snappy (1), which this connection's handshake did not negotiate (negotiated: none)")]
    public async Task OP_COMPRESSED_with_an_unknown_or_unnegotiated_compressor_closes_the_connection(byte compressorId, string negotiated, string expected)
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = await NegotiatedAsync(server, negotiated.Length == 0 ? [] : [negotiated]);
        var message = Compressed(RawWire.OpMsg(2, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" } }), compressorId == 7 ? (byte)1 : compressorId);
        message[24] = compressorId;
        await wire.SendAsync(message);

        Assert.True(await wire.IsClosedByServerAsync());
        Assert.Contains(expected, Assert.Single(server.Failures));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task OP_COMPRESSED_with_corrupt_data_closes_the_connection_and_is_recorded(byte compressorId)
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = await NegotiatedAsync(server, "snappy", "zlib", "zstd");
        var message = Compressed(RawWire.OpMsg(2, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" }, { "pad", new string('x', 200) } }), compressorId);
        for (int i = 27; i < message.Length; i += 3)
        {
            message[i] ^= 0x5A;
        }

        await wire.SendAsync(message);

        Assert.True(await wire.IsClosedByServerAsync());
        Assert.Single(server.Failures);
        Assert.Empty(server.CompressedMessagesReceived);
    }

    [Fact]
    public async Task OP_QUERY_handshake_wrapped_in_OP_COMPRESSED_is_answered_with_an_uncompressed_OP_REPLY()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = await NegotiatedAsync(server, "zlib");
        await wire.SendAsync(Compressed(RawWire.OpQuery(2, "admin.$cmd", new BsonDocument { { "isMaster", 1 }, { "compression", new BsonArray { "zlib" } } }), 2));
        var (responseTo, opCode, message) = await wire.ReceiveAsync();
        Assert.Equal((2, 1), (responseTo, opCode));
        var hello = MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(message.AsSpan(36).ToArray());
        Assert.Equal(new BsonArray { "zlib" }, hello["compression"]);
        Assert.Equal(new Dictionary<string, long> { ["zlib"] = 1 }, server.CompressedMessagesReceived);
        Assert.Empty(server.CompressedMessagesSent);
        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task OP_COMPRESSED_declaring_more_than_maxMessageSizeBytes_is_refused_before_decompressing()
    {
        await using var server = await MongoLoopbackServer.StartAsync();
        using var wire = await NegotiatedAsync(server, "snappy");
        await wire.SendAsync(Compressed(RawWire.OpMsg(2, 0, new BsonDocument { { "ping", 1 }, { "$db", "admin" } }), 1, declaredSize: 48_000_000));

        Assert.True(await wire.IsClosedByServerAsync());
        Assert.Contains("uncompressedSize 48000000 out of range", Assert.Single(server.Failures));
    }

    [Fact]
    public void Options_with_an_unknown_compressor_are_refused()
    {
        var e = Assert.Throws<ArgumentException>(() => MongoLoopbackServer.StartAsync(new MongoLoopbackServerOptions { Compressors = ["lz4"] }).GetAwaiter().GetResult());
        Assert.Contains("'lz4'", e.Message);
    }

    private static async Task<RawWire> NegotiatedAsync(MongoLoopbackServer server, params string[] compressors)
    {
        var wire = new RawWire(server.Port);
        await wire.SendAsync(RawWire.OpQuery(1, "admin.$cmd", new BsonDocument { { "isMaster", 1 }, { "compression", new BsonArray(compressors) } }));
        await wire.ReceiveAsync();
        return wire;
    }

    /// <summary>Wraps a whole message in OP_COMPRESSED, compressed as the driver compresses (Snappier raw block,
    /// zlib stream, zstd frame), declaring <paramref name="declaredSize"/> (the true size unless given).</summary>
    private static byte[] Compressed(byte[] message, byte compressorId, int? declaredSize = null)
    {
        byte[] body = message[16..];
        byte[] data = compressorId switch
        {
            1 => Snappier.Snappy.CompressToArray(body),
            2 => ZlibCompress(body),
            3 => new ZstdSharp.Compressor(6).Wrap(body).ToArray(),
            _ => body,
        };
        var result = new byte[25 + data.Length];
        BinaryPrimitives.WriteInt32LittleEndian(result, result.Length);
        message.AsSpan(4, 8).CopyTo(result.AsSpan(4));
        BinaryPrimitives.WriteInt32LittleEndian(result.AsSpan(12), 2012);
        message.AsSpan(12, 4).CopyTo(result.AsSpan(16));
        BinaryPrimitives.WriteInt32LittleEndian(result.AsSpan(20), declaredSize ?? body.Length);
        result[24] = compressorId;
        data.CopyTo(result, 25);
        return result;
    }

    /// <summary>The original message of an OP_COMPRESSED reply, header rebuilt.</summary>
    private static byte[] Decompressed(byte[] message)
    {
        int size = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(20));
        byte[] data = message[25..];
        byte[] body = message[24] switch
        {
            1 => Snappier.Snappy.DecompressToArray(data),
            2 => ZlibDecompress(data),
            3 => new ZstdSharp.Decompressor().Unwrap(data).ToArray(),
            _ => data,
        };
        Assert.Equal(size, body.Length);
        var result = new byte[16 + body.Length];
        message.AsSpan(0, 16).CopyTo(result);
        BinaryPrimitives.WriteInt32LittleEndian(result, result.Length);
        message.AsSpan(16, 4).CopyTo(result.AsSpan(12));
        body.CopyTo(result, 16);
        return result;
    }

    private static byte[] ZlibCompress(byte[] data)
    {
        using var output = new MemoryStream();
        using (var zlib = new ZLibStream(output, CompressionLevel.Optimal))
        {
            zlib.Write(data);
        }

        return output.ToArray();
    }

    private static byte[] ZlibDecompress(byte[] data)
    {
        using var input = new ZLibStream(new MemoryStream(data), CompressionMode.Decompress);
        using var output = new MemoryStream();
        input.CopyTo(output);
        return output.ToArray();
    }
}
