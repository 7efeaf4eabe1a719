using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>The README's quick start, verbatim, so the README stays true.</summary>
public sealed class ReadmeQuickStartTests
{
    [Fact]
    public async Task QuickStart_Engine_RoundTripsTheDocument()
    {
        string folder = Directory.CreateTempSubdirectory("readme-").FullName;
        var store = new FileDictionaryStore(Path.Combine(folder, "dictionaries"));
        await using var engine = new CompressionEngine(store);
        CompressionNamespace orders = engine.GetNamespace("shop.orders");
        await orders.RefreshAsync();

        byte[] json = """{"id":1,"customer":"Ada","items":[{"sku":"A-1","qty":2}]}"""u8.ToArray();
        byte[] envelope = orders.Compress(json);
        byte[] back = await orders.DecompressAsync(envelope);

        Assert.Equal(json, back);
        Assert.Equal(DocumentEnvelope.Magic, envelope[0]);
        await engine.DisposeAsync();
        Directory.Delete(folder, recursive: true);
    }

    [Fact]
    public void QuickStart_DocumentCompressor_WritesAnEnvelopeAndTellsLegacyApart()
    {
        byte[] json = """{"id":1,"customer":"Ada","items":[{"sku":"A-1","qty":2}],"note":"Ada Ada Ada Ada Ada Ada Ada Ada"}"""u8.ToArray();
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = 3 });
        var buffer = new byte[DocumentCompressor.GetMaxEnvelopeLength(json.Length)];
        compressor.TryCompress(json, buffer, out int written);
        bool isEnvelope = DocumentEnvelope.TryReadHeader(buffer.AsSpan(0, written), out EnvelopeHeader header);

        Assert.True(isEnvelope);
        Assert.Equal(json.Length, header.UncompressedLength);
        Assert.False(DocumentEnvelope.TryReadHeader(json, out _));
        Assert.Equal(json, compressor.Decompress(buffer.AsSpan(0, written)));
    }
}
