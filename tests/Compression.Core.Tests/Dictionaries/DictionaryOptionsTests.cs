using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

public sealed class DictionaryOptionsTests
{
    [Theory]
    [InlineData(2000, 800_000L, 32 * 1024)]   // many small documents: DictionarySize binds
    [InlineData(32, 12_800L, 3_200)]          // few small documents: sample bytes / 4 binds
    [InlineData(32, 272_000L, 8_192)]         // few large documents: 256 bytes per document binds
    public void GetTrainingSize_TakesTheSmallestOfTheThreeCaps(int samples, long sampleBytes, int expected) =>
        Assert.Equal(expected, new DictionaryOptions().GetTrainingSize(samples, sampleBytes));

    [Fact]
    public void Validate_MaxDictionaryBytesPerSample_NamesTheKey()
    {
        var errors = new DictionaryOptions { MaxDictionaryBytesPerSample = 0 }.Validate("Compression:Defaults:Dictionary");
        Assert.Contains(errors, e => e.StartsWith("Compression:Defaults:Dictionary:MaxDictionaryBytesPerSample: 0 is out of range", StringComparison.Ordinal));
    }
}
