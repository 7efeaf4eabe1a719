using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>The catalog's bound counts the dictionaries no namespace compresses with; the pinned ones never take their room.</summary>
public sealed class CatalogEvictionTests
{
    [Fact]
    public async Task DecompressAsync_PinnedDictionariesFillTheBound_StillReadsADocumentOfAnotherDictionary()
    {
        // Found by review: with as many namespaces holding a dictionary as MaxCachedDictionaries (64 by default), the
        // dictionary DecompressAsync loaded for a read was the only one the bound could remove, and was removed as it was
        // added; with a store that has no synchronous read (Couchbase's) the decode then failed: DictionaryNotFoundException.
        var shared = new InMemoryDictionaryStore();
        await using var writer = TestEngine.Create(shared);
        var random = new Random(11);
        async Task<byte[]> TrainAndCompress(string ns)
        {
            for (int i = 0; i < 400; i++) writer.GetNamespace(ns).Compress(TestDocuments.Movie(random));
            await writer.WhenIdleAsync();
            if (writer.GetNamespace(ns).CurrentDictionary is null) await writer.GetNamespace(ns).TrainAsync();
            Assert.NotNull(writer.GetNamespace(ns).CurrentDictionary);
            return writer.GetNamespace(ns).Compress(TestDocuments.Movie(random));
        }
        byte[] fromA = await TrainAndCompress("db.a");
        await TrainAndCompress("db.b");
        Assert.NotEqual(writer.GetNamespace("db.a").CurrentDictionary!.Id, writer.GetNamespace("db.b").CurrentDictionary!.Id);

        var options = CompressionEngineOptionsBuilder.Fast();
        options.MaxCachedDictionaries = 1; // one namespace with a dictionary fills it, as 64 do the default
        await using var reader = TestEngine.Create(new ControllableStore(shared), options); // no synchronous read, like Couchbase
        CompressionNamespace b = reader.GetNamespace("db.b");
        await reader.WhenIdleAsync();
        await b.RefreshAsync();
        Assert.NotNull(b.CurrentDictionary); // adopted: pinned

        byte[] document = await b.DecompressAsync(fromA); // any namespace reads any id
        Assert.Equal(writer.GetNamespace("db.a").Decompress(fromA), document);
        Assert.True(reader.CachedDictionaryCount >= 2, $"{reader.CachedDictionaryCount} cached");
    }

    [Fact]
    public async Task UnpinnedDictionaries_PastTheBound_AreEvictedLeastRecentlyUsedFirst()
    {
        var shared = new InMemoryDictionaryStore();
        await using var writer = TestEngine.Create(shared);
        var random = new Random(12);
        var envelopes = new List<byte[]>();
        foreach (string ns in new[] { "db.a", "db.b", "db.c" })
        {
            for (int i = 0; i < 400; i++) writer.GetNamespace(ns).Compress(TestDocuments.Movie(random));
            await writer.WhenIdleAsync();
            if (writer.GetNamespace(ns).CurrentDictionary is null) await writer.GetNamespace(ns).TrainAsync();
            envelopes.Add(writer.GetNamespace(ns).Compress(TestDocuments.Movie(random)));
        }

        var options = CompressionEngineOptionsBuilder.Fast();
        options.MaxCachedDictionaries = 2;
        await using var reader = TestEngine.Create(new ControllableStore(shared), options);
        CompressionNamespace x = reader.GetNamespace("db.x"); // has no dictionary of its own: nothing is pinned
        foreach (byte[] envelope in envelopes) Assert.NotEmpty(await x.DecompressAsync(envelope));
        Assert.Equal(2, reader.CachedDictionaryCount);
        long lookups = reader.Catalog.StoreLookups;
        Assert.NotEmpty(await x.DecompressAsync(envelopes[2])); // the newest is still there
        Assert.Equal(lookups, reader.Catalog.StoreLookups);
        Assert.NotEmpty(await x.DecompressAsync(envelopes[0])); // the oldest was evicted: read again
        Assert.Equal(lookups + 1, reader.Catalog.StoreLookups);
    }
}
