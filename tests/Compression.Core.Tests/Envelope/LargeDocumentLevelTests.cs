using System.Text;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// <see cref="DocumentCompressorOptions.LargeDocumentLevel"/>: zstd documents of 64 KiB or more compress at the higher
/// of it and <see cref="DocumentCompressorOptions.Level"/>; smaller ones at <see cref="DocumentCompressorOptions.Level"/>.
/// </summary>
public sealed class LargeDocumentLevelTests
{
    /// <summary>A JSON array of records whose values vary (seeded): zstd's levels give different sizes on it.</summary>
    private static byte[] Records(int minimumBytes)
    {
        var random = new Random(7);
        string[] cities = ["Lisbon", "Porto", "Faro", "Braga", "Coimbra", "Aveiro", "Evora", "Viseu"];
        var text = new StringBuilder("[");
        for (int i = 0; text.Length < minimumBytes; i++)
        {
            text.Append($"{{\"id\":{i},\"city\":\"{cities[random.Next(cities.Length)]}\",\"amount\":{random.Next(100_000) / 100.0},");
            text.Append($"\"code\":\"{random.Next(1 << 20):x5}\",\"tags\":[\"t{random.Next(40)}\",\"t{random.Next(40)}\"]}},");
        }
        text.Append("{}]");
        return Encoding.UTF8.GetBytes(text.ToString());
    }

    private static byte[] Compress(byte[] document, DocumentCompressorOptions options)
    {
        var compressor = new DocumentCompressor(options);
        byte[] envelope = compressor.Compress(document);
        Assert.Equal(document, compressor.Decompress(envelope)); // readable whatever the level
        return envelope;
    }

    [Fact]
    public void Compress_LargeDocument_UsesTheLargeLevel()
    {
        byte[] document = Records(256 * 1024);
        byte[] byDefault = Compress(document, new DocumentCompressorOptions());
        byte[] atLevel3 = Compress(document, new DocumentCompressorOptions { LargeDocumentLevel = null });
        byte[] atLevel9 = Compress(document, new DocumentCompressorOptions { Level = 9, LargeDocumentLevel = null });
        Assert.Equal(9, new DocumentCompressorOptions().LargeDocumentLevel);
        Assert.Equal(atLevel9.Length, byDefault.Length);
        Assert.True(byDefault.Length < atLevel3.Length, $"level 9: {byDefault.Length} bytes, level 3: {atLevel3.Length}");
    }

    [Fact]
    public void Compress_DocumentUnder64KiB_KeepsTheLevel()
    {
        byte[] document = Records(DocumentCompressorOptions.LargeDocumentSize)[..(DocumentCompressorOptions.LargeDocumentSize - 1)];
        byte[] byDefault = Compress(document, new DocumentCompressorOptions());
        byte[] atLevel3 = Compress(document, new DocumentCompressorOptions { LargeDocumentLevel = null });
        byte[] atLevel9 = Compress(document, new DocumentCompressorOptions { Level = 9, LargeDocumentLevel = null });
        Assert.Equal(atLevel3, byDefault);
        Assert.NotEqual(atLevel9.Length, byDefault.Length);
    }

    [Fact]
    public void Compress_LevelAboveTheLargeLevel_KeepsTheLevel()
    {
        byte[] document = Records(128 * 1024);
        byte[] atLevel12 = Compress(document, new DocumentCompressorOptions { Level = 12, LargeDocumentLevel = 9 });
        byte[] level12Only = Compress(document, new DocumentCompressorOptions { Level = 12, LargeDocumentLevel = null });
        Assert.Equal(level12Only, atLevel12);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(23)]
    public void Validate_LargeLevelOutOfZstdRange_NamesTheKeyAndTheRange(int level)
    {
        string error = Assert.Single(new DocumentCompressorOptions { LargeDocumentLevel = level }.Validate("Compression:Defaults"));
        Assert.Equal($"Compression:Defaults:LargeDocumentLevel: {level} is out of range for Zstd; allowed: 1 to 22, or null.", error);
    }

    [Fact]
    public void Validate_LargeLevelWithAnotherCodec_IsIgnored()
    {
        Assert.Empty(new DocumentCompressorOptions { Codec = CompressionCodec.Brotli, LargeDocumentLevel = 30 }.Validate());
        byte[] document = Records(100 * 1024);
        Assert.Equal(
            Compress(document, new DocumentCompressorOptions { Codec = CompressionCodec.Brotli, LargeDocumentLevel = null }),
            Compress(document, new DocumentCompressorOptions { Codec = CompressionCodec.Brotli }));
    }
}
