using System.Text;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// The one-pass JSON packer writes exactly the stream of the two-pass path (parse, resolve shapes, emit) whenever it
/// packs, packs every document whose objects all have shapes in the table, and gives up on the others.
/// </summary>
public sealed class JsonPackerTests
{
    /// <summary>The two-pass path alone: what the stream must be.</summary>
    private static bool TryTwoPass(byte[] document, ShapeTable table, Span<byte> destination, out int written)
    {
        written = 0;
        PackScratch scratch = PackScratch.Rent();
        try
        {
            if (!JsonText.TryParse(document, scratch)) return false;
            scratch.ResolveShapes(document, table);
            return PackedEmitter.TryEmit(document, scratch, destination, out written);
        }
        finally
        {
            PackScratch.Return(scratch);
        }
    }

    private static bool TryOnePass(byte[] document, ShapeTable table, Span<byte> destination, out int written)
    {
        PackScratch scratch = PackScratch.Rent();
        try
        {
            return JsonPacker.TryPack(document, destination, table, scratch, out written);
        }
        finally
        {
            PackScratch.Return(scratch);
        }
    }

    /// <summary>Whether every object of the two-pass parse has a shape of the table (no keys written inline).</summary>
    private static bool AllObjectsKnown(byte[] document, ShapeTable table)
    {
        PackScratch scratch = PackScratch.Rent();
        try
        {
            if (!JsonText.TryParse(document, scratch)) return false;
            scratch.ResolveShapes(document, table);
            for (int i = 0; i < scratch.NodeCount; i++)
            {
                if (scratch.Nodes[i].Tag == PackedTag.Object && scratch.Nodes[i].Value == 0) return false;
            }
            return true;
        }
        finally
        {
            PackScratch.Return(scratch);
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void TryPack_GeneratedJson_WritesTheTwoPassStreamExactly_AndPacksEveryDocumentOfKnownShapes(int seed)
    {
        // Learned from half the schemas' documents, so the others bring objects the table does not know.
        ShapeTable table = ShapeTransformTests.Learn(DocumentKind.Json, StructureDocuments.JsonDocuments(400, 12, seed)).Table;
        int onePass = 0, known = 0;
        foreach (byte[] document in StructureDocuments.JsonDocuments(600, 24, seed + 100))
        {
            byte[] expected = new byte[document.Length], actual = new byte[document.Length];
            bool twoPass = TryTwoPass(document, table, expected.AsSpan(0, document.Length - 1), out int expectedLength);
            bool packed = TryOnePass(document, table, actual.AsSpan(0, document.Length - 1), out int actualLength);
            bool allKnown = AllObjectsKnown(document, table);
            if (packed)
            {
                onePass++;
                Assert.True(twoPass, Encoding.UTF8.GetString(document));
                Assert.Equal(Convert.ToHexString(expected, 0, expectedLength), Convert.ToHexString(actual, 0, actualLength));
            }
            if (allKnown && twoPass)
            {
                known++;
                // A stream that fits with a byte to spare always fits the one-pass slots too.
                Assert.True(TryOnePass(document, table, new byte[expectedLength + 3 * 64 + Varint64.MaxLength * 2], out int roomy), Encoding.UTF8.GetString(document));
                Assert.Equal(expectedLength, roomy);
            }
            else
            {
                Assert.False(packed && !allKnown, $"packed a document with an object of unknown shape: {Encoding.UTF8.GetString(document)}");
            }
        }
        Assert.InRange(onePass, 100, 600);
        Assert.InRange(known, onePass, 600);
        Assert.True(known < 600, "every document had known shapes: the give-up path was not exercised");
    }

    [Fact]
    public void TryPack_DestinationOneByteShortOfTheStream_GivesUp()
    {
        ShapeTable table = ShapeTransformTests.Learn(DocumentKind.Json, StructureDocuments.JsonDocuments(200, 4, seed: 9)).Table;
        int checkedDocuments = 0;
        foreach (byte[] document in StructureDocuments.JsonDocuments(200, 4, seed: 9))
        {
            byte[] expected = new byte[document.Length * 2];
            if (!TryOnePass(document, table, expected, out int length)) continue;
            Assert.False(TryOnePass(document, table, new byte[length - 1], out _));
            checkedDocuments++;
        }
        Assert.True(checkedDocuments > 100);
    }

    [Theory]
    [InlineData("")]
    [InlineData("[1]")]
    [InlineData("{\"a\":1} ")]
    [InlineData("{\"a\": 1}")]
    [InlineData("{\"a\":1")]
    [InlineData("{\"a\":tru}")]
    [InlineData("{\"a\":\"x}")]
    [InlineData("{\"a\":[1,]}")]
    [InlineData("{\"a\":1,}")]
    public void TryPack_TextTheParserRefuses_IsRefusedToo(string text)
    {
        ShapeTable table = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray()]]);
        byte[] document = Encoding.UTF8.GetBytes(text);
        Assert.False(TryTwoPass(document, table, new byte[64], out _));
        Assert.False(TryOnePass(document, table, new byte[64], out _));
    }

    [Theory]
    [InlineData("{\"a\":-}")]         // number bytes that are not a number: kept as text by both
    [InlineData("{\"a\":1e5}")]
    [InlineData("{\"a\":-0}")]
    [InlineData("{\"a\":00012}")]
    [InlineData("{\"a\":\"\\u00e9\"}")]
    public void TryPack_OddButAcceptedText_GivesTheTwoPassStream(string text)
    {
        ShapeTable table = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray()]]);
        byte[] document = Encoding.UTF8.GetBytes(text);
        byte[] expected = new byte[64], actual = new byte[64];
        Assert.True(TryTwoPass(document, table, expected, out int expectedLength));
        Assert.True(TryOnePass(document, table, actual, out int actualLength));
        Assert.Equal(expected[..expectedLength], actual[..actualLength]);
    }

    [Fact]
    public void TryPack_ArrayOfManyElements_AndDeepNesting_MatchTheTwoPassStream()
    {
        ShapeTable table = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray()], ["b"u8.ToArray()]]);
        // 200 elements: a two-byte count in a three-byte slot; 127 and 128 around the one-byte limit.
        foreach (int n in new[] { 0, 1, 127, 128, 200, 20_000 })
        {
            byte[] document = Encoding.UTF8.GetBytes("{\"a\":[" + string.Join(",", Enumerable.Range(0, n).Select(i => i % 3 == 0 ? "{\"b\":" + i + "}" : "\"s" + i + "\"")) + "]}");
            byte[] expected = new byte[document.Length], actual = new byte[document.Length];
            Assert.True(TryTwoPass(document, table, expected, out int expectedLength));
            Assert.True(TryOnePass(document, table, actual, out int actualLength), $"{n} elements");
            Assert.Equal(Convert.ToHexString(expected, 0, expectedLength), Convert.ToHexString(actual, 0, actualLength));
        }
        string deep = string.Concat(Enumerable.Repeat("{\"b\":", PackScratch.MaxDepth)) + "1" + new string('}', PackScratch.MaxDepth); // as deep as allowed
        byte[] nested = Encoding.UTF8.GetBytes(deep);
        byte[] e2 = new byte[nested.Length], a2 = new byte[nested.Length];
        Assert.True(TryTwoPass(nested, table, e2, out int l1));
        Assert.True(TryOnePass(nested, table, a2, out int l2));
        Assert.Equal(e2[..l1], a2[..l2]);
        byte[] tooDeep = Encoding.UTF8.GetBytes("{\"b\":" + deep + "}");
        Assert.False(TryOnePass(tooDeep, table, new byte[tooDeep.Length], out _));
        Assert.False(TryTwoPass(tooDeep, table, new byte[tooDeep.Length], out _));
    }
}
