using System.Buffers.Binary;
using System.Text.Json;
using Compression;
using Compression.StorageLoad;
using MongoDB.Bson;

// StorageLoad FILE.jsonl OUTDIR [--seed N]
// Writes OUTDIR/plain.bson ({_id, ...document} per line) and OUTDIR/compressed.bson (what Compression.MongoDB's
// serializer writes: {_id, _z: BinData(0x80, envelope)}), BSON documents one after the other, in file order; checks that
// every compressed document reads back through the serializer to the plain one; prints one JSON object of counts and
// the per-document overhead of the compressed form.
// _id: the document's own top-level _id when it has one (large.jsonl does), else its line number from 1 (an Int32).

if (args.Length < 2)
{
    Console.Error.WriteLine("usage: StorageLoad FILE.jsonl OUTDIR [--seed N]");
    return 2;
}
string input = args[0], outDir = args[1];
int seed = args.Length >= 4 && args[2] == "--seed" ? int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture) : 42;
if (!File.Exists(input))
{
    Console.Error.WriteLine($"StorageLoad: no such file: {input}");
    return 1;
}
Directory.CreateDirectory(outDir);

var plainDocuments = new List<byte[]>();
var storedDocuments = new List<byte[]>();
var overhead = new Overhead();
var versions = new List<(int Version, int AfterDocuments)>();
await using (SerializerPath path = await SerializerPath.CreateAsync(seed))
{
    int lineNumber = 0, version = 0;
    foreach (string line in File.ReadLines(input))
    {
        lineNumber++;
        if (string.IsNullOrWhiteSpace(line)) continue;
        BsonDocument fields;
        try
        {
            fields = BsonDocument.Parse(line);
        }
        catch (Exception ex) when (ex is FormatException or InvalidOperationException or BsonException)
        {
            Console.Error.WriteLine($"StorageLoad: {input}:{lineNumber}: not a JSON object: {ex.Message}");
            return 1;
        }
        BsonValue id = new BsonInt32(plainDocuments.Count + 1);
        if (fields.TryGetValue("_id", out BsonValue own))
        {
            id = own;
            fields.Remove("_id");
        }

        var plain = new BsonDocument("_id", id);
        plain.AddRange(fields);
        byte[] plainBytes = plain.ToBson();
        byte[] stored = path.Serialize(new StoredDocument { Id = id, Fields = fields });
        plainDocuments.Add(plainBytes);
        storedDocuments.Add(stored);
        overhead.Add(plainBytes, stored);
        if (path.DictionaryVersion != version)
        {
            version = path.DictionaryVersion;
            versions.Add((version, plainDocuments.Count));
        }
    }

    // Everything written must read back, byte for byte, as the plain document.
    for (int i = 0; i < storedDocuments.Count; i++)
    {
        StoredDocument back = path.Deserialize(storedDocuments[i]);
        var rebuilt = new BsonDocument("_id", back.Id);
        rebuilt.AddRange(back.Fields);
        if (!rebuilt.ToBson().AsSpan().SequenceEqual(plainDocuments[i]))
        {
            Console.Error.WriteLine($"StorageLoad: document {i + 1} of {input} does not read back through the serializer as written");
            return 1;
        }
    }
}

WriteAll(Path.Combine(outDir, "plain.bson"), plainDocuments);
WriteAll(Path.Combine(outDir, "compressed.bson"), storedDocuments);

using (var json = new Utf8JsonWriter(Console.OpenStandardOutput()))
{
    json.WriteStartObject();
    json.WriteString("corpus", Path.GetFileNameWithoutExtension(input));
    json.WriteNumber("documents", plainDocuments.Count);
    json.WriteNumber("jsonBytes", new FileInfo(input).Length);
    json.WriteNumber("bsonBytes", plainDocuments.Sum(d => (long)d.Length));
    json.WriteNumber("storedBytes", storedDocuments.Sum(d => (long)d.Length));
    json.WriteStartArray("dictionaryVersions");
    foreach (var (v, after) in versions)
    {
        json.WriteStartObject();
        json.WriteNumber("version", v);
        json.WriteNumber("afterDocuments", after);
        json.WriteEndObject();
    }
    json.WriteEndArray();
    overhead.Write(json);
    json.WriteEndObject();
}
Console.WriteLine();
return 0;

static void WriteAll(string path, List<byte[]> documents)
{
    using var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 20);
    foreach (byte[] document in documents) file.Write(document);
}

/// <summary>
/// Sums, over the documents, the bytes of each part of a stored <c>{_id, _z: BinData(0x80, envelope)}</c> document:
/// the BSON wrapper (document length and terminator, the <c>_id</c> element, the <c>_z</c> element's type, name,
/// length and subtype) and the envelope (magic, header byte, length varint, dictionary id varint, checksum, zstd frame
/// header, zstd block headers, the rest: compressed content, or the document itself when stored).
/// </summary>
internal sealed class Overhead
{
    private long _documents, _plain, _stored, _envelope, _documentFraming, _idElement, _zElementHeader;
    private long _magic, _header, _lengthVarint, _dictionaryVarint, _checksum, _frameHeader, _blockHeaders, _content;
    private long _withDictionary, _storedCodec;

    public void Add(byte[] plain, byte[] stored)
    {
        _documents++;
        _plain += plain.Length;
        _stored += stored.Length;
        _documentFraming += 5; // int32 length + terminating 0
        int offset = 4;
        ReadOnlySpan<byte> envelope = default;
        while (stored[offset] != 0)
        {
            int start = offset;
            byte type = stored[offset++];
            int nameEnd = Array.IndexOf(stored, (byte)0, offset);
            string name = System.Text.Encoding.UTF8.GetString(stored, offset, nameEnd - offset);
            offset = nameEnd + 1;
            int valueLength = ValueLength(type, stored.AsSpan(offset));
            if (name == "_z" && type == 0x05)
            {
                int binaryLength = BinaryPrimitives.ReadInt32LittleEndian(stored.AsSpan(offset));
                envelope = stored.AsSpan(offset + 5, binaryLength);
                _zElementHeader += offset + 5 - start;
            }
            else if (name == "_id")
            {
                _idElement += offset + valueLength - start;
            }
            else
            {
                throw new InvalidDataException($"unexpected element '{name}' in a stored document");
            }
            offset += valueLength;
        }
        if (envelope.IsEmpty) throw new InvalidDataException("stored document without _z");
        _envelope += envelope.Length;

        if (!DocumentEnvelope.TryReadHeader(envelope, out var header))
            throw new InvalidDataException("_z does not hold an envelope");
        _magic++;
        _header++;
        _lengthVarint += VarintLength((uint)header.UncompressedLength);
        if (header.DictionaryId is uint dictionaryId)
        {
            _dictionaryVarint += VarintLength(dictionaryId);
            _withDictionary++;
        }
        if (header.HasChecksum) _checksum += 4;
        ReadOnlySpan<byte> payload = envelope.Slice(header.HeaderLength, header.PayloadLength);
        if (header.Codec == CompressionCodec.Zstd)
        {
            (int frameHeader, int blockHeaders) = ZstdFraming(payload);
            _frameHeader += frameHeader;
            _blockHeaders += blockHeaders;
            _content += payload.Length - frameHeader - blockHeaders;
        }
        else
        {
            if (header.Codec == CompressionCodec.Stored) _storedCodec++;
            _content += payload.Length;
        }
    }

    public void Write(Utf8JsonWriter json)
    {
        json.WriteStartObject("overhead");
        json.WriteNumber("documents", _documents);
        json.WriteNumber("withDictionary", _withDictionary);
        json.WriteNumber("storedUncompressed", _storedCodec);
        json.WriteNumber("plainBytes", _plain);
        json.WriteNumber("storedBytes", _stored);
        json.WriteNumber("envelopeBytes", _envelope);
        json.WriteNumber("wrapperBytes", _stored - _envelope);
        json.WriteStartObject("wrapper");
        json.WriteNumber("documentLengthAndTerminator", _documentFraming);
        json.WriteNumber("idElement", _idElement);
        json.WriteNumber("zElementHeader", _zElementHeader);
        json.WriteEndObject();
        json.WriteStartObject("envelope");
        json.WriteNumber("magic", _magic);
        json.WriteNumber("header", _header);
        json.WriteNumber("lengthVarint", _lengthVarint);
        json.WriteNumber("dictionaryIdVarint", _dictionaryVarint);
        json.WriteNumber("checksum", _checksum);
        json.WriteNumber("zstdFrameHeader", _frameHeader);
        json.WriteNumber("zstdBlockHeaders", _blockHeaders);
        json.WriteNumber("content", _content);
        json.WriteEndObject();
        json.WriteEndObject();
    }

    private static int VarintLength(uint value)
    {
        int n = 1;
        while (value >= 0x80) { value >>= 7; n++; }
        return n;
    }

    /// <summary>The frame header and block header bytes of a zstd frame (magicless frames, as the envelope stores them).</summary>
    private static (int FrameHeader, int BlockHeaders) ZstdFraming(ReadOnlySpan<byte> frame)
    {
        byte descriptor = frame[0];
        int contentSizeFlag = descriptor >> 6;
        bool singleSegment = (descriptor & 0x20) != 0;
        int dictionaryIdFlag = descriptor & 3;
        int header = 1 + (singleSegment ? 0 : 1) + dictionaryIdFlag switch { 0 => 0, 1 => 1, 2 => 2, _ => 4 }
            + contentSizeFlag switch { 0 => singleSegment ? 1 : 0, 1 => 2, 2 => 4, _ => 8 };
        if ((descriptor & 0x04) != 0) throw new InvalidDataException("zstd frame with a checksum: the envelope's frames have none");
        int offset = header, blocks = 0;
        while (true)
        {
            int block = frame[offset] | frame[offset + 1] << 8 | frame[offset + 2] << 16;
            offset += 3;
            blocks++;
            int type = (block >> 1) & 3;
            offset += type == 1 ? 1 : block >> 3;
            if ((block & 1) != 0) break;
        }
        if (offset != frame.Length) throw new InvalidDataException($"zstd frame of {frame.Length} bytes parsed as {offset}");
        return (header, 3 * blocks);
    }

    /// <summary>Length of a BSON value of the types an <c>_id</c> or <c>_z</c> can have here.</summary>
    private static int ValueLength(byte type, ReadOnlySpan<byte> value) => type switch
    {
        0x01 or 0x09 or 0x11 or 0x12 => 8,
        0x10 => 4,
        0x08 => 1,
        0x07 => 12,
        0x0A => 0,
        0x02 => 4 + BinaryPrimitives.ReadInt32LittleEndian(value),
        0x05 => 5 + BinaryPrimitives.ReadInt32LittleEndian(value),
        0x03 or 0x04 => BinaryPrimitives.ReadInt32LittleEndian(value),
        _ => throw new InvalidDataException($"_id of BSON type 0x{type:x2} is not handled by the overhead count"),
    };
}
