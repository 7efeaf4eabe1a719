using System.Buffers.Binary;
using System.Globalization;
using System.Text;
using Compression.Codecs;
using Compression.Structure;

namespace Compression.Fuzz;

/// <summary>
/// The fuzz targets. Each takes arbitrary bytes and either returns (the input was handled as documented) or throws
/// <see cref="FuzzFailureException"/> or an undocumented exception, which the fuzzer records as a crash. Shared by the
/// AFL++ entry point (<c>Program</c>) and by the short in-process run in <c>dotnet test</c>
/// (<c>tests/Compression.Core.Tests/Fuzz/FuzzTargetTests.cs</c> compiles this file in).
/// </summary>
public sealed class FuzzTargets
{
    /// <summary>The largest document a fuzzed envelope may declare; the decoder must refuse larger ones before allocating.</summary>
    public const int MaxUncompressedLength = 1024 * 1024;

    /// <summary>
    /// Declared lengths up to this are decoded straight into a buffer of that length; above it, the decoder allocates
    /// only as the payload proves its output (DocumentCompressor's direct-decode limit, docs/reliability.md).
    /// </summary>
    public const int DirectDecodeLimit = 256 * 1024;

    /// <summary>Allocation allowed per input beyond the document (or, when rejected, beyond the direct-decode buffer): codec state, messages, exceptions.</summary>
    public const long AllocationSlack = 64 * 1024;

    private const int MaxRoundTripDocument = 64 * 1024;

    private static readonly CompressionCodec[] Codecs =
    [
        CompressionCodec.Stored, CompressionCodec.Zstd, CompressionCodec.Lz4, CompressionCodec.Snappy,
        CompressionCodec.Deflate, CompressionCodec.Brotli, CompressionCodec.Gzip,
    ];

    private static readonly Dictionary<CompressionCodec, int[]> Levels = new()
    {
        [CompressionCodec.Stored] = [0],
        [CompressionCodec.Zstd] = [1, 3, 9],
        [CompressionCodec.Lz4] = [0, 9],
        [CompressionCodec.Snappy] = [0],
        [CompressionCodec.Deflate] = [1, 6],
        [CompressionCodec.Brotli] = [1, 4],
        [CompressionCodec.Gzip] = [6],
        [CompressionCodec.PackedZstd] = [3],
    };

    private readonly ZstdDictionary _dictionary;
    private readonly DocumentCompressor _reader;
    private readonly DocumentCompressor _strictReader;
    private readonly Dictionary<(CompressionCodec Codec, int Level, bool Checksum, EnvelopeFormat Format), DocumentCompressor> _writers = [];

    private static readonly EnvelopeFormat[] Formats = Enum.GetValues<EnvelopeFormat>();
    private readonly ShapeTransform[] _transforms; // [0] JSON, [1] BSON
    private readonly StructureModel[] _models;

    /// <param name="dictionary">The dictionary envelopes may name; any other id must give <see cref="DictionaryNotFoundException"/>.</param>
    public FuzzTargets(ZstdDictionary dictionary)
    {
        ArgumentNullException.ThrowIfNull(dictionary);
        _transforms = [LearnShapes(DocumentKind.Json), LearnShapes(DocumentKind.Bson)];
        // The dictionary envelopes name carries the JSON shape table, so that v2 and v3 zstd envelopes with a checksum are packed
        // (codec 7) where the document allows, and fuzzed packed envelopes reach the unpacker.
        _dictionary = ZstdDictionary.Create(dictionary.Id, dictionary.Content.Span, dictionary.Content.Length, _transforms[0]);
        _reader = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = MaxUncompressedLength });
        _strictReader = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = MaxUncompressedLength, RequireChecksum = true });
        // Any dictionary serves to fuzz the frame path: the one envelopes use.
        _models = [new StructureModel(_transforms[0], dictionary), new StructureModel(_transforms[1], dictionary)];
        foreach (CompressionCodec codec in Codecs)
        {
            foreach (int level in Levels[codec])
            {
                foreach (bool checksum in (bool[])[true, false])
                {
                    foreach (EnvelopeFormat format in Formats)
                    {
                        _writers[(codec, level, checksum, format)] = new DocumentCompressor(new DocumentCompressorOptions
                        {
                            Codec = codec, Level = level, Checksum = checksum, MinimumSize = 0, MaxUncompressedLength = MaxUncompressedLength, Format = format,
                        });
                    }
                }
            }
        }
    }

    /// <summary>The target names, as the command line takes them.</summary>
    public static IReadOnlyList<string> Names { get; } = ["envelope", "roundtrip", "dictionary", "structure", "shapetable", "packing", "fields"];

    /// <summary>Runs the target <paramref name="name"/> on <paramref name="input"/>.</summary>
    public void Run(string name, ReadOnlySpan<byte> input)
    {
        switch (name)
        {
            case "envelope": Envelope(input); break;
            case "roundtrip": RoundTrip(input); break;
            case "dictionary": Dictionary(input); break;
            case "structure": Structure(input); break;
            case "shapetable": ShapeTableBytes(input); break;
            case "packing": Packing(input); break;
            case "fields": Fields(input); break;
            default: throw new ArgumentException($"Unknown fuzz target '{name}'; allowed: {string.Join(", ", Names)}.", nameof(name));
        }
    }

    /// <summary>
    /// Untrusted envelope (a value read from the database): decodes to a document, or throws
    /// <see cref="InvalidDataException"/> or <see cref="DictionaryNotFoundException"/>. Allocates no more than the decoded
    /// document plus <see cref="AllocationSlack"/>; a rejected envelope no more than its declared length, capped at
    /// <see cref="DirectDecodeLimit"/> whatever the header claims, plus the slack. A decoded document must survive a round
    /// trip through the same codec, and a reader that requires checksums must agree with the lenient one whenever the
    /// envelope has one.
    /// </summary>
    public void Envelope(ReadOnlySpan<byte> input)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        byte[]? document = Decode(_reader, input, out EnvelopeHeader header);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        long allowed = (document?.Length ?? Math.Min(header.UncompressedLength, DirectDecodeLimit)) + AllocationSlack;
        if (allocated > allowed)
        {
            // A codec may fill a buffer pool the first time it meets a size (Snappier rents an output-sized buffer
            // from ArrayPool.Shared, and large declared lengths are decoded into pooled buffers that grow with the
            // output): what must stay bounded is the steady state, so measure a second decode.
            before = GC.GetAllocatedBytesForCurrentThread();
            Decode(_reader, input, out _);
            allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            if (allocated > allowed)
                throw new FuzzFailureException($"Decoding allocated {allocated:N0} bytes (twice in a row); allowed {allowed:N0}.");
        }
        if (document is null) return;

        if (header.HasChecksum)
        {
            byte[]? strict = Decode(_strictReader, input, out _);
            if (strict is null || !strict.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException("A reader requiring checksums disagrees with the lenient reader on an envelope with a checksum.");
        }

        // A packed envelope is written by the zstd writer given a dictionary with a shape table (v2 or v3, checksum on).
        CompressionCodec writerCodec = header.Codec == CompressionCodec.PackedZstd ? CompressionCodec.Zstd : header.Codec;
        int level = Levels[writerCodec][0];
        byte[] again = _writers[(writerCodec, level, header.HasChecksum, header.Format)].Compress(document, header.DictionaryId is null ? null : _dictionary);
        byte[] back = _reader.Decompress(again, _dictionary);
        if (!back.AsSpan().SequenceEqual(document))
            throw new FuzzFailureException($"{header.Codec} did not round-trip a document of {document.Length} bytes.");
    }

    /// <summary>
    /// Arbitrary document: byte 0 picks the codec, level, checksum and dictionary, the rest is the document, written in
    /// every envelope format (v1, v2 and v3). Compression never throws, and decompression gives back exactly the document.
    /// </summary>
    public void RoundTrip(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty) return;
        byte selector = input[0];
        ReadOnlySpan<byte> document = input[1..];
        if (document.Length > MaxRoundTripDocument) document = document[..MaxRoundTripDocument];

        CompressionCodec codec = Codecs[selector % Codecs.Length];
        int[] levels = Levels[codec];
        int level = levels[(selector >> 3) % levels.Length];
        bool checksum = (selector & 0x40) != 0;
        ZstdDictionary? dictionary = codec == CompressionCodec.Zstd && (selector & 0x80) != 0 ? _dictionary : null;

        foreach (EnvelopeFormat format in Formats)
        {
            DocumentCompressor writer = _writers[(codec, level, checksum, format)];
            byte[] envelope = writer.Compress(document, dictionary);
            byte[] back = ReaderFor(checksum).Decompress(envelope, dictionary);
            if (!back.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException($"{codec} level {level} (checksum {checksum}, dictionary {dictionary is not null}, {format}) did not round-trip {document.Length} bytes.");
        }
    }

    /// <summary>
    /// Untrusted dictionary bytes (a dictionary record read from the database): <see cref="ZstdDictionary.Create"/> accepts
    /// them or throws <see cref="InvalidDataException"/>; an accepted dictionary compresses and decompresses documents
    /// correctly, and an envelope written with it is refused (not misread) by a reader holding another dictionary.
    /// </summary>
    public void Dictionary(ReadOnlySpan<byte> input)
    {
        ZstdDictionary candidate;
        try
        {
            candidate = ZstdDictionary.Create(7, input, 64 * 1024);
        }
        catch (InvalidDataException)
        {
            return;
        }

        DocumentCompressor writer = _writers[(CompressionCodec.Zstd, 3, true, EnvelopeFormat.V3)];
        foreach (byte[] document in SampleDocuments)
        {
            byte[] envelope = writer.Compress(document, candidate);
            byte[] back = _reader.Decompress(envelope, candidate);
            if (!back.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException($"An accepted dictionary of {input.Length} bytes did not round-trip a document of {document.Length} bytes.");
            if (_reader.ReadHeader(envelope).DictionaryId is not null)
            {
                try
                {
                    _reader.Decompress(envelope, _dictionary);
                    throw new FuzzFailureException("An envelope naming dictionary 7 was decoded with dictionary " + _dictionary.Id + ".");
                }
                catch (DictionaryNotFoundException)
                {
                }
            }
        }
    }

    /// <summary>
    /// Untrusted packed stream or structured frame (src/Compression.Core/Structure), as the envelope would hand them
    /// over: byte 0 bit 0 picks the JSON or BSON shape table, bit 1 a zstd frame of a packed stream instead of the packed
    /// stream itself; bytes 1-2 the document's declared length (little-endian); the rest is the payload. Decoding gives
    /// at most that many bytes or throws <see cref="InvalidDataException"/>; a decoded document that the transform packs
    /// again comes back identical (verify on write never fails).
    /// </summary>
    public void Structure(ReadOnlySpan<byte> input)
    {
        if (input.Length < 3) return;
        int kind = input[0] & 1;
        bool frame = (input[0] & 2) != 0;
        int declared = BinaryPrimitives.ReadUInt16LittleEndian(input[1..]);
        ReadOnlySpan<byte> payload = input[3..];
        byte[] document = new byte[declared];
        int length;
        try
        {
            if (frame)
            {
                _models[kind].Decompress(payload, document);
                length = declared;
            }
            else
            {
                length = _transforms[kind].Decode(payload, document);
            }
        }
        catch (InvalidDataException)
        {
            return;
        }
        if (length > declared) throw new FuzzFailureException($"Decoded {length} bytes into a destination of {declared}.");
        CheckPacking(kind, document.AsSpan(0, length));
    }

    /// <summary>
    /// Untrusted shape table bytes (a table stored beside a dictionary): byte 0 bit 0 set means "recompute the checksum"
    /// (so the fuzzer reaches the checks behind it), the rest is the table.
    /// <see cref="ShapeTable.Parse(ReadOnlySpan{byte}, int)"/> accepts it or throws <see cref="InvalidDataException"/>;
    /// an accepted table serializes back to exactly the same bytes (there is one encoding of a table), and packs
    /// documents without a verify failure.
    /// </summary>
    public void ShapeTableBytes(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty) return;
        byte[] bytes = input[1..].ToArray();
        if ((input[0] & 1) != 0 && bytes.Length >= 4)
            BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(bytes.Length - 4), System.IO.Hashing.XxHash32.HashToUInt32(bytes.AsSpan(0, bytes.Length - 4)));
        ShapeTable table;
        try
        {
            table = ShapeTable.Parse(bytes, 64 * 1024);
        }
        catch (InvalidDataException)
        {
            return;
        }
        if (!table.Serialize().AsSpan().SequenceEqual(bytes))
            throw new FuzzFailureException($"An accepted shape table of {bytes.Length} bytes does not serialize back to the same bytes.");
        var transform = new ShapeTransform(table);
        foreach (byte[] document in StructureDocuments(table.Kind == DocumentKind.Json ? 0 : 1))
        {
            byte[] buffer = new byte[document.Length];
            if (!transform.TryEncode(document, buffer, out int packed)) continue;
            byte[] back = new byte[document.Length];
            if (transform.Decode(buffer.AsSpan(0, packed), back) != document.Length || !back.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException("A document packed with an accepted shape table did not come back.");
        }
        if (transform.VerifyFailures != 0) throw new FuzzFailureException("Verify on write failed with an accepted shape table.");
    }

    /// <summary>
    /// Arbitrary document bytes: byte 0 bit 0 picks the JSON or BSON shape table, the rest is the document. Packing
    /// never throws and never fails its verification; a packed document decodes to exactly its bytes.
    /// </summary>
    public void Packing(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty) return;
        ReadOnlySpan<byte> document = input[1..];
        if (document.Length > MaxRoundTripDocument) document = document[..MaxRoundTripDocument];
        CheckPacking(input[0] & 1, document);
    }

    private void CheckPacking(int kind, ReadOnlySpan<byte> document)
    {
        ShapeTransform transform = _transforms[kind];
        long failures = transform.VerifyFailures;
        byte[] packed = new byte[document.Length];
        bool applies = transform.TryEncode(document, packed, out int written);
        if (transform.VerifyFailures != failures)
            throw new FuzzFailureException($"Verify on write refused a {(kind == 0 ? "JSON" : "BSON")} document of {document.Length} bytes: the packer and unpacker disagree.");
        if (!applies) return;
        byte[] back = new byte[document.Length];
        if (transform.Decode(packed.AsSpan(0, written), back) != document.Length || !back.AsSpan().SequenceEqual(document))
            throw new FuzzFailureException("A packed document did not decode to its bytes.");
    }

    /// <summary>
    /// Untrusted field models (codec 8, docs/field-model.md) and untrusted codec 8 payloads, in one input:
    /// <list type="bullet">
    /// <item>byte 0, flags: bit 0 recomputes the model's XxHash32 (so the fuzzer reaches the checks behind it); bit 1
    /// makes the model section a whole "SMDL" record (shape table and model, <see cref="ShapeTransform.Parse"/>) instead
    /// of "FLDM" bytes read for the fixed trained shape table (<see cref="FieldModel.Parse"/>); bit 2 decodes the payload
    /// with the model just read, when it was accepted, instead of the fixed trained one;</item>
    /// <item>bytes 1-2: the model section's length n (little-endian), then n bytes of model section;</item>
    /// <item>then 2 bytes: the document's declared length (little-endian), and the rest: a codec 8 payload.</item>
    /// </list>
    /// Parsing the model throws <see cref="InvalidDataException"/> or accepts it; an accepted model is canonical (its
    /// fields serialize back to exactly its bytes), splits and joins every packable document back to its packed stream,
    /// and writes codec 8 envelopes that read back byte for byte. Decoding the payload throws
    /// <see cref="InvalidDataException"/> or gives a document: the same one when decoded again, and one that codec 8 (and an
    /// envelope) with the same dictionary writes and reads back byte for byte.
    /// </summary>
    public void Fields(ReadOnlySpan<byte> input)
    {
        if (input.Length < 3) return;
        FieldFixture fixture = _fieldFixture.Value;
        byte flags = input[0];
        int modelLength = Math.Min(BinaryPrimitives.ReadUInt16LittleEndian(input[1..]), input.Length - 3);
        byte[] section = input.Slice(3, modelLength).ToArray();
        ReadOnlySpan<byte> rest = input[(3 + modelLength)..];

        ZstdDictionary? hostile = ParseFieldModel(fixture, section, recomputeChecksum: (flags & 1) != 0, record: (flags & 2) != 0);

        if (rest.Length < 2) return;
        int declared = BinaryPrimitives.ReadUInt16LittleEndian(rest);
        ZstdDictionary dictionary = (flags & 4) != 0 && hostile is not null ? hostile : fixture.Dictionary;
        // Bit 3: the payload is codec 9's (the checksum in the stream's state), else codec 8's.
        FieldZstdCodec codec = (flags & 8) != 0 ? FieldZstdCodec.FoldedChecksum : FieldZstdCodec.Instance;
        byte[] document = new byte[declared];
        try
        {
            codec.Decompress(rest[2..], document, dictionary);
        }
        catch (InvalidDataException)
        {
            return;
        }
        FieldPayloadsDecoded++;
        byte[] again = new byte[declared];
        codec.Decompress(rest[2..], again, dictionary);
        if (!again.AsSpan().SequenceEqual(document))
            throw new FuzzFailureException($"A codec {(int)codec.Id} payload decoded twice gave two different documents.");
        CheckFieldRoundTrip(dictionary, document, "a decoded payload");
    }

    /// <summary>The <c>fields</c> target's fixed trained dictionary (shape table and field model) and the documents its payload seeds are written from.</summary>
    internal (ZstdDictionary Dictionary, IReadOnlyList<byte[]> Documents) FieldFixtureForTests => (_fieldFixture.Value.Dictionary, _fieldFixture.Value.Documents);

    /// <summary>How many <c>fields</c> inputs had their model accepted, and their payload decoded (the seeds must reach both).</summary>
    public int FieldModelsAccepted { get; private set; }

    /// <inheritdoc cref="FieldModelsAccepted"/>
    public int FieldPayloadsDecoded { get; private set; }

    /// <summary>The model section of a <c>fields</c> input: null when refused; else the fixed dictionary's content with the table and model read (checked as <see cref="Fields"/> says).</summary>
    private ZstdDictionary? ParseFieldModel(FieldFixture fixture, byte[] section, bool recomputeChecksum, bool record)
    {
        // The FLDM bytes: the whole section, or what follows the table in an SMDL record.
        int modelStart = 0;
        if (record)
        {
            modelStart = -1;
            if (section.Length > 5 && section.AsSpan().StartsWith(ShapeTransform.ModelMagic)
                && Internal.Varint.TryRead(section.AsSpan(5), out uint tableLength, out int read) && tableLength <= (uint)(section.Length - 5 - read))
                modelStart = 5 + read + (int)tableLength;
        }
        if (recomputeChecksum && modelStart >= 0 && section.Length - modelStart >= 4)
            BinaryPrimitives.WriteUInt32LittleEndian(section.AsSpan(section.Length - 4), System.IO.Hashing.XxHash32.HashToUInt32(section.AsSpan(modelStart, section.Length - modelStart - 4)));

        ShapeTransform transform;
        try
        {
            transform = record ? ShapeTransform.Parse(section) : new ShapeTransform(fixture.Table, FieldModel.Parse(section, fixture.Table));
        }
        catch (InvalidDataException)
        {
            return null;
        }
        FieldModelsAccepted++;
        if (record && !transform.Serialize().AsSpan().SequenceEqual(section))
            throw new FuzzFailureException($"An accepted structure record of {section.Length} bytes does not serialize back to the same bytes.");
        if (transform.Fields is not { } fields) return null; // a shape table alone: the shapetable target's
        FieldModel model = fields.Model;
        byte[] canonical = FieldModel.Create(transform.Table, FieldDefinitions(model)).Serialize();
        if (!canonical.AsSpan().SequenceEqual(section.AsSpan(modelStart)))
            throw new FuzzFailureException($"An accepted field model of {section.Length - modelStart} bytes is not canonical: its fields serialize to {canonical.Length} other bytes.");

        // Splitting and joining agree on every document the table packs, whatever the model holds.
        var symbols = new RansEncoder();
        foreach (byte[] document in fixture.Documents)
        {
            byte[] packed = new byte[document.Length];
            if (!transform.TryEncode(document, packed, out int packedLength)) continue;
            byte[] residual = new byte[packedLength];
            symbols.Reset();
            if (!fields.TrySplit(packed.AsSpan(0, packedLength), residual, out int residualLength, symbols))
                throw new FuzzFailureException("An accepted field model could not split a packed stream of its own table.");
            byte[] joined = new byte[packedLength];
            int length = fields.Join(residual.AsSpan(0, residualLength), symbols.Encode(), joined);
            if (length != packedLength || !joined.AsSpan().SequenceEqual(packed.AsSpan(0, packedLength)))
                throw new FuzzFailureException("An accepted field model split a packed stream that did not join back to the same bytes.");
        }
        var dictionary = ZstdDictionary.Create(fixture.Dictionary.Id, fixture.Dictionary.Content.Span, fixture.Dictionary.Content.Length, transform);
        foreach (byte[] document in fixture.Documents) CheckFieldRoundTrip(dictionary, document, "an accepted model");
        return dictionary;
    }

    /// <summary>Codec 8 with <paramref name="dictionary"/>, when it applies, and a v2 envelope give back <paramref name="document"/>; the transform's verify never fails.</summary>
    private void CheckFieldRoundTrip(ZstdDictionary dictionary, byte[] document, string what)
    {
        ShapeTransform shapes = dictionary.Shapes!;
        long failures = shapes.VerifyFailures;
        byte[] payload = new byte[document.Length + 64];
        if (FieldZstdCodec.Instance.TryCompress(document, payload, 3, dictionary, out int written))
        {
            byte[] back = new byte[document.Length];
            FieldZstdCodec.Instance.Decompress(payload.AsSpan(0, written), back, dictionary);
            if (!back.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException($"Codec 8 did not round-trip a document of {document.Length} bytes ({what}).");
        }
        foreach (EnvelopeFormat format in (EnvelopeFormat[])[EnvelopeFormat.V2, EnvelopeFormat.V3]) // codec 8, and codec 9 in v3
        {
            byte[] envelope = _writers[(CompressionCodec.Zstd, 3, true, format)].Compress(document, dictionary);
            if (!_strictReader.Decompress(envelope, dictionary).AsSpan().SequenceEqual(document))
                throw new FuzzFailureException($"A {format} envelope with a field model did not round-trip a document of {document.Length} bytes ({what}).");
        }
        if (shapes.VerifyFailures != failures)
            throw new FuzzFailureException($"Verify on write failed packing a document of {document.Length} bytes ({what}).");
    }

    /// <summary>
    /// The fields of <paramref name="model"/> as training defines them: values, source and relative flag (model version
    /// 2), range, templates (literals, widths, and per slot its minimum, bits and frequencies) and every symbol's frequency as its count (normalizing counts that
    /// already add up to 4,096 changes nothing), so serializing them gives the model's bytes again. Shared with the
    /// tests (FieldModelTests), which build lying models by changing these definitions.
    /// </summary>
    internal static List<FieldModel.FieldDefinition> FieldDefinitions(FieldModel model)
    {
        var definitions = new List<FieldModel.FieldDefinition>(model.FieldCount);
        for (int f = 0; f < model.FieldCount; f++)
        {
            FieldModel.Field field = model[f];
            byte[][] values = [.. Enumerable.Range(0, field.ValueCount).Select(i => model.Value(field.FirstValue + i).ToArray())];
            long[] counts = [.. Enumerable.Range(0, field.SymbolCount).Select(s => (long)field.Frequency(s))];
            // A copy slot (width 0) has no minimum, bits or frequencies: a count of 1 stands for them (not serialized).
            FieldModel.TemplateDefinition[] templates = [.. field.Templates.Select(t => new FieldModel.TemplateDefinition(
                [.. t.Literals.Select(l => l.ToArray())], [.. t.Widths], [.. t.Mins], [.. t.Bits],
                [.. t.Cumulative.Select(c => c is null ? [1L] : (IReadOnlyList<long>)[.. Enumerable.Range(0, c.Length - 1).Select(s => (long)(c[s + 1] - c[s]))])]))];
            definitions.Add(new FieldModel.FieldDefinition(field.Key, field.Items, values, field.RangeTag, field.RangeMin, field.RangeBits, counts)
            {
                Templates = templates, Source = field.SourceKey, RangeRelative = field.RangeRelative,
                CopyDelimiter = field.CopyDelimiter, CopySkip = field.CopySkip,
            });
        }
        return definitions;
    }

    /// <summary>The fixed trained shape table, field model and dictionary of the <c>fields</c> target, and documents of their kind.</summary>
    private sealed record FieldFixture(ShapeTable Table, ZstdDictionary Dictionary, byte[] Model, byte[] Record, List<byte[]> Documents);

    private readonly Lazy<FieldFixture> _fieldFixture = new(CreateFieldFixture);

    /// <summary>Trains on 400 generated event records (categorical fields, narrow numbers, arrays of tags); deterministic.</summary>
    private static FieldFixture CreateFieldFixture()
    {
        List<byte[]> training = FieldRecords(400, seed: 1);
        StructureModel model = StructureTrainer.TryTrain(training, 4 * 1024, 4343, DocumentKind.Json, fieldModel: true)
            ?? throw new InvalidOperationException("The fields target's training found no model.");
        ShapeTransform shapes = model.Dictionary.Shapes!;
        FieldCoder fields = shapes.Fields ?? throw new InvalidOperationException("The fields target's training found no field model.");
        return new FieldFixture(shapes.Table, model.Dictionary, fields.Model.Serialize(), shapes.Serialize(), FieldRecords(8, seed: 2));
    }

    /// <summary>
    /// Compact JSON event records with fields a model codes: a type, a status, a network (tables), a magnitude and depth
    /// (decimals), a time (a range), a title holding the place (a template copying it: model version 2), an update time
    /// and a day (strings of templates: "2023/11/14 08:05" and "Nov 14 2023" or "Nov 5 2023"), an indexing time a few
    /// seconds after the time (a relative range: model version 2), an event page URL and a detail URL holding its last
    /// segment and a code holding that less the network (copies of a part: model version 3), tags (array items).
    /// </summary>
    private static List<byte[]> FieldRecords(int count, int seed)
    {
        string[] types = ["earthquake", "quarry blast", "explosion", "ice quake"];
        string[] statuses = ["reviewed", "automatic", "deleted"];
        string[] networks = ["ci", "us", "nc", "ak", "hv", "nn", "uw", "pr"];
        string[] tags = ["felt", "tsunami", "aftershock", "swarm", "volcanic"];
        string[] months = ["Nov", "Oct", "Dec", "Sep"];
        var random = new Random(seed);
        int Skewed(int n) => (int)(n * Math.Pow(random.NextDouble(), 2.5));
        var documents = new List<byte[]>(count);
        for (int i = 0; i < count; i++)
        {
            var s = new StringBuilder("{");
            s.Append("\"type\":\"").Append(types[Skewed(types.Length)]).Append("\",");
            s.Append("\"status\":\"").Append(statuses[Skewed(statuses.Length)]).Append("\",");
            s.Append("\"net\":\"").Append(networks[Skewed(networks.Length)]).Append("\",");
            s.Append("\"mag\":").Append((Skewed(60) / 10.0).ToString("0.0", CultureInfo.InvariantCulture)).Append(',');
            s.Append("\"depth\":").Append((random.Next(0, 3000) / 100.0).ToString("0.00", CultureInfo.InvariantCulture)).Append(',');
            long time = 1_700_000_000_000L + random.Next(0, 50_000_000);
            s.Append("\"time\":").Append(time).Append(',');
            int km = random.Next(1, 90), station = random.Next(200);
            s.Append("\"place\":\"").Append(km).Append("km N of Station ").Append(station).Append("\",");
            // Model version 2: the title copies the place (a copy slot after the magnitude's digit slots), and the
            // indexing time follows the time (a relative range).
            s.Append("\"title\":\"M ").Append((Skewed(60) / 10.0).ToString("0.0", CultureInfo.InvariantCulture)).Append(" - ").Append(km).Append("km N of Station ").Append(station).Append("\",");
            s.Append("\"updated\":\"2023/").Append(random.Next(1, 13).ToString("D2", CultureInfo.InvariantCulture)).Append('/').Append(random.Next(1, 29).ToString("D2", CultureInfo.InvariantCulture))
                .Append(' ').Append(random.Next(24).ToString("D2", CultureInfo.InvariantCulture)).Append(':').Append(random.Next(60).ToString("D2", CultureInfo.InvariantCulture)).Append("\",");
            s.Append("\"day\":\"").Append(months[Skewed(months.Length)]).Append(' ').Append(random.Next(1, 29)).Append(" 2023\",");
            s.Append("\"indexed\":").Append(time + random.Next(500, 5_000)).Append(',');
            // Model version 3: the detail URL and the code copy parts of the event page's URL (after its last '/', less
            // the network's two letters for the code).
            string net = networks[Skewed(networks.Length)], id = random.Next(10_000_000, 99_999_999).ToString(CultureInfo.InvariantCulture);
            s.Append("\"url\":\"https://quakes.example/event/").Append(net).Append(id).Append("\",");
            s.Append("\"detail\":\"https://quakes.example/feed/v1/detail/").Append(net).Append(id).Append(".geojson\",");
            s.Append("\"code\":\"").Append(id).Append("\",");
            s.Append("\"tags\":[").Append(string.Join(",", Enumerable.Range(0, Skewed(4)).Select(_ => $"\"{tags[Skewed(tags.Length)]}\""))).Append(']');
            s.Append('}');
            documents.Add(Encoding.UTF8.GetBytes(s.ToString()));
        }
        return documents;
    }

    /// <summary>Seeds of the <c>fields</c> target: model sections alone, payloads alone (for the fixed model), and both, under each flag.</summary>
    private IEnumerable<byte[]> FieldSeeds()
    {
        FieldFixture fixture = _fieldFixture.Value;
        static byte[] Input(byte flags, ReadOnlySpan<byte> model, int declared, ReadOnlySpan<byte> payload)
        {
            byte[] input = new byte[3 + model.Length + (declared < 0 ? 0 : 2 + payload.Length)];
            input[0] = flags;
            BinaryPrimitives.WriteUInt16LittleEndian(input.AsSpan(1), (ushort)model.Length);
            model.CopyTo(input.AsSpan(3));
            if (declared >= 0)
            {
                BinaryPrimitives.WriteUInt16LittleEndian(input.AsSpan(3 + model.Length), (ushort)declared);
                payload.CopyTo(input.AsSpan(5 + model.Length));
            }
            return input;
        }
        // The model alone: FLDM for the fixed table, and the whole SMDL record; checksum kept and recomputed.
        foreach (byte flags in (byte[])[0, 1]) yield return Input(flags, fixture.Model, -1, []);
        foreach (byte flags in (byte[])[2, 3]) yield return Input(flags, fixture.Record, -1, []);
        // Payloads for the fixed model: every document written as codec 8.
        byte[] buffer = new byte[64 * 1024];
        var payloads = new List<(int Declared, byte[] Payload)>();
        foreach (byte[] document in fixture.Documents)
        {
            if (FieldZstdCodec.Instance.TryCompress(document, buffer, 3, fixture.Dictionary, out int written))
                payloads.Add((document.Length, buffer[..written]));
        }
        foreach ((int declared, byte[] payload) in payloads) yield return Input(0, [], declared, payload);
        // And as codec 9 (flag 8): the checksum folded into the stream.
        foreach (byte[] document in fixture.Documents.Take(8))
        {
            if (FieldZstdCodec.FoldedChecksum.TryCompress(document, buffer, 3, fixture.Dictionary, out int written))
                yield return Input(8, [], document.Length, buffer[..written]);
        }
        // Both: a payload decoded with the model read from the same input.
        yield return Input(4, fixture.Model, payloads[0].Declared, payloads[0].Payload);
        yield return Input(5, fixture.Model, payloads[1].Declared, payloads[1].Payload);
        yield return Input(7, fixture.Record, payloads[2].Declared, payloads[2].Payload);
    }

    private static ShapeTransform LearnShapes(DocumentKind kind)
    {
        var builder = new ShapeTableBuilder(kind);
        foreach (byte[] document in StructureDocuments(kind == DocumentKind.Json ? 0 : 1)) builder.Add(document);
        return new ShapeTransform(builder.Build());
    }

    /// <summary>Documents for the structure targets: [0] compact JSON, [1] BSON (every type).</summary>
    private static List<byte[]> StructureDocuments(int kind) => kind == 0 ? s_jsonDocuments : s_bsonDocuments;

    private static readonly List<byte[]> s_jsonDocuments =
    [
        "{\"a\":1}"u8.ToArray(),
        "{\"title\":\"The Night of the Hunter\",\"year\":1955,\"genres\":[\"Crime\",\"Drama\",\"Thriller\"],\"cast\":[\"Robert Mitchum\",\"Shelley Winters\"]}"u8.ToArray(),
        "{\"title\":\"The Night of the Hunter\",\"year\":1955,\"rating\":{\"imdb\":8.0,\"votes\":93912}}"u8.ToArray(),
        "{\"title\":\"Caf\u00e9 \\\"Noir\\\"\",\"year\":-0,\"rating\":{\"imdb\":1e5,\"votes\":0.000}}"u8.ToArray(),
        "{\"a\":[1,2.50,-3,\"x\",null,true,false,{},[]],\"b\":{\"c\":{\"d\":\"\\u00e9\\n\"}}}"u8.ToArray(),
        Encoding.UTF8.GetBytes("{\"emoji\":\"\ud83d\ude00\",\"long\":\"" + new string('x', 300) + "\",\"n\":123456789012345678901}"),
    ];

    private static readonly List<byte[]> s_bsonDocuments = [BsonSample(1), BsonSample(2), BsonSample(3)];

    /// <summary>A BSON document with every BSON type (written by hand: the fuzz project has no BSON library).</summary>
    private static byte[] BsonSample(int seed)
    {
        var random = new Random(seed);
        var body = new List<byte>();
        void Element(byte type, string name, ReadOnlySpan<byte> value)
        {
            body.Add(type);
            body.AddRange(Encoding.UTF8.GetBytes(name));
            body.Add(0);
            body.AddRange(value.ToArray());
        }
        byte[] Int32(int v) { byte[] b = new byte[4]; BinaryPrimitives.WriteInt32LittleEndian(b, v); return b; }
        byte[] Int64(long v) { byte[] b = new byte[8]; BinaryPrimitives.WriteInt64LittleEndian(b, v); return b; }
        byte[] Str(string v) { byte[] u = Encoding.UTF8.GetBytes(v); return [.. Int32(u.Length + 1), .. u, 0]; }
        byte[] Doc(byte[] elements) => [.. Int32(elements.Length + 5), .. elements, 0];
        byte[] Bytes(int n) { byte[] b = new byte[n]; random.NextBytes(b); return b; }
        byte[] inner = Doc([0x10, (byte)'x', 0, .. Int32(random.Next()), 0x01, (byte)'y', 0, .. BitConverter.GetBytes(random.Next(100) / 4.0)]);
        Element(0x01, "double", BitConverter.GetBytes(1.5 * seed));
        Element(0x01, "nan", BitConverter.GetBytes(double.NaN));
        Element(0x02, "string", Str("caf\u00e9 " + seed));
        Element(0x03, "document", inner);
        Element(0x04, "array", Doc([0x10, (byte)'0', 0, .. Int32(7), 0x02, (byte)'1', 0, .. Str("two"), 0x03, (byte)'2', 0, .. inner]));
        Element(0x05, "binary", [.. Int32(5), 4, .. Bytes(5)]);
        Element(0x06, "undefined", []);
        Element(0x07, "objectId", Bytes(12));
        Element(0x08, "bool", [1]);
        Element(0x09, "datetime", Int64(1_700_000_000_000 + seed));
        Element(0x0A, "null", []);
        Element(0x0B, "regex", "^a.*$\0i\0"u8);
        Element(0x0C, "dbpointer", [.. Str("db.c"), .. Bytes(12)]);
        Element(0x0D, "code", Str("return 1;"));
        Element(0x0E, "symbol", Str("s"));
        byte[] code = Str("x");
        Element(0x0F, "codeWithScope", [.. Int32(4 + code.Length + inner.Length), .. code, .. inner]);
        Element(0x10, "int32", Int32(-seed));
        Element(0x11, "timestamp", Int64(seed));
        Element(0x12, "int64", Int64(long.MinValue + seed));
        Element(0x13, "decimal128", Bytes(16));
        Element(0xFF, "minKey", []);
        Element(0x7F, "maxKey", []);
        return Doc([.. body]);
    }

    /// <summary>Starting inputs for <paramref name="name"/>: valid envelopes of every codec and setting, documents, the dictionary.</summary>
    public IEnumerable<byte[]> Seeds(string name)
    {
        switch (name)
        {
            case "envelope":
                foreach (((CompressionCodec codec, int level, bool checksum, EnvelopeFormat _), DocumentCompressor writer) in _writers)
                {
                    if (level != Levels[codec][0]) continue;
                    foreach (byte[] document in SampleDocuments)
                    {
                        yield return writer.Compress(document);
                        if (codec == CompressionCodec.Zstd) yield return writer.Compress(document, _dictionary);
                    }
                }
                // Packed envelopes (codec 7): the JSON documents the dictionary's shape table was learned from.
                foreach (byte[] document in StructureDocuments(0))
                    yield return _writers[(CompressionCodec.Zstd, 3, true, EnvelopeFormat.V3)].Compress(document, _dictionary);
                break;
            case "roundtrip":
                byte selector = 0;
                foreach (byte[] document in SampleDocuments)
                {
                    for (int i = 0; i < 4; i++, selector += 37)
                        yield return [selector, .. document];
                }
                break;
            case "dictionary":
                yield return _dictionary.Content.ToArray();
                break;
            case "structure":
                for (int kind = 0; kind < 2; kind++)
                {
                    foreach (byte[] document in StructureDocuments(kind))
                    {
                        byte[] buffer = new byte[document.Length + 256];
                        byte[] length = new byte[3];
                        BinaryPrimitives.WriteUInt16LittleEndian(length.AsSpan(1), (ushort)document.Length);
                        if (_transforms[kind].TryEncode(document, buffer, out int packed))
                            yield return [(byte)kind, .. length.AsSpan(1), .. buffer.AsSpan(0, packed)];
                        if (_models[kind].TryCompress(document, buffer, 3, out int frame))
                            yield return [(byte)(kind | 2), .. length.AsSpan(1), .. buffer.AsSpan(0, frame)];
                    }
                }
                break;
            case "shapetable":
                foreach (byte mode in (byte[])[0, 1])
                {
                    yield return [mode, .. _transforms[0].Table.Serialize()];
                    yield return [mode, .. _transforms[1].Table.Serialize()];
                }
                break;
            case "packing":
                for (int kind = 0; kind < 2; kind++)
                {
                    foreach (byte[] document in StructureDocuments(kind))
                        yield return [(byte)kind, .. document];
                }
                break;
            case "fields":
                foreach (byte[] seed in FieldSeeds()) yield return seed;
                break;
            default:
                throw new ArgumentException($"Unknown fuzz target '{name}'; allowed: {string.Join(", ", Names)}.", nameof(name));
        }
    }

    /// <summary>A few small documents shaped like the JSON the library stores, plus a binary and an empty one.</summary>
    public static IReadOnlyList<byte[]> SampleDocuments { get; } = CreateSampleDocuments();

    private DocumentCompressor ReaderFor(bool checksum) => checksum ? _strictReader : _reader;

    private byte[]? Decode(DocumentCompressor reader, ReadOnlySpan<byte> input, out EnvelopeHeader header)
    {
        header = default;
        try
        {
            header = reader.ReadHeader(input);
            return reader.Decompress(input, _dictionary);
        }
        catch (InvalidDataException)
        {
            return null;
        }
        catch (DictionaryNotFoundException)
        {
            return null;
        }
    }

    private static byte[][] CreateSampleDocuments()
    {
        var movie = new StringBuilder();
        movie.Append("{\"title\":\"The Night of the Hunter\",\"year\":1955,\"genres\":[\"Crime\",\"Drama\",\"Thriller\"],");
        movie.Append("\"cast\":[\"Robert Mitchum\",\"Shelley Winters\",\"Lillian Gish\"],\"rating\":{\"imdb\":8.0,\"votes\":93912}}");
        var events = new StringBuilder("[");
        for (int i = 0; i < 40; i++)
            events.Append("{\"id\":").Append(i).Append(",\"type\":\"quake\",\"mag\":").Append(1.5 + (i % 7) * 0.3).Append(",\"place\":\"").Append(i * 7 % 13).Append(" km N of Nowhere\"},");
        events[^1] = ']';
        byte[] binary = new byte[300];
        new Random(42).NextBytes(binary);
        return
        [
            Encoding.UTF8.GetBytes(movie.ToString()),
            Encoding.UTF8.GetBytes(events.ToString()),
            Encoding.UTF8.GetBytes("{\"a\":1}"),
            binary,
            [],
        ];
    }
}

/// <summary>A fuzz target found input that the library mishandled: the fuzzer records it as a crash.</summary>
public sealed class FuzzFailureException(string message) : Exception(message);
