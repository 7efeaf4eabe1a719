using System.Buffers.Binary;
using System.Globalization;
using System.IO.Hashing;
using System.Text;
using System.Text.Json;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// The structure format's vectors (Vectors/structure-vectors.json, listed in docs/structure.md): every table and packed
/// stream decodes to its document, packing the document gives the same bytes, the frame decodes with dictionary 4242,
/// every invalid stream is refused; and a second reader, written from docs/structure.md alone (no code of the
/// library's structure step), decodes every vector to the same bytes.
/// </summary>
public sealed class StructureVectorTests
{
    private static readonly JsonElement Root = JsonDocument.Parse(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "Vectors", "structure-vectors.json"))).RootElement;

    private static byte[] Hex(JsonElement e, string name) => Convert.FromHexString(e.GetProperty(name).GetString()!);

    private static JsonElement TableNamed(string name) => Root.GetProperty("tables").EnumerateArray().Single(t => t.GetProperty("name").GetString() == name);

    public static TheoryData<string> Tables() => [.. Root.GetProperty("tables").EnumerateArray().Select(t => t.GetProperty("name").GetString()!)];

    public static TheoryData<string> Vectors() => [.. Root.GetProperty("vectors").EnumerateArray().Select(t => t.GetProperty("name").GetString()!)];

    public static TheoryData<string> Invalid() => [.. Root.GetProperty("invalid").EnumerateArray().Select(t => t.GetProperty("name").GetString()!)];

    [Theory]
    [MemberData(nameof(Tables))]
    public void Table_FromItsKeyLists_IsTheCommittedBytes(string name)
    {
        JsonElement t = TableNamed(name);
        var kind = t.GetProperty("kind").GetString() == "json" ? DocumentKind.Json : DocumentKind.Bson;
        var shapes = t.GetProperty("shapes").EnumerateArray().Select(s => (IReadOnlyList<byte[]>)[.. s.EnumerateArray().Select(k => Encoding.UTF8.GetBytes(k.GetString()!))]).ToList();
        Assert.Equal(Hex(t, "hex"), ShapeTable.Create(kind, shapes).Serialize());
        Assert.Equal(Hex(t, "hex"), ShapeTable.Parse(Hex(t, "hex")).Serialize());
    }

    [Theory]
    [MemberData(nameof(Vectors))]
    public void Vector_DecodesToItsDocument_AndPackingGivesTheSameBytes(string name)
    {
        JsonElement v = Root.GetProperty("vectors").EnumerateArray().Single(x => x.GetProperty("name").GetString() == name);
        byte[] table = Hex(TableNamed(v.GetProperty("table").GetString()!), "hex");
        byte[] packed = Hex(v, "packed");
        byte[] document = Hex(v, "document");
        var transform = new ShapeTransform(ShapeTable.Parse(table));

        Assert.Equal(document, ShapeTransformTests.Decode(transform, packed, document.Length));
        Assert.Equal(packed, ShapeTransformTests.Encode(transform, document));
        Assert.Equal(document, IndependentReader.Decode(table, packed));
        if (v.TryGetProperty("text", out JsonElement text)) Assert.Equal(text.GetString(), Encoding.UTF8.GetString(document));

        if (v.TryGetProperty("frame", out _))
        {
            ZstdDictionary dictionary = ZstdDictionary.Create(4242, File.ReadAllBytes(Path.Combine(AppContext.BaseDirectory, "Vectors", Root.GetProperty("dictionary").GetString()!)));
            var model = new StructureModel(transform, dictionary);
            byte[] back = new byte[document.Length];
            model.Decompress(Hex(v, "frame"), back);
            Assert.Equal(document, back);
            byte[] frame = new byte[1024];
            Assert.True(model.TryCompress(document, frame, 3, out int written));
            Assert.Equal(Hex(v, "frame"), frame[..written]);
        }
    }

    [Theory]
    [MemberData(nameof(Invalid))]
    public void InvalidStream_Refused_WithAMessageSayingWhy(string name)
    {
        JsonElement v = Root.GetProperty("invalid").EnumerateArray().Single(x => x.GetProperty("name").GetString() == name);
        var transform = new ShapeTransform(ShapeTable.Parse(Hex(TableNamed(v.GetProperty("table").GetString()!), "hex")));
        byte[] destination = new byte[v.GetProperty("length").GetInt32()];
        var ex = Assert.Throws<InvalidDataException>(() => transform.Decode(Hex(v, "packed"), destination));
        Assert.Contains(v.GetProperty("error").GetString()!, ex.Message, StringComparison.Ordinal);
    }

    /// <summary>A reader written from docs/structure.md, "Byte layout", only: it shares no code with the library's.</summary>
    private static class IndependentReader
    {
        public static byte[] Decode(byte[] table, byte[] packed)
        {
            // Shape table.
            if (!table.AsSpan(0, 4).SequenceEqual("SHPT"u8) || table[4] != 1 || table[6] != 0) throw new InvalidDataException("table header");
            if (BinaryPrimitives.ReadUInt32LittleEndian(table.AsSpan(table.Length - 4)) != XxHash32.HashToUInt32(table.AsSpan(0, table.Length - 4)))
                throw new InvalidDataException("table checksum");
            bool json = table[5] == 1;
            int at = 7;
            var shapes = new List<byte[][]>();
            ulong count = Varint(table, ref at);
            for (ulong s = 0; s < count; s++)
            {
                var keys = new byte[(int)Varint(table, ref at)][];
                for (int k = 0; k < keys.Length; k++)
                {
                    int length = (int)Varint(table, ref at);
                    keys[k] = table[at..(at + length)];
                    at += length;
                }
                shapes.Add(keys);
            }

            // Packed stream.
            var output = new List<byte>();
            int p = 0;
            if (json) JsonObject(packed, ref p, shapes, output);
            else BsonDocument(packed, ref p, shapes, output, array: false);
            if (p != packed.Length) throw new InvalidDataException("trailing bytes");
            return [.. output];
        }

        private static ulong Varint(byte[] b, ref int at)
        {
            ulong value = 0;
            for (int shift = 0; ; shift += 7)
            {
                byte x = b[at++];
                value |= (ulong)(x & 0x7F) << shift;
                if (x < 0x80) return value;
            }
        }

        private static long ZigZag(byte[] b, ref int at)
        {
            ulong z = Varint(b, ref at);
            return (long)(z >> 1) ^ -(long)(z & 1);
        }

        private static (int Count, byte[][]? Keys) Shape(byte[] b, ref int p, List<byte[][]> shapes)
        {
            int id = (int)Varint(b, ref p);
            return id == 0 ? ((int)Varint(b, ref p), null) : (shapes[id - 1].Length, shapes[id - 1]);
        }

        private static byte[] InlineKey(byte[] b, ref int p)
        {
            int length = (int)Varint(b, ref p);
            byte[] key = b[p..(p + length)];
            p += length;
            return key;
        }

        private static void JsonObject(byte[] b, ref int p, List<byte[][]> shapes, List<byte> o)
        {
            (int count, byte[][]? keys) = Shape(b, ref p, shapes);
            o.Add((byte)'{');
            for (int m = 0; m < count; m++)
            {
                if (m > 0) o.Add((byte)',');
                byte[] key = keys is null ? InlineKey(b, ref p) : keys[m];
                o.Add((byte)'"');
                o.AddRange(key);
                o.AddRange("\":"u8.ToArray());
                JsonValue(b, ref p, shapes, o);
            }
            o.Add((byte)'}');
        }

        private static void JsonValue(byte[] b, ref int p, List<byte[][]> shapes, List<byte> o)
        {
            byte tag = b[p++];
            if (tag >= 0x20)
            {
                o.Add((byte)'"');
                o.AddRange(b[p..(p + tag - 0x20)]);
                p += tag - 0x20;
                o.Add((byte)'"');
                return;
            }
            switch (tag)
            {
                case 0x00: o.AddRange("null"u8.ToArray()); break;
                case 0x01: o.AddRange("false"u8.ToArray()); break;
                case 0x02: o.AddRange("true"u8.ToArray()); break;
                case 0x03: JsonObject(b, ref p, shapes, o); break;
                case 0x04:
                    int n = (int)Varint(b, ref p);
                    o.Add((byte)'[');
                    for (int i = 0; i < n; i++)
                    {
                        if (i > 0) o.Add((byte)',');
                        JsonValue(b, ref p, shapes, o);
                    }
                    o.Add((byte)']');
                    break;
                case 0x05 or 0x08:
                    int length = (int)Varint(b, ref p);
                    if (tag == 0x05) o.Add((byte)'"');
                    o.AddRange(b[p..(p + length)]);
                    p += length;
                    if (tag == 0x05) o.Add((byte)'"');
                    break;
                case 0x06:
                    o.AddRange(Encoding.ASCII.GetBytes(ZigZag(b, ref p).ToString(CultureInfo.InvariantCulture)));
                    break;
                case >= 0x11 and <= 0x1F:
                    int scale = tag - 0x10;
                    long m = ZigZag(b, ref p);
                    string digits = Math.Abs(m).ToString(CultureInfo.InvariantCulture).PadLeft(scale + 1, '0');
                    o.AddRange(Encoding.ASCII.GetBytes((m < 0 ? "-" : "") + digits[..^scale] + "." + digits[^scale..]));
                    break;
                default: throw new InvalidDataException($"tag {tag:x2}");
            }
        }

        private static void BsonDocument(byte[] b, ref int p, List<byte[][]> shapes, List<byte> o, bool array)
        {
            int start = o.Count;
            o.AddRange(new byte[4]);
            (int count, byte[][]? keys) = array ? ((int)Varint(b, ref p), null) : Shape(b, ref p, shapes);
            for (int m = 0; m < count; m++)
            {
                byte[] key = array ? Encoding.ASCII.GetBytes(m.ToString(CultureInfo.InvariantCulture)) : keys is null ? InlineKey(b, ref p) : keys[m];
                BsonElement(b, ref p, shapes, o, key);
            }
            o.Add(0);
            byte[] length = BitConverter.GetBytes(o.Count - start);
            for (int i = 0; i < 4; i++) o[start + i] = length[i];
        }

        private static void BsonElement(byte[] b, ref int p, List<byte[][]> shapes, List<byte> o, byte[] key)
        {
            byte tag = b[p++];
            byte type = tag switch
            {
                0x00 => 0x0A, 0x01 or 0x02 => 0x08, 0x03 => 0x03, 0x04 => 0x04, 0x06 => 0x10, 0x07 => 0x12, 0x09 => 0x01, 0x0A => 0x09,
                0x0B => 0x07, 0x0C => 0x05, 0x0D => b[p++], >= 0x10 and <= 0x1F => 0x01, _ => 0x02,
            };
            o.Add(type);
            o.AddRange(key);
            o.Add(0);
            switch (tag)
            {
                case 0x00: break;
                case 0x01 or 0x02: o.Add((byte)(tag - 1)); break;
                case 0x03: BsonDocument(b, ref p, shapes, o, array: false); break;
                case 0x04: BsonDocument(b, ref p, shapes, o, array: true); break;
                case 0x06: o.AddRange(BitConverter.GetBytes((int)ZigZag(b, ref p))); break;
                case 0x07 or 0x0A: o.AddRange(BitConverter.GetBytes(ZigZag(b, ref p))); break;
                case 0x09: o.AddRange(b[p..(p + 8)]); p += 8; break;
                case 0x0B: o.AddRange(b[p..(p + 12)]); p += 12; break;
                case 0x0C:
                    int binary = (int)Varint(b, ref p);
                    o.AddRange(BitConverter.GetBytes(binary));
                    o.Add(b[p++]);
                    o.AddRange(b[p..(p + binary)]);
                    p += binary;
                    break;
                case 0x0D:
                    int raw = (int)Varint(b, ref p);
                    o.AddRange(b[p..(p + raw)]);
                    p += raw;
                    break;
                case >= 0x10 and <= 0x1F:
                    double value = ZigZag(b, ref p) / Math.Pow(10, tag - 0x10);
                    o.AddRange(BitConverter.GetBytes(value));
                    break;
                default:
                    int length = tag >= 0x20 ? tag - 0x20 : (int)Varint(b, ref p);
                    o.AddRange(BitConverter.GetBytes(length + 1));
                    o.AddRange(b[p..(p + length)]);
                    p += length;
                    o.Add(0);
                    break;
            }
        }
    }
}
