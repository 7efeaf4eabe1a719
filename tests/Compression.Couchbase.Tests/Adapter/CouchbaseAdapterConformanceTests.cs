using System.Globalization;
using System.Text.Json;
using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Compression.Tests.Conformance;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// The Couchbase adapter passes the adapter conformance suite: <see cref="CouchbaseDictionaryStore"/> and the compressed
/// collection's stored layout (a binary-flagged envelope body, or a JSON body), through the SDK against a loopback server
/// started for each test (or the cluster named by <c>COMPRESSION_TEST_COUCHBASE_CONNSTR</c>).
/// </summary>
public sealed class CouchbaseAdapterConformanceTests(ITestOutputHelper output) : AdapterConformanceTests
{
    protected override async Task<AdapterUnderTest> StartAsync()
    {
        CouchbaseTarget target = await CouchbaseTarget.StartAsync(output);
        try
        {
            return new CouchbaseAdapter(target, await target.ConnectAsync());
        }
        catch
        {
            await target.DisposeAsync();
            throw;
        }
    }

    private sealed class CouchbaseAdapter(CouchbaseTarget target, Client client) : AdapterUnderTest
    {
        private static readonly RawBinaryTranscoder Binary = new();
        private static readonly RawJsonTranscoder Json = new();

        private ICouchbaseCollection Plain => client.Plain;

        public override string NamespaceName => CouchbaseCollectionCompressionExtensions.NamespaceName(Plain);

        public override DictionaryStore OpenStore() =>
            new CouchbaseDictionaryStore(_ => ValueTask.FromResult(Plain), NamespaceName, ZstdDictionary.DefaultMaximumSize, target.StoreKeyPrefix);

        public override async Task WriteRawRecordAsync(uint id, string @namespace, int version, Action<IDictionaryRecordWriter> writeFields)
        {
            var store = (CouchbaseDictionaryStore)OpenStore();
            using var body = new MemoryStream();
            using (var writer = new Utf8JsonWriter(body))
            {
                writer.WriteStartObject();
                writer.WriteString("type", "compression.dictionary");
                writeFields(new RawWriter(writer));
                writer.WriteEndObject();
            }
            await Plain.UpsertAsync(store.RecordKey(id), body.ToArray(), new UpsertOptions().Transcoder(Json));
            await Plain.UpsertAsync(store.VersionKey(@namespace, version), CouchbaseDictionaryJson.WritePointer(@namespace, version, id), new UpsertOptions().Transcoder(Json));
        }

        private ICouchbaseCollection Compressed(CompressionEngine engine, bool compress) =>
            Plain.WithCompression(engine, new CompressedCollectionOptions { Compress = compress });

        public override async Task WriteAsync(CompressionEngine engine, string key, byte[] json, bool compress = true) =>
            await Compressed(engine, compress).UpsertAsync(target.Key(key), Docs.Parse(json));

        public override async Task<string> ReadAsync(CompressionEngine engine, string key, bool compress = true)
        {
            using IGetResult result = await Compressed(engine, compress).GetAsync(target.Key(key));
            return result.ContentAs<Newtonsoft.Json.Linq.JObject>()!.ToString(Newtonsoft.Json.Formatting.None);
        }

        public override async Task WritePlainAsync(string key, byte[] json) => await Plain.UpsertAsync(target.Key(key), Docs.Parse(json));

        public override async Task<byte[]?> ReadStoredEnvelopeAsync(string key)
        {
            RawBody body = await CouchbaseTarget.ReadRawAsync(Plain, target.Key(key));
            return body.IsEnvelope ? body.Data.ToArray() : null;
        }

        public override async Task WriteStoredEnvelopeAsync(string key, byte[] envelope) =>
            await Plain.UpsertAsync(target.Key(key), envelope, new UpsertOptions().Transcoder(Binary));

        public override string Canonical(byte[] json) => Docs.Parse(json).ToString(Newtonsoft.Json.Formatting.None);

        public override async ValueTask DisposeAsync()
        {
            await target.DisposeAsync();
            await base.DisposeAsync();
        }
    }

    /// <summary>A record's fields as <see cref="CouchbaseDictionaryStore"/> writes them (hashes as 16 hex digits, bytes in base64), whatever their value.</summary>
    private sealed class RawWriter(Utf8JsonWriter writer) : IDictionaryRecordWriter
    {
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

        public void WriteInteger(DictionaryRecordField field, long value) => writer.WriteNumber(Name(field), value);

        public void WriteText(DictionaryRecordField field, string value) => writer.WriteString(Name(field), value);

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => writer.WriteBase64String(Name(field), value.Span);

        public void WriteHash(DictionaryRecordField field, ulong value) => writer.WriteString(Name(field), value.ToString("X16", CultureInfo.InvariantCulture));

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => writer.WriteString(Name(field), value.ToString("O", CultureInfo.InvariantCulture));

        public void WriteNumber(DictionaryRecordField field, double value) => writer.WriteNumber(Name(field), value);

        public void WriteAbsent(DictionaryRecordField field)
        {
        }
    }
}
