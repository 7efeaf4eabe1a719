using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Core.Tests.Structure;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// Where the codec 7 (packed zstd) vectors of docs/format.md come from: their documents, and the few sample documents
/// each committed shape table (Vectors/shapes-*.bin) was learned from. The committed vectors are data, checked by
/// <see cref="FormatVectorTests"/>; nothing here rewrites them. <see cref="ShapeTableFiles_AreWhatTheBuilderLearnsFromTheirSamples"/>
/// checks that the committed tables are what <see cref="ShapeTableBuilder"/> learns from the samples below, and that the
/// vectors hold these documents. To write the tables and the vectors' entries again (after a deliberate change), set
/// PACKED_VECTORS_OUT to a directory and run <see cref="Generate_WhenAsked_WritesTablesAndVectorEntries"/>; then copy
/// what it wrote into Vectors/ and docs/format.md by hand (the descriptions are written there).
/// </summary>
public sealed class PackedVectorSources
{
    /// <summary>Three movie records of the JSON vector's shape (other values): the samples of the three tables (as JSON, as BSON, as BSON elements).</summary>
    private static readonly string[] JsonSamples =
    [
        """{"title":"Sunset Boulevard","year":1950,"rating":8.4,"budget":1752000,"genres":["Drama","Film-Noir"],"plot":"A writer down on his luck moves into the house of a silent film star who plans her return to the screen.","cast":[["William Holden","Joe Gillis"],["Gloria Swanson","Norma Desmond"]],"imdb":{"votes":235000,"top250":true}}""",
        """{"title":"The Third Man","year":1949,"rating":8.1,"budget":null,"genres":["Film-Noir","Mystery","Thriller"],"plot":"An American writer arrives in Vienna after the war to find that the friend who offered him a job has died.","cast":[["Joseph Cotten","Holly Martins"],["Orson Welles","Harry Lime"]],"imdb":{"votes":180112,"top250":true}}""",
        """{"title":"Gun Crazy","year":1950,"rating":7.3,"budget":400000,"genres":["Crime","Drama"],"plot":"A young man who loves guns meets a sharpshooter at a carnival, and the two turn to robbery across the country.","cast":[["Peggy Cummins","Annie Laurie Starr"]],"imdb":{"votes":12950,"top250":false}}""",
    ];

    /// <summary>The document of <c>v2-packed-json</c>: strings, an integer, a decimal, null, an array of strings and one of arrays, a nested object.</summary>
    public const string JsonVector =
        """{"title":"The Night of the Hunter","year":1955,"rating":8.0,"budget":null,"genres":["Crime","Drama","Thriller"],"plot":"A preacher who has killed before marries a widow to find the money her husband hid, and her two children run from him down the river.","cast":[["Robert Mitchum","Harry Powell"],["Shelley Winters","Willa Harper"],["Lillian Gish","Rachel Cooper"]],"imdb":{"votes":93912,"top250":true}}""";

    /// <summary>A movie record as BSON: string, int32, double (packs as a decimal), null, arrays, a UTC datetime, a nested document, a boolean.</summary>
    private static byte[] BsonMovie(JsonObject movie, long releasedMilliseconds)
    {
        var d = new Bson.Document();
        d.Add("title", Bson.String((string)movie["title"]!));
        d.Add("year", Bson.Int32((int)movie["year"]!));
        d.Add("rating", Bson.Double((double)movie["rating"]!));
        d.Add("budget", movie["budget"] is null ? Bson.Null() : Bson.Int32((int)movie["budget"]!));
        d.Add("genres", Bson.Array([.. movie["genres"]!.AsArray().Select(g => Bson.String((string)g!))]));
        d.Add("plot", Bson.String((string)movie["plot"]!));
        d.Add("cast", Bson.Array([.. movie["cast"]!.AsArray().Select(c => Bson.Array([.. c!.AsArray().Select(n => Bson.String((string)n!))]))]));
        d.Add("released", (0x09, StructureDocuments.Int64Bytes(releasedMilliseconds)));
        var imdb = new Bson.Document();
        imdb.Add("votes", Bson.Int32((int)movie["imdb"]!["votes"]!));
        imdb.Add("top250", Bson.Bool((bool)movie["imdb"]!["top250"]!));
        d.Add("imdb", imdb.Value());
        return d.Value().Value;
    }

    /// <summary>The samples' release dates, UTC midnight, in milliseconds since 1970.</summary>
    private static readonly long[] SampleReleases = [Date(1950, 8, 10), Date(1949, 9, 2), Date(1950, 1, 20)];

    /// <summary>The vector's release date, 1955-07-26.</summary>
    private static readonly long VectorRelease = Date(1955, 7, 26);

    private static long Date(int year, int month, int day) => new DateTimeOffset(year, month, day, 0, 0, 0, TimeSpan.Zero).ToUnixTimeMilliseconds();

    private static byte[] ToBson(string json, long released) => BsonMovie(JsonNode.Parse(json)!.AsObject(), released);

    /// <summary>The document of <c>v2-packed-bson</c>.</summary>
    public static byte[] BsonVector => ToBson(JsonVector, VectorRelease);

    /// <summary>The document of <c>v2-packed-bson-elements</c>: <see cref="BsonVector"/> without its int32 length and its NUL.</summary>
    public static byte[] BsonElementsVector => BsonVector[4..^1];

    /// <summary>Per vector: its name, table file, table kind, samples the table is learned from, and document.</summary>
    internal static IEnumerable<(string Name, string Shapes, DocumentKind Kind, byte[][] Samples, byte[] Document)> Vectors()
    {
        byte[][] json = [.. JsonSamples.Select(Encoding.UTF8.GetBytes)];
        byte[][] bson = [.. JsonSamples.Select((s, i) => ToBson(s, SampleReleases[i]))];
        yield return ("v2-packed-json", "shapes-json.bin", DocumentKind.Json, json, Encoding.UTF8.GetBytes(JsonVector));
        yield return ("v2-packed-bson", "shapes-bson.bin", DocumentKind.Bson, bson, BsonVector);
        yield return ("v2-packed-bson-elements", "shapes-bson-elements.bin", DocumentKind.BsonElements, [.. bson.Select(b => b[4..^1])], BsonElementsVector);
    }

    private static byte[] Learn(DocumentKind kind, byte[][] samples)
    {
        var builder = new ShapeTableBuilder(kind);
        foreach (byte[] sample in samples) Assert.True(builder.Add(sample), "every sample is a document of the table's kind");
        return builder.Build().Serialize();
    }

    /// <summary>
    /// The vectors' zstd level. Not 3: at levels 1-4 zstd encodes the literals of a block of up to 1 KiB with the
    /// dictionary's Huffman table, and dictionary 4242's (trained on order JSON) does not fit movie text, so the packed
    /// block does not pay and these documents would not be written packed (at level 3 the JSON one is stored, the BSON
    /// ones are zstd of 470 and 465 bytes). From level 5 on zstd builds a table of its own.
    /// </summary>
    public const int Level = 19;

    private static readonly string VectorDirectory = Path.Combine(AppContext.BaseDirectory, "Vectors");

    [Fact]
    public void ShapeTableFiles_AreWhatTheBuilderLearnsFromTheirSamples()
    {
        using var vectors = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(VectorDirectory, "vectors.json")));
        foreach (var (name, shapes, kind, samples, document) in Vectors())
        {
            byte[] table = File.ReadAllBytes(Path.Combine(VectorDirectory, shapes));
            Assert.Equal(Learn(kind, samples), table);
            Assert.Equal((byte)kind, table[5]);
            Assert.Equal(table, ShapeTable.Parse(table).Serialize());

            JsonElement v = vectors.RootElement.EnumerateArray().Single(e => e.GetProperty("name").GetString() == name);
            Assert.Equal(shapes, v.GetProperty("shapes").GetString());
            byte[] expected = v.GetProperty("text").GetString() is { } text ? Encoding.UTF8.GetBytes(text) : Convert.FromHexString(v.GetProperty("hex").GetString()!);
            Assert.Equal(document, expected);
        }
        Assert.Equal(BsonVector.Length, BinaryPrimitives.ReadInt32LittleEndian(BsonVector));
    }

    [Fact]
    public void Generate_WhenAsked_WritesTablesAndVectorEntries()
    {
        // A generator, not a check: it does nothing unless PACKED_VECTORS_OUT names a directory, and never writes Vectors/.
        string? directory = Environment.GetEnvironmentVariable("PACKED_VECTORS_OUT");
        if (string.IsNullOrEmpty(directory)) return;
        Directory.CreateDirectory(directory);

        byte[] dictionary = File.ReadAllBytes(Path.Combine(VectorDirectory, "dictionary-4242.bin"));
        var writer = new DocumentCompressor(new DocumentCompressorOptions { Format = EnvelopeFormat.V2, Codec = CompressionCodec.Zstd, Level = Level, Checksum = true, MinimumSize = 0 });
        var entries = new JsonArray();
        foreach (var (name, shapes, kind, samples, document) in Vectors())
        {
            byte[] table = Learn(kind, samples);
            File.WriteAllBytes(Path.Combine(directory, shapes), table);
            var transform = new ShapeTransform(ShapeTable.Parse(table));
            byte[] packed = new byte[document.Length];
            Assert.True(transform.TryEncode(document, packed, out int packedLength));
            ZstdDictionary withShapes = ZstdDictionary.Create(4242, dictionary, ZstdDictionary.DefaultMaximumSize, transform);
            byte[] envelope = writer.Compress(document, withShapes);
            Assert.Equal(0xD7, envelope[1]);
            Assert.Equal(document, writer.Decompress(envelope, withShapes));
            bool text = kind == DocumentKind.Json;
            entries.Add(new JsonObject
            {
                ["name"] = name,
                ["description"] = "",
                ["format"] = "v2",
                ["codec"] = "packedZstd",
                ["level"] = Level,
                ["checksum"] = true,
                ["dictionary"] = "dictionary-4242.bin",
                ["dictionaryId"] = 4242,
                ["dictionarySha256"] = "e29c1647c26bfb4f98f1402ea8fd8c2a5d756711adb14db6d1ee7fe1349cc76b",
                ["shapes"] = shapes,
                ["packed"] = Convert.ToHexString(packed, 0, packedLength).ToLowerInvariant(),
                ["envelope"] = Convert.ToHexString(envelope).ToLowerInvariant(),
                ["text"] = text ? Encoding.UTF8.GetString(document) : null,
                ["hex"] = text ? null : Convert.ToHexString(document).ToLowerInvariant(),
            });
        }
        File.WriteAllText(Path.Combine(directory, "packed-vectors.json"), entries.ToJsonString(new JsonSerializerOptions { WriteIndented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping }));
    }
}
