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
        // The oldest was evicted, and once nothing holds it (collected), it is read again.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.NotEmpty(await x.DecompressAsync(envelopes[0]));
        Assert.Equal(lookups + 1, reader.Catalog.StoreLookups);
    }

    private static async Task<List<(byte[] Document, byte[] Envelope)>> WrittenWithDictionariesAsync(InMemoryDictionaryStore shared, string[] namespaces, int perNamespace, int seed)
    {
        await using var writer = TestEngine.Create(shared);
        var random = new Random(seed);
        var written = new List<(byte[], byte[])>();
        foreach (string ns in namespaces)
        {
            var n = writer.GetNamespace(ns);
            for (int i = 0; i < 400; i++) n.Compress(TestDocuments.Movie(random));
            await writer.WhenIdleAsync();
            if (n.CurrentDictionary is null) await n.TrainAsync();
            Assert.NotNull(n.CurrentDictionary);
            for (int i = 0; i < perNamespace; i++)
            {
                byte[] d = TestDocuments.Movie(random);
                written.Add((d, n.Compress(d)));
            }
        }
        return written;
    }

    [Fact]
    public async Task ADictionaryLoadedAndHeld_EvictedByOtherReadsBeforeItsSynchronousDecode_IsTakenBackNotReadAgain()
    {
        // Found by review: a load (PreloadDictionaryAsync; the Couchbase decorator's pre-load) followed by a synchronous
        // decode failed with DictionaryNotFoundException when other readers' loads evicted the dictionary in between.
        var shared = new InMemoryDictionaryStore();
        var written = await WrittenWithDictionariesAsync(shared, ["db.a", "db.b"], 1, 31);
        var options = CompressionEngineOptionsBuilder.Fast();
        options.MaxCachedDictionaries = 1;
        await using var reader = TestEngine.Create(new ControllableStore(shared), options); // no synchronous read, like Couchbase
        CompressionNamespace x = reader.GetNamespace("db.x");
        await reader.WhenIdleAsync();

        ZstdDictionary? held = await x.PreloadDictionaryAsync(written[0].Envelope);
        Assert.NotNull(held);
        Assert.NotEmpty(await x.DecompressAsync(written[1].Envelope)); // another reader's load: the bound evicts the first
        long lookups = reader.Catalog.StoreLookups;

        Assert.Equal(written[0].Document, x.Decompress(written[0].Envelope));
        Assert.Equal(lookups, reader.Catalog.StoreLookups);
        GC.KeepAlive(held);
    }

    [Fact]
    public async Task DecompressAsync_ConcurrentReadersOfMoreDictionariesThanTheBound_ReadEveryValidEnvelope()
    {
        // Found by review: DecompressAsync loaded the dictionary, then looked it up again for the decode; another reader's
        // load could evict it in between (491 of 3,200 reads failed with DictionaryNotFoundException in the review's run).
        var shared = new InMemoryDictionaryStore();
        var written = await WrittenWithDictionariesAsync(shared, ["db.a", "db.b", "db.c", "db.d"], 25, 21);
        var options = CompressionEngineOptionsBuilder.Fast();
        options.MaxCachedDictionaries = 1;
        await using var reader = TestEngine.Create(new ControllableStore(shared), options);
        CompressionNamespace x = reader.GetNamespace("db.x");
        await reader.WhenIdleAsync();

        var failures = new System.Collections.Concurrent.ConcurrentBag<string>();
        const int threads = 8, reads = 400;
        using var barrier = new Barrier(threads);
        await Task.WhenAll(Enumerable.Range(0, threads).Select(t => Task.Run(async () =>
        {
            var random = new Random(100 + t);
            barrier.SignalAndWait();
            for (int i = 0; i < reads; i++)
            {
                var (document, envelope) = written[random.Next(written.Count)];
                try
                {
                    if (!(await x.DecompressAsync(envelope)).AsSpan().SequenceEqual(document)) failures.Add("wrong bytes");
                }
                catch (Exception ex) when (ex is DictionaryNotFoundException or InvalidDataException)
                {
                    failures.Add(ex.GetType().Name + ": " + ex.Message);
                }
            }
        })));
        Assert.True(failures.IsEmpty, $"{failures.Count} of {threads * reads} reads failed; first: {failures.FirstOrDefault()}");
    }
}
