using Compression.Dictionaries;
using Compression.MongoDB;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// A cold application client: its own <see cref="MongoClient"/>, engine and dictionary store (nothing cached), reading
/// stored documents through the adapter's <see cref="CompressedDocumentSerializer{T}"/>, as an application would.
/// </summary>
internal sealed class AdapterReader : IAsyncDisposable
{
    private readonly MongoClient _client;
    private readonly CompressionEngine _engine;
    private readonly CompressedDocumentSerializer<LiveMovie> _serializer;

    public AdapterReader(string connection, string database, string ns, string clearField = "year")
    {
        _client = new MongoClient(connection);
        _engine = new CompressionEngine(new MongoDictionaryStore(_client.GetDatabase(database)));
        _serializer = new CompressedDocumentSerializer<LiveMovie>(_engine.GetNamespace(ns), new CompressedDocumentOptions { ClearFields = [clearField] });
    }

    public int DictionaryFetches { get; private set; }

    public LiveMovie Read(byte[] stored)
    {
        using var reader = new BsonBinaryReader(new MemoryStream(stored));
        return _serializer.Deserialize(BsonDeserializationContext.CreateRoot(reader));
    }

    public async ValueTask DisposeAsync()
    {
        await _engine.DisposeAsync();
        _client.Dispose();
    }
}
