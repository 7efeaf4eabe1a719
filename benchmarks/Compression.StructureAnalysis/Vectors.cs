using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Compression;
using Compression.Structure;

namespace Compression.StructureAnalysis;

/// <summary>
/// Writes the structure format's test vectors (tests/Compression.Core.Tests/Vectors/structure-vectors.json):
/// two shape tables from listed key lists, documents with their packed streams, one structured zstd frame with the
/// committed dictionary 4242, and packed streams every reader must refuse. The tests check every vector both ways.
/// <code>Compression.StructureAnalysis vectors OUT.json DICTIONARY-4242.bin</code>
/// </summary>
internal static class Vectors
{
    public static int Write(string path, string dictionaryPath)
    {
        ZstdDictionary dictionary = ZstdDictionary.Create(4242, File.ReadAllBytes(dictionaryPath));
        string[][] jsonShapes = [["title", "year", "genres", "rating"], ["imdb", "votes"]];
        string[][] bsonShapes = [["Title", "Year", "Rating", "Meta"], ["votes", "seen"]];
        ShapeTable json = ShapeTable.Create(DocumentKind.Json, [.. jsonShapes.Select(k => k.Select(Encoding.UTF8.GetBytes).ToArray())]);
        ShapeTable bson = ShapeTable.Create(DocumentKind.Bson, [.. bsonShapes.Select(k => k.Select(Encoding.UTF8.GetBytes).ToArray())]);
        var tables = new JsonArray
        {
            Table("json-records", json, jsonShapes),
            Table("bson-records", bson, bsonShapes),
        };

        var vectors = new JsonArray();
        var jsonTransform = new ShapeTransform(json);
        var bsonTransform = new ShapeTransform(bson);
        string movie = "{\"title\":\"The Night of the Hunter\",\"year\":1955,\"genres\":[\"Crime\",\"Drama\"],\"rating\":{\"imdb\":8.0,\"votes\":93912}}";
        vectors.Add(Vector("json-shape-ids", "known key lists: shape ids 1 and 2, short strings, an integer, a decimal of scale 1", jsonTransform, movie));
        vectors.Add(Vector("json-inline-keys", "unknown key lists (id 0, keys inline); numbers kept as text (exponent, negative zero); escapes kept raw",
            jsonTransform, "{\"caf\\u00e9\":[1,-2.50,1e5,-0,null,true,false,{},[]],\"note\":\"say \\\"hi\\\"\\n\",\"n\":-0.05}"));
        vectors.Add(Vector("json-long-string", "a string of 230 bytes (tag 05) and unicode kept as UTF-8",
            jsonTransform, "{\"title\":\"" + new string('x', 224) + " caf\u00e9\",\"year\":-1,\"genres\":[],\"rating\":{\"imdb\":0.123456789012345,\"votes\":0}}"));
        vectors.Add(Vector("bson-record", "BSON: shape ids, int32, a double packed as a decimal, a boolean", bsonTransform, BsonRecord()));
        vectors.Add(Vector("bson-types", "BSON: inline keys; doubles kept as 8 bytes (NaN, -0.0), int64, datetime, ObjectId, binary, a regex kept raw, arrays",
            bsonTransform, BsonTypes()));

        var model = new StructureModel(jsonTransform, dictionary);
        byte[] movieBytes = Encoding.UTF8.GetBytes(movie);
        byte[] frame = new byte[1024];
        if (!model.TryCompress(movieBytes, frame, 3, out int frameLength)) throw new InvalidOperationException("the movie did not pack");
        var frameVector = Vector("json-frame-dictionary-4242", "json-shape-ids as a structured frame: zstd level 3 with dictionary 4242 over the packed stream (magicless, no content size, dictionary id or checksum)", jsonTransform, movie);
        frameVector["frame"] = Convert.ToHexStringLower(frame.AsSpan(0, frameLength));
        vectors.Add(frameVector);

        byte[] moviePacked = Pack(jsonTransform, movieBytes);
        var invalid = new JsonArray
        {
            Invalid("truncated", "json-records", moviePacked[..^3], movieBytes.Length, "truncated"),
            Invalid("trailing-byte", "json-records", [.. moviePacked, 0], movieBytes.Length, "after the end"),
            Invalid("shape-not-in-table", "json-records", [3, .. moviePacked[1..]], movieBytes.Length, "not in the table"),
            Invalid("non-minimal-varint", "json-records", [0x81, 0x00, .. moviePacked[1..]], movieBytes.Length, "non-minimal"),
            Invalid("reserved-tag", "json-records", [0, 1, 1, (byte)'a', 0x0E], 16, "tag 0x0e"),
            Invalid("bson-tag-in-json", "json-records", [0, 1, 1, (byte)'a', 0x07, 2], 16, "not a JSON value"),
            Invalid("count-past-the-end", "json-records", [0, 1, 1, (byte)'a', 0x04, 0x7F], 64, "exceeds"),
            Invalid("number-text-not-a-number", "json-records", [0, 1, 1, (byte)'a', 0x08, 2, (byte)'1', (byte)'x'], 16, "number"),
            Invalid("json-decimal-19-digits", "json-records", [0, 1, 1, (byte)'a', 0x11, .. Varint(Varint64.ZigZag(1_000_000_000_000_000_000))], 64, "digits"),
            Invalid("json-string-unescaped-quote", "json-records", [0, 1, 1, (byte)'a', 0x21, (byte)'"'], 16, "not JSON string content"),
            Invalid("longer-than-declared", "json-records", moviePacked, movieBytes.Length - 1, "more than"),
            Invalid("bson-int32-out-of-range", "bson-records", [0, 1, 1, (byte)'a', 0x06, .. Varint(Varint64.ZigZag(1L << 31))], 32, "out of range"),
            Invalid("bson-mantissa-over-2^53", "bson-records", [0, 1, 1, (byte)'a', 0x10, .. Varint(Varint64.ZigZag(1L << 53))], 32, "out of range"),
            Invalid("bson-raw-bad-framing", "bson-records", [0, 1, 1, (byte)'a', 0x0D, 0x0E, 2, 9, 0], 32, "raw BSON value"),
            Invalid("bson-inline-key-with-nul", "bson-records", [0, 1, 2, (byte)'a', 0, 0x00], 32, "NUL"),
        };

        var root = new JsonObject
        {
            ["description"] = "Structure format vectors (docs/structure.md). Tables: hex of the serialized shape table, and its key lists. " +
                "Vectors: 'packed' (hex) decodes with 'table' to 'document' (hex; 'text' is the same bytes as UTF-8 for JSON), and packing " +
                "'document' gives 'packed'; 'frame' (hex) is a zstd frame of 'packed' with the dictionary named. Invalid: 'packed' must be " +
                "refused when decoding a document of 'length' bytes, with a message containing 'error'. Regenerate: " +
                "dotnet run -c Release --project benchmarks/Compression.StructureAnalysis -- vectors OUT.json tests/Compression.Core.Tests/Vectors/dictionary-4242.bin",
            ["dictionary"] = "dictionary-4242.bin",
            ["tables"] = tables,
            ["vectors"] = vectors,
            ["invalid"] = invalid,
        };
        File.WriteAllText(path, root.ToJsonString(new JsonSerializerOptions { WriteIndented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping }) + "\n");
        Console.Error.WriteLine($"wrote {path}: {vectors.Count} vectors, {invalid.Count} invalid streams");
        return 0;
    }

    private static JsonObject Table(string name, ShapeTable table, string[][] shapes) => new()
    {
        ["name"] = name,
        ["kind"] = table.Kind == DocumentKind.Json ? "json" : "bson",
        ["shapes"] = new JsonArray([.. shapes.Select(keys => (JsonNode)new JsonArray([.. keys.Select(k => (JsonNode)k)]))]),
        ["hex"] = Convert.ToHexStringLower(table.Serialize()),
    };

    private static JsonObject Vector(string name, string description, ShapeTransform transform, string text) =>
        Vector(name, description, transform, Encoding.UTF8.GetBytes(text), text);

    private static JsonObject Vector(string name, string description, ShapeTransform transform, byte[] document, string? text = null)
    {
        var vector = new JsonObject
        {
            ["name"] = name,
            ["description"] = description,
            ["table"] = transform.Table.Kind == DocumentKind.Json ? "json-records" : "bson-records",
            ["packed"] = Convert.ToHexStringLower(Pack(transform, document)),
            ["document"] = Convert.ToHexStringLower(document),
        };
        if (text is not null) vector["text"] = text;
        return vector;
    }

    private static JsonObject Invalid(string name, string table, byte[] packed, int length, string error) => new()
    {
        ["name"] = name,
        ["table"] = table,
        ["packed"] = Convert.ToHexStringLower(packed),
        ["length"] = length,
        ["error"] = error,
    };

    private static byte[] Pack(ShapeTransform transform, byte[] document)
    {
        byte[] buffer = new byte[document.Length];
        if (!transform.TryEncode(document, buffer, out int written)) throw new InvalidOperationException("a vector document did not pack");
        return buffer[..written];
    }

    private static byte[] Varint(ulong value)
    {
        byte[] bytes = new byte[10];
        Varint64.TryWrite(bytes, value, out int written);
        return bytes[..written];
    }

    private static byte[] BsonRecord()
    {
        byte[] meta = Document(Element(0x10, "votes", Int32(93912)), Element(0x08, "seen", [1]));
        return Document(Element(0x02, "Title", String("The Night of the Hunter")), Element(0x10, "Year", Int32(1955)),
            Element(0x01, "Rating", BitConverter.GetBytes(8.1)), Element(0x03, "Meta", meta));
    }

    private static byte[] BsonTypes()
    {
        byte[] array = Document(Element(0x10, "0", Int32(-7)), Element(0x02, "1", String("two")), Element(0x0A, "2", []));
        return Document(
            Element(0x01, "nan", BitConverter.GetBytes(double.NaN)),
            Element(0x01, "negativeZero", BitConverter.GetBytes(-0.0)),
            Element(0x12, "int64", BitConverter.GetBytes(-5_000_000_000L)),
            Element(0x09, "when", BitConverter.GetBytes(1_700_000_000_000L)),
            Element(0x07, "oid", Convert.FromHexString("65f0a1b2c3d4e5f601020304")),
            Element(0x05, "bin", [.. Int32(3), 0x04, 0xDE, 0xAD, 0xBF]),
            Element(0x0B, "re", "^a.*$\0i\0"u8.ToArray()),
            Element(0x04, "list", array));
    }

    private static byte[] Element(byte type, string name, byte[] value) => [type, .. Encoding.UTF8.GetBytes(name), 0, .. value];

    private static byte[] Document(params byte[][] elements)
    {
        byte[] body = [.. elements.SelectMany(e => e)];
        return [.. Int32(body.Length + 5), .. body, 0];
    }

    private static byte[] String(string value)
    {
        byte[] utf8 = Encoding.UTF8.GetBytes(value);
        return [.. Int32(utf8.Length + 1), .. utf8, 0];
    }

    private static byte[] Int32(int value)
    {
        byte[] bytes = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(bytes, value);
        return bytes;
    }
}
