using Compression.Codecs;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>The per-thread decompressor slot of <see cref="ZstdContextPool"/>: a context only ever serves its own pool.</summary>
public sealed class ZstdContextPoolTests
{
    [Fact]
    public void RentDecompressor_AfterAnotherPoolFilledTheThreadSlot_NeverHandsOutThatPoolsContext()
    {
        var a = ZstdDictionary.Create(101, Corpus.Dictionary.Content.Span).Contexts;
        var b = ZstdDictionary.Create(102, Corpus.Dictionary.Content.Span).Contexts;

        var fromA = a.RentDecompressor();
        a.ReturnDecompressor(fromA);
        Assert.Same(fromA, a.RentDecompressor()); // the slot serves its own pool again
        a.ReturnDecompressor(fromA);

        var fromB = b.RentDecompressor();
        Assert.NotSame(fromA, fromB);
        b.ReturnDecompressor(fromB); // b takes the slot; a's context goes back to a's pool

        var againA = a.RentDecompressor();
        Assert.NotSame(fromB, againA);
        Assert.Same(fromA, againA);
        var againB = b.RentDecompressor();
        Assert.Same(fromB, againB);
        a.ReturnDecompressor(againA);
        b.ReturnDecompressor(againB);
    }

    [Fact]
    public void RentDecompressor_TwiceWithoutReturn_GivesTwoContexts()
    {
        var pool = ZstdDictionary.Create(103, Corpus.Dictionary.Content.Span).Contexts;
        var first = pool.RentDecompressor();
        var second = pool.RentDecompressor();
        Assert.NotSame(first, second); // a rented context is never also in the slot
        pool.ReturnDecompressor(first);
        pool.ReturnDecompressor(second);
        var third = pool.RentDecompressor();
        var fourth = pool.RentDecompressor();
        Assert.NotSame(third, fourth);
        pool.ReturnDecompressor(third);
        pool.ReturnDecompressor(fourth);
    }

    [Fact]
    public async Task Decompress_TwoDictionariesInterleavedOnManyThreads_IsByteExact()
    {
        // Two dictionaries of different content: a context of one decoding the other's frames would fail or differ.
        var random = new Random(7);
        var documents = Enumerable.Range(0, 200).Select(_ => Corpus.JsonRecord(random)).ToArray();
        var first = Corpus.Dictionary;
        var second = ZstdDictionary.Create(104, ZstdSharp.DictBuilder.TrainFromBuffer(documents.Take(100), 4096).ToArray());
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd });
        var envelopes = documents.Select((d, i) => compressor.Compress(d, i % 2 == 0 ? first : second)).ToArray();

        await Task.WhenAll(Enumerable.Range(0, 8).Select(t => Task.Run(() =>
        {
            for (int round = 0; round < 50; round++)
            {
                for (int i = 0; i < documents.Length; i++)
                {
                    int k = (i + t + round) % documents.Length;
                    Assert.Equal(documents[k], compressor.Decompress(envelopes[k], k % 2 == 0 ? first : second));
                }
            }
        })));
    }
}
