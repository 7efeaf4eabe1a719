using System.Buffers;
using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>Every rung of a namespace's API ladder gives the same documents back.</summary>
public sealed class NamespaceLadderTests
{
    [Fact]
    public async Task EveryRung_RoundTripsTheSameDocument()
    {
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore());
        var ns = engine.GetNamespace("db.ladder");
        var random = new Random(3);
        for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        Assert.NotNull(ns.CurrentDictionary);
        byte[] document = TestDocuments.Movie(random);

        // Compress: span (too small, then enough), buffer writer, multi-segment sequence, array.
        Assert.False(ns.TryCompress(document, new byte[4], out int none));
        Assert.Equal(0, none);
        var span = new byte[CompressionNamespace.GetMaxCompressedLength(document.Length)];
        Assert.True(ns.TryCompress(document, span, out int written));
        var writer = new ArrayBufferWriter<byte>();
        ns.Compress(document, writer);
        var fromSequence = new ArrayBufferWriter<byte>();
        ns.Compress(TestSequences.Split(document, 7), fromSequence);
        byte[] array = ns.Compress(document);
        byte[][] envelopes = [span[..written], writer.WrittenSpan.ToArray(), fromSequence.WrittenSpan.ToArray(), array];
        Assert.All(envelopes, e => Assert.Equal(array, e)); // same dictionary, same setting: the same bytes

        // Decompress: span (too small, then enough), buffer writer, multi-segment sequence, array, async.
        Assert.False(ns.TryDecompress(array, new byte[document.Length - 1], out _));
        var output = new byte[document.Length];
        Assert.True(ns.TryDecompress(array, output, out int read));
        Assert.Equal(document.Length, read);
        Assert.Equal(document, output);
        var decoded = new ArrayBufferWriter<byte>();
        ns.Decompress(array, decoded);
        Assert.Equal(document, decoded.WrittenSpan.ToArray());
        var decodedSequence = new ArrayBufferWriter<byte>();
        ns.Decompress(TestSequences.Split(array, 5), decodedSequence);
        Assert.Equal(document, decodedSequence.WrittenSpan.ToArray());
        Assert.Equal(document, ns.Decompress(array));
        Assert.Equal(document, await ns.DecompressAsync(array));
    }

    [Fact]
    public async Task Decompress_LegacyValue_IsRefusedAsNotAnEnvelope()
    {
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore());
        var ex = Assert.Throws<InvalidDataException>(() => engine.GetNamespace("db.ladder").Decompress("""{"a":1}"""u8));
        Assert.Contains("not an envelope", ex.Message);
    }
}
