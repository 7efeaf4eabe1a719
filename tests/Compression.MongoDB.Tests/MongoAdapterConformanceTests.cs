using Compression.Dictionaries;
using Compression.Testing.Mongo;
using Compression.Tests.Conformance;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>A document of the conformance suite: its id in the clear, every other element compressed.</summary>
public sealed class ConformanceDocument
{
    public string Id { get; set; } = "";

    [BsonExtraElements]
    public BsonDocument Body { get; set; } = [];
}

/// <summary>
/// The MongoDB adapter passes the adapter conformance suite: <see cref="MongoDictionaryStore"/> and the stored layout of
/// <see cref="CompressedDocumentSerializer{T}"/> (<c>{ _id, _z: BinData(0x81, envelope) }</c>), through the real driver
/// against the loopback server (or COMPRESSION_TEST_MONGODB_URI), one database per test.
/// </summary>
public sealed class MongoAdapterConformanceTests(MongoFixture fixture) : AdapterConformanceTests, IClassFixture<MongoFixture>
{
    protected override Task<AdapterUnderTest> StartAsync() => Task.FromResult<AdapterUnderTest>(new MongoAdapter(fixture.Server.CreateDatabase("conformance")));

    private sealed class MongoAdapter(MongoTestDatabase db) : AdapterUnderTest
    {
        private static readonly JsonWriterSettings Relaxed = new() { OutputMode = JsonOutputMode.RelaxedExtendedJson };

        private IMongoCollection<BsonDocument> Documents => db.Database.GetCollection<BsonDocument>("documents");

        public override string NamespaceName => $"{db.Name}.documents";

        public override DictionaryStore OpenStore() => new MongoDictionaryStore(db.Database);

        public override async Task WriteRawRecordAsync(uint id, string @namespace, int version, Action<IDictionaryRecordWriter> writeFields)
        {
            var document = new BsonDocument();
            writeFields(new RawWriter(document)); // the store files a record by its own fields: _id, ns and v
            await db.Database.GetCollection<BsonDocument>(MongoDictionaryStore.CollectionName).InsertOneAsync(document);
        }

        private static CompressedDocumentSerializer<ConformanceDocument> Serializer(CompressionEngine engine, string ns, bool compress) =>
            new(engine.GetNamespace(ns), new CompressedDocumentOptions { Compress = compress });

        public override async Task WriteAsync(CompressionEngine engine, string key, byte[] json, bool compress = true)
        {
            var stored = new BsonDocument();
            using (var writer = new BsonDocumentWriter(stored))
            {
                Serializer(engine, NamespaceName, compress).Serialize(BsonSerializationContext.CreateRoot(writer),
                    new ConformanceDocument { Id = key, Body = BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(json)) });
            }
            await Documents.ReplaceOneAsync(new BsonDocument("_id", key), stored, new ReplaceOptions { IsUpsert = true });
        }

        public override async Task<string> ReadAsync(CompressionEngine engine, string key, bool compress = true)
        {
            // The driver decodes the reply with the compressed serializer, as a mapped collection does.
            ConformanceDocument read = await Documents.Find(new BsonDocument("_id", key)).As(Serializer(engine, NamespaceName, compress)).SingleAsync();
            return read.Body.ToJson(Relaxed);
        }

        public override async Task WritePlainAsync(string key, byte[] json)
        {
            var plain = new BsonDocument("_id", key);
            plain.AddRange(BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(json)));
            await Documents.InsertOneAsync(plain);
        }

        public override async Task<byte[]?> ReadStoredEnvelopeAsync(string key)
        {
            BsonDocument stored = await Documents.Find(new BsonDocument("_id", key)).SingleAsync();
            return stored.TryGetValue(StoredLayout.CompressedName, out BsonValue z) && z is BsonBinaryData { SubType: (BsonBinarySubType)StoredLayout.ElementsSubtype or (BsonBinarySubType)StoredLayout.DocumentSubtype } binary
                ? binary.Bytes : null;
        }

        public override async Task WriteStoredEnvelopeAsync(string key, byte[] envelope) =>
            await Documents.ReplaceOneAsync(new BsonDocument("_id", key),
                new BsonDocument { { "_id", key }, { StoredLayout.CompressedName, new BsonBinaryData(envelope, (BsonBinarySubType)StoredLayout.ElementsSubtype) } },
                new ReplaceOptions { IsUpsert = true });

        public override string Canonical(byte[] json) => BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(json)).ToJson(Relaxed);

        public override async ValueTask DisposeAsync()
        {
            await db.DisposeAsync();
            await base.DisposeAsync();
        }
    }

    /// <summary>A record's fields as <see cref="MongoDictionaryStore"/> writes them (the id an Int64, other integers Int32, hashes as Int64 bits), whatever their value.</summary>
    private sealed class RawWriter(BsonDocument document) : IDictionaryRecordWriter
    {
        private static string Name(DictionaryRecordField field) => MongoDictionaryStore.Fields.Name(field);

        public void WriteInteger(DictionaryRecordField field, long value) =>
            document.Add(Name(field), field == DictionaryRecordField.Id ? new BsonInt64(value) : new BsonInt32(checked((int)value)));

        public void WriteText(DictionaryRecordField field, string value) => document.Add(Name(field), value);

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => document.Add(Name(field), new BsonBinaryData(value.ToArray(), BsonBinarySubType.Binary));

        public void WriteHash(DictionaryRecordField field, ulong value) => document.Add(Name(field), unchecked((long)value));

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => document.Add(Name(field), new BsonDateTime(value.UtcDateTime));

        public void WriteNumber(DictionaryRecordField field, double value) => document.Add(Name(field), value);

        public void WriteAbsent(DictionaryRecordField field)
        {
        }
    }
}
