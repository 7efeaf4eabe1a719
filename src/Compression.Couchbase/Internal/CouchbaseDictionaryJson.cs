using System.Buffers;
using System.Globalization;
using System.Text.Json;
using Compression.Dictionaries;

namespace Compression.Couchbase.Internal;

/// <summary>
/// The JSON of a <see cref="CouchbaseDictionaryStore"/>'s documents: a dictionary record's fields mapped to JSON for Core's
/// record codec (which owns the fields and their checks), a version key's body written, and the checked field readers the
/// store's other parsers use. A document that does
/// not read is an <see cref="InvalidDataException"/> naming its key and the store's location.
/// </summary>
internal sealed class CouchbaseDictionaryJson(DictionaryStore store)
{
    /// <summary>Where the documents are, for messages: the store's <see cref="DictionaryStore.Location"/>.</summary>
    private string Location => store.Location;

    public JsonDocument Parse(string key, ReadOnlyMemory<byte> body)
    {
        try
        {
            JsonDocument json = JsonDocument.Parse(body, new JsonDocumentOptions { MaxDepth = 8 });
            if (json.RootElement.ValueKind != JsonValueKind.Object)
            {
                json.Dispose();
                throw new InvalidDataException($"{key} in {Location} is not a JSON object.");
            }
            return json;
        }
        catch (JsonException ex)
        {
            throw new InvalidDataException($"{key} in {Location} is not valid JSON: {ex.Message}", ex);
        }
    }

    /// <summary>A record document, read through Core's record codec (which checks every field and its size).</summary>
    public DictionaryRecord ParseRecord(string key, ReadOnlyMemory<byte> body, int maxDictionaryBytes)
    {
        using JsonDocument json = Parse(key, body);
        return DictionaryRecordCodec.Read(new RecordReader(json.RootElement, $"Dictionary record {key} in {Location}"), maxDictionaryBytes);
    }

    /// <summary>The fields in the order records have always had them (the JSON is the same byte for byte).</summary>
    private static readonly DictionaryRecordField[] RecordOrder =
    [
        DictionaryRecordField.Id, DictionaryRecordField.Namespace, DictionaryRecordField.Version, DictionaryRecordField.Codec,
        DictionaryRecordField.Level, DictionaryRecordField.SampleCount, DictionaryRecordField.Ratio, DictionaryRecordField.Created,
        DictionaryRecordField.ContentHash, DictionaryRecordField.Content, DictionaryRecordField.ShapesHash, DictionaryRecordField.Shapes,
    ];

    /// <summary>A record's JSON: <c>type</c>, then the fields, hashes as 16 hex digits, bytes in base64, the created time round-trip ("O").</summary>
    public static byte[] WriteRecord(DictionaryRecord r)
    {
        var buffer = new ArrayBufferWriter<byte>((r.Content.Length + r.Shapes.Length) * 4 / 3 + 512);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteString("type", "compression.dictionary");
            DictionaryRecordCodec.Write(r, new RecordWriter(writer), RecordOrder);
            writer.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>The stored name of each field.</summary>
    private static string Name(DictionaryRecordField field) => field switch
    {
        DictionaryRecordField.Id => "id",
        DictionaryRecordField.Namespace => "namespace",
        DictionaryRecordField.Version => "version",
        DictionaryRecordField.Content => "content",
        DictionaryRecordField.ContentHash => "contentHash",
        DictionaryRecordField.Created => "created",
        DictionaryRecordField.Codec => "codec",
        DictionaryRecordField.Level => "level",
        DictionaryRecordField.SampleCount => "sampleCount",
        DictionaryRecordField.Ratio => "ratio",
        DictionaryRecordField.Shapes => "shapes",
        _ => "shapesHash",
    };

    private sealed class RecordWriter(Utf8JsonWriter writer) : IDictionaryRecordWriter
    {
        public void WriteInteger(DictionaryRecordField field, long value) => writer.WriteNumber(Name(field), value);

        public void WriteText(DictionaryRecordField field, string value) => writer.WriteString(Name(field), value);

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => writer.WriteBase64String(Name(field), value.Span);

        public void WriteHash(DictionaryRecordField field, ulong value) => writer.WriteString(Name(field), value.ToString("X16", CultureInfo.InvariantCulture));

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => writer.WriteString(Name(field), value.ToString("O", CultureInfo.InvariantCulture));

        public void WriteNumber(DictionaryRecordField field, double value) => writer.WriteNumber(Name(field), value);

        public void WriteAbsent(DictionaryRecordField field)
        {
            // records without a shape table have neither field
        }
    }

    /// <summary>A record document's fields, of the JSON types <see cref="RecordWriter"/> writes.</summary>
    private sealed class RecordReader(JsonElement root, string description) : IDictionaryRecordReader
    {
        public string Description => description;

        public string NameOf(DictionaryRecordField field) => Name(field);

        public bool Contains(DictionaryRecordField field) => root.TryGetProperty(Name(field), out _);

        public long ReadInteger(DictionaryRecordField field) =>
            Get(field, JsonValueKind.Number).TryGetInt64(out long value) ? value : throw Wrong(field, "an integer");

        public string ReadText(DictionaryRecordField field) => Get(field, JsonValueKind.String).GetString()!;

        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field) =>
            Get(field, JsonValueKind.String).TryGetBytesFromBase64(out byte[]? bytes) ? bytes : throw Wrong(field, "base64");

        public ulong ReadHash(DictionaryRecordField field)
        {
            string text = Get(field, JsonValueKind.String).GetString()!;
            return text.Length == 16 && ulong.TryParse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong hash) ? hash
                : throw Wrong(field, "16 hex digits");
        }

        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) =>
            DateTimeOffset.TryParse(Get(field, JsonValueKind.String).GetString(), CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind, out DateTimeOffset value)
                ? value : throw Wrong(field, "a date");

        public double ReadNumber(DictionaryRecordField field) =>
            Get(field, JsonValueKind.Number).TryGetDouble(out double value) ? value : throw Wrong(field, "a number");

        private JsonElement Get(DictionaryRecordField field, JsonValueKind kind)
        {
            JsonElement value = root.GetProperty(Name(field));
            return value.ValueKind == kind ? value : throw new InvalidDataException($"'{Name(field)}' is not a {kind.ToString().ToLowerInvariant()}");
        }

        private static InvalidDataException Wrong(DictionaryRecordField field, string expected) => new($"'{Name(field)}' is not {expected}");
    }

    public static byte[] WritePointer(string ns, int version, uint id) =>
        JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object> { ["namespace"] = ns, ["version"] = version, ["id"] = id });

    private JsonElement Field(string key, JsonElement root, string name, JsonValueKind kind) =>
        root.TryGetProperty(name, out JsonElement value) && value.ValueKind == kind ? value
            : throw new InvalidDataException($"{key} in {Location}: '{name}' is missing or not a {kind.ToString().ToLowerInvariant()}.");

    public string? String(string key, JsonElement root, string name) => Field(key, root, name, JsonValueKind.String).GetString();

    public int Int(string key, JsonElement root, string name) =>
        Field(key, root, name, JsonValueKind.Number).TryGetInt32(out int v) ? v : throw new InvalidDataException($"{key} in {Location}: '{name}' is not a 32-bit integer.");

    public uint UInt(string key, JsonElement root, string name) =>
        Field(key, root, name, JsonValueKind.Number).TryGetUInt32(out uint v) ? v : throw new InvalidDataException($"{key} in {Location}: '{name}' is not an unsigned 32-bit integer.");
}
