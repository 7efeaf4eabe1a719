using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// A namespace's settings are the compressor's settings plus dictionaries and adapter settings: one declaration, one
/// validation, one copy rule for each setting (issue #36: <c>NamespaceOptions</c> used to repeat every property of
/// <c>DocumentCompressorOptions</c>, and their docs had drifted apart).
/// </summary>
public sealed class NamespaceOptionsTests
{
    [Fact]
    public void Validate_ReportsTheInheritedSettingsAndItsOwn_UnderOnePrefix()
    {
        var options = new NamespaceOptions { Level = 40, MinimumSize = -1, Dictionary = new DictionaryOptions { MaxDictionaryBytesPerSample = 0 } };

        IReadOnlyList<string> errors = options.Validate("Compression:Defaults");

        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:Level: 40 is out of range for Zstd", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:MinimumSize: -1 is negative", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:Dictionary:MaxDictionaryBytesPerSample: 0", StringComparison.Ordinal));
        Assert.Equal(3, errors.Count);
    }

    [Fact]
    public void ThrowIfInvalid_OnTheBaseType_StillSeesTheNamespacesOwnSettings()
    {
        DocumentCompressorOptions options = new NamespaceOptions { Dictionary = null! };
        var ex = Assert.Throws<ArgumentException>(() => options.ThrowIfInvalid("ns"));
        Assert.Contains("ns:Dictionary: null", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ACompressor_TakesANamespacesSettings_AndChecksOnlyWhatItUses()
    {
        // The dictionary section is the engine's concern: a compressor built from a namespace's settings neither needs it
        // nor refuses it, but it does refuse a bad codec setting.
        var settings = new NamespaceOptions { Codec = CompressionCodec.Lz4, Checksum = false, Dictionary = null! };
        var compressor = new DocumentCompressor(settings);
        Assert.Equal(CompressionCodec.Lz4, compressor.Codec);
        Assert.False(compressor.Checksum);

        settings.Level = 99;
        var ex = Assert.Throws<ArgumentException>(() => new DocumentCompressor(settings));
        Assert.Contains("Level: 99 is out of range for Lz4", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task TheEngine_CopiesEverySetting_SoLaterChangesChangeNothing()
    {
        var options = new CompressionEngineOptions();
        options.Defaults.Codec = CompressionCodec.Snappy;
        options.Defaults.Format = EnvelopeFormat.V2;
        options.Defaults.AdapterSettings["ClearFields"] = ["a"];
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), options);
        options.Defaults.Codec = CompressionCodec.Brotli;
        options.Defaults.Format = EnvelopeFormat.V1;
        options.Defaults.AdapterSettings["ClearFields"].Add("b");

        CompressionNamespace ns = engine.GetNamespace("db.c");
        Assert.Equal(CompressionCodec.Snappy, ns.Codec);
        Assert.Equal(EnvelopeFormat.V2, ns.Format);
        Assert.Equal(["a"], ns.AdapterSettings["ClearFields"]);
    }
}
