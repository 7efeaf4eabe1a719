using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;
using MongoDB.Bson;

namespace Compression.Testing.Tests.Mongo;

/// <summary>Hand-built wire messages, for what the driver never sends (checksums, moreToCome, OP_QUERY commands).</summary>
internal sealed class RawWire : IDisposable
{
    private readonly TcpClient _client;
    private readonly NetworkStream _stream;
    private int _requestId;

    public RawWire(int port)
    {
        _client = new TcpClient("127.0.0.1", port) { NoDelay = true };
        _stream = _client.GetStream();
    }

    public static byte[] OpMsg(int requestId, uint flags, BsonDocument body, string? sequenceName = null, IEnumerable<BsonDocument>? sequence = null)
    {
        using var ms = new MemoryStream();
        using var w = new BinaryWriter(ms);
        w.Write(0);
        w.Write(requestId);
        w.Write(0);
        w.Write(2013);
        w.Write(flags);
        w.Write((byte)0);
        w.Write(body.ToBson());
        if (sequenceName is not null)
        {
            var docs = sequence!.Select(d => d.ToBson()).ToList();
            var name = Encoding.UTF8.GetBytes(sequenceName);
            w.Write((byte)1);
            w.Write(4 + name.Length + 1 + docs.Sum(d => d.Length));
            w.Write(name);
            w.Write((byte)0);
            docs.ForEach(w.Write);
        }

        if ((flags & 1) != 0)
        {
            w.Write(0u);
        }

        w.Flush();
        var bytes = ms.ToArray();
        BinaryPrimitives.WriteInt32LittleEndian(bytes, bytes.Length);
        if ((flags & 1) != 0)
        {
            BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(bytes.Length - 4), Compression.Testing.Mongo.Internal.Crc32C.ComputeWithTable(bytes.AsSpan(0, bytes.Length - 4)));
        }

        return bytes;
    }

    public static byte[] OpQuery(int requestId, string collection, BsonDocument query)
    {
        using var ms = new MemoryStream();
        using var w = new BinaryWriter(ms);
        w.Write(0);
        w.Write(requestId);
        w.Write(0);
        w.Write(2004);
        w.Write(0);
        w.Write(Encoding.UTF8.GetBytes(collection));
        w.Write((byte)0);
        w.Write(0);
        w.Write(-1);
        w.Write(query.ToBson());
        w.Flush();
        var bytes = ms.ToArray();
        BinaryPrimitives.WriteInt32LittleEndian(bytes, bytes.Length);
        return bytes;
    }

    public int NextRequestId() => ++_requestId;

    public Task SendAsync(byte[] message) => _stream.WriteAsync(message).AsTask();

    /// <summary>Reads one reply: (responseTo, opCode, whole message).</summary>
    public async Task<(int ResponseTo, int OpCode, byte[] Message)> ReceiveAsync()
    {
        var header = new byte[16];
        await _stream.ReadExactlyAsync(header);
        int length = BinaryPrimitives.ReadInt32LittleEndian(header);
        var message = new byte[length];
        header.CopyTo(message, 0);
        await _stream.ReadExactlyAsync(message.AsMemory(16));
        return (BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(8)), BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(12)), message);
    }

    /// <summary>The body of an OP_MSG reply (kind 0 section right after the flags).</summary>
    public static BsonDocument MsgBody(byte[] message)
    {
        int size = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(21));
        return MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(message.AsSpan(21, size).ToArray());
    }

    public async Task<BsonDocument> CommandAsync(BsonDocument command)
    {
        int id = NextRequestId();
        await SendAsync(OpMsg(id, 0, command));
        var (_, _, message) = await ReceiveAsync();
        return MsgBody(message);
    }

    /// <summary>True when the server closed the connection (read returns 0 or fails).</summary>
    public async Task<bool> IsClosedByServerAsync()
    {
        var buffer = new byte[1];
        try
        {
            return await _stream.ReadAsync(buffer) == 0;
        }
        catch (IOException)
        {
            return true;
        }
    }

    public void Dispose()
    {
        _stream.Dispose();
        _client.Dispose();
    }
}
