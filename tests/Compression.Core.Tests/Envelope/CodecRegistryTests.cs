using Compression.Codecs;
using Compression.Internal;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// <see cref="CodecRegistry"/> is the one list of codecs: every id of <see cref="CompressionCodec"/> has one entry, and
/// the places that list codecs (the envelope reader's highest id and its message, option validation, metrics) give what
/// the registry holds, with the texts they gave before there was a registry.
/// </summary>
public sealed class CodecRegistryTests
{
    [Fact]
    public void EveryEnumValue_HasExactlyOneEntry_AtTheIndexOfItsId()
    {
        Assert.Equal(Enum.GetValues<CompressionCodec>().Order(), CodecRegistry.All.Select(c => c.Id).Order());
        Assert.Equal(CodecRegistry.All.Count, CodecRegistry.All.Select(c => c.Id).Distinct().Count());
        for (int id = 0; id < CodecRegistry.ById.Count; id++) Assert.Equal((CompressionCodec)id, CodecRegistry.ById[id].Id);
        foreach (var codec in Enum.GetValues<CompressionCodec>()) Assert.Same(CodecRegistry.For(codec), Codec.For(codec));
        Assert.Throws<ArgumentOutOfRangeException>(() => CodecRegistry.For((CompressionCodec)(CodecRegistry.MaxId + 1)));
    }

    [Fact]
    public void MaxCodecId_IsTheLargestId_AndTheNextIdIsUnknown()
    {
        Assert.Equal((int)Enum.GetValues<CompressionCodec>().Max(), DocumentEnvelope.MaxCodecId);
        Assert.Equal(CodecRegistry.ById.Max(c => (int)c.Id), DocumentEnvelope.MaxCodecId);
        byte[] unknown = [DocumentEnvelope.Magic, (byte)(DocumentEnvelope.MaxCodecId + 1), 0];
        var ex = Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(unknown, out _));
        Assert.Equal($"Unknown codec id {DocumentEnvelope.MaxCodecId + 1}; known ids are 0-{DocumentEnvelope.MaxCodecId} ({string.Join(", ", CodecRegistry.ById.Select(c => c.Name.Replace('_', ' ')))}).", ex.Message);
        // The text it had before the registry (a codec added later is listed after these).
        Assert.StartsWith($"Unknown codec id {DocumentEnvelope.MaxCodecId + 1}; known ids are 0-{DocumentEnvelope.MaxCodecId} (stored, zstd, lz4, snappy, deflate, brotli, gzip, packed zstd, field zstd", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void StructuredCodecs_AreSevenToNine_AndTakeADictionary_AsZstdDoes()
    {
        Assert.Equal([CompressionCodec.PackedZstd, CompressionCodec.FieldZstd, CompressionCodec.FieldZstdFoldedChecksum], CodecRegistry.ById.Where(c => c.IsStructured).Select(c => c.Id));
        Assert.Equal([CompressionCodec.Zstd, CompressionCodec.PackedZstd, CompressionCodec.FieldZstd, CompressionCodec.FieldZstdFoldedChecksum],
            CodecRegistry.ById.Where(c => c.TakesDictionary).Select(c => c.Id));
        // Only codec 9 keeps its checksum in its payload, and only it starts at format v3.
        Assert.Equal([CompressionCodec.FieldZstdFoldedChecksum], CodecRegistry.ById.Where(c => c.ChecksumInPayload).Select(c => c.Id));
        Assert.Equal([CompressionCodec.FieldZstdFoldedChecksum], CodecRegistry.ById.Where(c => c.FirstFormat == EnvelopeFormat.V3).Select(c => c.Id));
    }

    [Fact]
    public void OptionValidation_ListsExactlyTheApplicationCodecs_AndNamesTheKey()
    {
        string[] application = [.. CodecRegistry.ById.Where(c => !c.IsStructured).Select(c => c.Id.ToString())];
        Assert.Equal(Enum.GetNames<CompressionCodec>().Except([nameof(CompressionCodec.PackedZstd), nameof(CompressionCodec.FieldZstd), nameof(CompressionCodec.FieldZstdFoldedChecksum)]), application);
        foreach (var codec in new[] { (CompressionCodec)99, CompressionCodec.PackedZstd, CompressionCodec.FieldZstd, CompressionCodec.FieldZstdFoldedChecksum })
        {
            string error = Assert.Single(new DocumentCompressorOptions { Codec = codec }.Validate("Compression:Defaults"));
            Assert.StartsWith($"Compression:Defaults:Codec: '{codec}' ", error, StringComparison.Ordinal);
            Assert.EndsWith($"; allowed: {string.Join(", ", application)}.", error, StringComparison.Ordinal);
        }
        Assert.StartsWith("Stored, Zstd, Lz4, Snappy, Deflate, Brotli, Gzip", DocumentCompressorOptions.SettableCodecNames, StringComparison.Ordinal); // as before the registry
    }

    [Fact]
    public void MetricNames_AreTheRegistryNames_AsBefore()
    {
        // The tags they had before the registry (ids 0-8).
        Assert.Equal(
            ["stored", "zstd", "lz4", "snappy", "deflate", "brotli", "gzip", "packed_zstd", "field_zstd"],
            Enum.GetValues<CompressionCodec>().Take(9).Select(CompressionMetrics.CodecName));
        foreach (var codec in CodecRegistry.All) Assert.Equal(codec.Name, CompressionMetrics.CodecName(codec.Id));
        Assert.Equal(CodecRegistry.All.Count, CodecRegistry.All.Select(c => c.Name).Distinct().Count());
        Assert.Equal("unknown", CompressionMetrics.CodecName((CompressionCodec)99));
    }

    [Fact]
    public void Levels_DefaultAndAnalyzedLevels_AreWithinEachCodecsRange()
    {
        foreach (var codec in CodecRegistry.All)
        {
            Assert.InRange(codec.DefaultLevel, codec.MinLevel, codec.MaxLevel);
            Assert.All(codec.AnalyzeLevels, level => Assert.InRange(level, codec.MinLevel, codec.MaxLevel));
            // docz analyze measures every application codec, and with --quick at its default level; never a structured one.
            if (codec.IsStructured) Assert.Empty(codec.AnalyzeLevels);
            else Assert.Contains(codec.DefaultLevel, codec.AnalyzeLevels);
        }
    }
}
