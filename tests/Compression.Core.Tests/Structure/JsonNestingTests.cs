using System.Text;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>The JSON depth check the Couchbase transcoder makes before a recursive deserializer reads a decompressed body.</summary>
public sealed class JsonNestingTests
{
    private static byte[] Nested(int levels, string open = "[", string close = "]", string inner = "1") =>
        Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat(open, levels)) + inner + string.Concat(Enumerable.Repeat(close, levels)));

    [Theory]
    [InlineData("[", "]")]
    [InlineData("{\"a\":", "}")]
    public void IsWithinLimit_AtTheLimit_True_OnePast_False(string open, string close)
    {
        Assert.True(JsonNesting.IsWithinLimit(Nested(JsonNesting.MaxDepth, open, close)));
        Assert.False(JsonNesting.IsWithinLimit(Nested(JsonNesting.MaxDepth + 1, open, close)));
        Assert.False(JsonNesting.IsWithinLimit(Nested(20_000, open, close)));
    }

    [Fact]
    public void IsWithinLimit_BracketsInsideStrings_AreNotCounted()
    {
        string brackets = new('[', 500);
        Assert.True(JsonNesting.IsWithinLimit(Encoding.UTF8.GetBytes($$"""{"a":"{{brackets}}","b":"\"{{brackets}}\\","c":[1,"]]]"]}""")));
        // An escaped quote does not end a string: the brackets after it are still inside it.
        Assert.True(JsonNesting.IsWithinLimit(Encoding.UTF8.GetBytes($$"""["\"{{brackets}}"]""")));
        // A backslash before the closing quote escapes itself: what follows is outside, and counted.
        Assert.False(JsonNesting.IsWithinLimit(Nested(JsonNesting.MaxDepth, inner: "\"x\\\\\",[[]]")));
    }

    [Fact]
    public void IsWithinLimit_ManyOpenersButShallow_IsScannedAndTrue()
    {
        // Past the count shortcut (more than 128 openers), so the byte scan decides.
        string wide = "[" + string.Join(",", Enumerable.Repeat("{\"a\":[1,2]}", 300)) + "]";
        Assert.True(JsonNesting.IsWithinLimit(Encoding.UTF8.GetBytes(wide)));
        Assert.False(JsonNesting.IsWithinLimit(Encoding.UTF8.GetBytes(wide[..^1] + "," + Encoding.UTF8.GetString(Nested(JsonNesting.MaxDepth)) + "]")));
    }

    [Theory]
    [InlineData("")]
    [InlineData("\"unterminated [[[[")]
    [InlineData("\"ends with a backslash\\")]
    [InlineData("]]]]}}}")]
    [InlineData("{\"a\":1}")]
    public void IsWithinLimit_ShortOrMalformed_LeavesItToTheParser(string json) =>
        Assert.True(JsonNesting.IsWithinLimit(Encoding.UTF8.GetBytes(json)));
}
