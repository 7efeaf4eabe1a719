using Compression.Internal;
using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class VarintAndOptionsTests
{
    [Theory]
    [InlineData(0u, 1)]
    [InlineData(127u, 1)]
    [InlineData(128u, 2)]
    [InlineData(16383u, 2)]
    [InlineData(16384u, 3)]
    [InlineData(uint.MaxValue, 5)]
    public void Varint_RoundTrips_WithTheExpectedLength(uint value, int length)
    {
        var buffer = new byte[5];
        Assert.Equal(length, Varint.Write(buffer, value));
        Assert.Equal(length, Varint.GetLength(value));
        Assert.True(Varint.TryRead(buffer, out uint read, out int consumed));
        Assert.Equal(value, read);
        Assert.Equal(length, consumed);
    }

    [Theory]
    [InlineData(new byte[] { 0x80 })]                               // truncated
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x1F })]       // overflows 32 bits
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 })] // longer than 5 bytes
    [InlineData(new byte[] { 0x81, 0x00 })]                         // not minimal
    public void Varint_BadEncodings_AreRejected(byte[] encoded) => Assert.False(Varint.TryRead(encoded, out _, out _));

    [Fact]
    public void Validate_ListsEveryProblemWithItsKey()
    {
        var options = new DocumentCompressorOptions { Codec = CompressionCodec.Brotli, Level = 12, MinimumSize = -1, MaxUncompressedLength = 0 };
        var errors = options.Validate("Compression:Defaults");
        Assert.Equal(3, errors.Count);
        Assert.Contains("Compression:Defaults:Level: 12 is out of range for Brotli; allowed: 0 to 11.", errors);
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:MinimumSize", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:MaxUncompressedLength", StringComparison.Ordinal));

        var unknown = new DocumentCompressorOptions { Codec = (CompressionCodec)9 };
        Assert.Contains("allowed: Stored, Zstd, Lz4, Snappy, Deflate, Brotli, Gzip", Assert.Single(unknown.Validate()));
        var ex = Assert.Throws<ArgumentException>(() => new DocumentCompressor(options));
        Assert.Contains("Level", ex.Message);
        Assert.Contains("MinimumSize", ex.Message);
    }

    [Theory]
    [InlineData(CompressionCodec.Zstd, 1, 22)]
    [InlineData(CompressionCodec.Lz4, 0, 12)]
    [InlineData(CompressionCodec.Deflate, 0, 9)]
    [InlineData(CompressionCodec.Gzip, 0, 9)]
    [InlineData(CompressionCodec.Brotli, 0, 11)]
    [InlineData(CompressionCodec.Snappy, 0, 0)]
    public void Validate_LevelBounds_PerCodec(CompressionCodec codec, int min, int max)
    {
        Assert.Empty(new DocumentCompressorOptions { Codec = codec, Level = min }.Validate());
        Assert.Empty(new DocumentCompressorOptions { Codec = codec, Level = max }.Validate());
        Assert.NotEmpty(new DocumentCompressorOptions { Codec = codec, Level = min - 1 }.Validate());
        Assert.NotEmpty(new DocumentCompressorOptions { Codec = codec, Level = max + 1 }.Validate());
    }
}
