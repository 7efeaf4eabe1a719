using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

public sealed class DictionaryOptionsTests
{
    [Theory]
    [InlineData(2000, 800_000L, 64 * 1024)]   // many small documents: DictionarySize binds
    [InlineData(16_000, 1_408_000L, 64 * 1024)] // many tiny documents (flights, 88 B): the count cap lets them reach the full size
    [InlineData(40, 320_000L, 10_240)]        // 40 large samples get 10 KiB, not 64 KiB (issue 18: 64 KiB from 40 samples is worse than 16)
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
