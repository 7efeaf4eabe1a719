using System.Text;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// The transform gives back every document byte for byte (JSON of many shapes and number forms, escapes and unicode;
/// BSON with every type), packs what it can and says "not applicable" for the rest, without an exception.
/// </summary>
public sealed class ShapeTransformTests
{
    internal static ShapeTransform Learn(DocumentKind kind, IEnumerable<byte[]> samples)
    {
        var builder = new ShapeTableBuilder(kind);
        foreach (byte[] sample in samples) builder.Add(sample);
        return new ShapeTransform(builder.Build());
    }

    internal static byte[] Encode(ShapeTransform transform, byte[] document)
    {
        byte[] packed = new byte[document.Length];
        Assert.True(transform.TryEncode(document, packed, out int written), $"not packed: {Encoding.UTF8.GetString(document)}");
        return packed[..written];
    }

    internal static byte[] Decode(ShapeTransform transform, byte[] packed, int length)
    {
        byte[] back = new byte[length];
        int written = transform.Decode(packed, back);
        return back[..written];
    }

    [Fact]
    public void TryEncode_GeneratedJsonOfManyShapes_RoundTripsByteForByteAndIsSmaller()
    {
        var training = StructureDocuments.JsonDocuments(400, 12, seed: 1);
        ShapeTransform transform = Learn(DocumentKind.Json, training);
        Assert.InRange(transform.Table.Count, 12, 4096);

        var documents = StructureDocuments.JsonDocuments(2000, 15, seed: 2); // 3 schemas never seen in training: inline keys
        int packed = 0;
        long raw = 0, packedBytes = 0;
        foreach (byte[] document in documents)
        {
            byte[] buffer = new byte[document.Length];
            if (!transform.TryEncode(document, buffer, out int written)) continue;
            packed++;
            raw += document.Length;
            packedBytes += written;
            Assert.Equal(document, Decode(transform, buffer[..written], document.Length));
        }
        Assert.True(packed >= documents.Count * 0.95, $"only {packed} of {documents.Count} packed");
        Assert.True(packedBytes < raw * 0.8, $"packed {packedBytes} of {raw} bytes");
        Assert.Equal(0, transform.VerifyFailures);
    }

    [Fact]
    public void TryEncode_EveryNumberForm_KeepsItsTextExactly()
    {
        var documents = StructureDocuments.JsonNumbers
            .Select(n => Encoding.UTF8.GetBytes($"{{\"n\":{n},\"list\":[{n},{n}],\"o\":{{\"n\":{n}}}}}")).ToList();
        ShapeTransform transform = Learn(DocumentKind.Json, documents);
        foreach (byte[] document in documents)
            Assert.Equal(document, Decode(transform, Encode(transform, document), document.Length));
    }

    [Theory]
    [InlineData("0", PackedTag.Integer)]
    [InlineData("-42", PackedTag.Integer)]
    [InlineData("123456789012345678", PackedTag.Integer)]
    [InlineData("1234567890123456789", PackedTag.NumberText)] // 19 digits
    [InlineData("-0", PackedTag.NumberText)]
    [InlineData("0.5", PackedTag.Decimal + 1)]
    [InlineData("1.50", PackedTag.Decimal + 2)]
    [InlineData("-0.0", PackedTag.NumberText)]
    [InlineData("0.123456789012345", PackedTag.Decimal + 15)]
    [InlineData("0.1234567890123456", PackedTag.NumberText)] // 16 after the point
    [InlineData("1e5", PackedTag.NumberText)]
    [InlineData("01", PackedTag.NumberText)] // not JSON, but kept exactly as written
    public void TryEncode_JsonNumber_PackedWithTheExpectedTag(string number, byte tag)
    {
        byte[] document = Encoding.UTF8.GetBytes($"{{\"value\":{number},\"pad\":\"xxxxxxxxxxxxxxxxxxxx\"}}");
        ShapeTransform transform = Learn(DocumentKind.Json, [document, document]);
        byte[] packed = Encode(transform, document);
        Assert.Equal(1, packed[0]); // shape 1
        Assert.Equal(tag, packed[1]);
        Assert.Equal(document, Decode(transform, packed, document.Length));
    }

    [Fact]
    public void TryEncode_EscapesAndUnicode_KeptRawAndRoundTrip()
    {
        var documents = StructureDocuments.JsonStrings
            .Select(s => Encoding.UTF8.GetBytes($"{{\"{s}\":\"{s}\",\"k\":[\"{s}\",{{\"{s}\":\"{s}\"}}]}}")).ToList();
        ShapeTransform transform = Learn(DocumentKind.Json, documents.Take(5));
        foreach (byte[] document in documents)
            Assert.Equal(document, Decode(transform, Encode(transform, document), document.Length));
    }

    [Fact]
    public void TryEncode_ShortAndLongStrings_UseTheShortTagUpTo223Bytes()
    {
        foreach (int length in (int[])[0, 1, 222, 223, 224, 5000])
        {
            byte[] document = Encoding.UTF8.GetBytes($"{{\"s\":\"{new string('q', length)}\",\"pad\":1234567}}");
            ShapeTransform transform = Learn(DocumentKind.Json, [document, document]);
            byte[] packed = Encode(transform, document);
            Assert.Equal(length <= 223 ? PackedTag.ShortString + length : PackedTag.String, packed[1]);
            Assert.Equal(document, Decode(transform, packed, document.Length));
        }
    }

    [Fact]
    public void TryEncode_KeysAndStringsOfEveryLengthAroundTheShortPaths_RoundTripWithEscapesAnywhere()
    {
        // Strings are scanned byte by byte up to 16 bytes and searched beyond; copies under 8, from 8 to 16 and over 16
        // bytes take three paths. Every length from 0 to 40, with an escape (\" or \\) at every position, as a key and
        // as a value, must come back byte for byte, and a lone backslash at the end must never be taken as raw content.
        var documents = new List<byte[]>();
        for (int length = 0; length <= 40; length++)
        {
            string plain = new string('k', length);
            documents.Add(Encoding.UTF8.GetBytes($"{{\"{plain}\":\"{plain}\",\"n\":{length}}}"));
            for (int at = 0; at + 2 <= length; at++)
            {
                foreach (string escape in (string[])["\\\"", "\\\\"])
                {
                    string text = plain[..at] + escape + plain[(at + 2)..];
                    documents.Add(Encoding.UTF8.GetBytes($"{{\"{text}\":\"{text}\",\"n\":{at}}}"));
                }
            }
        }
        ShapeTransform transform = Learn(DocumentKind.Json, documents);
        foreach (byte[] document in documents)
        {
            byte[] packed = new byte[document.Length];
            if (!transform.TryEncode(document, packed, out int written)) continue; // not smaller: stored as it is, nothing to check
            Assert.Equal(document, Decode(transform, packed[..written], document.Length));
        }
        Assert.True(documents.Count(d => transform.TryEncode(d, new byte[d.Length], out _)) > documents.Count / 2);
        Assert.Equal(0, transform.VerifyFailures); // no encoding was refused by its own verifying decode
        for (int length = 1; length <= 40; length++)
        {
            string content = new string('a', length - 1) + "\\";
            Assert.False(JsonText.IsRawStringContent(Encoding.UTF8.GetBytes(content)), $"a trailing backslash at length {length}");
            Assert.True(JsonText.IsRawStringContent(Encoding.UTF8.GetBytes(content + "n")), $"an escape at the end, length {length + 1}");
            Assert.False(JsonText.IsRawStringContent(Encoding.UTF8.GetBytes(new string('a', length - 1) + "\"")), $"a quote at length {length}");
        }
    }

    [Fact]
    public void Decode_ShortStringsWithRoomAhead_TakeTheVectorPath_EscapesKept_UnescapedQuotesRefused()
    {
        // Strings of up to 32 bytes with 32 bytes of stream after them are checked and copied in one vector move
        // (JsonText.TryCopyPlainShort): a long value follows each one here so they take it. Every length from 0 to 40,
        // plain and with an escape at every position, must come back byte for byte.
        string tail = new string('t', 64);
        var documents = new List<byte[]>();
        for (int length = 0; length <= 40; length++)
        {
            string plain = new string('v', length);
            documents.Add(Encoding.UTF8.GetBytes($"{{\"s\":\"{plain}\",\"tail\":\"{tail}\"}}"));
            documents.Add(Encoding.UTF8.GetBytes($"{{\"s\":\"{plain}\"}}")); // no room ahead: the scalar path
            for (int at = 0; at + 2 <= length; at++)
                foreach (string escape in (string[])["\\\"", "\\\\"])
                    documents.Add(Encoding.UTF8.GetBytes($"{{\"s\":\"{plain[..at] + escape + plain[(at + 2)..]}\",\"tail\":\"{tail}\"}}"));
        }
        ShapeTransform transform = Learn(DocumentKind.Json, documents);
        foreach (byte[] document in documents)
            Assert.Equal(document, Decode(transform, Encode(transform, document), document.Length));

        // The same stream with one byte of the string turned into an unescaped quote, or into a backslash that escapes
        // the closing quote, is refused at every position, on the vector path and (without the tail) off it.
        foreach (bool withTail in (bool[])[true, false])
        {
            for (int length = 1; length <= 33; length++)
            {
                string plain = new string('v', length);
                byte[] document = Encoding.UTF8.GetBytes(withTail ? $"{{\"s\":\"{plain}\",\"tail\":\"{tail}\"}}" : $"{{\"s\":\"{plain}\"}}");
                byte[] packed = Encode(transform, document);
                int start = packed.AsSpan().IndexOf(Encoding.UTF8.GetBytes(plain));
                Assert.True(start > 0);
                for (int at = 0; at < length; at++)
                {
                    foreach (byte bad in "\"\\"u8.ToArray())
                    {
                        if (bad == (byte)'\\' && at < length - 1) continue; // a backslash inside escapes the next 'v': legal
                        byte[] mutant = (byte[])packed.Clone();
                        mutant[start + at] = bad;
                        Assert.Throws<InvalidDataException>(() => Decode(transform, mutant, document.Length));
                    }
                }
            }
        }
    }

    [Fact]
    public void TryCopyPlainShort_RefusesAQuoteOrBackslashInsideTheLength_IgnoresThemBeyond()
    {
        byte[] source = new byte[32], destination = new byte[32];
        for (int length = 0; length <= JsonText.PlainShortLength; length++)
        {
            Array.Fill(source, (byte)'a');
            Assert.True(JsonText.TryCopyPlainShort(source, destination, length));
            Assert.Equal(source[..length], destination[..length]);
            for (int at = 0; at < 32; at++)
            {
                foreach (byte special in "\"\\"u8.ToArray())
                {
                    Array.Fill(source, (byte)'a');
                    source[at] = special;
                    Assert.Equal(at >= length, JsonText.TryCopyPlainShort(source, destination, length));
                }
            }
        }
    }

    [Fact]
    public void TryEncode_UnknownKeyLists_WrittenInlineAndRoundTrip()
    {
        ShapeTransform transform = Learn(DocumentKind.Json, [Encoding.UTF8.GetBytes("{\"a\":1}"), Encoding.UTF8.GetBytes("{\"a\":2}")]);
        byte[] document = Encoding.UTF8.GetBytes("{\"unknown\":{\"nested\":[1,2,{\"deeper\":\"yes\"}]},\"other\":{},\"e\":[]}");
        byte[] packed = Encode(transform, document);
        Assert.Equal(0, packed[0]); // inline keys at the root
        Assert.Equal(document, Decode(transform, packed, document.Length));
    }

    [Theory]
    [InlineData("{\"a\": 1}")]          // whitespace between tokens
    [InlineData(" {\"a\":1}")]
    [InlineData("{\"a\":1}\n")]
    [InlineData("[1,2,3]")]             // root not an object
    [InlineData("\"text\"")]
    [InlineData("{\"a\":1")]            // truncated
    [InlineData("{\"a\":1,}")]          // not JSON
    [InlineData("{\"a\":tru}")]
    [InlineData("{\"a\":\"unterminated}")]
    [InlineData("{\"a\":\"dangling\\")]
    [InlineData("{\"a\":1}{\"b\":2}")]  // two documents
    [InlineData("{a:1}")]
    [InlineData("")]
    [InlineData("{}")]                  // too small to gain anything
    public void TryEncode_NotCompactJsonObject_NotApplicable(string text)
    {
        ShapeTransform transform = Learn(DocumentKind.Json, [Encoding.UTF8.GetBytes("{\"a\":1}"), Encoding.UTF8.GetBytes("{\"a\":2}")]);
        byte[] document = Encoding.UTF8.GetBytes(text);
        Assert.False(transform.TryEncode(document, new byte[document.Length + 16], out int written));
        Assert.Equal(0, written);
    }

    [Fact]
    public void TryEncode_NestingBeyondTheLimit_NotApplicable_AtTheLimit_RoundTrips()
    {
        ShapeTransform transform = Learn(DocumentKind.Json, [Encoding.UTF8.GetBytes("{\"a\":1}"), Encoding.UTF8.GetBytes("{\"a\":2}")]);
        string Nested(int depth) => depth == 1 ? "{\"a\":\"leaf value here\"}" : "{\"a\":" + Nested(depth - 1) + "}";
        byte[] atLimit = Encoding.UTF8.GetBytes(Nested(PackScratch.MaxDepth));
        byte[] beyond = Encoding.UTF8.GetBytes(Nested(PackScratch.MaxDepth + 1));
        Assert.Equal(atLimit, Decode(transform, Encode(transform, atLimit), atLimit.Length));
        Assert.False(transform.TryEncode(beyond, new byte[beyond.Length], out _));
    }

    [Fact]
    public void TryEncode_DestinationTooSmall_NotApplicable()
    {
        byte[] document = Encoding.UTF8.GetBytes("{\"title\":\"The Night of the Hunter\",\"year\":1955}");
        ShapeTransform transform = Learn(DocumentKind.Json, [document, document]);
        byte[] packed = Encode(transform, document);
        Assert.False(transform.TryEncode(document, new byte[packed.Length - 1], out _));
        Assert.True(transform.TryEncode(document, new byte[packed.Length], out int written));
        Assert.Equal(packed.Length, written);
    }

    [Fact]
    public void TryEncode_BsonWithEveryType_RoundTripsByteForByte()
    {
        var random = new Random(5);
        var documents = Enumerable.Range(0, 300).Select(i => StructureDocuments.BsonEveryType(random, i % 4)).ToList();
        ShapeTransform transform = Learn(DocumentKind.Bson, documents.Take(60));
        foreach (byte[] document in documents)
            Assert.Equal(document, Decode(transform, Encode(transform, document), document.Length));
        Assert.Equal(0, transform.VerifyFailures);
    }

    [Fact]
    public void TryEncode_BsonDoubles_ShortDecimalsPackedOthersKeptAsEightBytes()
    {
        var documents = StructureDocuments.Doubles.Select(d =>
        {
            var doc = new Bson.Document();
            doc.Add("value", Bson.Double(d));
            doc.Add("pad", Bson.String("padding to make packing pay"));
            return doc.Value().Value;
        }).ToList();
        ShapeTransform transform = Learn(DocumentKind.Bson, documents);
        for (int i = 0; i < documents.Count; i++)
        {
            byte[] packed = Encode(transform, documents[i]);
            double value = StructureDocuments.Doubles[i];
            bool shortDecimal = value is 1.5 or 0.1 or 0.3 or -273.15 or 123456.789 or -118.6328333 or 0.04214 or 1517966773840.0
                or 0.123456789012345 or 1e15 or 3.141592653589793 || value == 0.0 && !double.IsNegative(value);
            Assert.Equal(shortDecimal, packed[1] is >= PackedTag.Decimal and <= PackedTag.Decimal + PackedTag.MaxScale);
            Assert.Equal(documents[i], Decode(transform, packed, documents[i].Length));
        }
    }

    [Fact]
    public void TryEncode_BsonRecords_PackedSmallerAndRoundTrip()
    {
        var documents = StructureDocuments.BsonRecords(500, seed: 9);
        ShapeTransform transform = Learn(DocumentKind.Bson, documents.Take(100));
        long raw = 0, packed = 0;
        foreach (byte[] document in documents)
        {
            byte[] p = Encode(transform, document);
            raw += document.Length;
            packed += p.Length;
            Assert.Equal(document, Decode(transform, p, document.Length));
        }
        Assert.True(packed < raw * 0.75, $"packed {packed} of {raw} bytes");
    }

    public static TheoryData<string, byte[]> NotPackableBson()
    {
        var valid = new Bson.Document();
        valid.Add("a", Bson.Int32(1));
        valid.Add("b", Bson.String("some text to pack"));
        byte[] good = valid.Value().Value;
        var data = new TheoryData<string, byte[]>
        {
            { "length field one too large", Patch(good, 0, (byte)(good[0] + 1)) },
            { "length field one too small", Patch(good, 0, (byte)(good[0] - 1)) },
            { "missing terminator", Patch(good, good.Length - 1, 1) },
            { "boolean 2", Doc(("flag", (0x08, [2])), ("s", Bson.String("padding padding"))) },
            { "array key not its index", Doc(("list", (0x04, Doc(("1", Bson.Int32(5)))))) },
            { "array key with a leading zero", Doc(("list", (0x04, Doc(("00", Bson.Int32(5)))))) },
            { "string without its NUL", Doc(("s", (0x02, [.. StructureDocuments.Int32Bytes(3), (byte)'a', (byte)'b', (byte)'c']))) },
            { "string length zero", Doc(("s", (0x02, [.. StructureDocuments.Int32Bytes(0), 0]))) },
            { "unknown type 0x14", Doc(("x", (0x14, [1, 2, 3, 4]))) },
            { "deprecated type with a bad length", Doc(("code", (0x0D, [.. StructureDocuments.Int32Bytes(100), (byte)'x', 0]))) },
            { "trailing byte after the document", [.. good, 0] },
            { "too short", [5, 0, 0] },
            { "JSON text", "{\"a\":1}"u8.ToArray() },
        };
        return data;
    }

    [Theory]
    [MemberData(nameof(NotPackableBson))]
    public void TryEncode_BsonTheTransformCannotReproduce_NotApplicable(string why, byte[] document)
    {
        ShapeTransform transform = Learn(DocumentKind.Bson, StructureDocuments.BsonRecords(20, seed: 3));
        Assert.False(transform.TryEncode(document, new byte[document.Length + 64], out _), why);
    }

    [Fact]
    public void TryEncode_JsonDocumentWithBsonTable_AndTheReverse_NotApplicable()
    {
        ShapeTransform bson = Learn(DocumentKind.Bson, StructureDocuments.BsonRecords(20, seed: 3));
        ShapeTransform json = Learn(DocumentKind.Json, StructureDocuments.JsonDocuments(20, 2, seed: 3));
        byte[] jsonDocument = StructureDocuments.JsonDocuments(1, 2, seed: 4)[0];
        byte[] bsonDocument = StructureDocuments.BsonRecords(1, seed: 4)[0];
        Assert.False(bson.TryEncode(jsonDocument, new byte[jsonDocument.Length], out _));
        Assert.False(json.TryEncode(bsonDocument, new byte[bsonDocument.Length], out _));
    }

    [Fact]
    public void DetectKind_JsonBsonAndNeither()
    {
        Assert.Equal(DocumentKind.Json, ShapeTableBuilder.DetectKind(StructureDocuments.JsonDocuments(20, 3, seed: 1)));
        Assert.Equal(DocumentKind.Bson, ShapeTableBuilder.DetectKind(StructureDocuments.BsonRecords(20, seed: 1)));
        var random = new Random(1);
        Assert.Null(ShapeTableBuilder.DetectKind(Enumerable.Range(0, 20).Select(_ => StructureDocuments.RandomBytes(random, 100)).ToList()));
        Assert.Null(ShapeTableBuilder.DetectKind(Enumerable.Range(0, 20).Select(_ => "{\"pretty\": true}"u8.ToArray()).ToList()));
    }

    private static byte[] Patch(byte[] bytes, int at, byte value)
    {
        byte[] copy = [.. bytes];
        copy[at] = value;
        return copy;
    }

    private static byte[] Doc(params (string Name, (byte Type, byte[] Value) Value)[] elements)
    {
        var d = new Bson.Document();
        foreach (var (name, value) in elements) d.Add(name, value);
        return d.Value().Value;
    }
}
