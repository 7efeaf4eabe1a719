using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class OptionsValidationTests
{
    [Fact]
    public void Validate_Defaults_AreValidAndDocumented()
    {
        var options = new DocumentCompressorOptions();
        Assert.Empty(options.Validate());
        Assert.Equal(CompressionCodec.Zstd, options.Codec);
        Assert.Null(options.Level);
        Assert.True(options.Checksum);
        Assert.False(options.RequireChecksum);
        Assert.Equal(32, options.MinimumSize);
        Assert.Equal(64 * 1024 * 1024, options.MaxUncompressedLength);
        Assert.Equal(DocumentCompressorOptions.DefaultMaxUncompressedLength, options.MaxUncompressedLength);

        var compressor = new DocumentCompressor();
        Assert.Equal(CompressionCodec.Zstd, compressor.Codec);
        Assert.Equal(3, compressor.Level);
        Assert.True(compressor.Checksum);
    }

    [Fact]
    public void Validate_EveryProblemAtOnce_ListsEachWithThePrefixedKey()
    {
        var options = new DocumentCompressorOptions { Codec = CompressionCodec.Brotli, Level = 12, MinimumSize = -1, MaxUncompressedLength = 0 };
        var errors = options.Validate("Compression:Defaults");
        Assert.Equal(3, errors.Count);
        Assert.Contains("Compression:Defaults:Level: 12 is out of range for Brotli; allowed: 0 to 11.", errors);
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:MinimumSize: -1", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:MaxUncompressedLength: 0", StringComparison.Ordinal));
    }

    [Fact]
    public void Validate_UndefinedCodecWithOtherProblems_ListsThemAll()
    {
        var options = new DocumentCompressorOptions { Codec = (CompressionCodec)10, Level = 3, MinimumSize = -5, MaxUncompressedLength = -1 };
        var errors = options.Validate("App:Compression");
        Assert.Equal(3, errors.Count); // the level cannot be checked against an unknown codec
        Assert.Contains(errors, e => e.StartsWith("App:Compression:Codec: '10' is not a codec", StringComparison.Ordinal)
            && e.Contains("allowed: Stored, Zstd, Lz4, Snappy, Deflate, Brotli, Gzip", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("App:Compression:MinimumSize: -5", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("App:Compression:MaxUncompressedLength: -1", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(10)] // 7-9 (PackedZstd, FieldZstd, FieldZstdFoldedChecksum) are refused as settings (ShapeTableEngineTests, CodecRegistryTests)
    [InlineData(15)]
    [InlineData(255)]
    public void Validate_UndefinedCodecValue_IsReported(int value)
    {
        string error = Assert.Single(new DocumentCompressorOptions { Codec = (CompressionCodec)value }.Validate());
        Assert.StartsWith("Codec:", error, StringComparison.Ordinal);
        Assert.Contains($"'{value}'", error);
        Assert.Throws<ArgumentException>(() => new DocumentCompressor(new DocumentCompressorOptions { Codec = (CompressionCodec)value }));
    }

    [Theory]
    [InlineData(CompressionCodec.Zstd, 1, 22)]
    [InlineData(CompressionCodec.Lz4, 0, 12)]
    [InlineData(CompressionCodec.Deflate, 0, 9)]
    [InlineData(CompressionCodec.Gzip, 0, 9)]
    [InlineData(CompressionCodec.Brotli, 0, 11)]
    [InlineData(CompressionCodec.Snappy, 0, 0)]
    [InlineData(CompressionCodec.Stored, 0, 0)]
    public void Validate_LevelPerCodec_AcceptsTheRangeAndNamesItWhenOutside(CompressionCodec codec, int min, int max)
    {
        Assert.Empty(new DocumentCompressorOptions { Codec = codec, Level = min }.Validate());
        Assert.Empty(new DocumentCompressorOptions { Codec = codec, Level = max }.Validate());
        Assert.Empty(new DocumentCompressorOptions { Codec = codec, Level = null }.Validate());
        foreach (int bad in new[] { min - 1, max + 1, int.MinValue, int.MaxValue })
        {
            string error = Assert.Single(new DocumentCompressorOptions { Codec = codec, Level = bad }.Validate("X"));
            Assert.Equal($"X:Level: {bad} is out of range for {codec}; allowed: {min} to {max}.", error);
        }
    }

    [Fact]
    public void Validate_WithoutPrefix_NamesTheBareKey()
    {
        var errors = new DocumentCompressorOptions { MinimumSize = -1 }.Validate();
        Assert.StartsWith("MinimumSize: -1 is negative", Assert.Single(errors), StringComparison.Ordinal);
    }

    [Fact]
    public void Validate_Boundaries_AreAccepted()
    {
        Assert.Empty(new DocumentCompressorOptions { MinimumSize = 0, MaxUncompressedLength = 1 }.Validate());
        Assert.Empty(new DocumentCompressorOptions { MinimumSize = int.MaxValue, MaxUncompressedLength = int.MaxValue }.Validate());
    }

    [Fact]
    public void Constructor_InvalidOptions_ThrowsOneExceptionListingEveryProblem()
    {
        var options = new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = 0, MinimumSize = -1, MaxUncompressedLength = 0 };
        var ex = Assert.Throws<ArgumentException>(() => new DocumentCompressor(options));
        Assert.Contains("Level: 0 is out of range for Zstd", ex.Message);
        Assert.Contains("MinimumSize: -1", ex.Message);
        Assert.Contains("MaxUncompressedLength: 0", ex.Message);

        ex = Assert.Throws<ArgumentException>(() => options.ThrowIfInvalid("Compression:Defaults"));
        Assert.Contains("Compression:Defaults:Level", ex.Message);
        Assert.Contains("Compression:Defaults:MinimumSize", ex.Message);
    }

    [Fact]
    public void Constructor_CopiesTheOptions_LaterChangesDoNotApply()
    {
        var options = new DocumentCompressorOptions { Codec = CompressionCodec.Lz4, Checksum = false };
        var compressor = new DocumentCompressor(options);
        options.Codec = CompressionCodec.Brotli;
        options.Checksum = true;
        options.Level = 99;
        Assert.Equal(CompressionCodec.Lz4, compressor.Codec);
        Assert.False(compressor.Checksum);
        Assert.True(DocumentEnvelope.TryReadHeader(compressor.Compress(Corpus.Json(1000, 1)), out var header));
        Assert.Equal(CompressionCodec.Lz4, header.Codec);
        Assert.False(header.HasChecksum);
    }

    [Fact]
    public void RequireChecksum_EnvelopeWithoutChecksum_IsRejected()
    {
        byte[] envelope = new DocumentCompressor(new DocumentCompressorOptions { Checksum = false }).Compress(Corpus.Json(500, 1));
        var strict = new DocumentCompressor(new DocumentCompressorOptions { RequireChecksum = true });
        var ex = Assert.Throws<InvalidDataException>(() => strict.Decompress(envelope));
        Assert.Contains("checksum", ex.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Equal(Corpus.Json(500, 1), strict.Decompress(strict.Compress(Corpus.Json(500, 1))));
    }
}
