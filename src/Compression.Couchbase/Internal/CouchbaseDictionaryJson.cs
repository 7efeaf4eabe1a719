using System.Buffers;
using System.Globalization;
using System.Text.Json;
using Compression.Dictionaries;

namespace Compression.Couchbase.Internal;

/// <summary>
/// The JSON of a <see cref="CouchbaseDictionaryStore"/>'s documents: a dictionary record written and parsed (checked field by
/// field), a version key's body written, and the checked field readers the store's other parsers use. A document that does
/// not read is an <see cref="InvalidDataException"/> naming its key and the store's location.
/// </summary>
internal sealed class CouchbaseDictionaryJson(DictionaryStore store)
{
    /// <summary>The largest shape table a record may hold: what the engine's table builder ever writes (256 KiB).</summary>
    internal const int MaxShapesBytes = Compression.Structure.ShapeTransform.MaxStoredLength; // a shape table and its field model

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

    public DictionaryRecord ParseRecord(string key, ReadOnlyMemory<byte> body)
    {
        using JsonDocument json = Parse(key, body);
        JsonElement root = json.RootElement;
        string? contentBase64 = String(key, root, "content");
        byte[] content;
        try
        {
            content = Convert.FromBase64String(contentBase64 ?? "");
        }
        catch (FormatException ex)
        {
            throw new InvalidDataException($"{key} in {Location}: 'content' is not base64.", ex);
        }
        string hash = String(key, root, "contentHash") ?? "";
        if (hash.Length != 16 || !ulong.TryParse(hash, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong contentHash))
            throw new InvalidDataException($"{key} in {Location}: 'contentHash' is not 16 hex digits.");
        // The shape table is optional: records without one have neither field.
        ReadOnlyMemory<byte> shapes = default;
        ulong shapesHash = 0;
        if (root.TryGetProperty("shapes", out _) || root.TryGetProperty("shapesHash", out _))
        {
            try
            {
                shapes = Convert.FromBase64String(String(key, root, "shapes") ?? "");
            }
            catch (FormatException ex)
            {
                throw new InvalidDataException($"{key} in {Location}: 'shapes' is not base64.", ex);
            }
            if (shapes.Length > MaxShapesBytes) throw new InvalidDataException($"{key} in {Location}: 'shapes' has {shapes.Length} bytes, over {MaxShapesBytes}.");
            string shapesHashText = String(key, root, "shapesHash") ?? "";
            if (shapesHashText.Length != 16 || !ulong.TryParse(shapesHashText, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out shapesHash))
                throw new InvalidDataException($"{key} in {Location}: 'shapesHash' is not 16 hex digits.");
        }
        string codec = String(key, root, "codec") ?? "";
        if (!Enum.TryParse(codec, ignoreCase: false, out CompressionCodec parsedCodec) || !Enum.IsDefined(parsedCodec) || char.IsAsciiDigit(codec[0]))
            throw new InvalidDataException($"{key} in {Location}: 'codec' is '{codec}', not a codec name.");
        string created = String(key, root, "created") ?? "";
        if (!DateTimeOffset.TryParse(created, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind, out DateTimeOffset createdAt))
            throw new InvalidDataException($"{key} in {Location}: 'created' is not a date.");
        return new DictionaryRecord
        {
            Id = UInt(key, root, "id"),
            Namespace = String(key, root, "namespace") ?? throw new InvalidDataException($"{key} in {Location}: 'namespace' is null."),
            Version = Int(key, root, "version"),
            Content = content,
            ContentHash = contentHash,
            Created = createdAt,
            Codec = parsedCodec,
            Level = Int(key, root, "level"),
            SampleCount = Int(key, root, "sampleCount"),
            Ratio = Number(key, root, "ratio"),
            Shapes = shapes,
            ShapesHash = shapesHash,
        };
    }

    public static byte[] WriteRecord(DictionaryRecord r)
    {
        var buffer = new ArrayBufferWriter<byte>(r.Content.Length * 4 / 3 + 512);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteString("type", "compression.dictionary");
            writer.WriteNumber("id", r.Id);
            writer.WriteString("namespace", r.Namespace);
            writer.WriteNumber("version", r.Version);
            writer.WriteString("codec", r.Codec.ToString());
            writer.WriteNumber("level", r.Level);
            writer.WriteNumber("sampleCount", r.SampleCount);
            writer.WriteNumber("ratio", r.Ratio);
            writer.WriteString("created", r.Created.ToString("O", CultureInfo.InvariantCulture));
            writer.WriteString("contentHash", r.ContentHash.ToString("X16", CultureInfo.InvariantCulture));
            writer.WriteBase64String("content", r.Content.Span);
            if (!r.Shapes.IsEmpty)
            {
                writer.WriteString("shapesHash", r.ShapesHash.ToString("X16", CultureInfo.InvariantCulture));
                writer.WriteBase64String("shapes", r.Shapes.Span);
            }
            writer.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
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

    private double Number(string key, JsonElement root, string name) => Field(key, root, name, JsonValueKind.Number).GetDouble();
}
