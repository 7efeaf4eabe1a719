using Compression.Dictionaries;
using Compression.Tests.Conformance;

namespace Compression.Core.Tests.Adapters.KeyValue;

/// <summary>The in-memory key-value adapter passes the adapter conformance suite the MongoDB and Couchbase adapters pass.</summary>
public sealed class KeyValueConformanceTests : AdapterConformanceTests
{
    protected override Task<AdapterUnderTest> StartAsync() => Task.FromResult<AdapterUnderTest>(new KeyValueAdapter());

    private sealed class KeyValueAdapter : AdapterUnderTest
    {
        private readonly KeyValueDatabase _database = new("conformance");

        public override string NamespaceName => "kv.documents";

        public override DictionaryStore OpenStore() => new KeyValueDictionaryStore(_database);

        public override async Task WriteRawRecordAsync(uint id, string @namespace, int version, Action<IDictionaryRecordWriter> writeFields)
        {
            var writer = new KeyValueRecordFormat.Writer();
            writeFields(writer);
            await _database.SetAsync(KeyValueDictionaryStore.RecordKey(id), writer.ToBytes());
            await _database.SetAsync(KeyValueDictionaryStore.VersionKey(@namespace, version), System.Text.Encoding.UTF8.GetBytes(id.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }

        public override Task WriteAsync(CompressionEngine engine, string key, byte[] json, bool compress = true) =>
            new KeyValueDocuments(_database, engine.GetNamespace(NamespaceName), compress).PutAsync(key, json);

        public override async Task<string> ReadAsync(CompressionEngine engine, string key, bool compress = true) =>
            Canonical(await new KeyValueDocuments(_database, engine.GetNamespace(NamespaceName), compress).GetAsync(key) ?? throw new KeyNotFoundException(key));

        public override async Task WritePlainAsync(string key, byte[] json) => await _database.SetAsync(KeyValueDocuments.Key(key), json);

        public override async Task<byte[]?> ReadStoredEnvelopeAsync(string key) =>
            await _database.GetAsync(KeyValueDocuments.Key(key)) is [0xC5, ..] envelope ? envelope : null;

        public override async Task WriteStoredEnvelopeAsync(string key, byte[] envelope) => await _database.SetAsync(KeyValueDocuments.Key(key), envelope);
    }
}
