using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// Where the codec 8 (field zstd) vectors of docs/format.md come from. Each vector's structure model (Vectors/fields-*.bin,
/// the "SMDL" bytes a dictionary record stores: <see cref="ShapeTransform.Serialize"/>) is a shape table with a field
/// model whose fields are chosen here by hand, not learned. The two movie vectors use the committed codec 7 table of
/// their kind (Vectors/shapes-*.bin, <see cref="PackedVectorSources"/>) and its documents, so their packed streams are
/// the codec 7 vectors'. <see cref="FieldModelBuilder"/> over those tables' three samples does give a model (6 fields
/// for JSON, 7 for BSON), but tables of one or two values and ranges fit to three values: the vector's year would
/// escape, and its document would meet no range value of bit length 0 or 1 and no escape into an object. A hand-made
/// model makes sure the vector's document meets every case of the join (docs/field-model.md, "Joining") but templates:
/// a table hit, a modeled field's escape copying a scalar from the residual and another walking into an object, range
/// values of bit length 0, 1 and 2 or more (whose low bits are read 16 at a time, up to three reads), the items of an
/// array, and fields without a model (scalars, an array of arrays, and the array holding modeled items). The flight
/// vector (<c>v3-fields-json-templates</c>) has a table of its own, learned from <see cref="FlightSamples"/>, and a
/// model whose date field has string templates (<see cref="FlightDefinitions"/>): its document meets a template symbol
/// and slots of bit length 0, 1 and 2 or more, with leading zeros from the width. The earthquake vector
/// (<c>v3-fields-sources</c>) has a table learned from <see cref="QuakeSamples"/> and a model of version 2
/// (<see cref="QuakeDefinitions"/>): its title copies its place between digit slots, and its updated time is a relative
/// range from its time.
/// <see cref="FieldModelFiles_AreWhatTheDefinitionsGive"/> checks the committed files against the samples and
/// definitions below; <see cref="FormatVectorTests"/> checks the vectors. To write them again (after a deliberate
/// change), set FIELD_VECTORS_OUT to a directory and run <see cref="Generate_WhenAsked_WritesModelsAndVectorEntries"/>,
/// then copy what it wrote into Vectors/ and docs/format.md by hand (the descriptions are written there).
/// </summary>
public sealed class FieldVectorSources
{
    private static readonly string VectorDirectory = Path.Combine(AppContext.BaseDirectory, "Vectors");

    /// <summary>
    /// Per vector: its name, format, the structure model file it writes, the shape table file it is built on, the samples
    /// that table is learned from (null for the codec 7 vectors' tables, which <see cref="PackedVectorSources"/> checks),
    /// and the document.
    /// </summary>
    internal static IEnumerable<(string Name, EnvelopeFormat Format, string Fields, string Shapes, byte[][]? Samples, byte[] Document)> Vectors()
    {
        yield return ("v2-fields-json", EnvelopeFormat.V2, "fields-json.bin", "shapes-json.bin", null, Encoding.UTF8.GetBytes(PackedVectorSources.JsonVector));
        yield return ("v3-fields-bson-elements", EnvelopeFormat.V3, "fields-bson-elements.bin", "shapes-bson-elements.bin", null, PackedVectorSources.BsonElementsVector);
        yield return ("v3-fields-json-templates", EnvelopeFormat.V3, "fields-json-templates.bin", "shapes-json-flights.bin",
            [.. FlightSamples.Select(Encoding.UTF8.GetBytes)], Encoding.UTF8.GetBytes(FlightVector));
        yield return ("v3-fields-sources", EnvelopeFormat.V3, "fields-json-sources.bin", "shapes-json-quakes.bin",
            [.. QuakeSamples.Select(Encoding.UTF8.GetBytes)], Encoding.UTF8.GetBytes(QuakeVector));
        yield return ("v3-fields-parts", EnvelopeFormat.V3, "fields-json-parts.bin", "shapes-json-quake-urls.bin",
            [.. QuakeUrlSamples.Select(Encoding.UTF8.GetBytes)], Encoding.UTF8.GetBytes(QuakeUrlVector));
        // Codec 9: the document and model of v3-fields-json-templates, the checksum folded into the symbol stream.
        yield return ("v3-fields-folded-checksum", EnvelopeFormat.V3, "fields-json-templates.bin", "shapes-json-flights.bin",
            [.. FlightSamples.Select(Encoding.UTF8.GetBytes)], Encoding.UTF8.GetBytes(FlightVector));
    }

    /// <summary>Whether the vector of <paramref name="name"/> is codec 9 (the checksum in the stream); the others are codec 8.</summary>
    internal static bool FoldsChecksum(string name) => name.Contains("folded-checksum", StringComparison.Ordinal);

    /// <summary>Three earthquake records (the shape of the reference corpus earthquakes.jsonl's, cut to five keys): the samples of shapes-json-quakes.bin.</summary>
    private static readonly string[] QuakeSamples =
    [
        """{"mag":2.1,"place":"7km NW of The Geysers, CA","time":1700000000000,"updated":1700000350000,"title":"M 2.1 - 7km NW of The Geysers, CA"}""",
        """{"mag":0.9,"place":"12 km SE of Volcano, Hawaii","time":1700000600000,"updated":1700000602000,"title":"M 0.9 - 12 km SE of Volcano, Hawaii"}""",
        """{"mag":4.6,"place":"Fiji region","time":1700001200000,"updated":1700090000000,"title":"M 4.6 - Fiji region"}""",
    ];

    /// <summary>
    /// The document of <c>v3-fields-sources</c>: its title is "M ", the magnitude's digits and " - " around a copy of its
    /// place, and its updated time is its time plus 123,456.
    /// </summary>
    public const string QuakeVector = """{"mag":1.2,"place":"10km SW of Anza, CA","time":1700000000000,"updated":1700000123456,"title":"M 1.2 - 10km SW of Anza, CA"}""";

    /// <summary>Three earthquake records cut to their identifiers (url, detail, code, as in earthquakes.jsonl): the samples of shapes-json-quake-urls.bin.</summary>
    private static readonly string[] QuakeUrlSamples =
    [
        """{"url":"https://earthquake.usgs.gov/earthquakes/eventpage/ci37868143","detail":"https://earthquake.usgs.gov/earthquakes/feed/v1.0/detail/ci37868143.geojson","code":"37868143"}""",
        """{"url":"https://earthquake.usgs.gov/earthquakes/eventpage/us1000cdcq","detail":"https://earthquake.usgs.gov/earthquakes/feed/v1.0/detail/us1000cdcq.geojson","code":"1000cdcq"}""",
        """{"url":"https://earthquake.usgs.gov/earthquakes/eventpage/ak18253386","detail":"https://earthquake.usgs.gov/earthquakes/feed/v1.0/detail/ak18253386.geojson","code":"18253386"}""",
    ];

    /// <summary>
    /// The document of <c>v3-fields-parts</c>: its detail URL holds the last segment of its event URL, and its code that
    /// segment less the network's two letters.
    /// </summary>
    public const string QuakeUrlVector = """{"url":"https://earthquake.usgs.gov/earthquakes/eventpage/nc72952166","detail":"https://earthquake.usgs.gov/earthquakes/feed/v1.0/detail/nc72952166.geojson","code":"72952166"}""";

    /// <summary>Three flight records (lines 14, 78 and 100 of the reference corpus flights.jsonl): the samples of shapes-json-flights.bin.</summary>
    private static readonly string[] FlightSamples =
    [
        """{"date":"2001/01/01 07:00","delay":3,"distance":933,"origin":"SAN","destination":"PDX"}""",
        """{"date":"2001/01/01 12:18","delay":11,"distance":258,"origin":"SAN","destination":"LAS"}""",
        """{"date":"2001/01/01 14:09","delay":-9,"distance":678,"origin":"PHL","destination":"ORD"}""",
    ];

    /// <summary>The document of <c>v3-fields-json-templates</c>: a flight record whose date a template codes.</summary>
    public const string FlightVector = """{"date":"2001/01/01 00:47","delay":-6,"distance":361,"origin":"SAN","destination":"LAX"}""";

    /// <summary>The shape table a vector is built on: learned from its samples, or the committed codec 7 table.</summary>
    private static byte[] TableBytes(string shapesFile, byte[][]? samples)
    {
        if (samples is null) return File.ReadAllBytes(Path.Combine(VectorDirectory, shapesFile));
        var builder = new ShapeTableBuilder(DocumentKind.Json);
        foreach (byte[] sample in samples) Assert.True(builder.Add(sample), "every sample is a JSON document");
        return builder.Build().Serialize();
    }

    /// <summary>A short string's packed value: tag 0x20 + length, the bytes.</summary>
    private static byte[] Text(string s) => [(byte)(PackedTag.ShortString + Encoding.UTF8.GetByteCount(s)), .. Encoding.UTF8.GetBytes(s)];

    /// <summary>A number's packed value: its tag, the zigzag varint.</summary>
    private static byte[] Number(byte tag, long value)
    {
        var bytes = new byte[1 + Varint64.MaxLength];
        bytes[0] = tag;
        Assert.True(Varint64.TryWrite(bytes.AsSpan(1), Varint64.ZigZag(value), out int written));
        return bytes[..(1 + written)];
    }

    private static long Date(int year, int month, int day) => new DateTimeOffset(year, month, day, 0, 0, 0, TimeSpan.Zero).ToUnixTimeMilliseconds();

    /// <summary>The table-wide index of the key named <paramref name="name"/> (the vectors' tables name each key once).</summary>
    private static int KeyOf(ShapeTable table, string name)
    {
        for (int id = 1; id <= table.Count; id++)
        {
            for (int m = 0; m < table.KeyCount(id); m++)
            {
                if (table.Key(id, m).SequenceEqual(Encoding.UTF8.GetBytes(name))) return table.FirstKey(id) + m;
            }
        }
        throw new InvalidOperationException($"The table has no key {name}.");
    }

    /// <summary>
    /// The fields of the vectors' models, for a table of the vectors' shapes (JSON or BSON). What the documents meet:
    /// year 1955 is not in its table (1950) and is coded in its range (min 1900: u = 55, bit length 6, 5 low bits);
    /// rating (JSON: decimal 8.0, tag 0x11 mantissa 80; BSON: tag 0x10 mantissa 8) is in its range with bit length 1
    /// (JSON, min 79) or 0 (BSON, min 8); budget null is a table hit; the genres' items Crime and Drama are table hits
    /// and Thriller an escape; imdb is an object where its table holds only null: an escape, walked into; votes 93912 is
    /// in its range (min 0: bit length 17, 16 low bits); top250 true is a table hit; BSON's released (1955-07-26) is in
    /// a range from 1940 (bit length 39: 38 low bits, three reads). Title, plot, the genres array itself and cast (an
    /// array of arrays) have no model.
    /// </summary>
    internal static List<FieldModel.FieldDefinition> Definitions(string fieldsFile, ShapeTable table) => fieldsFile switch
    {
        "fields-json-templates.bin" => FlightDefinitions(table),
        "fields-json-sources.bin" => QuakeDefinitions(table),
        "fields-json-parts.bin" => QuakeUrlDefinitions(table),
        _ => MovieDefinitions(table),
    };

    /// <summary>
    /// The fields of <c>v3-fields-sources</c>'s model (version 2), for shapes-json-quakes.bin (one shape: mag 0, place 1,
    /// time 2, updated 3, title 4). Mag, place and time have no model (copied from the residual). Updated's source is
    /// time and its range is relative: integers from time's latest number - 8 over 24 bits (the vector's u = 123,464: bit
    /// length 17, 16 low bits). Title's source is place, and its one template, "M {1}.{1} - {}", has a copy slot (width
    /// 0) after two digit slots: the vector's title is the template with 1 (bit length 1) and 2 (bit length 2, 1 low bit)
    /// and a copy of its place, "10km SW of Anza, CA" (whose digits stay in the copy).
    /// </summary>
    private static List<FieldModel.FieldDefinition> QuakeDefinitions(ShapeTable table)
    {
        byte[] Ascii(string s) => Encoding.ASCII.GetBytes(s);
        // "M {1}.{1} - {}": the magnitude's units and tenths from 0 (bit lengths 0-4), then a copy of the place.
        var title = new FieldModel.TemplateDefinition(
            [Ascii("M "), Ascii("."), Ascii(" - "), []], [1, 1, 0], [0, 0, 0], [4, 4, 0],
            [[3, 8, 6, 4, 1], [2, 4, 4, 5, 3], [1]]);
        var fields = new List<FieldModel.FieldDefinition>
        {
            // updated: the time plus 0 to a few days (bit lengths 0-24 of u = updated - (time - 8)), and the escape.
            new(KeyOf(table, "updated"), false, [], PackedTag.Integer, -8, 24, [.. Enumerable.Repeat(1L, 10), 2, 2, 4, 6, 8, 10, 12, 12, 10, 8, 6, 4, 2, 1, 1, 2])
            {
                Source = KeyOf(table, "time") << 1, RangeRelative = true,
            },
            // title: the template (copying place), and the escape.
            new(KeyOf(table, "title"), false, [], 0, 0, 0, [14, 2]) { Source = KeyOf(table, "place") << 1, Templates = [title] },
        };
        return [.. fields.OrderBy(f => (f.Key << 1) | (f.Items ? 1 : 0))];
    }

    /// <summary>
    /// The fields of <c>v3-fields-parts</c>'s model (version 3), for shapes-json-quake-urls.bin (one shape: url 0,
    /// detail 1, code 2). Url has no model (copied from the residual). Detail's source is url, of which it copies the part
    /// after the last '/' (delimiter 0x2F, skip 0): its one template is
    /// "https://earthquake.usgs.gov/earthquakes/feed/v{1}.{1}/detail/{}.geojson", two digit slots of one number each (1
    /// and 0, bit length 0) around the copy "nc72952166". Code's source is url too, of which it copies the part after the
    /// last '/' less 2 bytes (skip 2): its one template is "{}", the copy "72952166".
    /// </summary>
    private static List<FieldModel.FieldDefinition> QuakeUrlDefinitions(ShapeTable table)
    {
        byte[] Ascii(string s) => Encoding.ASCII.GetBytes(s);
        var detail = new FieldModel.TemplateDefinition(
            [Ascii("https://earthquake.usgs.gov/earthquakes/feed/v"), Ascii("."), Ascii("/detail/"), Ascii(".geojson")], [1, 1, 0], [1, 0, 0], [0, 0, 0],
            [[1], [1], [1]]);
        var code = new FieldModel.TemplateDefinition([[], []], [0], [0], [0], [[1]]);
        int url = KeyOf(table, "url") << 1;
        var fields = new List<FieldModel.FieldDefinition>
        {
            // detail and code: the template (copying a part of url), and the escape.
            new(KeyOf(table, "detail"), false, [], 0, 0, 0, [30, 2]) { Source = url, CopyDelimiter = (byte)'/', Templates = [detail] },
            new(KeyOf(table, "code"), false, [], 0, 0, 0, [30, 2]) { Source = url, CopyDelimiter = (byte)'/', CopySkip = 2, Templates = [code] },
        };
        return [.. fields.OrderBy(f => (f.Key << 1) | (f.Items ? 1 : 0))];
    }

    private static List<FieldModel.FieldDefinition> MovieDefinitions(ShapeTable table)
    {
        bool json = table.Kind == DocumentKind.Json;
        var fields = new List<FieldModel.FieldDefinition>
        {
            // votes: a range only (bit lengths 0-20), the commonest lengths 14-17, and the escape.
            new(KeyOf(table, "votes"), false, [], PackedTag.Integer, 0, 20,
                [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 6, 12, 20, 14, 4, 1, 1, 1]),
            // top250: true and false, and the escape.
            new(KeyOf(table, "top250"), false, [[PackedTag.True], [PackedTag.False]], 0, 0, 0, [6, 2, 1]),
            // year: 1950 in the table; integers 1900-2027 in the range (bit lengths 0-7); the escape.
            new(KeyOf(table, "year"), false, [Number(PackedTag.Integer, 1950)], PackedTag.Integer, 1900, 7,
                [2, 1, 1, 1, 1, 1, 4, 8, 4, 1]),
            // rating: JSON decimals of scale 1 from 7.9 (bit lengths 0-4), BSON decimals of scale 0 from 8 (0-1; BSON
            // writes most ratings as scale 1, in the table); the escape.
            json
                ? new(KeyOf(table, "rating"), false, [], (byte)(PackedTag.Decimal + 1), 79, 4, [2, 3, 3, 2, 1, 1])
                : new(KeyOf(table, "rating"), false, [Number(PackedTag.Decimal + 1, 84), Number(PackedTag.Decimal + 1, 81)], PackedTag.Decimal, 8, 1, [2, 2, 1, 1, 1]),
            // budget: null in the table; integers up to 2^21 - 1 in the range (bit lengths 0-21); the escape.
            new(KeyOf(table, "budget"), false, [[PackedTag.Null]], PackedTag.Integer, 0, 21,
                [6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 2, 1, 2]),
            // genres' items: three genres in the table, and the escape.
            new(KeyOf(table, "genres"), true, [Text("Drama"), Text("Film-Noir"), Text("Crime")], 0, 0, 0, [4, 3, 2, 3]),
            // imdb: null in the table (a record without ratings); an object is an escape.
            new(KeyOf(table, "imdb"), false, [[PackedTag.Null]], 0, 0, 0, [1, 7]),
        };
        if (!json)
        {
            // released: datetimes from 1940-01-01 over 2^40 ms (about 35 years), and the escape.
            var counts = new List<long>(Enumerable.Repeat(1L, 41)) { 1 };
            counts[38] = 3;
            counts[39] = 8;
            counts[40] = 2;
            fields.Add(new(KeyOf(table, "released"), false, [], PackedTag.DateTime, Date(1940, 1, 1), 40, counts));
        }
        return [.. fields.OrderBy(f => (f.Key << 1) | (f.Items ? 1 : 0))];
    }

    /// <summary>
    /// The fields of <c>v3-fields-json-templates</c>'s model, for shapes-json-flights.bin (one shape: date 0, delay 1,
    /// distance 2, origin 3, destination 4). What the document meets: its date, 2001/01/01 00:47, is template 1 of its
    /// field ({4}/{2}/{2} {2}:{2}; template 0 is {4}/{2}/{2}), symbol 22: after the table's null, the range's 20 bit
    /// lengths and template 0, so a reader must count the range's symbols before the templates'. Its slots: year 2001
    /// from 1999 (u = 2, bit length 2, 1 low bit), month 01 from 0 (u = 1, bit length 1, written with its leading zero),
    /// day 01 from 1 (u = 0, bit length 0), hour 00 from 0 (bit length 0, two zeros from the width), minute 47 from 0
    /// (bit length 6, 5 low bits). Delay has no model (copied from the residual); distance 361 is in its range (min 0:
    /// bit length 9, 8 low bits); origin SAN is a table hit; destination LAX is not in its table: an escape, copied from
    /// the residual.
    /// </summary>
    private static List<FieldModel.FieldDefinition> FlightDefinitions(ShapeTable table)
    {
        byte[] Ascii(string s) => Encoding.ASCII.GetBytes(s);
        // {4}/{2}/{2}: year from 1999 (bit lengths 0-4), month from 0 (0-4), day from 1 (0-5).
        var day = new FieldModel.TemplateDefinition(
            [[], Ascii("/"), Ascii("/"), []], [4, 2, 2], [1999, 0, 1], [4, 4, 5],
            [[1, 1, 12, 2, 1], [1, 6, 3, 4, 3], [1, 1, 2, 4, 8, 15]]);
        // {4}/{2}/{2} {2}:{2}: as above, then hour from 0 (0-5) and minute from 0 (0-6).
        var minute = new FieldModel.TemplateDefinition(
            [[], Ascii("/"), Ascii("/"), Ascii(" "), Ascii(":"), []], [4, 2, 2, 2, 2], [1999, 0, 1, 0, 0], [4, 4, 5, 5, 6],
            [[1, 1, 12, 2, 1], [1, 6, 3, 4, 3], [1, 1, 2, 4, 8, 15], [1, 1, 2, 4, 8, 8], [1, 1, 2, 4, 8, 16, 28]]);
        var fields = new List<FieldModel.FieldDefinition>
        {
            // date: null in the table; integers 0 to 2^19 - 1 in the range (minutes since 2001-01-01, as some writers
            // store a date; bit lengths 0-19); the two templates; the escape. Symbols: null 0, bit lengths 1-20,
            // templates 21 and 22, the escape 23.
            new(KeyOf(table, "date"), false, [[PackedTag.Null]], PackedTag.Integer, 0, 19,
                [1, .. Enumerable.Repeat(1L, 17), 2, 2, 2, 4, 40, 2]) { Templates = [day, minute] },
            // distance: integers 0-4095 (bit lengths 0-12), and the escape.
            new(KeyOf(table, "distance"), false, [], PackedTag.Integer, 0, 12, [1, 1, 1, 1, 1, 2, 4, 8, 16, 24, 20, 10, 4, 1]),
            // origin and destination: a few airports each, and the escape.
            new(KeyOf(table, "origin"), false, [Text("LAS"), Text("SAN"), Text("PHX"), Text("SFO"), Text("LAX")], 0, 0, 0, [5, 4, 3, 3, 3, 2]),
            new(KeyOf(table, "destination"), false, [Text("LAS"), Text("PDX"), Text("SJC"), Text("ORD")], 0, 0, 0, [5, 3, 3, 2, 2]),
        };
        return [.. fields.OrderBy(f => (f.Key << 1) | (f.Items ? 1 : 0))];
    }

    /// <summary>The structure model file's bytes: the vector's shape table with the field model of <see cref="Definitions"/>.</summary>
    internal static byte[] StructureModel(string fieldsFile, string shapesFile, byte[][]? samples)
    {
        ShapeTable table = ShapeTable.Parse(TableBytes(shapesFile, samples));
        return new ShapeTransform(table, FieldModel.Create(table, Definitions(fieldsFile, table))).Serialize();
    }

    /// <summary>The packed stream, residual and symbol stream of <paramref name="document"/> under <paramref name="model"/> (the library's split).</summary>
    internal static (byte[] Packed, byte[] Residual, byte[] Symbols) Split(ShapeTransform model, byte[] document, bool foldChecksum = false)
    {
        byte[] packed = new byte[document.Length];
        Assert.True(model.TryEncode(document, packed, out int packedLength));
        byte[] residual = new byte[packedLength];
        var symbols = new RansEncoder();
        Assert.True(model.Fields!.TrySplit(packed.AsSpan(0, packedLength), residual, out int residualLength, symbols));
        ReadOnlySpan<byte> stream = foldChecksum ? symbols.EncodeFolded((ushort)System.IO.Hashing.XxHash3.HashToUInt64(document)) : symbols.Encode();
        return (packed[..packedLength], residual[..residualLength], stream.ToArray());
    }

    [Fact]
    public void FieldModelFiles_AreWhatTheDefinitionsGive()
    {
        using var vectors = JsonDocument.Parse(File.ReadAllText(Path.Combine(VectorDirectory, "vectors.json")));
        foreach (var (name, format, fields, shapes, samples, document) in Vectors())
        {
            byte[] committed = File.ReadAllBytes(Path.Combine(VectorDirectory, fields));
            Assert.Equal(StructureModel(fields, shapes, samples), committed);
            // The file is "SMDL", version 1, the table's length, the committed table, then the field model; it parses back to itself.
            // A table learned here is the committed file, byte for byte (the codec 7 vectors' are checked by PackedVectorSources).
            byte[] table = File.ReadAllBytes(Path.Combine(VectorDirectory, shapes));
            Assert.Equal(TableBytes(shapes, samples), table);
            Assert.Equal(table, ShapeTable.Parse(table).Serialize());
            Assert.Equal("SMDL"u8.ToArray(), committed[..4]);
            Assert.Equal(1, committed[4]);
            Assert.Equal(table.Length, committed[5]); // under 128: one varint byte
            Assert.Equal(table, committed[6..(6 + table.Length)]);
            Assert.Equal("FLDM"u8.ToArray(), committed[(6 + table.Length)..(10 + table.Length)]);
            Assert.Equal(committed, ShapeTransform.Parse(committed).Serialize());

            JsonElement v = vectors.RootElement.EnumerateArray().Single(e => e.GetProperty("name").GetString() == name);
            Assert.Equal(fields, v.GetProperty("fields").GetString());
            Assert.Equal(shapes, v.GetProperty("shapes").GetString());
            Assert.Equal(format.ToString().ToLowerInvariant(), v.GetProperty("format").GetString());
            byte[] expected = v.GetProperty("text").GetString() is { } text ? Encoding.UTF8.GetBytes(text) : Convert.FromHexString(v.GetProperty("hex").GetString()!);
            Assert.Equal(document, expected);
        }
    }

    [Fact]
    public void Generate_WhenAsked_WritesModelsAndVectorEntries()
    {
        // A generator, not a check: it does nothing unless FIELD_VECTORS_OUT names a directory, and never writes Vectors/.
        string? directory = Environment.GetEnvironmentVariable("FIELD_VECTORS_OUT");
        if (string.IsNullOrEmpty(directory)) return;
        Directory.CreateDirectory(directory);

        byte[] dictionary = File.ReadAllBytes(Path.Combine(VectorDirectory, "dictionary-4242.bin"));
        var entries = new JsonArray();
        foreach (var (name, format, fields, shapes, samples, document) in Vectors())
        {
            if (samples is not null) File.WriteAllBytes(Path.Combine(directory, shapes), TableBytes(shapes, samples));
            byte[] smdl = StructureModel(fields, shapes, samples);
            File.WriteAllBytes(Path.Combine(directory, fields), smdl);
            ShapeTransform model = ShapeTransform.Parse(smdl);
            ZstdDictionary withModel = ZstdDictionary.Create(4242, dictionary, ZstdDictionary.DefaultMaximumSize, model);
            bool folds = FoldsChecksum(name);
            var writer = new DocumentCompressor(new DocumentCompressorOptions { Format = format, Level = PackedVectorSources.Level, MinimumSize = 0 }) { FoldChecksum = folds };
            byte[] envelope = writer.Compress(document, withModel);
            Assert.Equal(folds ? CompressionCodec.FieldZstdFoldedChecksum : CompressionCodec.FieldZstd, (CompressionCodec)(envelope[1] & 0x0F));
            Assert.Equal(document, writer.Decompress(envelope, withModel));
            var (packed, residual, symbols) = Split(model, document, folds);
            bool text = model.Table.Kind == DocumentKind.Json;
            entries.Add(new JsonObject
            {
                ["name"] = name,
                ["description"] = "",
                ["format"] = format.ToString().ToLowerInvariant(),
                ["codec"] = folds ? "fieldZstdFoldedChecksum" : "fieldZstd",
                ["level"] = PackedVectorSources.Level,
                ["checksum"] = true,
                ["dictionary"] = "dictionary-4242.bin",
                ["dictionaryId"] = 4242,
                ["dictionarySha256"] = "e29c1647c26bfb4f98f1402ea8fd8c2a5d756711adb14db6d1ee7fe1349cc76b",
                ["shapes"] = shapes,
                ["fields"] = fields,
                ["envelope"] = Convert.ToHexString(envelope).ToLowerInvariant(),
                ["packed"] = Convert.ToHexString(packed).ToLowerInvariant(),
                ["residual"] = Convert.ToHexString(residual).ToLowerInvariant(),
                ["symbols"] = Convert.ToHexString(symbols).ToLowerInvariant(),
                ["text"] = text ? Encoding.UTF8.GetString(document) : null,
                ["hex"] = text ? null : Convert.ToHexString(document).ToLowerInvariant(),
            });
        }
        File.WriteAllText(Path.Combine(directory, "field-vectors.json"), entries.ToJsonString(new JsonSerializerOptions { WriteIndented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping }));
    }
}
