using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>
/// Dictionary documents already stored keep their exact form: the store reads the documents an earlier version wrote
/// (the JavaScript reader's fixture, clients/js/test/fixtures/dotnet/dictionaries.bson), and writes the same records
/// byte for byte, as the folder store's copies of them say they are.
/// </summary>
public sealed class StoredDictionaryDocumentTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private static string Fixture()
    {
        string? directory = AppContext.BaseDirectory;
        while (directory is not null && !File.Exists(Path.Combine(directory, "Compression.sln"))) directory = Path.GetDirectoryName(directory);
        Assert.NotNull(directory);
        return Path.Combine(directory, "clients", "js", "test", "fixtures", "dotnet");
    }

    private static List<byte[]> Documents(byte[] bytes)
    {
        var documents = new List<byte[]>();
        for (int offset = 0; offset < bytes.Length;)
        {
            int length = BitConverter.ToInt32(bytes, offset);
            documents.Add(bytes[offset..(offset + length)]);
            offset += length;
        }
        return documents;
    }

    [Fact]
    public async Task DocumentsWrittenBeforeTheCodec_ReadAsTheSameRecords_AndAreWrittenAgainByteForByte()
    {
        string folder = Fixture();
        List<byte[]> stored = Documents(File.ReadAllBytes(Path.Combine(folder, "dictionaries.bson")));
        Assert.Equal(4, stored.Count);
        var files = new FileDictionaryStore(Path.Combine(folder, "files"));

        await using var db = fixture.Server.CreateDatabase("stored-form");
        var raw = db.Database.GetCollection<RawBsonDocument>(MongoDictionaryStore.CollectionName);
        foreach (byte[] bytes in stored) await raw.InsertOneAsync(new RawBsonDocument(bytes));
        var store = new MongoDictionaryStore(db.Database);

        foreach (byte[] bytes in stored)
        {
            uint id = (uint)new RawBsonDocument(bytes)["_id"].AsInt64;
            DictionaryRecord fromMongo = (await store.GetAsync(id))!;
            DictionaryRecord fromFiles = files.Get(id)!;
            Assert.Equal(fromFiles with { Content = default, Shapes = default }, fromMongo with { Content = default, Shapes = default });
            Assert.Equal(fromFiles.Content.ToArray(), fromMongo.Content.ToArray());
            Assert.Equal(fromFiles.Shapes.ToArray(), fromMongo.Shapes.ToArray());
            Assert.Equal(bytes, MongoDictionaryStore.ToDocument(fromMongo).ToBson());
            Assert.Equal(bytes, MongoDictionaryStore.ToDocument(fromFiles).ToBson());
        }
    }
}
