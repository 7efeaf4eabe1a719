using System.Globalization;
using System.IO.Hashing;
using System.Text;
using System.Text.Json;
using Compression.Dictionaries;

namespace Compression.Tool.Live;

/// <summary>
/// The file of <c>docz dictionaries export</c> and <c>import</c> (docs/docz.md, "The dictionaries file"): JSON Lines in
/// UTF-8, a header line, one line per dictionary record with every field of <see cref="DictionaryRecordCodec"/> (bytes in
/// base64, hashes as 16 hexadecimal digits, so that a record is restored exactly) and a <c>recordHash</c> over its fields,
/// then an end line with the number of records, so that a truncated file is told from a complete one.
/// </summary>
/// <remarks>
/// Nothing in the file is trusted when it is read back: each line is checked as a record from a store is (every field,
/// then the content and shape table against their hashes, then that zstd loads the dictionary), the record against its
/// <c>recordHash</c>, ids and versions against each other's lines; any problem names its line and nothing is imported.
/// </remarks>
internal static class DictionaryFile
{
    public const string FormatName = "docz-dictionaries";

    public const int FormatVersion = 1;

    /// <summary>The largest dictionary a line may hold: the largest <c>MaxDictionaryBytes</c> a configuration allows (the store's own is checked on import).</summary>
    public const int MaxDictionaryBytes = 64 * 1024 * 1024;

    /// <summary>How many problems of a file are listed (all are counted).</summary>
    private const int MaxListedProblems = 20;

    /// <summary>Writes the file: the header, the records in the order given, the end line.</summary>
    public static async Task WriteAsync(Stream stream, IReadOnlyList<string> sources, IReadOnlyList<DictionaryRecord> records, DateTimeOffset exported,
        CancellationToken cancellationToken)
    {
        await WriteLineAsync(stream, json =>
        {
            json.WriteString("format", FormatName);
            json.WriteNumber("formatVersion", FormatVersion);
            json.WriteString("exported", exported.ToUniversalTime().ToString("O", CultureInfo.InvariantCulture));
            json.WriteStartArray("sources");
            foreach (string source in sources) json.WriteStringValue(source);
            json.WriteEndArray();
        }, cancellationToken).ConfigureAwait(false);
        foreach (DictionaryRecord record in records)
        {
            await WriteLineAsync(stream, json =>
            {
                DictionaryRecordCodec.Write(record, new Writer(json));
                json.WriteString("recordHash", Hex(RecordHash(record)));
            }, cancellationToken).ConfigureAwait(false);
        }
        await WriteLineAsync(stream, json =>
        {
            json.WriteBoolean("end", true);
            json.WriteNumber("records", records.Count);
        }, cancellationToken).ConfigureAwait(false);
    }

    private static async Task WriteLineAsync(Stream stream, Action<Utf8JsonWriter> body, CancellationToken cancellationToken)
    {
        using var buffer = new MemoryStream();
        // Relaxed escaping: the file stays readable ('+' in a time, non-ASCII namespace names); it is never embedded in HTML.
        await using (var json = new Utf8JsonWriter(buffer, new JsonWriterOptions { Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            json.WriteStartObject();
            body(json);
            json.WriteEndObject();
        }
        buffer.WriteByte((byte)'\n');
        await stream.WriteAsync(buffer.GetBuffer().AsMemory(0, (int)buffer.Length), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The file's records, each checked, with their line numbers; or the file's problems, each naming its line.</summary>
    /// <param name="path">The file.</param>
    /// <param name="maxDictionaryBytes">The largest dictionary accepted.</param>
    /// <param name="cancellationToken">Stops the reading.</param>
    public static async Task<(List<(int Line, DictionaryRecord Record)> Records, List<string> Problems)> ReadAsync(string path, int maxDictionaryBytes,
        CancellationToken cancellationToken)
    {
        var records = new List<(int Line, DictionaryRecord Record)>();
        var problems = new List<string>();
        var ids = new Dictionary<uint, int>();
        var versions = new Dictionary<(string, int), int>();
        long maxLine = DictionaryRecordCodec.MaxRecordBytes(maxDictionaryBytes, base64: true) + 1024;
        bool header = false;
        int? end = null;
        int lineNumber = 0, recordLines = 0;
        using var reader = new StreamReader(path, new UTF8Encoding(false, throwOnInvalidBytes: true));
        while (true)
        {
            string? line;
            try
            {
                line = await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (DecoderFallbackException)
            {
                problems.Add($"line {lineNumber + 1}: not UTF-8 text.");
                break;
            }
            if (line is null) break;
            lineNumber++;
            if (string.IsNullOrWhiteSpace(line)) continue;
            if (problems.Count > MaxListedProblems) continue; // counted below as "more"
            if (end is not null)
            {
                problems.Add($"line {lineNumber}: there is more after the end line (line {end}).");
                break;
            }
            if (line.Length > maxLine)
            {
                problems.Add($"line {lineNumber}: {line.Length:N0} characters, more than a record of at most {maxDictionaryBytes:N0} dictionary bytes can take.");
                continue;
            }
            JsonDocument document;
            try
            {
                document = JsonDocument.Parse(line);
            }
            catch (JsonException ex)
            {
                problems.Add($"line {lineNumber}: not a JSON object ({ex.Message})");
                continue;
            }
            using (document)
            {
                JsonElement root = document.RootElement;
                if (root.ValueKind != JsonValueKind.Object)
                {
                    problems.Add($"line {lineNumber}: not a JSON object.");
                    continue;
                }
                if (!header)
                {
                    if (CheckHeader(root) is { } wrong)
                    {
                        problems.Add($"line {lineNumber}: {wrong}");
                        break; // not this format: the rest would only repeat it
                    }
                    header = true;
                    continue;
                }
                if (root.TryGetProperty("end", out JsonElement endElement))
                {
                    end = lineNumber;
                    if (endElement.ValueKind != JsonValueKind.True || !root.TryGetProperty("records", out JsonElement count)
                        || !count.TryGetInt32(out int n))
                        problems.Add($"line {lineNumber}: the end line must be {{\"end\":true,\"records\":<count>}}.");
                    else if (n != recordLines)
                        problems.Add($"line {lineNumber}: the end line says {n} records, the file has {recordLines}.");
                    continue;
                }
                recordLines++;
                try
                {
                    DictionaryRecord record = ReadRecord(root, $"{path} line {lineNumber}", maxDictionaryBytes);
                    if (ids.TryGetValue(record.Id, out int other))
                        throw new InvalidDataException($"line {lineNumber}: dictionary id {record.Id} is also on line {other}.");
                    if (versions.TryGetValue((record.Namespace, record.Version), out other))
                        throw new InvalidDataException($"line {lineNumber}: version {record.Version} of '{record.Namespace}' is also on line {other}.");
                    ids[record.Id] = lineNumber;
                    versions[(record.Namespace, record.Version)] = lineNumber;
                    records.Add((lineNumber, record));
                }
                catch (InvalidDataException ex)
                {
                    problems.Add(ex.Message);
                }
            }
        }
        if (lineNumber == 0) problems.Add("the file is empty: a dictionaries file starts with its header line.");
        else if (header && end is null)
            problems.Add($"the file ends at line {lineNumber} without its end line: it is truncated (or not complete).");
        if (problems.Count > MaxListedProblems + 1) problems = [.. problems.Take(MaxListedProblems), "... and more (the first are listed)."];
        return (records, problems);
    }

    private static string? CheckHeader(JsonElement root)
    {
        if (!root.TryGetProperty("format", out JsonElement format) || format.ValueKind != JsonValueKind.String || format.GetString() != FormatName)
            return $"not a docz dictionaries file: its first line is not the header {{\"format\":\"{FormatName}\",...}}.";
        if (!root.TryGetProperty("formatVersion", out JsonElement version) || !version.TryGetInt32(out int v) || v < 1)
            return "the header has no formatVersion.";
        if (v > FormatVersion) return $"the file is of format version {v}; this docz reads version {FormatVersion}: use a newer docz.";
        return null;
    }

    /// <summary>One record line: every field checked by <see cref="DictionaryRecordCodec.Read"/>, then hashes, zstd, the record hash.</summary>
    private static DictionaryRecord ReadRecord(JsonElement root, string where, int maxDictionaryBytes)
    {
        DictionaryRecord record = DictionaryRecordCodec.Read(new Reader(root, where), maxDictionaryBytes);
        DictionaryRecordValidator.Validate(record, new Where(where), expectedId: null, expectedNamespace: null, maxDictionaryBytes);
        if (!root.TryGetProperty("recordHash", out JsonElement hash) || hash.ValueKind != JsonValueKind.String)
            throw new InvalidDataException($"{where}: the record has no recordHash.");
        if (!TryParseHex(hash.GetString()!, out ulong expected) || expected != RecordHash(record))
            throw new InvalidDataException($"{where}: dictionary {record.Id} (version {record.Version} of '{record.Namespace}') does not match its recordHash: the line was changed after it was exported.");
        return record;
    }

    /// <summary>XxHash3 over every field but the content and shape table, which their own hashes cover.</summary>
    internal static ulong RecordHash(DictionaryRecord record)
    {
        string text = string.Join('\n',
            record.Id.ToString(CultureInfo.InvariantCulture), record.Namespace, record.Version.ToString(CultureInfo.InvariantCulture),
            Hex(record.ContentHash), Hex(record.ShapesHash), record.Shapes.Length.ToString(CultureInfo.InvariantCulture),
            record.Created.UtcTicks.ToString(CultureInfo.InvariantCulture), record.Codec.ToString(), record.Level.ToString(CultureInfo.InvariantCulture),
            record.SampleCount.ToString(CultureInfo.InvariantCulture), BitConverter.DoubleToInt64Bits(record.Ratio).ToString(CultureInfo.InvariantCulture));
        return XxHash3.HashToUInt64(Encoding.UTF8.GetBytes(text));
    }

    internal static string Hex(ulong value) => value.ToString("X16", CultureInfo.InvariantCulture);

    private static bool TryParseHex(string text, out ulong value) =>
        ulong.TryParse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out value) && text.Length == 16;

    internal static string Name(DictionaryRecordField field) => field switch
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

    private sealed class Writer(Utf8JsonWriter json) : IDictionaryRecordWriter
    {
        public void WriteInteger(DictionaryRecordField field, long value) => json.WriteNumber(Name(field), value);

        public void WriteText(DictionaryRecordField field, string value) => json.WriteString(Name(field), value);

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => json.WriteBase64String(Name(field), value.Span);

        public void WriteHash(DictionaryRecordField field, ulong value) => json.WriteString(Name(field), Hex(value));

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) =>
            json.WriteString(Name(field), value.ToUniversalTime().ToString("O", CultureInfo.InvariantCulture));

        public void WriteNumber(DictionaryRecordField field, double value) => json.WriteNumber(Name(field), value);

        public void WriteAbsent(DictionaryRecordField field)
        {
            // a record without a shape table has neither field
        }
    }

    private sealed class Reader(JsonElement root, string where) : IDictionaryRecordReader
    {
        public string Description => where;

        public string NameOf(DictionaryRecordField field) => Name(field);

        public bool Contains(DictionaryRecordField field) => root.TryGetProperty(Name(field), out JsonElement value) && value.ValueKind != JsonValueKind.Null;

        public long ReadInteger(DictionaryRecordField field) =>
            Get(field, JsonValueKind.Number, "an integer").TryGetInt64(out long value) ? value : throw Wrong(field, "an integer");

        public string ReadText(DictionaryRecordField field) => Get(field, JsonValueKind.String, "a string").GetString()!;

        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field) =>
            Get(field, JsonValueKind.String, "base64 text").TryGetBytesFromBase64(out byte[]? bytes) ? bytes : throw Wrong(field, "base64 text");

        public ulong ReadHash(DictionaryRecordField field) =>
            TryParseHex(Get(field, JsonValueKind.String, "16 hexadecimal digits").GetString()!, out ulong value) ? value : throw Wrong(field, "16 hexadecimal digits");

        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) =>
            DateTimeOffset.TryParseExact(Get(field, JsonValueKind.String, "an ISO 8601 time").GetString(), "O", CultureInfo.InvariantCulture,
                DateTimeStyles.RoundtripKind, out DateTimeOffset value) ? value : throw Wrong(field, "an ISO 8601 time (round-trip format)");

        public double ReadNumber(DictionaryRecordField field) =>
            Get(field, JsonValueKind.Number, "a number").TryGetDouble(out double value) ? value : throw Wrong(field, "a number");

        private JsonElement Get(DictionaryRecordField field, JsonValueKind kind, string expected)
        {
            JsonElement value = root.GetProperty(Name(field));
            return value.ValueKind == kind ? value : throw Wrong(field, expected);
        }

        private static InvalidDataException Wrong(DictionaryRecordField field, string expected) => new($"field '{Name(field)}' is not {expected}");
    }

    /// <summary>The file's line as the validator names where a record comes from (it is no store: nothing is read from it).</summary>
    private sealed class Where(string where) : DictionaryStore
    {
        public override string Location => where;

        public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default) => throw new NotSupportedException();

        public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default) => throw new NotSupportedException();

        public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default) => throw new NotSupportedException();

        public override IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default) => throw new NotSupportedException();
    }
}
