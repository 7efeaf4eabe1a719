using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.IO.Hashing;
using System.Text;
using Compression.Codecs;
using Compression.Fuzz;
using Compression.Structure;
using Compression.Core.Tests.Envelope;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// The field model and codec 8 (docs/field-model.md, docs/format.md "Codec 8: field zstd"): the model's bytes are
/// canonical and every refusal rule of its layout (templates' included) fires with its own message, naming the field
/// model; training on records with categorical fields and date strings learns tables, ranges and templates, the
/// held-out dates are coded as template symbols, and codec 8 envelopes (formats v2 and v3; JSON, BSON, BSON elements)
/// read back byte for byte and are smaller than codec 7's; a record whose tables lie (value tables permuted or
/// altered, frequencies changed, ranges shifted, a field moved or dropped, templates' literals, widths, slot minimums
/// or slot frequencies changed, templates permuted) makes reads throw, never return other bytes; and random mutants,
/// every prefix and every single-bit flip of codec 8 envelopes (their dates template-coded) give an error or the
/// exact document.
/// </summary>
public sealed class FieldModelTests(ITestOutputHelper output)
{
    // ---------------------------------------------------------------------------------------------------------------
    // Data and trained models (shared by the tests of this class; training once per kind).

    public static TheoryData<string> Kinds() => ["json", "bson", "bson-elements"];

    private static readonly List<byte[]> JsonTraining = FieldDocuments.JsonRecords(600, seed: 21);
    private static readonly List<byte[]> JsonHeldOut = FieldDocuments.JsonRecords(300, seed: 22);
    private static readonly List<byte[]> BsonTraining = FieldDocuments.BsonRecords(600, seed: 21);
    private static readonly List<byte[]> BsonHeldOut = FieldDocuments.BsonRecords(300, seed: 22);

    internal static (List<byte[]> Training, List<byte[]> HeldOut) Data(string kind) => kind switch
    {
        "json" => (JsonTraining, JsonHeldOut),
        "bson" => (BsonTraining, BsonHeldOut),
        _ => ([.. BsonTraining.Select(d => d[4..^1])], [.. BsonHeldOut.Select(d => d[4..^1])]),
    };

    private static DocumentKind KindOf(string kind) => kind switch
    {
        "json" => DocumentKind.Json,
        "bson" => DocumentKind.Bson,
        _ => DocumentKind.BsonElements,
    };

    private static readonly ConcurrentDictionary<(string, bool), Lazy<StructureModel>> Models = new();

    /// <summary>The structure model trained on <paramref name="kind"/>'s records, with a field model (codec 8) or without (codec 7).</summary>
    internal static StructureModel Trained(string kind, bool fields = true) => Models.GetOrAdd((kind, fields), key => new Lazy<StructureModel>(() =>
        StructureTrainer.TryTrain(Data(key.Item1).Training, 8 * 1024, key.Item2 ? 88u : 77u, KindOf(key.Item1), fieldModel: key.Item2)
        ?? throw new InvalidOperationException($"no model for {key.Item1}"))).Value;

    /// <summary>The trained dictionary of <paramref name="kind"/> with its field model (asserted present).</summary>
    internal static ZstdDictionary FieldDictionary(string kind)
    {
        ZstdDictionary dictionary = Trained(kind).Dictionary;
        Assert.NotNull(dictionary.Shapes?.Fields);
        return dictionary;
    }

    private static FieldModel ModelOf(ZstdDictionary dictionary) => dictionary.Shapes!.Fields!.Model;

    private static DocumentCompressor Writer(EnvelopeFormat format) => new(new DocumentCompressorOptions { Format = format, MinimumSize = 0 });

    private static readonly DocumentCompressor Reader = new(new DocumentCompressorOptions { RequireChecksum = true });

    private static EnvelopeHeader Header(byte[] envelope) =>
        DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header : throw new InvalidOperationException("not an envelope");

    /// <summary>The held-out documents written as codec 8 (formats alternating v2 and v3), with their envelopes.</summary>
    private static (List<byte[]> Documents, List<byte[]> Envelopes) FieldEnvelopes(string kind, ZstdDictionary dictionary, int count)
    {
        var documents = new List<byte[]>();
        var envelopes = new List<byte[]>();
        foreach (byte[] document in Data(kind).HeldOut)
        {
            byte[] envelope = Writer(documents.Count % 2 == 0 ? EnvelopeFormat.V2 : EnvelopeFormat.V3).Compress(document, dictionary);
            if (!Corpus.IsFieldCoded(Header(envelope).Codec)) continue;
            documents.Add(document);
            envelopes.Add(envelope);
            if (documents.Count == count) break;
        }
        Assert.Equal(count, documents.Count);
        return (documents, envelopes);
    }

    /// <summary>
    /// Codec 9 is codec 8 with the checksum folded into the symbol stream's initial state (docs/format.md, "Codec 9"):
    /// format v3 writes it, the same document as codec 8 is about 2 bytes longer (its trailer), every one reads back,
    /// and the header says a checksum is present but has no trailer.
    /// </summary>
    [Theory]
    [InlineData("json")]
    [InlineData("bson")]
    public void Compress_FormatV3_WritesCodec9_AboutTwoBytesShorterThanCodec8(string kind)
    {
        ZstdDictionary dictionary = FieldDictionary(kind);
        var eight = new DocumentCompressor(new DocumentCompressorOptions { Format = EnvelopeFormat.V3 }) { FoldChecksum = false };
        var nine = new DocumentCompressor(new DocumentCompressorOptions { Format = EnvelopeFormat.V3 });
        long saved = 0;
        int count = 0;
        foreach (byte[] document in Data(kind).HeldOut.Take(300))
        {
            byte[] withTrailer = eight.Compress(document, dictionary), folded = nine.Compress(document, dictionary);
            if (Header(withTrailer).Codec != CompressionCodec.FieldZstd) continue;
            EnvelopeHeader header = Header(folded);
            Assert.Equal(CompressionCodec.FieldZstdFoldedChecksum, header.Codec);
            Assert.True(header.HasChecksum);
            Assert.Equal(0, header.ChecksumLength);
            Assert.Equal(document, Reader.Decompress(folded, dictionary));
            // 2 bytes of trailer gone, less about a bit of stream; a document coding no symbol has the 2 bytes in its stream.
            Assert.InRange(withTrailer.Length - folded.Length, 0, 2);
            saved += withTrailer.Length - folded.Length;
            count++;
        }
        Assert.True(count >= 100, $"{count} documents written as codec 8");
        output.WriteLine($"{kind}: {count} documents, codec 9 saves {saved / (double)count:F3} bytes a document over codec 8");
        Assert.InRange(saved / (double)count, 1.8, 2.0);
    }

    [Theory]
    [InlineData(0xD9, "is format v2; that codec exists only in format v3")]
    [InlineData(0xC9, "is format v1; that codec exists only in format v3")]
    [InlineData(0xA9, "is without a checksum")]
    [InlineData(0x69, "is without a dictionary id")]
    public void ReadHeader_Codec9OutsideItsRules_IsCorrupt(int flags, string message)
    {
        byte[] envelope = (flags & 0x80) != 0 ? [0xC5, (byte)flags, 10, 0x92, 0x21, 1, 2, 3] : [0xC5, (byte)flags, 10, 1, 2, 3];
        var ex = Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(envelope, out _));
        Assert.Contains("codec 9 (field zstd folded checksum) " + message, ex.Message);
    }

    /// <summary>The fields of <paramref name="model"/> as training defines them (values, range, templates, frequencies as counts): serialized, the model's bytes again.</summary>
    private static List<FieldModel.FieldDefinition> Definitions(FieldModel model) => FuzzTargets.FieldDefinitions(model);

    /// <summary>A template as its pattern: literals, and each slot as {width}.</summary>
    internal static string Pattern(FieldModel.Template template)
    {
        var s = new StringBuilder();
        for (int i = 0; ; i++)
        {
            s.Append(Encoding.UTF8.GetString(template.Literals[i]));
            if (i == template.Widths.Length) break;
            s.Append('{').Append(template.Widths[i]).Append('}');
        }
        return s.ToString();
    }

    private static string Describe(FieldModel model) => string.Join("; ", Enumerable.Range(0, model.FieldCount).Select(f =>
    {
        FieldModel.Field field = model[f];
        return $"key {field.Key}{(field.Items ? "[]" : "")}: {field.ValueCount} values" + (field.RangeTag == 0 ? "" : $", range 0x{field.RangeTag:x2} from {field.RangeMin}, {field.RangeBits} bits")
            + (field.Templates.Length == 0 ? "" : $", {field.Templates.Length} templates ({string.Join(", ", field.Templates.Take(3).Select(Pattern))}{(field.Templates.Length > 3 ? ", ..." : "")})");
    }));

    // ---------------------------------------------------------------------------------------------------------------
    // FieldModel.Parse: canonical bytes, and every refusal rule of docs/field-model.md with its message.

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Serialize_Parse_RoundTripIsByteIdentical_AndTheEncodingIsCanonical(string kind)
    {
        StructureModel trained = Trained(kind);
        ShapeTransform shapes = trained.Dictionary.Shapes!;
        FieldModel model = ModelOf(trained.Dictionary);
        byte[] bytes = model.Serialize();

        FieldModel parsed = FieldModel.Parse(bytes, shapes.Table);
        Assert.Equal(bytes, parsed.Serialize());
        Assert.Equal(bytes, FieldModel.Parse(parsed.Serialize(), shapes.Table).Serialize());
        // From the parsed fields back to bytes: one encoding (minimal varints, frequencies as they are).
        Assert.Equal(bytes, FieldModel.Create(shapes.Table, Definitions(parsed)).Serialize());
        for (int f = 0; f < model.FieldCount; f++)
        {
            for (int i = 0; i < model[f].ValueCount; i++)
                Assert.Equal(i, parsed.Find(f, model.Value(model[f].FirstValue + i)));
        }

        // The record's SMDL: table and model, parsed back to the same bytes.
        byte[] smdl = shapes.Serialize();
        Assert.True(smdl.AsSpan().StartsWith("SMDL"u8));
        ShapeTransform again = ShapeTransform.Parse(smdl);
        Assert.NotNull(again.Fields);
        Assert.Equal(smdl, again.Serialize());
        Assert.Equal(bytes, again.Fields!.Model.Serialize());
        output.WriteLine($"{kind}: model {bytes.Length} bytes, SMDL {smdl.Length} bytes; {Describe(model)}");
    }

    [Fact]
    public void Training_SameSamples_SameModelBytes()
    {
        (List<byte[]> training, _) = Data("json");
        StructureModel a = Trained("json");
        StructureModel b = StructureTrainer.TryTrain(training, 8 * 1024, 88, DocumentKind.Json, fieldModel: true)!;
        Assert.Equal(a.Dictionary.Shapes!.Serialize(), b.Dictionary.Shapes!.Serialize());
        Assert.Equal(a.Dictionary.Content.ToArray(), b.Dictionary.Content.ToArray());
    }

    /// <summary>A table of 5 keys: shape 1 has keys 0-2, shape 2 keys 3-4.</summary>
    private static readonly ShapeTable SmallTable = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray(), "b"u8.ToArray(), "c"u8.ToArray()], ["d"u8.ToArray(), "e"u8.ToArray()]]);

    /// <summary>One slot of a template as the layout writes it: the literal before it, its width, minimum, bits and the frequencies of its bit lengths.</summary>
    private sealed record SlotBytes(byte[] Before, byte Width, ulong Min, byte Bits, int[] Frequencies);

    /// <summary>A template as the layout writes it: its slots, then the last literal; <see cref="SlotCount"/>, when set, is the slot count written instead (a lie).</summary>
    private sealed record TemplateBytes(SlotBytes[] Slots, byte[] Last, ulong? SlotCount = null)
    {
        /// <summary>A template from a pattern of literal text, {width} slots ("Jun {2} {4}") and {} copy slots: every slot from 0 with <paramref name="bits"/> bits, its bit lengths equally likely.</summary>
        public static TemplateBytes Of(string pattern, byte bits = 2)
        {
            var slots = new List<SlotBytes>();
            var literal = new List<byte>();
            for (int i = 0; i < pattern.Length; i++)
            {
                if (pattern[i] != '{')
                {
                    literal.Add((byte)pattern[i]);
                    continue;
                }
                int close = pattern.IndexOf('}', i);
                // {} is a copy slot (width 0): its literal and width alone.
                slots.Add(close == i + 1
                    ? new SlotBytes([.. literal], 0, 0, 0, [])
                    : new SlotBytes([.. literal], byte.Parse(pattern[(i + 1)..close], CultureInfo.InvariantCulture), 0, bits, Spread(bits + 1)));
                literal.Clear();
                i = close;
            }
            return new TemplateBytes([.. slots], [.. literal]);
        }

        /// <summary>This template with slot <paramref name="slot"/> changed.</summary>
        public TemplateBytes WithSlot(int slot, Func<SlotBytes, SlotBytes> change) => this with { Slots = [.. Slots.Select((s, i) => i == slot ? change(s) : s)] };
    }

    /// <summary><paramref name="n"/> frequencies, each at least 1, adding up to 4,096, as even as can be (the first ones take the remainder).</summary>
    private static int[] Spread(int n) => [.. Enumerable.Range(0, n).Select(i => 4096 / n + (i < 4096 % n ? 1 : 0))];

    /// <summary>Writes model bytes in the FLDM layout field by field, lying where a test says so; <see cref="Build"/> appends a valid XxHash32 of what was written.</summary>
    private sealed class ModelBytes
    {
        private readonly List<byte> _bytes = [];
        private readonly bool _sources; // version 2 and 3: each field's key is followed by its source + 1 and its flags

        public ModelBytes(string magic = "FLDM", byte version = 1, byte reserved1 = 0, byte reserved2 = 0)
        {
            _bytes.AddRange(Encoding.ASCII.GetBytes(magic));
            _bytes.AddRange([version, reserved1, reserved2]);
            _sources = version is 2 or 3;
        }

        public ModelBytes Varint(ulong value)
        {
            while (value >= 0x80)
            {
                _bytes.Add((byte)(value | 0x80));
                value >>= 7;
            }
            _bytes.Add((byte)value);
            return this;
        }

        public ModelBytes Raw(params byte[] bytes)
        {
            _bytes.AddRange(bytes);
            return this;
        }

        /// <summary>
        /// One field: key and items, (version 2) <paramref name="sourcePlusOne"/> and <paramref name="flags"/>, values (each
        /// with its length), range, the template count (<paramref name="templateCount"/> when set, a lie; else the
        /// templates') and the templates (a slot of width 0, a copy, written as its literal and width alone), then the
        /// field's frequencies.
        /// </summary>
        public ModelBytes Field(ulong keyAndItems, byte[][] values, int[] frequencies, byte rangeTag = 0, long rangeMin = 0, int rangeBits = 0,
            TemplateBytes[]? templates = null, ulong? templateCount = null, ulong sourcePlusOne = 0, byte flags = 0, byte[]? part = null)
        {
            Varint(keyAndItems);
            if (_sources) Varint(sourcePlusOne).Raw(flags).Raw(part ?? []);
            Varint((ulong)values.Length);
            foreach (byte[] value in values) Varint((ulong)value.Length).Raw(value);
            Raw(rangeTag);
            if (rangeTag != 0) Varint(Varint64.ZigZag(rangeMin)).Raw((byte)rangeBits);
            Varint(templateCount ?? (ulong)(templates?.Length ?? 0));
            foreach (TemplateBytes template in templates ?? [])
            {
                Varint(template.SlotCount ?? (ulong)template.Slots.Length);
                foreach (SlotBytes slot in template.Slots)
                {
                    Varint((ulong)slot.Before.Length).Raw(slot.Before).Raw(slot.Width);
                    if (slot.Width == 0) continue; // a copy slot: nothing more
                    Varint(slot.Min).Raw(slot.Bits);
                    foreach (int frequency in slot.Frequencies) Varint((ulong)frequency);
                }
                Varint((ulong)template.Last.Length).Raw(template.Last);
            }
            foreach (int frequency in frequencies) Varint((ulong)frequency);
            return this;
        }

        public byte[] Build()
        {
            byte[] body = [.. _bytes];
            byte[] all = new byte[body.Length + 4];
            body.CopyTo(all, 0);
            BinaryPrimitives.WriteUInt32LittleEndian(all.AsSpan(body.Length), XxHash32.HashToUInt32(body));
            return all;
        }
    }

    private static readonly byte[] X = [0x21, (byte)'x'];    // the short string "x"
    private static readonly byte[] Five = [0x06, 0x0A];      // the integer 5

    /// <summary>The templates of flights' dates and movies' release dates.</summary>
    private static readonly TemplateBytes Minute = TemplateBytes.Of("{4}/{2}/{2} {2}:{2}");
    private static readonly TemplateBytes Day = TemplateBytes.Of("Jun {2} {4}", bits: 3);

    /// <summary>
    /// A valid model of <see cref="SmallTable"/>: key 0 with a table of two values; key 1's items with a 3-bit integer
    /// range from 100; key 2 with a value, a 1-bit range and two templates (symbols: the value, bit lengths 0 and 1, the
    /// templates, the escape).
    /// </summary>
    private static ModelBytes ValidFields(ModelBytes bytes) => bytes.Varint(3)
        .Field(0 << 1, [X, Five], [2000, 2000, 96])
        .Field(1 << 1 | 1, [], [1000, 1000, 1000, 1000, 96], rangeTag: 0x06, rangeMin: 100, rangeBits: 3)
        .Field(2 << 1, [X], [1000, 500, 500, 1000, 1000, 96], rangeTag: 0x06, rangeMin: 0, rangeBits: 1, templates: [Minute, Day]);

    /// <summary>The copy templates of emoji's skin tones and earthquakes' titles ({} copies the field's source).</summary>
    private static readonly TemplateBytes Skin = TemplateBytes.Of("{}: light skin tone");
    private static readonly TemplateBytes Quake = TemplateBytes.Of("M {1}.{1} - {}");

    /// <summary>
    /// A valid version-2 model of <see cref="SmallTable"/>: key 0 with a table of two values and no source; key 1's
    /// items with a relative 3-bit integer range from -4 whose source is key 0; key 2 with a value and three templates
    /// (two of them copying) whose source is key 1's items (symbols: the value, the templates, the escape).
    /// </summary>
    private static ModelBytes ValidSourceFields(ModelBytes bytes) => bytes.Varint(3)
        .Field(0 << 1, [X, Five], [2000, 2000, 96])
        .Field(1 << 1 | 1, [], [1000, 1000, 1000, 1000, 96], rangeTag: 0x06, rangeMin: -4, rangeBits: 3, sourcePlusOne: (0 << 1) + 1, flags: 1)
        .Field(2 << 1, [X], [1000, 1000, 1000, 1000, 96], templates: [Skin, Day, Quake], sourcePlusOne: (1 << 1 | 1) + 1);

    /// <summary>A version-2 model of <see cref="SmallTable"/> with one field, key 2 (source: <paramref name="sourcePlusOne"/> - 1): the value X, <paramref name="templates"/>, the escape.</summary>
    private static ModelBytes SourceTemplateField(TemplateBytes[] templates, ulong sourcePlusOne, byte version = 2) =>
        new ModelBytes(version: version).Varint(1).Field(2 << 1, [X], Spread(templates.Length + 2), templates: templates, sourcePlusOne: sourcePlusOne);

    /// <summary>A version-3 model of <see cref="SmallTable"/> with one field, key 2, copying the part of key 0's string after <paramref name="delimiter"/> less <paramref name="skip"/> bytes.</summary>
    private static ModelBytes PartField(byte delimiter, byte skip) =>
        new ModelBytes(version: 3).Varint(1).Field(2 << 1, [X], Spread(3), templates: [Skin], sourcePlusOne: 1, flags: 2, part: [delimiter, skip]);

    /// <summary>A model of <see cref="SmallTable"/> with one field, key 2: the value X, <paramref name="templates"/>, the escape (valid frequencies for that many symbols).</summary>
    private static ModelBytes TemplateField(TemplateBytes[] templates, ulong? templateCount = null) =>
        new ModelBytes().Varint(1).Field(2 << 1, [X], Spread(templates.Length + 2), templates: templates, templateCount: templateCount);

    /// <summary>The template key of <paramref name="text"/> (its literals and digit-run widths).</summary>
    private static byte[] TemplateKey(string text)
    {
        byte[] key = new byte[FieldModel.MaxKeyLength];
        Assert.True(FieldModel.TrySplitTemplate(Encoding.ASCII.GetBytes(text), key, out int length, new long[FieldModel.MaxSlots], out _));
        return key[..length];
    }

    [Fact]
    public void Parse_TheValidBaseOfTheRefusalCases_IsAccepted()
    {
        byte[] bytes = ValidFields(new ModelBytes()).Build();
        FieldModel model = FieldModel.Parse(bytes, SmallTable);
        Assert.Equal(3, model.FieldCount);
        Assert.Equal(0, model.FieldOf(0, items: false));
        Assert.Equal(1, model.FieldOf(1, items: true));
        Assert.Equal(-1, model.FieldOf(1, items: false));
        Assert.Equal(2, model.FieldOf(2, items: false));
        Assert.Equal(1, model.Find(0, Five));
        // Key 2's symbols: the value (0), bit lengths 0-1 (1, 2), the templates (3, 4), the escape (5).
        FieldModel.Field dates = model[2];
        Assert.Equal((1, 3, 5, 6), (dates.RangeSymbol, dates.TemplateSymbol, dates.EscapeSymbol, dates.SymbolCount));
        Assert.Equal(["{4}/{2}/{2} {2}:{2}", "Jun {2} {4}"], dates.Templates.Select(Pattern));
        Assert.Equal([16, 11], dates.Templates.Select(t => t.Length));
        Assert.Equal(0, model.FindTemplate(2, TemplateKey("2001/01/01 00:47")));
        Assert.Equal(1, model.FindTemplate(2, TemplateKey("Jun 12 1998")));
        Assert.Equal(-1, model.FindTemplate(2, TemplateKey("Jun 5 1998"))); // another width, another template
        Assert.Equal(-1, model.FindTemplate(0, TemplateKey("Jun 12 1998")));
        Assert.Equal(bytes, model.Serialize());
        Assert.Equal(bytes, FieldModel.Create(SmallTable, Definitions(model)).Serialize());
        // A model with no field, and one at the last key's items, are valid too.
        FieldModel.Parse(new ModelBytes().Varint(0).Build(), SmallTable);
        FieldModel.Parse(new ModelBytes().Varint(1).Field(4 << 1 | 1, [X], [4095, 1]).Build(), SmallTable);
        // A field of templates alone (no value, no range).
        FieldModel.Parse(new ModelBytes().Varint(1).Field(3 << 1, [], [4000, 96], templates: [Day]).Build(), SmallTable);
    }

    public static TheoryData<string> RefusalCases() =>
    [
        "over 512 KiB", "under the smallest size", "wrong magic", "version 4", "reserved byte 5", "reserved byte 6", "checksum",
        "field count over 2048", "field count over the bytes", "values over 1024 in a field", "values over 65536 in all",
        "fields out of order", "field repeated", "key out of the table", "items of a key out of the table",
        "value of 0 bytes", "value over 96 bytes", "value an object", "value an array", "value truncated", "value with bytes after it",
        "value of an unknown tag", "value with a non-minimal varint", "same value twice", "range tag a string's", "range tag a double's",
        "range over 48 bits", "range past the largest integer", "frequency of 0", "frequency over 4096", "frequencies over 4096 in all",
        "frequencies under 4096", "frequencies not counting the templates", "bytes after the end", "truncated body", "truncated in a template",
        "non-minimal field count",
        "template count over 64", "template of 0 slots", "template of 17 slots", "slot 0 digits wide in version 1", "slot 19 digits wide",
        "slot min not under 10^width", "slot min of 19 digits", "slot over 60 bits", "slot frequency of 0", "slot frequency over 4096",
        "slot frequencies over 4096 in all", "slot frequencies under 4096", "same template twice", "same template twice, other ranges",
        "template over 256 bytes", "literal over 256 bytes", "last literal over 256 bytes",
        // Version 2 (sources).
        "version 2 without a source", "source key out of the table", "source items of a key out of the table", "field its own source",
        "flags 2", "flags 0x81", "relative range without a source", "relative flag without a range", "copy slot in a field without a source",
        "two copy slots", "copy slot in version 1", "source + 1 non-minimal", "truncated before the flags",
        // Version 3 (parts).
        "version 3 without a part", "part without a source", "part delimiter 0", "part delimiter a letter", "part delimiter a digit",
        "part delimiter past ASCII", "part skip over 15", "flags 4 in version 3", "truncated in the part",
    ];

    /// <summary>Each refusal rule with bytes that break it alone (a valid XxHash32 recomputed), and the message it must give.</summary>
    private static (byte[] Bytes, ShapeTable Table, string Message) RefusalCase(string name)
    {
        ShapeTable t = SmallTable;
        int[] ok3 = [2000, 2000, 96];
        return name switch
        {
            "over 512 KiB" => (new byte[512 * 1024 + 1], t, "has 524289 bytes; the limit is 524288"),
            "under the smallest size" => ("FLDM"u8.ToArray().Concat(new byte[7]).ToArray(), t, "has 11 bytes; at least 12 are needed"),
            "wrong magic" => (ValidFields(new ModelBytes(magic: "FLDN")).Build(), t, "does not start with the magic 'FLDM' (found 464C444E)"),
            "version 4" => (ValidFields(new ModelBytes(version: 4)).Build(), t, "format version 4 is not supported; this reader knows versions 1 to 3"),
            "reserved byte 5" => (ValidFields(new ModelBytes(reserved1: 1)).Build(), t, "the reserved bytes are not 0"),
            "reserved byte 6" => (ValidFields(new ModelBytes(reserved2: 0x80)).Build(), t, "the reserved bytes are not 0"),
            "checksum" => (FlipLast(ValidFields(new ModelBytes()).Build()), t, "checksum mismatch"),
            "field count over 2048" => (new ModelBytes().Varint(2049).Raw(new byte[3000]).Build(), t, "2049 fields; at most 2048 allowed"),
            "field count over the bytes" => (new ModelBytes().Varint(100).Field(0, [X], [4095, 1]).Build(), t, "100 fields; at most 2048 allowed, each taking bytes"),
            "values over 1024 in a field" => (new ModelBytes().Varint(1).Field(0, Integers(0, 1025), [.. Enumerable.Repeat(1, 1025), 4096 - 1025]).Build(), t,
                "field 0 has 1025 values; at most 1024 a field and 65536 in all"),
            "values over 65536 in all" => (SixtyFourFullFields(extra: true), WideTable, "field 64 has 1 values; at most 1024 a field and 65536 in all"),
            "fields out of order" => (new ModelBytes().Varint(2).Field(1 << 1, [X], [4095, 1]).Field(0 << 1, [X], [4095, 1]).Build(), t, "field 1 is out of order or repeated"),
            "field repeated" => (new ModelBytes().Varint(2).Field(3 << 1, [X], [4095, 1]).Field(3 << 1, [Five], [4095, 1]).Build(), t, "field 1 is out of order or repeated"),
            "key out of the table" => (new ModelBytes().Varint(1).Field(5 << 1, [X], [4095, 1]).Build(), t, "field 0 names key 5; the shape table has 5 keys"),
            "items of a key out of the table" => (new ModelBytes().Varint(2).Field(0, [X], [4095, 1]).Field(5 << 1 | 1, [X], [4095, 1]).Build(), t, "field 1 names key 5; the shape table has 5 keys"),
            "value of 0 bytes" => (new ModelBytes().Varint(1).Field(0, [[]], [4095, 1]).Build(), t, "field 0 has a value of 0 bytes; 1 to 96 allowed"),
            "value over 96 bytes" => (new ModelBytes().Varint(1).Field(0, [[0x05, 95, .. new byte[95]]], [4095, 1]).Build(), t, "field 0 has a value of 97 bytes; 1 to 96 allowed"),
            "value an object" => (new ModelBytes().Varint(1).Field(0, [X, [0x03, 0x01]], ok3).Build(), t, "field 0's value 0301 is not one packed scalar value"),
            "value an array" => (new ModelBytes().Varint(1).Field(0, [[0x04, 0x00]], [4095, 1]).Build(), t, "field 0's value 0400 is not one packed scalar value"),
            "value truncated" => (new ModelBytes().Varint(1).Field(0, [[0x25, (byte)'a', (byte)'b']], [4095, 1]).Build(), t, "field 0's value 256162 is not one packed scalar value"),
            "value with bytes after it" => (new ModelBytes().Varint(1).Field(0, [[0x00, 0x00]], [4095, 1]).Build(), t, "field 0's value 0000 is not one packed scalar value"),
            "value of an unknown tag" => (new ModelBytes().Varint(1).Field(0, [[0x0E]], [4095, 1]).Build(), t, "field 0's value 0E is not one packed scalar value"),
            "value with a non-minimal varint" => (new ModelBytes().Varint(1).Field(0, [[0x06, 0x8A, 0x00]], [4095, 1]).Build(), t, "field 0's value 068A00 is not one packed scalar value"),
            "same value twice" => (new ModelBytes().Varint(1).Field(0, [X, Five, X], [1000, 1000, 1000, 1096]).Build(), t, "field 0 lists the value 2178 twice"),
            "range tag a string's" => (new ModelBytes().Varint(1).Field(0, [], [4095, 1], rangeTag: 0x05, rangeMin: 0, rangeBits: 0).Build(), t, "field 0's range has tag 0x05, not a number's"),
            "range tag a double's" => (new ModelBytes().Varint(1).Field(0, [], [4095, 1], rangeTag: 0x09, rangeMin: 0, rangeBits: 0).Build(), t, "field 0's range has tag 0x09, not a number's"),
            "range over 48 bits" => (new ModelBytes().Varint(1).Field(0, [], [.. Enumerable.Repeat(1, 50), 4096 - 50], rangeTag: 0x06, rangeMin: 0, rangeBits: 49).Build(), t, "field 0's range has 49 bits; at most 48"),
            "range past the largest integer" => (new ModelBytes().Varint(1).Field(0, [], [1, 1, 1, 4093], rangeTag: 0x07, rangeMin: long.MaxValue - 2, rangeBits: 2).Build(), t, "field 0's range passes the largest 64-bit integer"),
            "frequency of 0" => (new ModelBytes().Varint(1).Field(0, [X, Five], [0, 4000, 96]).Build(), t, "field 0's frequencies are not at least 1 each and 4096 in all"),
            "frequency over 4096" => (new ModelBytes().Varint(1).Field(0, [X], [4097, 1]).Build(), t, "field 0's frequencies are not at least 1 each and 4096 in all"),
            "frequencies over 4096 in all" => (new ModelBytes().Varint(1).Field(0, [X, Five], [2000, 2000, 97]).Build(), t, "field 0's frequencies are not at least 1 each and 4096 in all"),
            "frequencies under 4096" => (new ModelBytes().Varint(1).Field(0, [X, Five], [2000, 2000, 95]).Build(), t, "field 0's frequencies add up to 4095, not 4096"),
            // Frequencies for the value and the escape only: the template's symbol takes the next field's first byte.
            "frequencies not counting the templates" => (new ModelBytes().Varint(2).Field(2 << 1, [X], [2048, 2048], templates: [Day]).Field(3 << 1, [X], [4095, 1]).Build(), t,
                "field 0's frequencies are not at least 1 each and 4096 in all"),
            "bytes after the end" => (ValidFields(new ModelBytes()).Raw(0x00).Build(), t, "Field model: 1 bytes after the end of the model"),
            "truncated body" => (new ModelBytes().Varint(2).Field(0, [X], [4095, 1]).Varint(1 << 1).Build(), t, "Field model: truncated, over-long or non-minimal varint"),
            // A template's first literal of 5 bytes, 2 of them there.
            "truncated in a template" => (new ModelBytes().Varint(1).Varint(2 << 1).Varint(0).Raw(0).Varint(1).Varint(1).Varint(5).Raw((byte)'a', (byte)'b').Build(), t,
                "Field model: truncated at offset"),
            "non-minimal field count" => (new ModelBytes().Raw(0x81, 0x00).Field(0, [X], [4095, 1]).Build(), t, "Field model: truncated, over-long or non-minimal varint at offset 7"),
            "template count over 64" => (TemplateField([.. Enumerable.Range(0, 65).Select(i => TemplateBytes.Of($"{(char)('a' + i % 26)}{(char)('a' + i / 26)}{{2}}"))]).Build(), t,
                "field 0 has 65 templates; at most 64"),
            "template of 0 slots" => (TemplateField([Day with { SlotCount = 0 }]).Build(), t, "field 0's template 0 has 0 slots; 1 to 16 allowed"),
            "template of 17 slots" => (TemplateField([Day, TemplateBytes.Of(string.Concat(Enumerable.Repeat("-{1}", 17)))]).Build(), t, "field 0's template 1 has 17 slots; 1 to 16 allowed"),
            // Width 0 is a copy slot, which only a version-2 model's field with a source may have.
            "slot 0 digits wide in version 1" => (TemplateField([Day.WithSlot(1, s => s with { Width = 0 })]).Build(), t, "field 0's template 0 has a copy slot (width 0) but the field has no source"),
            "slot 19 digits wide" => (TemplateField([Day.WithSlot(0, s => s with { Width = 19 })]).Build(), t, "field 0's template 0 has a slot 19 digits wide; 1 to 18 allowed"),
            "slot min not under 10^width" => (TemplateField([Day.WithSlot(0, s => s with { Min = 100 })]).Build(), t, "field 0's template 0 has a slot minimum 100 of more than its 2 digits"),
            "slot min of 19 digits" => (TemplateField([Day.WithSlot(0, s => s with { Width = 18, Min = 1_000_000_000_000_000_000 })]).Build(), t,
                "field 0's template 0 has a slot minimum 1000000000000000000 of more than its 18 digits"),
            "slot over 60 bits" => (TemplateField([Day.WithSlot(1, s => s with { Width = 18, Bits = 61, Frequencies = Spread(62) })]).Build(), t, "field 0's template 0 has a slot of 61 bits; at most 60"),
            "slot frequency of 0" => (TemplateField([Day.WithSlot(1, s => s with { Frequencies = [0, 2048, 1024, 1024] })]).Build(), t,
                "field 0's template 0, slot 1's frequencies are not at least 1 each and 4096 in all"),
            "slot frequency over 4096" => (TemplateField([Day.WithSlot(0, s => s with { Frequencies = [4097, 1, 1, 1] })]).Build(), t,
                "field 0's template 0, slot 0's frequencies are not at least 1 each and 4096 in all"),
            "slot frequencies over 4096 in all" => (TemplateField([Day.WithSlot(1, s => s with { Frequencies = [1024, 1024, 1024, 1025] })]).Build(), t,
                "field 0's template 0, slot 1's frequencies are not at least 1 each and 4096 in all"),
            "slot frequencies under 4096" => (TemplateField([Day, Minute.WithSlot(4, s => s with { Frequencies = [1366, 1365, 1364] })]).Build(), t,
                "field 0's template 1, slot 4's frequencies add up to 4095, not 4096"),
            "same template twice" => (TemplateField([Day, Minute, Day]).Build(), t, "field 0 lists template 2 twice"),
            // The same literals and widths: the same template, whatever its slots' ranges and frequencies.
            "same template twice, other ranges" => (TemplateField([Day, Day.WithSlot(0, s => s with { Min = 5, Bits = 1, Frequencies = [1, 4095] })]).Build(), t, "field 0 lists template 1 twice"),
            "template over 256 bytes" => (TemplateField([TemplateBytes.Of(new string('a', 256) + "{1}")]).Build(), t, "field 0's template 0 describes 257 bytes; at most 256"),
            "literal over 256 bytes" => (TemplateField([TemplateBytes.Of(new string('a', 257) + "{1}")]).Build(), t, "field 0's template 0 has a literal of 257 bytes"),
            "last literal over 256 bytes" => (TemplateField([Day, TemplateBytes.Of("{1}" + new string('a', 257))]).Build(), t, "field 0's template 1 has a literal of 257 bytes"),
            // Version 2: what each field's source and flags may say.
            "version 2 without a source" => (new ModelBytes(version: 2).Varint(1).Field(0, [X, Five], ok3).Build(), t,
                "Field model: version 2, but no field has a source (a model without sources is version 1)"),
            "source key out of the table" => (new ModelBytes(version: 2).Varint(1).Field(0, [X], [4095, 1], sourcePlusOne: (5 << 1) + 1).Build(), t,
                "field 0's source names key 5; the shape table has 5 keys"),
            "source items of a key out of the table" => (new ModelBytes(version: 2).Varint(1).Field(0, [X], [4095, 1], sourcePlusOne: (5 << 1 | 1) + 1).Build(), t,
                "field 0's source names key 5; the shape table has 5 keys"),
            "field its own source" => (new ModelBytes(version: 2).Varint(2).Field(0, [X], [4095, 1], sourcePlusOne: 2).Field(1 << 1 | 1, [X], [4095, 1], sourcePlusOne: (1 << 1 | 1) + 1).Build(), t,
                "field 1 is its own source"),
            "flags 2" => (new ModelBytes(version: 2).Varint(1).Field(0, [], [4095, 1], rangeTag: 0x06, rangeBits: 0, sourcePlusOne: 3, flags: 2).Build(), t,
                "field 0 has flags 0x02; only 0x01 (a relative range) is defined"),
            "flags 0x81" => (new ModelBytes(version: 2).Varint(1).Field(0, [], [4095, 1], rangeTag: 0x06, rangeBits: 0, sourcePlusOne: 3, flags: 0x81).Build(), t,
                "field 0 has flags 0x81; only 0x01 (a relative range) is defined"),
            "relative range without a source" => (new ModelBytes(version: 2).Varint(2).Field(0, [X], [4095, 1], sourcePlusOne: 3).Field(2, [], [4095, 1], rangeTag: 0x06, rangeBits: 0, flags: 1).Build(), t,
                "field 1's range is relative but it has no source"),
            "relative flag without a range" => (new ModelBytes(version: 2).Varint(1).Field(0, [X], [4095, 1], sourcePlusOne: 3, flags: 1).Build(), t,
                "field 0's range is relative but it has no range"),
            "copy slot in a field without a source" => (new ModelBytes(version: 2).Varint(2).Field(0, [X], [4095, 1], sourcePlusOne: 3)
                .Field(2 << 1, [X], Spread(3), templates: [Skin]).Build(), t, "field 1's template 0 has a copy slot (width 0) but the field has no source"),
            "two copy slots" => (SourceTemplateField([Day, TemplateBytes.Of("{} and {}")], sourcePlusOne: 1).Build(), t, "field 0's template 1 has more than one copy slot"),
            // A copy slot written as version 2 writes it, in a version-1 model (no field has a source there).
            "copy slot in version 1" => (TemplateField([Skin]).Build(), t, "field 0's template 0 has a copy slot (width 0) but the field has no source"),
            "source + 1 non-minimal" => (new ModelBytes(version: 2).Varint(1).Varint(0).Raw(0x81, 0x00).Raw(0).Varint(0).Raw(0).Varint(0).Varint(4096).Build(), t,
                "Field model: truncated, over-long or non-minimal varint at offset 9"),
            "truncated before the flags" => (new ModelBytes(version: 2).Varint(1).Varint(0).Varint(2).Build(), t, "Field model: truncated"),
            // Version 3: a part's flag, delimiter and skip.
            "version 3 without a part" => (SourceTemplateField([Skin], sourcePlusOne: 1, version: 3).Build(), t,
                "Field model: version 3, but no field copies a part of its source (such a model is version 2)"),
            "part without a source" => (new ModelBytes(version: 3).Varint(2).Field(0, [X], [4095, 1], sourcePlusOne: 3, flags: 2, part: [(byte)'/', 0])
                .Field(2 << 1, [X], [4095, 1], flags: 2, part: [(byte)'/', 0]).Build(), t, "field 1 copies a part of its source but it has no source"),
            "part delimiter 0" => (PartField(0, 0).Build(), t, "field 0's copy delimiter is 0x00; allowed: ASCII punctuation or space"),
            "part delimiter a letter" => (PartField((byte)'a', 0).Build(), t, "field 0's copy delimiter is 0x61; allowed: ASCII punctuation or space"),
            "part delimiter a digit" => (PartField((byte)'7', 0).Build(), t, "field 0's copy delimiter is 0x37; allowed: ASCII punctuation or space"),
            "part delimiter past ASCII" => (PartField(0xC3, 0).Build(), t, "field 0's copy delimiter is 0xc3; allowed: ASCII punctuation or space"),
            "part skip over 15" => (PartField((byte)'/', 16).Build(), t, "field 0's copy skips 16 bytes; at most 15"),
            "flags 4 in version 3" => (new ModelBytes(version: 3).Varint(1).Field(0, [], [4095, 1], rangeTag: 0x06, rangeBits: 0, sourcePlusOne: 3, flags: 6, part: [(byte)'/', 0]).Build(), t,
                "field 0 has flags 0x06; only 0x01 (a relative range) and 0x02 (copies a part) are defined"),
            "truncated in the part" => (new ModelBytes(version: 3).Varint(1).Varint(2 << 1).Varint(1).Raw(2, (byte)'/').Build(), t, "Field model: truncated"),
            _ => throw new ArgumentException(name),
        };
    }

    private static byte[] FlipLast(byte[] bytes)
    {
        bytes[^1] ^= 0x01;
        return bytes;
    }

    /// <summary>Integers from..from+count-1 as packed values (tag 0x06, zigzag varint).</summary>
    private static byte[][] Integers(int from, int count) =>
        [.. Enumerable.Range(from, count).Select(i => { byte[] v = new byte[11]; v[0] = 0x06; Varint64.TryWrite(v.AsSpan(1), Varint64.ZigZag(i), out int n); return v[..(1 + n)]; })];

    /// <summary>A table of one shape with 70 keys (for the model-wide value limit).</summary>
    private static readonly ShapeTable WideTable = ShapeTable.Create(DocumentKind.Json, [[.. Enumerable.Range(0, 70).Select(i => Encoding.ASCII.GetBytes($"k{i}"))]]);

    /// <summary>64 fields of 1,024 values each: exactly the 65,536 a model may hold; with <paramref name="extra"/>, a 65th field of one value.</summary>
    private static byte[] SixtyFourFullFields(bool extra)
    {
        var bytes = new ModelBytes().Varint(extra ? 65UL : 64UL);
        int[] frequencies = [.. Enumerable.Repeat(1, 1024), 4096 - 1024];
        for (int f = 0; f < 64; f++) bytes.Field((ulong)f << 1, Integers(f * 1024, 1024), frequencies);
        if (extra) bytes.Field(64 << 1, [X], [4095, 1]);
        return bytes.Build();
    }

    [Theory]
    [MemberData(nameof(RefusalCases))]
    public void Parse_LyingBytes_RefusedByTheRuleUnderTest(string rule)
    {
        (byte[] bytes, ShapeTable table, string message) = RefusalCase(rule);
        var ex = Assert.Throws<InvalidDataException>(() => FieldModel.Parse(bytes, table));
        output.WriteLine($"{rule}: {ex.Message}");
        Assert.Contains(message, ex.Message, StringComparison.Ordinal);
        Assert.StartsWith("Field model", ex.Message, StringComparison.Ordinal); // never the packed stream's reader's words
        if (rule != "checksum" && bytes.Length is >= 12 and <= FieldModel.MaxSerializedLength)
            Assert.DoesNotContain("checksum", ex.Message, StringComparison.Ordinal); // the check under test fired, not the checksum
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Model version 2: sources (docs/field-model.md). Parsing, what is written, and the coder's copy slots and relative
    // ranges on packed streams written by hand.

    [Fact]
    public void Parse_TheValidBaseOfTheSourceCases_IsAccepted_AndCanonical()
    {
        byte[] bytes = ValidSourceFields(new ModelBytes(version: 2)).Build();
        FieldModel model = FieldModel.Parse(bytes, SmallTable);
        Assert.Equal(3, model.FieldCount);
        Assert.Equal((-1, false), (model[0].SourceKey, model[0].RangeRelative));
        Assert.Equal((0, true, -4L), (model[1].SourceKey, model[1].RangeRelative, model[1].RangeMin));
        Assert.Equal((1 << 1 | 1, false), (model[2].SourceKey, model[2].RangeRelative));
        // Two distinct source keys: key 0 (slot 0) and key 1's items (slot 1), in ascending order of the key.
        Assert.Equal(2, model.SourceCount);
        Assert.Equal((0, -1, 1, -1), (model.SourceSlotOf(0, items: false), model.SourceSlotOf(0, items: true), model.SourceSlotOf(1, items: true), model.SourceSlotOf(2, items: false)));
        // The copy slot: width 0, not counted in the template's length (its bytes are the source's).
        Assert.Equal(["{0}: light skin tone", "Jun {2} {4}", "M {1}.{1} - {0}"], model[2].Templates.Select(Pattern));
        Assert.Equal((0, -1, 2), (model[2].Templates[0].CopySlot, model[2].Templates[1].CopySlot, model[2].Templates[2].CopySlot));
        Assert.Equal([17, 11, 8], model[2].Templates.Select(t => t.Length));
        Assert.Equal(bytes, model.Serialize());
        Assert.Equal(bytes, FieldModel.Create(SmallTable, Definitions(model)).Serialize());
    }

    [Fact]
    public void Serialize_WithoutSources_WritesVersion1_WithASource_Version2()
    {
        // Version-1 readers keep reading every model written without sources: the writer uses version 2 only when a field has one.
        byte[] v1 = ValidFields(new ModelBytes()).Build();
        FieldModel plain = FieldModel.Parse(v1, SmallTable);
        List<FieldModel.FieldDefinition> definitions = Definitions(plain);
        Assert.All(definitions, d => Assert.Equal((-1, false), (d.Source, d.RangeRelative)));
        byte[] written = FieldModel.Create(SmallTable, definitions).Serialize();
        Assert.Equal(FieldModel.FormatVersion, written[4]);
        Assert.Equal(v1, written);
        // One field with a source makes it version 2, each field with its source + 1 and flags after its key.
        definitions[2] = definitions[2] with { Source = 0 };
        byte[] sourced = FieldModel.Create(SmallTable, definitions).Serialize();
        Assert.Equal(FieldModel.SourcesFormatVersion, sourced[4]);
        Assert.Equal(v1.Length - 4 + 2 * 3, sourced.Length - 4);
        Assert.Equal(0, FieldModel.Parse(sourced, SmallTable)[2].SourceKey);
    }

    /// <summary>
    /// A table for the coder's source cases: shape 1 (keys 0-6) label, title, time, updated, skins, names, note; shape 2
    /// (keys 7-8), a skin: label, tone. Its packed streams are written by hand (<see cref="Root"/>), so any tag may stand anywhere.
    /// </summary>
    private static readonly ShapeTable SourceTable = ShapeTable.Create(DocumentKind.Json,
        [[.. new[] { "label", "title", "time", "updated", "skins", "names", "note" }.Select(Encoding.ASCII.GetBytes)], ["label"u8.ToArray(), "tone"u8.ToArray()]]);

    private static FieldModel.TemplateDefinition CopyTemplate(string before, string after) =>
        new([Encoding.ASCII.GetBytes(before), Encoding.ASCII.GetBytes(after)], [0], [0], [0], [[1]]);

    /// <summary>
    /// The model of <see cref="SourceTable"/>: title (1) copies label (0): "{}: light skin tone" or "M {1}.{1} - {}";
    /// updated (3) is int64 (0x07) counted from time's (2) latest number, min -8, 20 bits; note (6) copies the latest of
    /// names' items (5[]): "see {}"; a skin's label (7) copies the document's label (0): "{}: light skin tone".
    /// </summary>
    private static readonly Lazy<FieldCoder> SourceCoder = new(() =>
    {
        FieldModel.TemplateDefinition quake = new([Encoding.ASCII.GetBytes("M "), Encoding.ASCII.GetBytes("."), Encoding.ASCII.GetBytes(" - "), []],
            [1, 1, 0], [0, 0, 0], [4, 4, 0], [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1]]);
        List<FieldModel.FieldDefinition> fields =
        [
            new(1, false, [], 0, 0, 0, [4, 4, 1]) { Source = 0, Templates = [CopyTemplate("", ": light skin tone"), quake] },
            new(3, false, [], PackedTag.Int64, -8, 20, [.. Enumerable.Repeat(4L, 21), 1]) { Source = 2 << 1, RangeRelative = true },
            new(6, false, [], 0, 0, 0, [4, 1]) { Source = 5 << 1 | 1, Templates = [CopyTemplate("see ", "")] },
            new(7, false, [], 0, 0, 0, [4, 1]) { Source = 0, Templates = [CopyTemplate("", ": light skin tone")] },
        ];
        FieldModel model = FieldModel.Create(SourceTable, fields);
        Assert.Equal(FieldModel.SourcesFormatVersion, model.Serialize()[4]);
        return new FieldCoder(SourceTable, model);
    });

    private static byte[] Str(string s) => [(byte)(PackedTag.ShortString + Encoding.UTF8.GetByteCount(s)), .. Encoding.UTF8.GetBytes(s)];

    private static byte[] Num(byte tag, long value)
    {
        byte[] v = new byte[11];
        v[0] = tag;
        Varint64.TryWrite(v.AsSpan(1), Varint64.ZigZag(value), out int n);
        return v[..(1 + n)];
    }

    private static readonly byte[] Nil = [PackedTag.Null];

    private static byte[] Arr(params byte[][] items) => [PackedTag.Array, (byte)items.Length, .. items.SelectMany(i => i)];

    /// <summary>A skin: an object of shape 2 (label, tone).</summary>
    private static byte[] Skin2(byte[] label, byte[] tone) => [PackedTag.Object, 2, .. label, .. tone];

    /// <summary>The packed stream of a root object of shape 1: label, title, time, updated, skins, names, note (null where not given).</summary>
    private static byte[] Root(byte[]? label = null, byte[]? title = null, byte[]? time = null, byte[]? updated = null, byte[]? skins = null, byte[]? names = null, byte[]? note = null) =>
        [1, .. label ?? Nil, .. title ?? Nil, .. time ?? Nil, .. updated ?? Nil, .. skins ?? Nil, .. names ?? Nil, .. note ?? Nil];

    /// <summary>Splits <paramref name="packed"/>, joins it back (asserting the same bytes) and returns the residual and the symbol stream.</summary>
    private static (byte[] Residual, byte[] Symbols) SplitJoin(FieldCoder coder, byte[] packed)
    {
        byte[] residual = new byte[packed.Length];
        var symbols = new RansEncoder();
        Assert.True(coder.TrySplit(packed, residual, out int length, symbols));
        byte[] stream = symbols.Encode().ToArray();
        byte[] joined = new byte[packed.Length];
        int written = coder.Join(residual.AsSpan(0, length), stream, joined);
        Assert.Equal(Convert.ToHexString(packed), Convert.ToHexString(joined, 0, written));
        return (residual[..length], stream);
    }

    private static bool Holds(byte[] bytes, byte[] token) => bytes.AsSpan().IndexOf(token) >= 0;

    public static TheoryData<string> SourceRoundTrips() =>
    [
        "copied", "copied, with digit runs before it", "source missing", "source empty", "source short", "source of 3 bytes",
        "source a number", "source an object", "array source missing", "source text twice in the string", "source text first where no template fits",
        "source with digits, inside its copy", "copies inside an array of objects", "latest of an array's items", "not the latest of an array's items",
        "relative", "relative from another numeric tag", "relative below its minimum", "relative of another tag", "relative without a number",
        "relative from a string", "relative wrapping past the largest", "relative wrapping past the smallest", "relative from the largest to the smallest",
        "relative too far", "every case in one document",
    ];

    /// <summary>Each case's packed stream, and the values that must be coded (absent from the residual) and escaped (there as they stand).</summary>
    private static (byte[] Packed, byte[][] Coded, byte[][] Escaped) SourceCase(string name)
    {
        const string Tone = ": light skin tone";
        byte[] I64(long v) => Num(PackedTag.Int64, v);
        return name switch
        {
            "copied" => (Root(Str("Waving hand"), Str("Waving hand" + Tone)), [Str("Waving hand" + Tone)], []),
            "copied, with digit runs before it" => (Root(Str("12km SW of Town"), Str("M 1.2 - 12km SW of Town")), [Str("M 1.2 - 12km SW of Town")], [Str("12km SW of Town")]),
            "source missing" => (Root(Nil, Str("Waving hand" + Tone)), [], [Str("Waving hand" + Tone)]),
            "source empty" => (Root(Str(""), Str(Tone)), [], [Str(Tone)]),
            "source short" => (Root(Str("ab"), Str("ab" + Tone)), [], [Str("ab" + Tone)]),
            "source of 3 bytes" => (Root(Str("abc"), Str("abc" + Tone)), [Str("abc" + Tone)], []),
            "source a number" => (Root(Num(PackedTag.Integer, 123), Str("123" + Tone)), [], [Str("123" + Tone)]),
            "source an object" => (Root([PackedTag.Object, 2, .. Str("abc"), .. Nil], Str("abc" + Tone)), [], [Str("abc" + Tone)]),
            "array source missing" => (Root(note: Str("see abc")), [], [Str("see abc")]),
            // The first occurrence is the copy; the second stays in the literal.
            "source text twice in the string" => (Root(Str("tone"), Str("tone" + Tone)), [Str("tone" + Tone)], []),
            // "2 - 12km" first occurs after "M 1.": no template of that split; digit runs alone fit none either: an escape.
            "source text first where no template fits" => (Root(Str("2 - 12km"), Str("M 1.2 - 12km")), [], [Str("M 1.2 - 12km")]),
            "source with digits, inside its copy" => (Root(Str("007 x"), Str("M 9.9 - 007 x")), [Str("M 9.9 - 007 x")], []),
            "copies inside an array of objects" => (Root(Str("Thumbs up"), skins: Arr(Skin2(Str("Thumbs up" + Tone), Nil), Skin2(Str("Thumbs up" + Tone), Str("x")), Skin2(Str("Thumbs" + Tone), Nil))),
                [Str("Thumbs up" + Tone)], [Str("Thumbs" + Tone)]),
            "latest of an array's items" => (Root(names: Arr(Str("abc"), Str("defgh")), note: Str("see defgh")), [Str("see defgh")], []),
            "not the latest of an array's items" => (Root(names: Arr(Str("abc"), Str("defgh")), note: Str("see abc")), [], [Str("see abc")]),
            "relative" => (Root(time: I64(1_700_000_000_000), updated: I64(1_700_000_012_345)), [I64(1_700_000_012_345)], []),
            "relative from another numeric tag" => (Root(time: Num(PackedTag.DateTime, 1_700_000_000_000), updated: I64(1_700_000_000_000)), [I64(1_700_000_000_000)], []),
            "relative below its minimum" => (Root(time: I64(1000), updated: I64(991)), [], [I64(991)]),
            "relative of another tag" => (Root(time: I64(1000), updated: Num(PackedTag.Integer, 1005)), [], [Num(PackedTag.Integer, 1005)]),
            "relative without a number" => (Root(time: Nil, updated: I64(1005)), [], [I64(1005)]),
            "relative from a string" => (Root(time: Str("1000"), updated: I64(1005)), [], [I64(1005)]),
            // Offsets modulo 2^64: long.MaxValue + 4 is long.MinValue + 3; long.MinValue - 8 + 7 is long.MaxValue.
            "relative wrapping past the largest" => (Root(time: I64(long.MaxValue), updated: I64(long.MinValue + 3)), [I64(long.MinValue + 3)], []),
            "relative wrapping past the smallest" => (Root(time: I64(long.MinValue), updated: I64(long.MaxValue)), [I64(long.MaxValue)], []),
            "relative from the largest to the smallest" => (Root(time: I64(long.MaxValue), updated: I64(long.MinValue)), [I64(long.MinValue)], []),
            "relative too far" => (Root(time: I64(long.MinValue), updated: I64(long.MinValue + (1 << 20))), [], [I64(long.MinValue + (1 << 20))]),
            "every case in one document" => (Root(Str("12km SW of Town"), Str("M 4.5 - 12km SW of Town"), I64(-5), I64(long.MaxValue),
                Arr(Skin2(Str("12km SW of Town" + Tone), Nil)), Arr(Str("x"), Str("yyy")), Str("see yyy")),
                [Str("M 4.5 - 12km SW of Town"), Str("12km SW of Town" + Tone), Str("see yyy")], [I64(long.MaxValue)]),
            _ => throw new ArgumentException(name),
        };
    }

    [Theory]
    [MemberData(nameof(SourceRoundTrips))]
    public void Sources_SplitAndJoin_GiveBackTheBytes_CodingWhatTheSourceAllows(string name)
    {
        (byte[] packed, byte[][] coded, byte[][] escaped) = SourceCase(name);
        (byte[] residual, byte[] symbols) = SplitJoin(SourceCoder.Value, packed);
        foreach (byte[] token in coded) Assert.False(Holds(residual, token), $"{name}: {Convert.ToHexString(token)} is coded, not in the residual");
        foreach (byte[] token in escaped) Assert.True(Holds(residual, token), $"{name}: {Convert.ToHexString(token)} is escaped, in the residual");
        Assert.NotEmpty(symbols); // title, updated and note are fields in every document: coded or escaped, a symbol each
    }

    public static TheoryData<string> SourceCorruptions() =>
    [
        "copy: source null", "copy: source a number", "copy: source an object", "relative: source null", "relative: source a string", "relative: source an array",
    ];

    [Theory]
    [MemberData(nameof(SourceCorruptions))]
    public void Sources_ACopyOrARelativeValue_WhereTheDocumentHasNoSuchLatestValue_IsRefused(string name)
    {
        // The symbols of a document whose title copies its label and whose updated counts from its time, joined with its
        // residual where the label or the time is something else: the symbol stream is right, the source is not there.
        FieldCoder coder = SourceCoder.Value;
        byte[] label = Str("Waving hand"), time = Num(PackedTag.Int64, 1_700_000_000_000);
        byte[] packed = Root(label, Str("Waving hand: light skin tone"), time, Num(PackedTag.Int64, 1_700_000_000_100));
        (byte[] residual, byte[] symbols) = SplitJoin(coder, packed);
        bool copy = name.StartsWith("copy", StringComparison.Ordinal);
        byte[] replaced = copy ? label : time;
        byte[] by = name[(name.IndexOf(": source ", StringComparison.Ordinal) + 9)..] switch
        {
            "null" => Nil,
            "a number" => Num(PackedTag.Integer, 5),
            "a string" => Str("1700000000000"),
            "an object" => [PackedTag.Object, 0, 1, 1, (byte)'k', .. Str("Waving hand")], // inline keys: no field inside
            "an array" => Arr(time),
            var other => throw new ArgumentException(other),
        };
        int at = residual.AsSpan().IndexOf(replaced);
        Assert.True(at > 0);
        byte[] lying = [.. residual[..at], .. by, .. residual[(at + replaced.Length)..]];
        var ex = Assert.Throws<InvalidDataException>(() => coder.Join(lying, symbols, new byte[4 * packed.Length]));
        Assert.Contains(copy ? "a template copies the field's source, which the document has not had as a string before it"
            : "a relative range's value where the document has no number at the field's source before it", ex.Message, StringComparison.Ordinal);
        // The latest value is none again at the start of each document: after this refusal, the right residual still joins.
        byte[] joined = new byte[packed.Length];
        Assert.Equal(packed.Length, coder.Join(residual, symbols, joined));
        Assert.Equal(packed, joined);
        Assert.Throws<InvalidDataException>(() => coder.Join(lying, symbols, new byte[4 * packed.Length]));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Model version 3: a copy slot copies a part of the source's string (after its delimiter's last occurrence, less a skip).

    [Theory]
    [InlineData("https://e.org/eventpage/ci37868143", (byte)'/', 0, "ci37868143")]
    [InlineData("https://e.org/eventpage/ci37868143", (byte)'/', 2, "37868143")]
    [InlineData("a-b-c", (byte)'-', 0, "c")]
    [InlineData("a-b-", (byte)'-', 0, "")]
    [InlineData("whole", 0, 0, "whole")]
    [InlineData("ab/c", (byte)'/', 1, "")]
    public void TryCopyPart_TakesWhatFollowsTheDelimitersLastOccurrence_LessTheSkip(string source, byte delimiter, byte skip, string part)
    {
        Assert.True(FieldModel.TryCopyPart(Encoding.ASCII.GetBytes(source), delimiter, skip, out ReadOnlySpan<byte> got));
        Assert.Equal(part, Encoding.ASCII.GetString(got));
    }

    [Theory]
    [InlineData("no delimiter here", (byte)'/', 0)]
    [InlineData("ab/c", (byte)'/', 2)]
    [InlineData("", (byte)'/', 0)]
    public void TryCopyPart_WithoutTheDelimiter_OrPastTheEnd_HasNoPart(string source, byte delimiter, byte skip) =>
        Assert.False(FieldModel.TryCopyPart(Encoding.ASCII.GetBytes(source), delimiter, skip, out _));

    /// <summary>
    /// The model of <see cref="SourceTable"/> for parts: title (1) copies the part of label (0) after its last '/'
    /// ("{}.geojson"); note (6) copies the part of label after its last '/' less 2 bytes ("{}"). Label "https://e.org/ci123"
    /// gives title "ci123.geojson" and note "123".
    /// </summary>
    private static FieldCoder PartCoder(byte titleDelimiter = (byte)'/')
    {
        List<FieldModel.FieldDefinition> fields =
        [
            new(1, false, [], 0, 0, 0, [4, 1]) { Source = 0, CopyDelimiter = titleDelimiter, Templates = [CopyTemplate("", ".geojson")] },
            new(6, false, [], 0, 0, 0, [4, 1]) { Source = 0, CopyDelimiter = (byte)'/', CopySkip = 2, Templates = [CopyTemplate("", "")] },
        ];
        FieldModel model = FieldModel.Create(SourceTable, fields);
        Assert.Equal(FieldModel.PartsFormatVersion, model.Serialize()[4]);
        return new FieldCoder(SourceTable, model);
    }

    [Theory]
    [InlineData("https://e.org/ci123", "ci123.geojson", "123", true, true)]
    [InlineData("https://e.org/us1000cdcq", "us1000cdcq.geojson", "1000cdcq", true, true)]
    [InlineData("https://e.org/ci123", "ci124.geojson", "124", false, false)]   // another id: neither holds the part
    [InlineData("no-delimiter-ci123", "ci123.geojson", "123", false, false)]    // no '/': no part to copy
    [InlineData("https://e.org/ab", "ab.geojson", "ab", false, false)]           // parts under 3 bytes are not copied
    [InlineData("https://e.org/ci1", "ci1.geojson", "1", true, false)]           // "ci1" is copied, "1" is too short
    public void Parts_SplitAndJoin_GiveBackTheBytes_CopyingWhereThePartIsThere(string label, string title, string note, bool titleCoded, bool noteCoded)
    {
        byte[] packed = Root(Str(label), Str(title), note: Str(note));
        (byte[] residual, _) = SplitJoin(PartCoder(), packed);
        Assert.Equal(!titleCoded, Holds(residual, Str(title)));
        Assert.Equal(!noteCoded, Holds(residual, Str(note)));
        Assert.True(Holds(residual, Str(label))); // the source itself is no field
    }

    [Fact]
    public void Parts_AModelWhosePartTheSourceDoesNotHave_IsRefused_NeverWrongBytes()
    {
        // Split with a model that copies after '/', joined with one that copies after '-' (which the label has not): the
        // symbols say "copy", the part is not there.
        byte[] packed = Root(Str("https://e.org/ci123"), Str("ci123.geojson"), note: Str("123"));
        (byte[] residual, byte[] symbols) = SplitJoin(PartCoder(), packed);
        var ex = Assert.Throws<InvalidDataException>(() => PartCoder((byte)'-').Join(residual, symbols, new byte[4 * packed.Length]));
        Assert.Contains("a template copies a part of the field's source, which its latest string does not have", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_AVersion3Model_IsAccepted_AndWrittenBackTheSame()
    {
        byte[] bytes = new ModelBytes(version: 3).Varint(2)
            .Field(0 << 1, [X, Five], [2000, 2000, 96])
            .Field(2 << 1, [X], Spread(3), templates: [Skin], sourcePlusOne: 1, flags: 2, part: [(byte)'/', 2]).Build();
        FieldModel model = FieldModel.Parse(bytes, SmallTable);
        Assert.Equal(((byte)0, (byte)0), (model[0].CopyDelimiter, model[0].CopySkip));
        Assert.Equal(((byte)'/', (byte)2, 0), (model[1].CopyDelimiter, model[1].CopySkip, model[1].SourceKey));
        List<FieldModel.FieldDefinition> definitions = Definitions(model);
        Assert.Equal(bytes, FieldModel.Create(SmallTable, definitions).Serialize());
        // Without the part, the same model is version 2, two bytes shorter.
        definitions[1] = definitions[1] with { CopyDelimiter = 0, CopySkip = 0 };
        byte[] v2 = FieldModel.Create(SmallTable, definitions).Serialize();
        Assert.Equal((FieldModel.SourcesFormatVersion, bytes.Length - 2), (v2[4], v2.Length));
    }

    [Fact]
    public void Sources_AnObjectAtTheSourceKey_LeavesNoLatestValue_EvenWhenItHeldTheKeyItself()
    {
        // Shape 1 is (a, t); a holds an object of shape 1 again. t copies a's latest string ("{}!"). The inner a is a
        // string, the inner t copies it; then the outer a, an object, is complete: the latest value of a is none (the
        // object), not the inner string, so the outer t cannot copy and is escaped.
        ShapeTable table = ShapeTable.Create(DocumentKind.Json, [["a"u8.ToArray(), "t"u8.ToArray()]]);
        FieldModel model = FieldModel.Create(table, [new(1, false, [], 0, 0, 0, [4, 1]) { Source = 0, Templates = [CopyTemplate("", "!")] }]);
        var coder = new FieldCoder(table, model);
        byte[] inner = [PackedTag.Object, 1, .. Str("abcdef"), .. Str("abcdef!")];
        (byte[] residual, _) = SplitJoin(coder, [1, .. inner, .. Str("abcdef!")]);
        Assert.Equal([1, PackedTag.Object, 1, .. Str("abcdef"), .. Str("abcdef!")], residual);
        // The same with an array at the source key: an array of strings is no string, whatever its items were.
        (residual, _) = SplitJoin(coder, [1, .. Arr(Str("abcdef")), .. Str("abcdef!")]);
        Assert.True(Holds(residual, Str("abcdef!")));
    }

    [Fact]
    public void Parse_AtTheLimits_Accepted()
    {
        // Exactly 65,536 values in all (64 fields of 1,024).
        FieldModel full = FieldModel.Parse(SixtyFourFullFields(extra: false), WideTable);
        Assert.Equal(64, full.FieldCount);
        Assert.Equal(1023, full.Find(63, Integers(63 * 1024 + 1023, 1)[0]));
        // A 96-byte value, a 48-bit range, a range ending exactly at long.MaxValue, frequencies of 1 and 4,095.
        FieldModel.Parse(new ModelBytes().Varint(1).Field(0, [[0x05, 94, .. new byte[94]]], [4095, 1]).Build(), SmallTable);
        FieldModel.Parse(new ModelBytes().Varint(1).Field(0, [], [.. Enumerable.Repeat(1, 49), 4096 - 49], rangeTag: 0x10 + 15, rangeMin: -5, rangeBits: 48).Build(), SmallTable);
        FieldModel.Parse(new ModelBytes().Varint(1).Field(0, [], [1, 1, 1, 4093], rangeTag: 0x07, rangeMin: long.MaxValue - 3, rangeBits: 2).Build(), SmallTable);
        // Every numeric tag a range may have.
        foreach (byte tag in (byte[])[0x06, 0x07, 0x0A, .. Enumerable.Range(0x10, 16).Select(i => (byte)i)])
            FieldModel.Parse(new ModelBytes().Varint(1).Field(2 << 1, [], [4000, 96], rangeTag: tag, rangeMin: long.MinValue, rangeBits: 0).Build(), SmallTable);

        // Templates: 64 in a field; 16 slots; a slot of 18 digits from 10^18 - 1 with 60 bits; a minimum of 10^width - 1;
        // a template describing exactly 256 bytes (a literal of 255 first or last); slot frequencies of 1 and 4,095.
        TemplateBytes[] templates =
        [
            .. Enumerable.Range(0, 60).Select(i => TemplateBytes.Of($"{(char)('a' + i % 26)}{(char)('a' + i / 26)}{{2}}")),
            TemplateBytes.Of(string.Concat(Enumerable.Repeat("-{1}", 16))),
            TemplateBytes.Of("n{18}").WithSlot(0, s => s with { Min = 999_999_999_999_999_999, Bits = 60, Frequencies = Spread(61) }),
            TemplateBytes.Of(new string('a', 255) + "{1}").WithSlot(0, s => s with { Min = 9, Bits = 1, Frequencies = [1, 4095] }),
            TemplateBytes.Of("{1}" + new string('a', 255)),
        ];
        byte[] bytes = TemplateField(templates).Build();
        FieldModel model = FieldModel.Parse(bytes, SmallTable);
        Assert.Equal(64, model[0].Templates.Length);
        Assert.Equal([.. Enumerable.Repeat(4, 60), 32, 19, 256, 256], model[0].Templates.Select(t => t.Length));
        Assert.Equal(bytes, FieldModel.Create(SmallTable, Definitions(model)).Serialize());
        Assert.Equal(61, model.FindTemplate(0, TemplateKey("n123456789012345678")));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // ShapeTransform.Parse on SMDL records: the table's length and a model that belongs to another table.

    private static byte[] Smdl(byte version, byte[] lengthVarint, byte[] table, byte[] model) => [.. "SMDL"u8, version, .. lengthVarint, .. table, .. model];

    private static byte[] VarintBytes(uint value)
    {
        byte[] bytes = new byte[5];
        return bytes[..Compression.Internal.Varint.Write(bytes, value)];
    }

    [Fact]
    public void ShapeTransformParse_SmdlWithALyingTableLengthOrAModelOfAnotherTable_Refused()
    {
        ShapeTransform trained = FieldDictionary("json").Shapes!;
        byte[] table = trained.Table.Serialize();
        byte[] model = trained.Fields!.Model.Serialize();
        Assert.Equal(trained.Serialize(), Smdl(1, VarintBytes((uint)table.Length), table, model));

        string Refused(byte[] bytes) => Assert.Throws<InvalidDataException>(() => ShapeTransform.Parse(bytes)).Message;

        Assert.Contains("Structure model format version 2 is not supported", Refused(Smdl(2, VarintBytes((uint)table.Length), table, model)));
        // The table length: truncated (a continuation bit and nothing after), not minimal, longer than the bytes.
        Assert.Contains("the shape table's length is truncated, not minimal, or longer than the bytes", Refused([.. "SMDL"u8, 1, 0x80]));
        Assert.Contains("the shape table's length is truncated, not minimal, or longer than the bytes", Refused(Smdl(1, [.. VarintBytes((uint)table.Length)[..^1], (byte)(VarintBytes((uint)table.Length)[^1] | 0x80), 0x00], table, model)));
        Assert.Contains("the shape table's length is truncated, not minimal, or longer than the bytes", Refused(Smdl(1, VarintBytes((uint)(table.Length + model.Length + 1)), table, model)));
        // A length one byte short or long: the table does not parse (its checksum, or its end) or the model does not start where it should.
        Assert.Contains("Shape table", Refused(Smdl(1, VarintBytes((uint)table.Length - 1), table, model)));
        Assert.Contains("Shape table", Refused(Smdl(1, VarintBytes((uint)table.Length + 1), table, model)));
        // No model after the table.
        Assert.Contains("Field model has 0 bytes", Refused(Smdl(1, VarintBytes((uint)table.Length), table, [])));
        // Over the stored limit.
        Assert.Contains($"the limit is {ShapeTransform.MaxStoredLength}", Refused([.. "SMDL"u8, 1, .. new byte[ShapeTransform.MaxStoredLength]]));

        // The model does not belong to the table: its fields name keys a smaller table does not have.
        int maxKey = Enumerable.Range(0, trained.Fields.Model.FieldCount).Max(f => trained.Fields.Model[f].Key);
        byte[] small = ShapeTable.Create(DocumentKind.Json, [[.. Enumerable.Range(0, maxKey).Select(i => Encoding.ASCII.GetBytes($"k{i}"))]]).Serialize();
        string message = Refused(Smdl(1, VarintBytes((uint)small.Length), small, model));
        Assert.Contains($"names key {maxKey}; the shape table has {maxKey} keys", message);
        output.WriteLine(message);
        // ... and the same model with a table that has the key parses (a model is checked against keys, not shapes).
        byte[] wider = ShapeTable.Create(DocumentKind.Json, [[.. Enumerable.Range(0, maxKey + 1).Select(i => Encoding.ASCII.GetBytes($"k{i}"))]]).Serialize();
        Assert.NotNull(ShapeTransform.Parse(Smdl(1, VarintBytes((uint)wider.Length), wider, model)).Fields);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Training and codec 8 envelopes through DocumentCompressor.

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Train_RecordsWithCategoricalFields_LearnsValueTablesAndRanges(string kind)
    {
        var stopwatch = Stopwatch.StartNew();
        FieldModel model = ModelOf(FieldDictionary(kind));
        output.WriteLine($"{kind} ({stopwatch.ElapsedMilliseconds} ms, or cached): {model.FieldCount} fields: {Describe(model)}");
        Assert.True(model.FieldCount >= 4, $"{model.FieldCount} fields");
        Assert.Contains(Enumerable.Range(0, model.FieldCount), f => model[f].ValueCount >= 9); // a categorical field's table (creative types, sources, distributors)
    }

    /// <summary>The templates of the records' dates (FieldDocuments): an update time, and release dates with days of two digits and of one.</summary>
    private static readonly string[] DatePatterns = ["{4}/{2}/{2} {2}:{2}", "Jun {2} {4}", "Jun {1} {4}"];

    /// <summary>
    /// Training learns the templates of the records' date strings ("2001/01/01 00:47", "Jun 12 1998" and "Jun 5 1998"),
    /// and the held-out dates are coded as template symbols: splitting with the model leaves them out of the residual,
    /// splitting with the same model without those fields' templates (their symbols dropped) escapes them into it.
    /// </summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public void Train_RecordsWithDateStrings_LearnsTemplates_AndTheHeldOutDatesAreCodedWithThem(string kind)
    {
        ZstdDictionary dictionary = FieldDictionary(kind);
        ShapeTransform shapes = dictionary.Shapes!;
        FieldModel model = ModelOf(dictionary);
        int[] dateFields = [.. Enumerable.Range(0, model.FieldCount).Where(f => model[f].Templates.Any(t => DatePatterns.Contains(Pattern(t))))];
        string[] patterns = [.. dateFields.SelectMany(f => model[f].Templates.Select(Pattern))];
        output.WriteLine($"{kind}: {dateFields.Length} date fields, {patterns.Length} templates: {string.Join(", ", patterns)}");
        Assert.True(dateFields.Length >= 2, $"{dateFields.Length} date fields"); // two a shape: with a director and without
        foreach (string pattern in DatePatterns) Assert.Contains(pattern, patterns);

        List<FieldModel.FieldDefinition> definitions = Definitions(model);
        List<FieldModel.FieldDefinition> without = [.. definitions.Select((d, f) => !dateFields.Contains(f) ? d
            : d with { Templates = [], Counts = [.. d.Counts.Take(d.Counts.Count - 1 - d.Templates.Count), d.Counts[^1]] })];
        var withTemplates = shapes.Fields!;
        var withoutTemplates = new FieldCoder(shapes.Table, FieldModel.Create(shapes.Table, without));
        var symbols = new RansEncoder();
        long dateBytes = 0, templatedBytes = 0;
        int documents = 0, allDatesTemplated = 0;
        foreach (byte[] document in Data(kind).HeldOut)
        {
            byte[] packed = new byte[document.Length];
            Assert.True(shapes.TryEncode(document, packed, out int packedLength));
            byte[] residual = new byte[packedLength];
            symbols.Reset();
            Assert.True(withTemplates.TrySplit(packed.AsSpan(0, packedLength), residual, out int residualWith, symbols));
            symbols.Reset();
            Assert.True(withoutTemplates.TrySplit(packed.AsSpan(0, packedLength), residual, out int residualWithout, symbols));
            // What the templates take out of the residual: the bytes of the dates they code (each a short string, tag and text).
            string text = Encoding.UTF8.GetString(document);
            int dates = Dates(text).Sum(d => 1 + d.Length);
            documents++;
            dateBytes += dates;
            templatedBytes += residualWithout - residualWith;
            if (residualWithout - residualWith == dates) allDatesTemplated++;
        }
        output.WriteLine($"{kind}: {documents} held-out documents, {dateBytes} bytes of dates, {templatedBytes} of them coded as templates; " +
            $"{allDatesTemplated} documents with both dates templated");
        Assert.True(templatedBytes >= dateBytes * 0.9, $"{templatedBytes} of {dateBytes} date bytes templated");
        Assert.True(allDatesTemplated >= documents * 0.8, $"{allDatesTemplated} of {documents} documents with both dates templated");
    }

    /// <summary>The two date strings of a record (JSON text, or BSON whose strings are plain text in its bytes).</summary>
    private static IEnumerable<string> Dates(string text) =>
        System.Text.RegularExpressions.Regex.Matches(text, @"\d{4}/\d{2}/\d{2} \d{2}:\d{2}|[A-Z][a-z]{2} \d{1,2} \d{4}").Select(m => m.Value);

    public static TheoryData<string, EnvelopeFormat> KindsAndFormats()
    {
        var data = new TheoryData<string, EnvelopeFormat>();
        foreach (string kind in (string[])["json", "bson", "bson-elements"])
        {
            data.Add(kind, EnvelopeFormat.V2);
            data.Add(kind, EnvelopeFormat.V3);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(KindsAndFormats))]
    public void Compress_DictionaryWithAFieldModel_WritesCodec8_EveryHeldOutDocumentReadsBackByteForByte(string kind, EnvelopeFormat format)
    {
        ZstdDictionary dictionary = FieldDictionary(kind);
        DocumentCompressor writer = Writer(format);
        List<byte[]> heldOut = Data(kind).HeldOut;
        int field = 0;
        foreach (byte[] document in heldOut)
        {
            byte[] envelope = writer.Compress(document, dictionary);
            EnvelopeHeader header = Header(envelope);
            if (Corpus.IsFieldCoded(header.Codec))
            {
                field++;
                Assert.Equal(dictionary.Id, header.DictionaryId);
                Assert.True(header.HasChecksum);
                Assert.Equal(format, header.Format);
            }
            Assert.Equal(document, Reader.Decompress(envelope, dictionary));
            byte[] span = new byte[document.Length];
            Assert.True(Reader.TryDecompress(envelope, span, out int written, dictionary));
            Assert.Equal(document.Length, written);
            Assert.Equal(document, span);
            var writer8 = new System.Buffers.ArrayBufferWriter<byte>();
            Reader.Decompress(envelope, writer8, dictionary);
            Assert.Equal(document, writer8.WrittenSpan.ToArray());
        }
        output.WriteLine($"{kind} {format}: {field} of {heldOut.Count} held-out documents written as codec 8");
        Assert.Equal(heldOut.Count, field); // every record of this data packs and splits
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void FieldEnvelopes_OnCategoricalRecords_AreSmallerThanPackedEnvelopesWithTheSameData(string kind)
    {
        ZstdDictionary fields = FieldDictionary(kind);
        ZstdDictionary packed = Trained(kind, fields: false).Dictionary;
        Assert.Null(packed.Shapes!.Fields);
        DocumentCompressor writer = Writer(EnvelopeFormat.V3);
        List<byte[]> heldOut = Data(kind).HeldOut;
        long raw = 0, packedBytes = 0, fieldBytes = 0;
        int as7 = 0, as8 = 0;
        foreach (byte[] document in heldOut)
        {
            byte[] seven = writer.Compress(document, packed);
            byte[] eight = writer.Compress(document, fields);
            if (Header(seven).Codec == CompressionCodec.PackedZstd) as7++;
            if (Corpus.IsFieldCoded(Header(eight).Codec)) as8++;
            Assert.Equal(document, Reader.Decompress(eight, fields));
            raw += document.Length;
            packedBytes += seven.Length;
            fieldBytes += eight.Length;
        }
        double n = heldOut.Count;
        output.WriteLine($"{kind}: {heldOut.Count} held-out documents, {raw / n:F1} B raw; codec 7 {packedBytes / n:F1} B a document ({as7} as 7), " +
            $"codec 8 {fieldBytes / n:F1} B ({as8} as 8): {(double)fieldBytes / packedBytes:P1} of codec 7; model {fields.Shapes!.Serialize().Length:N0} B with the table, " +
            $"dictionaries {packed.Content.Length:N0} / {fields.Content.Length:N0} B");
        // Measured: 63.7% (JSON), 61.8% (BSON and BSON elements).
        Assert.True(fieldBytes < packedBytes * 0.8, $"codec 8 {fieldBytes} B, codec 7 {packedBytes} B");
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Hostile models: the same shape table, tables that lie about what wrote the documents.

    public static TheoryData<string, string> Lies()
    {
        var data = new TheoryData<string, string>();
        foreach (string kind in (string[])["json", "bson", "bson-elements"])
        {
            foreach (string lie in (string[])["values permuted", "a value replaced", "frequencies altered", "range min shifted", "range tag changed", "field moved to another key", "field dropped",
                         "template literal changed", "template width changed", "template slot min shifted", "template slot frequencies altered", "templates permuted"])
                data.Add(kind, lie);
        }
        return data;
    }

    /// <summary>The model's definitions with <paramref name="lie"/> told (every field it applies to); null when none applies.</summary>
    private static List<FieldModel.FieldDefinition>? Lie(List<FieldModel.FieldDefinition> truth, ShapeTable table, string lie)
    {
        var lying = new List<FieldModel.FieldDefinition>();
        bool told = false;
        switch (lie)
        {
            case "field moved to another key":
            {
                // The field coding the most values moves to the first key no field has.
                var taken = truth.Select(d => (d.Key, d.Items)).ToHashSet();
                FieldModel.FieldDefinition moved = truth.OrderByDescending(d => d.Values.Count).First();
                int key = Enumerable.Range(0, table.TotalKeys).First(k => !taken.Contains((k, moved.Items)));
                lying = [.. truth.Select(d => d == moved ? d with { Key = key } : d)];
                lying.Sort((x, y) => (x.Key * 2 + (x.Items ? 1 : 0)).CompareTo(y.Key * 2 + (y.Items ? 1 : 0)));
                return lying;
            }
            case "field dropped":
                return [.. truth.Where(d => d != truth.OrderByDescending(d => d.Values.Count).First())];
        }
        foreach (FieldModel.FieldDefinition d in truth)
        {
            FieldModel.FieldDefinition changed = d;
            switch (lie)
            {
                case "values permuted" when d.Values.Count >= 2:
                    changed = d with { Values = [.. d.Values.Skip(1), d.Values[0]] };
                    break;
                case "a value replaced" when d.Values.Count >= 1:
                    // The most frequent value becomes another valid scalar of the same length the field does not hold:
                    // the document keeps its length, so only its bytes (and the checksum) can tell.
                    byte[] value = [.. d.Values[0]];
                    for (int attempt = 0; attempt < 256; attempt++)
                    {
                        value[^1] = (byte)(value[^1] + 1);
                        if (PackedTokens.ScalarLength(value) == value.Length && !d.Values.Any(v => v.AsSpan().SequenceEqual(value))) break;
                    }
                    changed = d with { Values = [value, .. d.Values.Skip(1)] };
                    break;
                case "frequencies altered" when d.Counts.Count >= 2:
                {
                    // Half the most frequent symbol's share goes to the next symbol: the same symbols, other slots.
                    long[] counts = [.. d.Counts];
                    int top = Array.IndexOf(counts, counts.Max());
                    long moved = counts[top] / 2;
                    counts[top] -= moved;
                    counts[(top + 1) % counts.Length] += moved;
                    changed = d with { Counts = counts };
                    break;
                }
                case "range min shifted" when d.RangeTag != 0:
                    changed = d with { RangeMin = d.RangeMin + 1 };
                    break;
                case "range tag changed" when d.RangeTag != 0:
                    changed = d with { RangeTag = d.RangeTag == PackedTag.Integer ? PackedTag.Int64 : PackedTag.Integer };
                    break;
                case "templates permuted" when d.Templates.Count >= 2:
                    // The templates move one place (their frequencies stay where they were).
                    changed = d with { Templates = [.. d.Templates.Skip(1), d.Templates[0]] };
                    break;
                case "template literal changed" or "template width changed" or "template slot min shifted" or "template slot frequencies altered" when d.Templates.Count >= 1:
                    for (int t = 0; t < d.Templates.Count && ReferenceEquals(changed, d); t++)
                    {
                        FieldModel.TemplateDefinition? template = LieAbout(d.Templates[t], lie);
                        // A lie that makes two templates the same is refused by the parser: that field is left as it is.
                        if (template is null || d.Templates.Where((_, u) => u != t).Any(o => FieldModel.Template.KeyOf(o.Literals, o.Widths).AsSpan()
                                .SequenceEqual(FieldModel.Template.KeyOf(template.Literals, template.Widths)))) continue;
                        changed = d with { Templates = [.. d.Templates.Select((o, u) => u == t ? template : o)] };
                    }
                    break;
            }
            told |= !ReferenceEquals(changed, d);
            lying.Add(changed);
        }
        return told ? lying : null;
    }

    /// <summary>
    /// <paramref name="template"/> with <paramref name="lie"/> told about it: a literal's last byte another letter (the
    /// same length), the first slot one digit wider (narrower at 18), its minimum one higher (lower at 10^width - 1),
    /// half its most frequent bit length's share given to the next; null when the lie does not apply.
    /// </summary>
    private static FieldModel.TemplateDefinition? LieAbout(FieldModel.TemplateDefinition template, string lie)
    {
        switch (lie)
        {
            case "template literal changed":
            {
                int l = Enumerable.Range(0, template.Literals.Count).FirstOrDefault(i => template.Literals[i].Length > 0, -1);
                if (l < 0) return null;
                byte[] literal = [.. template.Literals[l]];
                literal[^1] = literal[^1] == (byte)'Q' ? (byte)'R' : (byte)'Q';
                return template with { Literals = [.. template.Literals.Select((x, i) => i == l ? literal : x)] };
            }
            case "template width changed":
            {
                byte width = template.Widths[0];
                byte other = (byte)(width == FieldModel.MaxSlotWidth ? width - 1 : width + 1);
                if (template.Mins[0] >= FieldModel.Pow10[other]) return null;
                return template with { Widths = [other, .. template.Widths.Skip(1)] };
            }
            case "template slot min shifted":
            {
                long min = template.Mins[0];
                return template with { Mins = [min + 1 < FieldModel.Pow10[template.Widths[0]] ? min + 1 : min - 1, .. template.Mins.Skip(1)] };
            }
            case "template slot frequencies altered":
            {
                int s = Enumerable.Range(0, template.Counts.Count).FirstOrDefault(i => template.Counts[i].Count >= 2, -1);
                if (s < 0) return null;
                long[] counts = [.. template.Counts[s]];
                int top = Array.IndexOf(counts, counts.Max());
                long moved = counts[top] / 2;
                counts[top] -= moved;
                counts[(top + 1) % counts.Length] += moved;
                return template with { Counts = [.. template.Counts.Select((c, i) => i == s ? counts : c)] };
            }
            default:
                return null;
        }
    }

    [Theory]
    [MemberData(nameof(Lies))]
    public void Decompress_WithAModelWhoseTablesLie_ThrowsOrGivesTheDocument_NeverOtherBytes(string kind, string lie)
    {
        ZstdDictionary truthful = FieldDictionary(kind);
        ShapeTable table = truthful.Shapes!.Table;
        List<FieldModel.FieldDefinition> truth = Definitions(ModelOf(truthful));
        Assert.Equal(ModelOf(truthful).Serialize(), FieldModel.Create(table, truth).Serialize());
        List<FieldModel.FieldDefinition>? lying = Lie(truth, table, lie);
        Assert.True(lying is not null, $"the {kind} model has no field the lie '{lie}' applies to: {Describe(ModelOf(truthful))}");
        FieldModel liar = FieldModel.Create(table, lying);
        Assert.NotEqual(ModelOf(truthful).Serialize(), liar.Serialize());
        // The lying record parses: it is a valid model of the same table, published under the same id.
        ZstdDictionary lyingDictionary = ZstdDictionary.Create(truthful.Id, truthful.Content.Span, truthful.Content.Length, ShapeTransform.Parse(new ShapeTransform(table, liar).Serialize()));

        (List<byte[]> documents, List<byte[]> envelopes) = FieldEnvelopes(kind, truthful, 200);
        int rejected = 0, exact = 0, wrong = 0, codecRejected = 0, codecWrong = 0, codecExact = 0;
        for (int i = 0; i < documents.Count; i++)
        {
            byte[] result;
            try
            {
                result = Reader.Decompress(envelopes[i], lyingDictionary);
            }
            catch (InvalidDataException)
            {
                rejected++;
                result = [];
            }
            if (result.Length > 0)
            {
                if (result.AsSpan().SequenceEqual(documents[i])) exact++;
                else wrong++;
            }
            // What the codec alone (no checksum) makes of it: how many of the lies only the envelope checksum catches.
            EnvelopeHeader header = Header(envelopes[i]);
            byte[] back = new byte[documents[i].Length];
            try
            {
                // (Codec 9's payload holds the checksum, so its codec alone checks it too: its "other bytes" stay 0.)
                CodecRegistry.For(header.Codec).Decompress(envelopes[i].AsSpan(header.HeaderLength, header.PayloadLength), back, lyingDictionary);
                if (back.AsSpan().SequenceEqual(documents[i])) codecExact++;
                else codecWrong++;
            }
            catch (InvalidDataException)
            {
                codecRejected++;
            }
        }
        output.WriteLine($"{kind}, {lie}: {documents.Count} field-coded envelopes (codec {(int)Header(envelopes[0]).Codec}) read with the lying model: {rejected} refused, {exact} exact (the lie does not touch them), {wrong} wrong; " +
            $"the codec alone: {codecRejected} refused by its structure, {codecWrong} decoded to other bytes (the checksum's catch), {codecExact} exact");
        Assert.Equal(0, wrong);
        Assert.Equal(documents.Count, rejected + exact);
        Assert.Equal(codecExact, exact);
        Assert.True(rejected > 0, "the lie touched no document");
    }

    [Fact]
    public void Decompress_Codec8Envelope_WithTheDictionaryButNoFieldModel_OrNoShapeTable_IsRefusedNamingIt()
    {
        ZstdDictionary dictionary = FieldDictionary("json");
        (_, List<byte[]> envelopes) = FieldEnvelopes("json", dictionary, 1);
        ZstdDictionary tableOnly = ZstdDictionary.Create(dictionary.Id, dictionary.Content.Span, dictionary.Content.Length, new ShapeTransform(dictionary.Shapes!.Table));
        Assert.Contains($"field model of dictionary {dictionary.Id}, and that dictionary's record has none", Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelopes[0], tableOnly)).Message);
        ZstdDictionary plain = ZstdDictionary.Create(dictionary.Id, dictionary.Content.Span);
        Assert.Contains("has no shape table", Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelopes[0], plain)).Message);
        Assert.Throws<DictionaryNotFoundException>(() => Reader.Decompress(envelopes[0]));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Mutations: random mutants, every prefix and every single-bit flip of codec 8 envelopes.

    private enum Outcome { Rejected, Missing, Exact, Wrong }

    private static Outcome Read(byte[] mutant, byte[] original, ZstdDictionary dictionary)
    {
        byte[] result;
        try
        {
            result = Reader.Decompress(mutant, dictionary);
        }
        catch (InvalidDataException)
        {
            return Outcome.Rejected;
        }
        catch (DictionaryNotFoundException)
        {
            return Outcome.Missing;
        }
        return result.AsSpan().SequenceEqual(original) ? Outcome.Exact : Outcome.Wrong;
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Decompress_TenThousandMutantsOfFieldEnvelopes_OnlyDocumentedExceptions_NeverWrongBytes(string kind)
    {
        const int Mutants = 10_000;
        ZstdDictionary dictionary = FieldDictionary(kind);
        (List<byte[]> originals, List<byte[]> envelopes) = FieldEnvelopes(kind, dictionary, 60);
        var random = new Random(kind.Length * 1000 + 801);
        var counts = new int[4];
        var stopwatch = Stopwatch.StartNew();
        for (int n = 0; n < Mutants;)
        {
            int pick = random.Next(envelopes.Count);
            byte[] mutant = StructureMutationTests.Mutate(envelopes[pick], random);
            if (mutant.AsSpan().SequenceEqual(envelopes[pick])) continue;
            n++;
            counts[(int)Read(mutant, originals[pick], dictionary)]++;
        }
        output.WriteLine($"{kind} codec 8 envelopes (v2 and v3): {Mutants:N0} mutants in {stopwatch.ElapsedMilliseconds} ms: {counts[0]} InvalidDataException, " +
            $"{counts[1]} DictionaryNotFoundException (a changed id), {counts[2]} decoded to the original, {counts[3]} to other bytes");
        Assert.Equal(0, counts[(int)Outcome.Wrong]);
        Assert.Equal(Mutants, counts[0] + counts[1] + counts[2]);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Decompress_EveryPrefixAndEverySingleBitFlipOfTwentyFieldEnvelopes_ErrorOrTheExactDocument(string kind)
    {
        ZstdDictionary dictionary = FieldDictionary(kind);
        (List<byte[]> originals, List<byte[]> envelopes) = FieldEnvelopes(kind, dictionary, 20);
        int prefixes = 0, flips = 0;
        var prefixOutcomes = new int[4];
        var flipOutcomes = new int[4];
        for (int e = 0; e < envelopes.Count; e++)
        {
            byte[] envelope = envelopes[e];
            for (int length = 0; length < envelope.Length; length++)
            {
                prefixes++;
                prefixOutcomes[(int)Read(envelope[..length], originals[e], dictionary)]++;
            }
            for (int bit = 0; bit < envelope.Length * 8; bit++)
            {
                byte[] flipped = (byte[])envelope.Clone();
                flipped[bit / 8] ^= (byte)(1 << (bit % 8));
                flips++;
                flipOutcomes[(int)Read(flipped, originals[e], dictionary)]++;
            }
        }
        output.WriteLine($"{kind}: 20 envelopes ({envelopes.Sum(e => e.Length)} bytes): {prefixes} prefixes: {prefixOutcomes[0]} InvalidDataException, {prefixOutcomes[2]} exact, {prefixOutcomes[3]} wrong; " +
            $"{flips} bit flips: {flipOutcomes[0]} InvalidDataException, {flipOutcomes[1]} DictionaryNotFoundException, {flipOutcomes[2]} exact, {flipOutcomes[3]} wrong");
        Assert.Equal(prefixes, prefixOutcomes[(int)Outcome.Rejected]); // a prefix is never a whole envelope
        Assert.Equal(0, flipOutcomes[(int)Outcome.Wrong]);
        Assert.Equal(flips, flipOutcomes[0] + flipOutcomes[1] + flipOutcomes[2]);
    }

    /// <summary>
    /// What the checksum keeps for codec 8: payload mutants decoded by the codec alone (no checksum) show how many the
    /// residual block, the joiner, the rANS stream's end state and the unpacker refuse by themselves; the rest must
    /// meet v2's and v3's 16-bit checksum (each passes with probability 2^-16).
    /// </summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public void FieldPayloads_WithoutTheChecksum_StructureRejectsMostMutants(string kind)
    {
        const int Mutants = 20_000;
        ZstdDictionary dictionary = FieldDictionary(kind);
        (List<byte[]> originals, List<byte[]> envelopes) = FieldEnvelopes(kind, dictionary, 60);
        var random = new Random(kind.Length * 1000 + 802);
        int rejected = 0, harmless = 0, wrong = 0, pass16 = 0;
        for (int n = 0; n < Mutants;)
        {
            int pick = random.Next(envelopes.Count);
            EnvelopeHeader header = Header(envelopes[pick]);
            byte[] payload = envelopes[pick].AsSpan(header.HeaderLength, header.PayloadLength).ToArray();
            byte[] mutant = StructureMutationTests.Mutate(payload, random);
            if (mutant.AsSpan().SequenceEqual(payload) || mutant.Length == 0) continue;
            n++;
            byte[] result = new byte[originals[pick].Length];
            try
            {
                FieldZstdCodec.Instance.Decompress(mutant, result, dictionary);
            }
            catch (InvalidDataException)
            {
                rejected++;
                continue;
            }
            if (result.AsSpan().SequenceEqual(originals[pick]))
            {
                harmless++;
                continue;
            }
            wrong++;
            if ((ushort)XxHash32.HashToUInt32(result) == (ushort)XxHash32.HashToUInt32(originals[pick])) pass16++;
        }
        output.WriteLine($"{kind} codec 8 payloads, no checksum: {Mutants:N0} mutants, {rejected:N0} refused by the codec ({100.0 * rejected / Mutants:F1}%), {harmless} harmless, " +
            $"{wrong} decoded to other bytes ({100.0 * wrong / Mutants:F2}%); {pass16} of those pass a 16-bit checksum");
        Assert.Equal(Mutants, rejected + harmless + wrong);
        Assert.True(rejected > Mutants * 0.8, $"only {rejected} of {Mutants} refused by the codec's structure");
        Assert.True(pass16 <= 1 + wrong / 16384, $"{pass16} of {wrong} wrong outputs pass a 16-bit check");
    }
}
