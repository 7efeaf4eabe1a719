using System.Buffers;
using System.Text;
using System.Text.Json;
using Compression.Tool.Backends;
using Compression.Tool.Live;
using Couchbase.Core.IO.Operations;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

/// <summary>
/// <c>cat</c>, <c>export</c> and <c>import</c> on Couchbase. A document's JSON line carries its key and its decoded body
/// exactly (docs/docz.md, "export and import"):
/// <c>{"id":KEY,"value":JSON}</c>, the body's own bytes, for a JSON document on one line (the usual case);
/// <c>{"id":KEY,"json":"TEXT"}</c>, the body as a string, for a JSON body with line breaks or surrounding whitespace;
/// <c>{"id":KEY,"flags":{"dataFormat":N,"compression":N,"typeCode":N},"base64":"..."}</c> for a body the compressed collection stores as it is (not JSON flags, or
/// flagged JSON that is not well-formed), with its flags. <c>import</c> compresses the first two, as the compressing
/// transcoder writes a new document (binary flags, envelope), and writes the third as it is.
/// </summary>
internal sealed partial class CouchbaseLiveCollection
{
    private const int Parallelism = 16;

    /// <summary>The flags the compressing transcoder gives a compressed JSON object.</summary>
    private static readonly Flags CompressedFlags = new() { DataFormat = DataFormat.Binary, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = TypeCode.Object };

    /// <summary>
    /// <paramref name="query"/>'s keys (<c>--id</c>, in the order given) or the keys that start with its <c>--prefix</c> (in
    /// byte order; the KV range scan lists every key, ids only, and the prefix is matched here); all keys without either.
    /// The KV service matches nothing else without decompressing, so <c>--filter</c> is refused.
    /// </summary>
    public override async Task<BatchScan<StoredBody>> FindAsync(DocumentQuery query, long limit, int batchSize, CancellationToken cancellationToken)
    {
        if (query.Filter is not null)
            throw new UsageException("--filter is a MongoDB query; Couchbase's key-value service matches keys only: give --id KEY (repeat) or --prefix PREFIX.");
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        List<string> keys = query.Ids.Count > 0
            ? [.. query.Ids.Distinct(StringComparer.Ordinal)]
            : await BodyAccess.KeysAsync(collection, null, cancellationToken).ConfigureAwait(false);
        if (query.Prefix is { } prefix) keys.RemoveAll(key => !key.StartsWith(prefix, StringComparison.Ordinal));
        if (keys.Count > limit) keys.RemoveRange((int)limit, keys.Count - (int)limit);
        return new BatchScan<StoredBody>(keys.Count, BodyAccess.BatchesAsync(collection, keys, batchSize, cancellationToken));
    }

    public override async Task<BatchScan<StoredBody>> ScanAfterAsync(string? after, int batchSize, CancellationToken cancellationToken)
    {
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        List<string> keys = await BodyAccess.KeysAsync(collection, after, cancellationToken).ConfigureAwait(false);
        return new BatchScan<StoredBody>(keys.Count, BodyAccess.BatchesAsync(collection, keys, batchSize, cancellationToken));
    }

    public override string KeyText(StoredBody document) => document.Key;

    public override async Task<string> ToJsonLineAsync(StoredBody document, CancellationToken cancellationToken)
    {
        byte[]? json = document.Kind switch
        {
            BodyKind.Compressed or BodyKind.Foreign => await StoredJson.DecodeAsync(Handle, document, cancellationToken).ConfigureAwait(false),
            BodyKind.Plain when IsWellFormed(document.Body) => document.Body,
            _ => null, // stored as it is
        };
        var buffer = new ArrayBufferWriter<byte>((json ?? document.Body).Length + document.Key.Length + 64);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteString("id"u8, document.Key);
            if (json is null)
            {
                writer.WriteStartObject("flags"u8);
                writer.WriteNumber("dataFormat"u8, (int)document.Flags.DataFormat);
                writer.WriteNumber("compression"u8, (int)document.Flags.Compression);
                writer.WriteNumber("typeCode"u8, (int)document.Flags.TypeCode);
                writer.WriteEndObject();
                writer.WriteBase64String("base64"u8, document.Body);
            }
            else if (OnOneLine(json))
            {
                writer.WritePropertyName("value"u8);
                writer.WriteRawValue(json, skipInputValidation: true); // checked well-formed: its very bytes
            }
            else
            {
                writer.WriteString("json"u8, Encoding.UTF8.GetString(json));
            }
            writer.WriteEndObject();
        }
        return Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    public override byte[]? SampleOfLine(ReadOnlyMemory<byte> line) => Parse(line.Span) is { Flags: null } exported ? exported.Body : null;

    /// <summary>Each line's document, compressed (JSON) or as it is (<c>base64</c>), upserted under its key, up to 16 at a time.</summary>
    public override async Task<IReadOnlyList<RewriteFailure>> ImportAsync(IReadOnlyList<ImportLine> lines, CancellationToken cancellationToken)
    {
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        var failures = new RewriteFailure?[lines.Count];
        await Parallel.ForAsync(0, lines.Count, new ParallelOptions { MaxDegreeOfParallelism = Parallelism, CancellationToken = cancellationToken }, async (i, token) =>
        {
            ImportLine line = lines[i];
            try
            {
                Exported exported = Parse(line.Utf8);
                if (exported.Key.StartsWith(BodyAccess.ReservedPrefix, StringComparison.Ordinal))
                    throw new InvalidDataException($"the key '{exported.Key}' is one of the library's own ({BodyAccess.ReservedPrefix}...), not a document's");
                (byte[] body, Flags flags) = exported.Flags is { } raw ? (exported.Body, raw) : (Compressed(exported.Body), CompressedFlags);
                var options = new UpsertOptions().Transcoder(new BodyTranscoder(flags)).CancellationToken(token);
                await collection.UpsertAsync(exported.Key, (ReadOnlyMemory<byte>)body, options).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is InvalidDataException or ArgumentException)
            {
                failures[i] = new RewriteFailure(line.Name, LiveRunner.FirstLine(ex.Message));
            }
            catch (global::Couchbase.Core.Exceptions.KeyValue.ValueToolargeException ex)
            {
                failures[i] = new RewriteFailure(line.Name, $"over Couchbase's 20 MB limit once compressed ({LiveRunner.FirstLine(ex.Message)})");
            }
        }).ConfigureAwait(false);
        return [.. failures.OfType<RewriteFailure>()];
    }

    /// <summary>The envelope of a JSON body, checked to decompress to its very bytes (as <c>migrate</c> checks).</summary>
    private byte[] Compressed(byte[] json)
    {
        byte[] envelope = Handle.Compress(json);
        return Handle.Decompress(envelope).AsSpan().SequenceEqual(json)
            ? envelope
            : throw new InvalidDataException("its compressed form does not decompress to the same bytes");
    }

    /// <summary>One exported line: its key, and its JSON body (no flags) or its body as stored with its flags.</summary>
    private sealed record Exported(string Key, byte[] Body, Flags? Flags);

    /// <exception cref="InvalidDataException">The line is not one of the three forms; the message says what is wrong.</exception>
    private static Exported Parse(ReadOnlySpan<byte> line)
    {
        try
        {
            var reader = new Utf8JsonReader(line, new JsonReaderOptions { MaxDepth = 4096 });
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject) throw new InvalidDataException("not a JSON object");
            string? key = null, text = null;
            byte[]? value = null, raw = null;
            Flags? flags = null;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                string name = reader.GetString()!;
                reader.Read();
                switch (name)
                {
                    case "id":
                        key = reader.TokenType == JsonTokenType.String ? reader.GetString() : throw new InvalidDataException("\"id\" is not a string");
                        break;
                    case "value":
                        int start = checked((int)reader.TokenStartIndex);
                        reader.Skip();
                        value = line[start..checked((int)reader.BytesConsumed)].ToArray();
                        break;
                    case "json":
                        text = reader.TokenType == JsonTokenType.String ? reader.GetString() : throw new InvalidDataException("\"json\" is not a string");
                        break;
                    case "base64":
                        raw = reader.TokenType == JsonTokenType.String ? reader.GetBytesFromBase64() : throw new InvalidDataException("\"base64\" is not a string");
                        break;
                    case "flags":
                        flags = ReadFlags(ref reader);
                        break;
                    default:
                        throw new InvalidDataException($"unknown member \"{name}\" (expected id, and value, json, or flags and base64)");
                }
            }
            while (reader.Read())
            {
                // Throws for anything after the object.
            }
            if (key is null) throw new InvalidDataException("no \"id\": import writes each document under its key");
            int forms = (value is null ? 0 : 1) + (text is null ? 0 : 1) + (raw is null ? 0 : 1);
            if (forms != 1) throw new InvalidDataException("expected exactly one of \"value\", \"json\" and \"base64\"");
            if (raw is not null) return flags is { } f ? new Exported(key, raw, f) : throw new InvalidDataException("\"base64\" without \"flags\"");
            if (flags is not null) throw new InvalidDataException("\"flags\" goes with \"base64\" only");
            byte[] json = value ?? Encoding.UTF8.GetBytes(text!);
            StoredJson.WellFormed(json, "its document");
            return new Exported(key, json, null);
        }
        catch (Exception ex) when (ex is JsonException or FormatException or InvalidOperationException or OverflowException)
        {
            throw new InvalidDataException($"not a JSON line of export: {LiveRunner.FirstLine(ex.Message)}", ex);
        }
    }

    private static bool IsWellFormed(byte[] json)
    {
        try
        {
            StoredJson.WellFormed(json);
            return true;
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }

    /// <summary>Whether the body can be the line's <c>value</c> as it is: no line break (whitespace only, in well-formed JSON) and no whitespace around it.</summary>
    private static bool OnOneLine(byte[] json) =>
        json.Length > 0 && json.AsSpan().IndexOfAny((byte)'\n', (byte)'\r') < 0 && !IsSpace(json[0]) && !IsSpace(json[^1]);

    private static bool IsSpace(byte b) => b is (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\r';

    /// <summary><c>{"dataFormat":N,"compression":N,"typeCode":N}</c>: the SDK's flags of a document as their three numbers.</summary>
    private static Flags ReadFlags(ref Utf8JsonReader reader)
    {
        if (reader.TokenType != JsonTokenType.StartObject) throw new InvalidDataException("\"flags\" is not an object");
        var flags = new Flags();
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            string name = reader.GetString()!;
            reader.Read();
            int value = reader.TokenType == JsonTokenType.Number ? reader.GetInt32() : throw new InvalidDataException($"flags' \"{name}\" is not a number");
            switch (name)
            {
                case "dataFormat": flags.DataFormat = (DataFormat)value; break;
                case "compression": flags.Compression = (global::Couchbase.Core.IO.Operations.Compression)value; break;
                case "typeCode": flags.TypeCode = (TypeCode)value; break;
                default: throw new InvalidDataException($"unknown member \"{name}\" of \"flags\"");
            }
        }
        return flags;
    }
}
