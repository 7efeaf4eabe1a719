using System.Reflection;
using System.Text;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// The header a caller sees is the one the bytes say: <see cref="EnvelopeHeader"/> is built only by the parser, and the
/// format a writer writes is its setting, not a constant of <see cref="DocumentEnvelope"/>.
/// </summary>
public sealed class EnvelopeHeaderTests
{
    private static readonly byte[] Document = Encoding.UTF8.GetBytes(
        """{"title":"The Envelope","year":2026,"tags":["zstd","lz4","snappy"],"text":"the the the the the the the the the the the the the the the the the the the the"}""");

    private static readonly string[] PublicConstants = ["LatestFormatVersion", "Magic"];

    [Fact]
    public void Header_HasNoPublicSetterOrConstructor_CallersCannotBuildAnInconsistentOne()
    {
        foreach (PropertyInfo property in typeof(EnvelopeHeader).GetProperties(BindingFlags.Public | BindingFlags.Instance))
            Assert.True(property.SetMethod is null || !property.SetMethod.IsPublic, $"EnvelopeHeader.{property.Name} has a public setter");
        // A struct's implicit parameterless constructor is not reflected; any other public one would be.
        Assert.Empty(typeof(EnvelopeHeader).GetConstructors(BindingFlags.Public | BindingFlags.Instance));
    }

    [Fact]
    public void DocumentEnvelope_NamesNoWrittenFormat_OnlyTheNewestRead()
    {
        string[] constants = [.. typeof(DocumentEnvelope).GetFields(BindingFlags.Public | BindingFlags.Static).Select(f => f.Name).Order(StringComparer.Ordinal)];
        Assert.Equal(PublicConstants, constants);
        Assert.Equal(DocumentEnvelope.LatestFormatVersion, (int)Enum.GetValues<EnvelopeFormat>().Max());
    }

    [Theory]
    [InlineData(EnvelopeFormat.V1)]
    [InlineData(EnvelopeFormat.V2)]
    [InlineData(EnvelopeFormat.V3)]
    public void Header_ReadBack_SaysWhatTheWriterWasSetToAndAddsUpToTheEnvelope(EnvelopeFormat format)
    {
        byte[] envelope = new DocumentCompressor(new DocumentCompressorOptions { Format = format }).Compress(Document);

        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header));
        Assert.Equal(format, header.Format);
        Assert.Equal((int)format, header.FormatVersion);
        Assert.Equal(Document.Length, header.UncompressedLength);
        Assert.True(header.HasChecksum);
        Assert.Equal(format == EnvelopeFormat.V1 ? 4 : 2, header.ChecksumLength);
        Assert.Equal(envelope.Length, header.HeaderLength + header.PayloadLength + header.ChecksumLength);
    }

    [Fact]
    public void Header_OfTheDefaultWriter_IsTheDefaultSetting()
    {
        byte[] envelope = new DocumentCompressor().Compress(Document);

        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header));
        Assert.Equal(new DocumentCompressorOptions().Format, header.Format);
        Assert.Equal(new DocumentCompressor().Format, header.Format);
    }

    [Fact]
    public void Header_OfAValueThatIsNoEnvelope_IsTheDefault()
    {
        Assert.False(DocumentEnvelope.TryReadHeader(Document, out EnvelopeHeader header));
        Assert.Equal(default(EnvelopeHeader), header);
    }
}
