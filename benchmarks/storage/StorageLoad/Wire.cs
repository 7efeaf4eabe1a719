using System.Buffers.Binary;
using System.Text.Json;
using MongoDB.Bson;

namespace Compression.StorageLoad;

/// <summary>
/// What the documents cost on the wire, in bytes per document, framed as a server and the driver frame them (issue #38,
/// item 3): find replies of 101 documents (the first batch's default) and of 1,000 (getMore batches), and insert
/// batches of 1,000; each as OP_MSG, and as OP_COMPRESSED around it with snappy, and with zstd at the level of whoever
/// compresses it (the server's replies: level 3; the driver's inserts: level 6). Plain = the plain BSON documents;
/// ours = the serializer's stored documents. Messages stop short of 16 MiB (replies) and 48 MB (inserts), as the server
/// and the driver split them; the corpus is cut into consecutive batches in file order, the last one shorter.
/// </summary>
internal static class Wire
{
    private const int HeaderLength = 16;
    private const int MaxReply = 16 * 1024 * 1024 - 16 * 1024;
    private const int MaxInsert = 48_000_000;

    public static void Write(Utf8JsonWriter json, List<byte[]> plain, List<byte[]> ours)
    {
        json.WriteStartObject("wire");
        Kind(json, "read101", plain, ours, 101, insert: false);
        Kind(json, "read1000", plain, ours, 1000, insert: false);
        Kind(json, "insert1000", plain, ours, 1000, insert: true);
        json.WriteEndObject();
    }

    private static void Kind(Utf8JsonWriter json, string name, List<byte[]> plain, List<byte[]> ours, int batch, bool insert)
    {
        int zstdLevel = insert ? 6 : 3;
        json.WriteStartObject(name);
        json.WriteNumber("plain", PerDocument(plain, batch, insert, compressor: null, zstdLevel));
        json.WriteNumber("snappy", PerDocument(plain, batch, insert, "snappy", zstdLevel));
        json.WriteNumber("zstd", PerDocument(plain, batch, insert, "zstd", zstdLevel));
        json.WriteNumber("ours", PerDocument(ours, batch, insert, compressor: null, zstdLevel));
        json.WriteNumber("oursZstd", PerDocument(ours, batch, insert, "zstd", zstdLevel));
        json.WriteEndObject();
    }

    private static double PerDocument(List<byte[]> documents, int batch, bool insert, string? compressor, int zstdLevel)
    {
        long total = 0;
        int first = 0, message = 0;
        while (first < documents.Count)
        {
            int count = 0;
            long bytes = 0;
            while (first + count < documents.Count && count < batch && bytes + documents[first + count].Length < (insert ? MaxInsert : MaxReply))
                bytes += documents[first + count++].Length;
            count = Math.Max(count, 1);
            byte[] body = insert ? InsertBody(documents, first, count) : ReplyBody(documents, first, count, message == 0);
            total += compressor is null ? HeaderLength + body.Length : HeaderLength + 4 + 4 + 1 + Compress(body, compressor, zstdLevel).Length;
            first += count;
            message++;
        }
        return Math.Round((double)total / documents.Count, 2);
    }

    /// <summary>OP_MSG after its header: flagBits, then a kind-0 section: the reply document with the batch in the cursor.</summary>
    private static byte[] ReplyBody(List<byte[]> documents, int first, int count, bool firstBatch)
    {
        var items = new BsonArray(count);
        for (int i = 0; i < count; i++) items.Add(new RawBsonDocument(documents[first + i]));
        var reply = new BsonDocument
        {
            { "cursor", new BsonDocument { { firstBatch ? "firstBatch" : "nextBatch", items }, { "id", 7_386_019_478_432_217_431L }, { "ns", "app.collection" } } },
            { "ok", 1.0 },
        };
        byte[] section = reply.ToBson();
        byte[] body = new byte[4 + 1 + section.Length];
        body[4] = 0;
        section.CopyTo(body, 5);
        return body;
    }

    /// <summary>OP_MSG after its header, as the driver sends an insert: flagBits, the command (kind 0), the documents (kind 1).</summary>
    private static byte[] InsertBody(List<byte[]> documents, int first, int count)
    {
        var command = new BsonDocument
        {
            { "insert", "collection" }, { "ordered", true }, { "$db", "app" },
            { "lsid", new BsonDocument("id", new BsonBinaryData(new byte[16], BsonBinarySubType.UuidStandard)) },
        };
        byte[] commandBytes = command.ToBson();
        byte[] identifier = "documents\0"u8.ToArray();
        long payload = 0;
        for (int i = 0; i < count; i++) payload += documents[first + i].Length;
        byte[] body = new byte[4 + 1 + commandBytes.Length + 1 + 4 + identifier.Length + payload];
        int at = 4;
        body[at++] = 0;
        commandBytes.CopyTo(body, at);
        at += commandBytes.Length;
        body[at++] = 1;
        BinaryPrimitives.WriteInt32LittleEndian(body.AsSpan(at), 4 + identifier.Length + (int)payload);
        at += 4;
        identifier.CopyTo(body, at);
        at += identifier.Length;
        for (int i = 0; i < count; i++)
        {
            documents[first + i].CopyTo(body, at);
            at += documents[first + i].Length;
        }
        return body;
    }

    private static byte[] Compress(byte[] body, string compressor, int zstdLevel)
    {
        if (compressor == "snappy") return Snappier.Snappy.CompressToArray(body);
        using var zstd = new ZstdSharp.Compressor(zstdLevel);
        return zstd.Wrap(body).ToArray();
    }
}
