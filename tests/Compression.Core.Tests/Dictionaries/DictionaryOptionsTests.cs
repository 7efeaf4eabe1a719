using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

public sealed class DictionaryOptionsTests
{
    [Theory]
    [InlineData(2000, 800_000L, 64 * 1024)]   // many small documents: DictionarySize binds
    [InlineData(16_000, 1_408_000L, 64 * 1024)] // many tiny documents (flights, 88 B): the count cap lets them reach the full size
    [InlineData(40, 320_000L, 10_240)]        // 40 large samples get 10 KiB, not 64 KiB (issue 18: 64 KiB from 40 samples is worse than 16)
    [InlineData(32, 12_800L, 3_200)]          // few small documents: sample bytes / 4 binds
    [InlineData(32, 272_000L, 8_192)]         // few large documents: 256 bytes per document binds
    public void GetTrainingSize_TakesTheSmallestOfTheThreeCaps(int samples, long sampleBytes, int expected) =>
        Assert.Equal(expected, new DictionaryOptions().GetTrainingSize(samples, sampleBytes));

    [Fact]
    public void Validate_MaxDictionaryBytesPerSample_NamesTheKey()
    {
        var errors = new DictionaryOptions { MaxDictionaryBytesPerSample = 0 }.Validate("Compression:Defaults:Dictionary");
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:Dictionary:MaxDictionaryBytesPerSample: 0 is out of range", StringComparison.Ordinal));
    }

    [Fact]
    public async Task DictionarySizeOverMaxDictionaryBytes_IsRefusedAtStartUp_NamingBothKeys()
    {
        // Before: an 8 KiB dictionary was trained, published and written with, then refused by every reader with the same
        // options (MaxDictionaryBytes 1024), the writer too once it left the cache: every document written with it was unreadable.
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.MaxDictionaryBytes = 1024;
        options.Defaults.Dictionary.DictionarySize = 8 * 1024;
        options.Namespaces["db.small"] = new NamespaceOptions { Dictionary = new DictionaryOptions { DictionarySize = 1024 } };
        options.Namespaces["db.large"] = new NamespaceOptions { Dictionary = new DictionaryOptions { DictionarySize = 4096 } };
        var ex = Assert.Throws<ArgumentException>(() => TestEngine.Create(new InMemoryDictionaryStore(), options));
        Assert.Contains("Compression:Defaults:Dictionary:DictionarySize: 8192 is over Compression:MaxDictionaryBytes (1024)", ex.Message, StringComparison.Ordinal);
        Assert.Contains("Compression:Namespaces:db.large:Dictionary:DictionarySize: 4096", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("db.small", ex.Message, StringComparison.Ordinal);

        // Within the bound, what one client writes another reads.
        options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.MaxDictionaryBytes = 8 * 1024;
        options.Defaults.Dictionary.DictionarySize = 8 * 1024;
        var store = new InMemoryDictionaryStore();
        var written = new List<(byte[] Document, byte[] Envelope)>();
        await using (var engine = TestEngine.Create(store, options))
        {
            var ns = engine.GetNamespace("db.movies");
            var random = new Random(3);
            for (int i = 0; i < 450; i++)
            {
                byte[] d = TestDocuments.Movie(random);
                written.Add((d, ns.Compress(d)));
            }
            await engine.WhenIdleAsync();
            Assert.NotNull(ns.CurrentDictionary ?? (await ns.TrainAsync()).Dictionary);
        }
        await using var other = TestEngine.Create(store, options);
        var reader = other.GetNamespace("db.movies");
        foreach (var (document, envelope) in written)
        {
            await reader.PreloadDictionaryAsync(envelope);
            Assert.Equal(document, reader.Decompress(envelope));
        }
    }
}
