using System.Buffers.Binary;
using System.Globalization;
using System.Text;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// Generated documents for the structure tests (no corpus files): compact JSON of many shapes, with numbers in every
/// JSON form, escapes and unicode; and BSON documents with every BSON type, written by <see cref="Bson"/>.
/// Seeded: the same seed gives the same documents.
/// </summary>
internal static class StructureDocuments
{
    /// <summary>Number texts of every JSON form: packed ones (integers, decimals) and ones that must stay text.</summary>
    public static readonly string[] JsonNumbers =
    [
        "0", "7", "-1", "42", "-2147483648", "9007199254740993", "123456789012345678", "-999999999999999999",
        "1234567890123456789", "-0", "0.5", "-0.05", "1.50", "0.000", "-0.0", "12.000000000000001", "0.123456789012345",
        "0.1234567890123456", "3.14159", "-273.15", "1e5", "1E-5", "1.5e+10", "2.0E0", "-0e0", "6.02214076e23", "100",
    ];

    /// <summary>String contents as they stand between quotes: escapes kept raw, unicode raw and escaped.</summary>
    public static readonly string[] JsonStrings =
    [
        "", "a", "Drama", "The Night of the Hunter", "caf\u00e9", "\u4e2d\u6587", "\ud83d\ude00 \ud83c\uddeb\ud83c\uddf7",
        "say \\\"hi\\\"", "back\\\\slash", "line\\nbreak\\ttab", "\\u00e9\\ud83d\\ude00", "a\\/b", "\\b\\f\\r",
        "ends with escaped quote \\\"", new string('x', 223), new string('y', 224), new string('z', 1000),
    ];

    private static readonly string[] Words = ["id", "name", "title", "year", "rating", "tags", "cast", "meta", "geo", "value", "a", "b", "long key with spaces", "k\\\"q", "\u00fcber"];

    /// <summary>A JSON document of <paramref name="schema"/>'s shape (objects reuse key lists across documents) with random values.</summary>
    public static string Json(Random random, int schema, int depth = 0)
    {
        var keys = new Random(schema * 7919 + depth);
        int count = 1 + keys.Next(depth == 0 ? 8 : 4);
        var s = new StringBuilder("{");
        for (int i = 0; i < count; i++)
        {
            if (i > 0) s.Append(',');
            s.Append('"').Append(Words[keys.Next(Words.Length)]).Append(i.ToString(CultureInfo.InvariantCulture)).Append("\":");
            AppendValue(s, random, keys.Next(10), schema * 31 + i, depth);
        }
        return s.Append('}').ToString();
    }

    private static void AppendValue(StringBuilder s, Random random, int kind, int schema, int depth)
    {
        switch (depth >= 4 ? kind % 5 : kind)
        {
            case 0: s.Append(JsonNumbers[random.Next(JsonNumbers.Length)]); break;
            case 1: s.Append('"').Append(JsonStrings[random.Next(JsonStrings.Length)]).Append('"'); break;
            case 2: s.Append(random.Next(3) switch { 0 => "true", 1 => "false", _ => "null" }); break;
            case 3: s.Append(random.Next(-100000, 100000).ToString(CultureInfo.InvariantCulture)); break;
            case 4: s.Append((random.Next(-100000, 100000) / 100.0).ToString("0.00", CultureInfo.InvariantCulture)); break;
            case 5 or 6: s.Append(Json(random, schema, depth + 1)); break;
            default:
                s.Append('[');
                int n = random.Next(5);
                for (int i = 0; i < n; i++)
                {
                    if (i > 0) s.Append(',');
                    AppendValue(s, random, random.Next(10), schema + i, depth + 1);
                }
                s.Append(']');
                break;
        }
    }

    /// <summary><paramref name="count"/> JSON documents of <paramref name="schemas"/> shapes, UTF-8.</summary>
    public static List<byte[]> JsonDocuments(int count, int schemas, int seed)
    {
        var random = new Random(seed);
        return Enumerable.Range(0, count).Select(_ => Encoding.UTF8.GetBytes(Json(random, random.Next(schemas)))).ToList();
    }

    /// <summary>Doubles that pack as decimals and doubles that must stay 8 bytes.</summary>
    public static readonly double[] Doubles =
    [
        0.0, -0.0, 1.5, 0.1, 0.3, 0.1 + 0.2, -273.15, 123456.789, 1e-20, 1e300, double.NaN, double.PositiveInfinity,
        double.NegativeInfinity, double.Epsilon, 9007199254740992.0, 9007199254740994.0, 1e22, 3.141592653589793,
        -118.6328333, 0.04214, 1517966773840.0, double.MaxValue, 0.123456789012345, 1e15, 1.5e17,
    ];

    /// <summary>A BSON document with every BSON type, nested documents and arrays, varied by <paramref name="random"/>.</summary>
    public static byte[] BsonEveryType(Random random, int schema)
    {
        var keys = new Random(schema);
        var d = new Bson.Document();
        d.Add("double", Bson.Double(Doubles[random.Next(Doubles.Length)]));
        d.Add("string", Bson.String(Encoding.UTF8.GetString(Encoding.UTF8.GetBytes(JsonStrings[random.Next(JsonStrings.Length)]))));
        var inner = new Bson.Document();
        inner.Add("x", Bson.Int32(random.Next()));
        inner.Add(keys.Next(2) == 0 ? "y" : "z", Bson.Double(random.Next(1000) / 8.0));
        d.Add("document", inner.Value());
        d.Add("array", Bson.Array(Bson.Int32(1), Bson.String("two"), Bson.Double(3.25), inner.Value(), Bson.Array(), Bson.Null()));
        d.Add("binary", Bson.Binary((byte)random.Next(0, 9), RandomBytes(random, random.Next(0, 40))));
        d.Add("undefined", (0x06, []));
        d.Add("objectId", (0x07, RandomBytes(random, 12)));
        d.Add("bool", Bson.Bool(random.Next(2) == 1));
        d.Add("datetime", (0x09, Int64Bytes(1_700_000_000_000L + random.Next())));
        d.Add("null", Bson.Null());
        d.Add("regex", (0x0B, [.. Encoding.UTF8.GetBytes("^a.*b$"), 0, .. "im"u8, 0]));
        d.Add("dbpointer", (0x0C, [.. Bson.String("db.collection").Value, .. RandomBytes(random, 12)]));
        d.Add("code", (0x0D, Bson.String("function() { return 1; }").Value));
        d.Add("symbol", (0x0E, Bson.String("sym").Value));
        byte[] code = Bson.String("x + y").Value;
        byte[] scope = inner.Value().Value;
        d.Add("codeWithScope", (0x0F, [.. Int32Bytes(4 + code.Length + scope.Length), .. code, .. scope]));
        d.Add("int32", Bson.Int32(random.Next(int.MinValue, int.MaxValue)));
        d.Add("timestamp", (0x11, Int64Bytes(random.NextInt64())));
        d.Add("int64", (0x12, Int64Bytes(random.NextInt64(long.MinValue, long.MaxValue))));
        d.Add("decimal128", (0x13, RandomBytes(random, 16)));
        d.Add("minKey", (0xFF, []));
        d.Add("maxKey", (0x7F, []));
        d.Add("", Bson.String("empty name"));
        return d.Value().Value;
    }

    /// <summary>BSON documents shaped like JSON records (what the MongoDB serializer compresses for a POCO).</summary>
    public static List<byte[]> BsonRecords(int count, int seed)
    {
        var random = new Random(seed);
        var documents = new List<byte[]>();
        for (int i = 0; i < count; i++)
        {
            var d = new Bson.Document();
            d.Add("Title", Bson.String("Movie " + random.Next(1000)));
            d.Add("Year", Bson.Int32(1950 + random.Next(70)));
            d.Add("Gross", random.Next(4) == 0 ? Bson.Null() : ((byte)0x12, Int64Bytes(random.NextInt64(1, 3_000_000_000))));
            d.Add("Rating", Bson.Double(random.Next(10, 100) / 10.0));
            d.Add("Genres", Bson.Array(Enumerable.Range(0, random.Next(4)).Select(g => Bson.String(Words[(g + i) % Words.Length])).ToArray()));
            var meta = new Bson.Document();
            meta.Add("votes", Bson.Int32(random.Next(100000)));
            meta.Add("seen", Bson.Bool(random.Next(2) == 0));
            d.Add("Meta", meta.Value());
            if (i % 5 == 0) d.Add("Extra", BsonEveryType(random, i % 3).AsElement());
            documents.Add(d.Value().Value);
        }
        return documents;
    }

    public static byte[] RandomBytes(Random random, int count)
    {
        byte[] bytes = new byte[count];
        random.NextBytes(bytes);
        return bytes;
    }

    public static byte[] Int32Bytes(int value)
    {
        byte[] bytes = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(bytes, value);
        return bytes;
    }

    public static byte[] Int64Bytes(long value)
    {
        byte[] bytes = new byte[8];
        BinaryPrimitives.WriteInt64LittleEndian(bytes, value);
        return bytes;
    }

    private static (byte Type, byte[] Value) AsElement(this byte[] document) => (0x03, document);
}

/// <summary>A minimal BSON writer for tests: values as (type, bytes) pairs, documents and arrays from them.</summary>
internal static class Bson
{
    public sealed class Document
    {
        private readonly List<byte> _bytes = [];

        public void Add(string name, (byte Type, byte[] Value) value)
        {
            _bytes.Add(value.Type);
            _bytes.AddRange(Encoding.UTF8.GetBytes(name));
            _bytes.Add(0);
            _bytes.AddRange(value.Value);
        }

        public (byte Type, byte[] Value) Value() => (0x03, [.. StructureDocuments.Int32Bytes(_bytes.Count + 5), .. _bytes, 0]);
    }

    public static (byte, byte[]) Double(double value)
    {
        byte[] bytes = new byte[8];
        BinaryPrimitives.WriteDoubleLittleEndian(bytes, value);
        return (0x01, bytes);
    }

    public static (byte Type, byte[] Value) String(string value)
    {
        byte[] utf8 = Encoding.UTF8.GetBytes(value);
        return (0x02, [.. StructureDocuments.Int32Bytes(utf8.Length + 1), .. utf8, 0]);
    }

    public static (byte, byte[]) Int32(int value) => (0x10, StructureDocuments.Int32Bytes(value));

    public static (byte, byte[]) Bool(bool value) => (0x08, [value ? (byte)1 : (byte)0]);

    public static (byte, byte[]) Null() => (0x0A, []);

    public static (byte, byte[]) Binary(byte subtype, byte[] data) => (0x05, [.. StructureDocuments.Int32Bytes(data.Length), subtype, .. data]);

    public static (byte, byte[]) Array(params (byte Type, byte[] Value)[] elements)
    {
        var d = new Document();
        for (int i = 0; i < elements.Length; i++) d.Add(i.ToString(CultureInfo.InvariantCulture), elements[i]);
        return (0x04, d.Value().Value);
    }
}
