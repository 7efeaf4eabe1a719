using Compression.Tool.Analyze;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>
/// The settings <c>docz analyze</c> measures come from the codec registry (each codec's analyze levels, and with
/// <c>--quick</c> its default level), in the registry's order: the same rows, in the same order, as the tool's own lists
/// gave before there was a registry.
/// </summary>
public sealed class AnalyzeCasesTests
{
    /// <summary>The rows of the codecs there were before the registry (ids 0-6): a codec added later brings rows of its own.</summary>
    private static bool BeforeTheRegistry((CompressionCodec Codec, int Level) row) => row.Codec <= CompressionCodec.Gzip;

    [Fact]
    public void FullCases_AreTheRowsTheToolMeasuredBefore_InTheSameOrder() =>
        Assert.Equal(
            [
                (CompressionCodec.Stored, 0),
                (CompressionCodec.Zstd, 1), (CompressionCodec.Zstd, 3), (CompressionCodec.Zstd, 9), (CompressionCodec.Zstd, 19),
                (CompressionCodec.Lz4, 0), (CompressionCodec.Lz4, 9),
                (CompressionCodec.Snappy, 0),
                (CompressionCodec.Deflate, 1), (CompressionCodec.Deflate, 6), (CompressionCodec.Deflate, 9),
                (CompressionCodec.Gzip, 6),
                (CompressionCodec.Brotli, 1), (CompressionCodec.Brotli, 4), (CompressionCodec.Brotli, 9),
            ],
            CorpusAnalyzer.FullCases.Where(BeforeTheRegistry));

    [Fact]
    public void QuickCases_AreTheRowsTheToolMeasuredBefore_InTheSameOrder() =>
        Assert.Equal(
            [
                (CompressionCodec.Stored, 0), (CompressionCodec.Zstd, 3), (CompressionCodec.Lz4, 0), (CompressionCodec.Snappy, 0),
                (CompressionCodec.Deflate, 6), (CompressionCodec.Gzip, 6), (CompressionCodec.Brotli, 4),
            ],
            CorpusAnalyzer.QuickCases.Where(BeforeTheRegistry));

    [Fact]
    public void CodecNames_AreTheEnumNamesInLowerCase_AndOnlyStoredAndSnappyHaveOneLevel()
    {
        foreach (var (codec, _) in CorpusAnalyzer.FullCases) Assert.Equal(codec.ToString().ToLowerInvariant(), CorpusAnalyzer.CodecName(codec));
        Assert.Equal(["stored", "snappy"], CorpusAnalyzer.FullCases.Where(BeforeTheRegistry).Select(c => CorpusAnalyzer.CodecName(c.Codec)).Distinct().Where(CorpusAnalyzer.HasOneLevel));
    }
}
