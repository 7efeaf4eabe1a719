using System.Buffers;
using System.Buffers.Binary;
using System.IO.Compression;
using System.IO.Hashing;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>The test vectors of docs/format.md (machine-readable in Vectors/vectors.json), checked byte for byte.</summary>
public sealed class FormatVectorTests
{
    /// <summary>
    /// One vector. Codec 7 (packed zstd) and codec 8 (field zstd) vectors also name their shape table file
    /// (<paramref name="Shapes"/>, in Vectors/) and give the packed stream (<paramref name="Packed"/>, hex): codec 7's block
    /// decodes to it, codec 8's residual and symbols join into it. Codec 8 vectors also name their structure model file
    /// (<paramref name="Fields"/>: "SMDL", the shape table and the field model, as a dictionary record stores them) and give
    /// the residual (<paramref name="Residual"/>, hex: what the payload's residual section holds, decoded) and the symbol
    /// stream (<paramref name="Symbols"/>, hex: the payload's bytes after the section). Other vectors have none of these.
    /// </summary>
    private sealed record Vector(
        string Name, string Description, string? Format, string Codec, int Level, bool Checksum, string? Dictionary, uint? DictionaryId,
        string? DictionarySha256, string Envelope, string? Text, string? Hex, string? Shapes = null, string? Packed = null,
        string? Fields = null, string? Residual = null, string? Symbols = null)
    {
        /// <summary>The vector's format: "v2" or "v3", or v1 when the vector names none (the vectors written before format v2).</summary>
        public EnvelopeFormat FormatId => Format is null ? EnvelopeFormat.V1 : Enum.Parse<EnvelopeFormat>(Format, ignoreCase: true);

        public byte[] EnvelopeBytes => Convert.FromHexString(Envelope);

        public byte[] Expected => Text is not null ? Encoding.UTF8.GetBytes(Text) : Convert.FromHexString(Hex!);

        public CompressionCodec CodecId => Enum.Parse<CompressionCodec>(Codec, ignoreCase: true);

        public byte[]? ShapeTableBytes => Shapes is null ? null : File.ReadAllBytes(Path.Combine(VectorDirectory, Shapes));

        /// <summary>The shape table's kind (its byte 5): 1 JSON, 2 BSON, 3 BSON elements; null without a table.</summary>
        public DocumentKind? ShapeKind => ShapeTableBytes is { } table ? (DocumentKind)table[5] : null;

        /// <summary>The structure model file's bytes (codec 8): what a dictionary record's <c>Shapes</c> holds with a field model.</summary>
        public byte[]? StructureModelBytes => Fields is null ? null : File.ReadAllBytes(Path.Combine(VectorDirectory, Fields));

        /// <summary>Whether the codec is one of the structure-aware ones (7 or 8), which name a shape table and give a packed stream.</summary>
        public bool Structured => Compression.Codecs.CodecRegistry.For(CodecId).IsStructured;
    }

    private static readonly string VectorDirectory = Path.Combine(AppContext.BaseDirectory, "Vectors");

    private static readonly Lazy<List<Vector>> s_vectors = new(() =>
        JsonSerializer.Deserialize<List<Vector>>(File.ReadAllText(Path.Combine(VectorDirectory, "vectors.json")), new JsonSerializerOptions(JsonSerializerDefaults.Web))!);

    private static Vector Get(string name) => s_vectors.Value.Single(v => v.Name == name);

    /// <summary>
    /// The vector's dictionary, carrying its structure model (codec 8: the table and field model of its <c>fields</c> file)
    /// or its shape table (codec 7) when the vector names one, as a dictionary record with <c>Shapes</c> gives it.
    /// </summary>
    private static ZstdDictionary? DictionaryFor(Vector v) =>
        v.Dictionary is null ? null : ZstdDictionary.Create(v.DictionaryId!.Value, File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary)),
            ZstdDictionary.DefaultMaximumSize,
            v.StructureModelBytes is { } model ? ShapeTransform.Parse(model)
            : v.ShapeTableBytes is { } table ? new ShapeTransform(ShapeTable.Parse(table)) : null);

    public static TheoryData<string> Names() => new(s_vectors.Value.Select(v => v.Name));

    [Fact]
    public void Vectors_CoverEveryCodecADictionaryAChecksumAndStored()
    {
        var vectors = s_vectors.Value;
        Assert.True(vectors.Count >= 8);
        Assert.Equal(vectors.Count, vectors.Select(v => v.Name).Distinct().Count());
        foreach (var codec in Compression.Codecs.CodecRegistry.ById) Assert.Contains(vectors, v => v.CodecId == codec.Id); // a new codec comes with its vector
        Assert.Contains(vectors, v => v.Dictionary is not null && v.CodecId == CompressionCodec.Zstd);
        Assert.Contains(vectors, v => v.Checksum);
        Assert.Contains(vectors, v => v.CodecId == CompressionCodec.Stored);
        Assert.Contains(vectors, v => v.Hex is not null);
        Assert.All(vectors, v => Assert.True(v.Text is null != v.Hex is null, $"{v.Name}: exactly one of text and hex"));

        // Format v2: a zstd block with and without a dictionary and checksum, stored and another codec with the short checksum.
        var v2 = vectors.Where(v => v.FormatId == EnvelopeFormat.V2).ToList();
        Assert.Contains(v2, v => v.CodecId == CompressionCodec.Zstd && v.Dictionary is not null && v.Checksum);
        Assert.Contains(v2, v => v.CodecId == CompressionCodec.Zstd && v.Dictionary is null && !v.Checksum);
        Assert.Contains(v2, v => v.CodecId == CompressionCodec.Stored && v.Checksum);
        Assert.Contains(v2, v => v.CodecId is not CompressionCodec.Zstd and not CompressionCodec.Stored && v.Checksum);
        Assert.True(vectors.Count(v => v.FormatId == EnvelopeFormat.V1) >= 12, "every v1 vector stays");
        Assert.True(v2.Count >= 9, "every v2 vector stays");

        // Format v3: the checksum (stored, the empty document, zstd with a dictionary, another codec, and codec 7).
        var v3 = vectors.Where(v => v.FormatId == EnvelopeFormat.V3).ToList();
        Assert.All(v3, v => Assert.True(v.Checksum, $"{v.Name}: a v3 vector is about its checksum"));
        Assert.Contains(v3, v => v.CodecId == CompressionCodec.Stored && v.Expected.Length == 0);
        Assert.Contains(v3, v => v.CodecId == CompressionCodec.Zstd && v.Dictionary is not null);
        Assert.Contains(v3, v => v.CodecId == CompressionCodec.Snappy);
        Assert.Contains(v3, v => v.CodecId == CompressionCodec.PackedZstd);
        Assert.Contains(v3, v => v.CodecId == CompressionCodec.FieldZstd);
        Assert.Contains(v2, v => v.CodecId == CompressionCodec.FieldZstd);
        Assert.Contains(v3, v => v.CodecId == CompressionCodec.FieldZstdFoldedChecksum && IndependentModelOf(v).HasTemplates);

        // Codec 7, packed zstd: one vector per shape table kind, each with its table and packed stream. Codec 8, field
        // zstd: a JSON and a BSON elements vector, and one whose model has string templates, each with its table, packed
        // stream, structure model, residual and symbol stream. Only codecs 7 and 8 have a table and a packed stream,
        // only codec 8 the other three.
        foreach (DocumentKind kind in new[] { DocumentKind.Json, DocumentKind.Bson, DocumentKind.BsonElements })
        {
            Assert.Contains(vectors, v => v.CodecId == CompressionCodec.PackedZstd && v.ShapeKind == kind);
        }
        foreach (DocumentKind kind in new[] { DocumentKind.Json, DocumentKind.BsonElements })
        {
            Assert.Contains(vectors, v => v.CodecId == CompressionCodec.FieldZstd && v.ShapeKind == kind);
        }
        // And one whose field model has string templates (docs/field-model.md), read with the reader below, and one of
        // model version 2, with sources: a copy slot and a relative range.
        Assert.Contains(vectors, v => v.CodecId == CompressionCodec.FieldZstd && IndependentModelOf(v).HasTemplates);
        Assert.Contains(vectors, v => v.CodecId == CompressionCodec.FieldZstd && IndependentModelOf(v).Version == 2
            && IndependentModelOf(v).Fields.Values.Any(f => f.Relative) && IndependentModelOf(v).Fields.Values.Any(f => f.Templates.Any(t => t.CopySlot >= 0)));
        Assert.Contains(vectors, v => v.CodecId == CompressionCodec.FieldZstd && IndependentModelOf(v).Version == 1);
        // And one of model version 3: copy slots of parts of a source, with and without a skip.
        Assert.Contains(vectors, v => v.CodecId == CompressionCodec.FieldZstd && IndependentModelOf(v).Version == 3
            && IndependentModelOf(v).Fields.Values.Any(f => f.Delimiter != 0 && f.Skip == 0) && IndependentModelOf(v).Fields.Values.Any(f => f.Delimiter != 0 && f.Skip > 0));
        Assert.All(vectors, v =>
        {
            Assert.True(v.Structured == (v.Shapes is not null) && v.Structured == (v.Packed is not null),
                $"{v.Name}: a shape table and a packed stream exactly when the codec is packed zstd or field zstd");
            bool fieldZstd = Corpus.IsFieldCoded(v.CodecId);
            Assert.True(fieldZstd == (v.Fields is not null) && fieldZstd == (v.Residual is not null) && fieldZstd == (v.Symbols is not null),
                $"{v.Name}: a structure model, a residual and a symbol stream exactly when the codec is field zstd");
        });
        Assert.All(vectors.Where(v => v.Structured), v =>
        {
            Assert.NotEqual(EnvelopeFormat.V1, v.FormatId);
            Assert.True(v.Checksum && v.Dictionary is not null, $"{v.Name}: codecs 7 to 9 always have a checksum and a dictionary");
        });
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Vector_Decompress_ReturnsTheExactBytes(string name)
    {
        Vector v = Get(name);
        byte[] envelope = v.EnvelopeBytes;
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Equal(v.CodecId, header.Codec);
        Assert.Equal((int)v.FormatId, header.FormatVersion);
        Assert.Equal(v.Checksum, header.HasChecksum);
        Assert.Equal(v.Expected.Length, header.UncompressedLength);
        Assert.Equal(v.DictionaryId, header.DictionaryId);

        var reader = new DocumentCompressor();
        Assert.Equal(v.Expected, reader.Decompress(envelope, DictionaryFor(v)));
        var writer = new ArrayBufferWriter<byte>();
        reader.Decompress(envelope, writer, DictionaryFor(v));
        Assert.Equal(v.Expected, writer.WrittenSpan.ToArray());
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Vector_IndependentDecoderFollowingFormatMd_ReturnsTheExactBytes(string name)
    {
        // A second reader written from docs/format.md alone, on the codec libraries directly: the document is the contract.
        Vector v = Get(name);
        byte[] e = v.EnvelopeBytes;
        Assert.Equal(0xC5, e[0]);
        int codec = e[1] & 0x0F, version = (e[1] >> 4) & 0x03;
        bool hasChecksum = (e[1] & 0x40) != 0, hasDictionary = (e[1] & 0x80) != 0;
        Assert.Equal((int)v.FormatId, version);
        Assert.InRange(version, 0, 2); // 3 is reserved
        // v1: XxHash32; v2: its low 16 bits; v3: the XxHash3's; codec 9 (v3 only) holds it in its symbol stream, no trailer.
        int checksumLength = !hasChecksum ? 0 : version == 0 ? 4 : codec == 9 ? 0 : 2;
        ushort? foldedChecksum = null;
        int offset = 2;
        uint length = ReadLeb128(e, ref offset);
        uint? dictionaryId = hasDictionary ? ReadLeb128(e, ref offset) : null;
        byte[] payload = e[offset..(e.Length - checksumLength)];
        var output = new byte[length];

        if (version >= 1 && codec == 1 && length <= 128 * 1024)
        {
            // v2 and v3 zstd up to 128 KiB: the payload is one compressed block's content. Put a frame in front (magic, a header
            // descriptor with Single_Segment set and a 1-, 2- or 4-byte content size, and a last-block header of type
            // Compressed and the payload's size) and decode it as an ordinary zstd frame: no block-level API needed.
            payload = WrapBlockInFrame(payload, length);
        }

        switch ((CompressionCodec)codec)
        {
            case CompressionCodec.Stored:
                output = payload;
                break;
            case CompressionCodec.Zstd when version >= 1 && length <= 128 * 1024:
                using (var zstd = new ZstdSharp.Decompressor())
                {
                    if (dictionaryId is not null)
                    {
                        Assert.Equal(v.DictionaryId, dictionaryId);
                        zstd.LoadDictionary(File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary!)));
                    }
                    Assert.Equal((int)length, zstd.Unwrap(payload, output, 0));
                }
                break;
            case CompressionCodec.Zstd:
                // Magicless frame; its header descriptor has no content size, no single-segment flag, no checksum, no dictionary id.
                byte descriptor = payload[0];
                Assert.Equal(0, descriptor & 0xC0); // Frame_Content_Size_flag
                Assert.Equal(0, descriptor & 0x20); // Single_Segment_flag (would imply a content size)
                Assert.Equal(0, descriptor & 0x04); // Content_Checksum_flag
                Assert.Equal(0, descriptor & 0x03); // Dictionary_ID_flag
                using (var zstd = new ZstdSharp.Decompressor())
                {
                    zstd.SetParameter(ZstdSharp.Unsafe.ZSTD_dParameter.ZSTD_d_experimentalParam1, (int)ZstdSharp.Unsafe.ZSTD_format_e.ZSTD_f_zstd1_magicless);
                    if (dictionaryId is not null)
                    {
                        Assert.Equal(v.DictionaryId, dictionaryId);
                        zstd.LoadDictionary(File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary!)));
                    }
                    Assert.Equal((int)length, zstd.Unwrap(payload, output, 0));
                }
                break;
            case CompressionCodec.PackedZstd:
                // Codec 7: format v2 or v3, a checksum and a dictionary id, at most 128 KiB declared; the payload is one raw zstd
                // block whose content is the packed stream, decoded with zstd's block API into at most declared - 1 bytes.
                Assert.InRange(version, 1, 2);
                Assert.True(hasChecksum);
                Assert.Equal(v.DictionaryId, dictionaryId);
                Assert.InRange(length, 1u, 128u * 1024);
                byte[] packed = DecodeRawBlock(payload, File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary!)), (int)length - 1);
                Assert.Equal(v.Packed, Convert.ToHexString(packed).ToLowerInvariant());
                // The unpacking step is the library's own (ShapeTransform.Decode): this reader checks the envelope and the block,
                // and the structure vectors (StructureVectorTests, with its reader written from docs/structure.md alone) check
                // the packed stream's layout independently.
                var shapes = new ShapeTransform(ShapeTable.Parse(v.ShapeTableBytes!));
                Assert.Equal((int)length, shapes.Decode(packed, output));
                break;
            case CompressionCodec.FieldZstd:
            case CompressionCodec.FieldZstdFoldedChecksum:
            {
                // Codec 8: as codec 7's header rules. The payload is a varint h, h >> 1 bytes of residual section (a raw zstd
                // block with the dictionary when h & 1, else the residual itself), then the symbol stream to the end. Residual
                // and packed stream are each at most declared - 1 bytes. (docs/format.md, "Codec 8"; docs/field-model.md.)
                // Codec 9: the same in v3 only, with no checksum trailer: the stream's final decoder state is 65,536 plus the
                // checksum (docs/format.md, "Codec 9").
                bool folded = codec == 9;
                Assert.InRange(version, folded ? 2 : 1, 2);
                Assert.True(hasChecksum);
                Assert.Equal(v.DictionaryId, dictionaryId);
                Assert.InRange(length, 1u, 128u * 1024);
                int at = 0;
                uint h = ReadLeb128(payload, ref at);
                int sectionLength = (int)(h >> 1);
                Assert.InRange(sectionLength, 0, payload.Length - at);
                byte[] section = payload[at..(at + sectionLength)];
                byte[] stream = payload[(at + sectionLength)..];
                byte[] residual = (h & 1) != 0 ? DecodeRawBlock(section, File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary!)), (int)length - 1) : section;
                Assert.True(residual.Length <= length - 1);
                Assert.Equal(v.Residual, Convert.ToHexString(residual).ToLowerInvariant());
                Assert.Equal(v.Symbols, Convert.ToHexString(stream).ToLowerInvariant());

                // The structure model as the record stores it (docs/field-model.md, "Stored layout"), read byte by byte.
                var (table, model) = ReadStructureModel(v);

                var joiner = new IndependentJoiner(table, model, residual, stream, (int)length - 1, folded);
                byte[] joined = joiner.Join();
                if (folded) foldedChecksum = joiner.Folded;
                Assert.Equal(v.Packed, Convert.ToHexString(joined).ToLowerInvariant());
                // What the walk met: every case of "Joining" the vectors are made to show. A vector whose model has no
                // templates (version 1) meets every case of values, ranges, escapes and arrays; one whose model has templates meets a
                // template and its slots (bit lengths 0 or 1 and 2 or more, a leading zero from the width).
                // One of model version 2 meets a copy slot between digit slots and a relative range; one of version 3 copies
                // of parts, with and without a skip.
                string[] cases = model.Version == 3
                    ? ["no model", "template", "copy slot", "copy of a part", "copy of a part, skipping", "template slot, bit length 0 or 1"]
                    : model.Version == 2
                    ? ["no model", "template", "copy slot", "template slot, bit length 0 or 1", "template slot, bit length 2 or more",
                       "relative range", "range, bit length 2 or more"]
                    : model.HasTemplates
                    ? ["table hit", "escape of a scalar", "range, bit length 2 or more", "no model", "template",
                       "template slot, bit length 0 or 1", "template slot, bit length 2 or more", "template slot, zero-padded"]
                    : ["table hit", "escape of a scalar", "escape of a container", "range, bit length 2 or more",
                       "range, bit length 0 or 1", "array items", "no model"];
                foreach (string expected in cases) Assert.Contains(expected, joiner.Met);
                // The packed stream unpacks as codec 7's (the library's unpacking, as above).
                Assert.Equal((int)length, new ShapeTransform(table).Decode(joined, output));
                break;
            }
            case CompressionCodec.Lz4:
                Assert.Equal((int)length, K4os.Compression.LZ4.LZ4Codec.Decode(payload, output));
                break;
            case CompressionCodec.Snappy:
                Assert.Equal((int)length, Snappier.Snappy.GetUncompressedLength(payload));
                Assert.Equal((int)length, Snappier.Snappy.Decompress(payload, output));
                break;
            case CompressionCodec.Deflate:
                output = Inflate(new DeflateStream(new MemoryStream(payload), CompressionMode.Decompress));
                break;
            case CompressionCodec.Gzip:
                Assert.Equal(new byte[] { 0x1F, 0x8B, 0x08 }, payload[..3]); // gzip magic and CM = deflate
                output = Inflate(new GZipStream(new MemoryStream(payload), CompressionMode.Decompress));
                Assert.Equal(length, BinaryPrimitives.ReadUInt32LittleEndian(payload.AsSpan(payload.Length - 4))); // ISIZE
                break;
            case CompressionCodec.Brotli:
                Assert.True(BrotliDecoder.TryDecompress(payload, output, out int written));
                Assert.Equal((int)length, written);
                break;
            default:
                Assert.Fail($"codec id {codec}");
                break;
        }

        Assert.Equal(v.Expected, output);
        if (hasChecksum && version == 0) Assert.Equal(XxHash32.HashToUInt32(output), BinaryPrimitives.ReadUInt32LittleEndian(e.AsSpan(e.Length - 4)));
        if (hasChecksum && version == 1) Assert.Equal((ushort)XxHash32.HashToUInt32(output), BinaryPrimitives.ReadUInt16LittleEndian(e.AsSpan(e.Length - 2)));
        if (hasChecksum && version == 2) Assert.Equal((ushort)XxHash3.HashToUInt64(output), foldedChecksum ?? BinaryPrimitives.ReadUInt16LittleEndian(e.AsSpan(e.Length - 2)));
        Assert.Equal(codec == 9, foldedChecksum is not null);
    }

    [Theory]
    [InlineData("place null", "copy")]
    [InlineData("place a number", "copy")]
    [InlineData("time null", "relative")]
    [InlineData("time a string", "relative")]
    public void SourcesVector_ItsSymbolsWithoutTheSourceValue_AreRefusedByBothReaders(string change, string refused)
    {
        // v3-fields-sources' symbols with its residual where place (title's source) or time (updated's) is not a string
        // or a number: the copy slot or the relative range has no latest value to use. docs/field-model.md says that is
        // corrupt; the reader written from it and the library both refuse it, neither writes other bytes.
        Vector v = Get("v3-fields-sources");
        byte[] residual = Convert.FromHexString(v.Residual!);
        byte[] stream = Convert.FromHexString(v.Symbols!);
        byte[] place = [0x33, .. "10km SW of Anza, CA"u8];
        byte[] time = Convert.FromHexString("0680a0abfef962");
        (byte[] from, byte[] to) = change switch
        {
            "place null" => (place, new byte[] { 0x00 }),
            "place a number" => (place, Convert.FromHexString("0614")),
            "time null" => (time, new byte[] { 0x00 }),
            _ => (time, [0x2d, .. "1700000000000"u8]),
        };
        int at = residual.AsSpan().IndexOf(from);
        Assert.True(at > 0);
        byte[] lying = [.. residual[..at], .. to, .. residual[(at + from.Length)..]];
        var (table, model) = ReadStructureModel(v);
        var ex = Assert.Throws<InvalidDataException>(() => new IndependentJoiner(table, model, lying, stream, 1024).Join());
        Assert.Contains(refused, ex.Message, StringComparison.Ordinal);
        ShapeTransform library = ShapeTransform.Parse(v.StructureModelBytes!);
        Assert.Throws<InvalidDataException>(() => library.Fields!.Join(lying, stream, new byte[1024]));
        // The vector's own residual joins in both.
        Assert.Equal(v.Packed, Convert.ToHexString(new IndependentJoiner(table, model, residual, stream, 1024).Join()).ToLowerInvariant());
    }

    [Theory]
    [InlineData(40)]
    [InlineData(255)]
    [InlineData(256)]
    [InlineData(65_791)]
    [InlineData(65_792)]
    [InlineData(131_072)]
    public void V2ZstdBlock_WrappedInAFrameAsFormatMdSays_DecodesWithAnOrdinaryZstdDecoder(int size)
    {
        // Every content-size form of the recipe (1 byte, 2 bytes less 256, 4 bytes), with and without a dictionary.
        byte[] document = Corpus.Json(size, size);
        var writer = new DocumentCompressor(new DocumentCompressorOptions { MinimumSize = 0, Format = EnvelopeFormat.V2 });
        int decoded = 0;
        foreach (ZstdDictionary? dictionary in new[] { null, Corpus.Dictionary })
        {
            byte[] envelope = writer.Compress(document, dictionary);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            if (header.Codec == CompressionCodec.Stored && dictionary is null && size < 256) continue; // too small to pay without a dictionary
            Assert.Equal(CompressionCodec.Zstd, header.Codec);
            decoded++;
            byte[] frame = WrapBlockInFrame(envelope.AsSpan(header.HeaderLength, header.PayloadLength).ToArray(), (uint)size);
            using var zstd = new ZstdSharp.Decompressor();
            if (dictionary is not null) zstd.LoadDictionary(dictionary.Content.Span);
            var output = new byte[size];
            Assert.Equal(size, zstd.Unwrap(frame, output, 0));
            Assert.Equal(document, output);
        }
        Assert.True(decoded >= 1);
    }

    /// <summary>
    /// docs/format.md, "Codec 7": one raw zstd compressed block decoded with zstd's block API (ZstdSharp's port of it:
    /// <c>ZSTD_decompressBegin_usingDict</c> with the raw dictionary, then <c>ZSTD_decompressBlock</c>) into a buffer of
    /// <paramref name="capacity"/> bytes; returns what it produced. ZstdSharp's block functions take pointers and this
    /// project compiles no unsafe code, so they are called through reflection, with pinned arrays' addresses for the
    /// pointers (the library's own <c>ZstdBlockCodec</c> is not used).
    /// </summary>
    private static byte[] DecodeRawBlock(byte[] block, byte[] dictionary, int capacity)
    {
        static MethodInfo Zstd(string name, int parameters) =>
            typeof(ZstdSharp.Unsafe.Methods).GetMethods().Single(m => m.Name == name && m.GetParameters().Length == parameters);
        static nuint Check(object? result)
        {
            nuint code = (nuint)result!;
            Assert.False(ZstdSharp.Unsafe.Methods.ZSTD_isError(code), ZstdSharp.Unsafe.Methods.ZSTD_getErrorName(code));
            return code;
        }

        byte[] output = new byte[capacity];
        GCHandle source = GCHandle.Alloc(block, GCHandleType.Pinned);
        GCHandle destination = GCHandle.Alloc(output, GCHandleType.Pinned);
        GCHandle loaded = GCHandle.Alloc(dictionary, GCHandleType.Pinned);
        object context = Zstd("ZSTD_createDCtx", 0).Invoke(null, null)!; // a boxed ZSTD_DCtx_s*
        try
        {
            Check(Zstd("ZSTD_decompressBegin_usingDict", 3).Invoke(null, [context, loaded.AddrOfPinnedObject(), (nuint)dictionary.Length]));
            nuint produced = Check(Zstd("ZSTD_decompressBlock", 5).Invoke(null,
                [context, destination.AddrOfPinnedObject(), (nuint)capacity, source.AddrOfPinnedObject(), (nuint)block.Length]));
            return output[..(int)produced];
        }
        finally
        {
            Zstd("ZSTD_freeDCtx", 1).Invoke(null, [context]);
            source.Free();
            destination.Free();
            loaded.Free();
        }
    }

    /// <summary>
    /// A codec 8 vector's structure model file as docs/field-model.md's "Stored layout" gives it: "SMDL", version 1, the
    /// table's length, the table (the vector's shape table file, byte for byte; parsed by the library: its shapes' key
    /// counts number the fields), then the field model ("FLDM"), read by <see cref="IndependentFieldModel"/>.
    /// </summary>
    private static (ShapeTable Table, IndependentFieldModel Model) ReadStructureModel(Vector v)
    {
        byte[] smdl = v.StructureModelBytes!;
        Assert.Equal("SMDL"u8.ToArray(), smdl[..4]);
        Assert.Equal(1, smdl[4]);
        int tableAt = 5;
        int tableLength = (int)ReadLeb128(smdl, ref tableAt);
        byte[] tableBytes = smdl[tableAt..(tableAt + tableLength)];
        Assert.Equal(v.ShapeTableBytes, tableBytes);
        var table = ShapeTable.Parse(tableBytes);
        return (table, IndependentFieldModel.Parse(smdl[(tableAt + tableLength)..], table.TotalKeys));
    }

    private static IndependentFieldModel IndependentModelOf(Vector v) => ReadStructureModel(v).Model;

    /// <summary>
    /// docs/field-model.md, "Stored layout": the field model ("FLDM", version 1 or 2), read from the document alone: per
    /// field (by <c>key &lt;&lt; 1 | items</c>) in version 2 its source (<c>key &lt;&lt; 1 | items</c> of another key, or
    /// none) and flags (a relative range), its table's values, its range (tag, min, bits), its string templates (literals
    /// around slots of fixed widths, each slot with its min, bits and the frequencies of its bit lengths; in version 2 a
    /// slot of width 0 copies the source's latest string) and its symbols' frequencies (the values, the range's bit
    /// lengths, the templates, the escape).
    /// </summary>
    private sealed class IndependentFieldModel
    {
        /// <summary>A field; <paramref name="Source"/> is -1 for none.</summary>
        public sealed record Field(List<byte[]> Values, byte RangeTag, long Min, int Bits, List<Template> Templates, int[] Frequencies, long Source, bool Relative)
        {
            /// <summary>Version 3: what a copy slot copies of the source's string: all of it (0), or the part after this byte's last occurrence less <see cref="Skip"/> bytes.</summary>
            public byte Delimiter { get; init; }

            public byte Skip { get; init; }
        }

        /// <summary>A template: <c>Literals.Count</c> is one more than the slots; per slot its width (0: the copy slot), min, bits and bit-length frequencies.</summary>
        public sealed record Template(List<byte[]> Literals, int[] Widths, ulong[] Mins, int[] Bits, int[][] Frequencies)
        {
            /// <summary>The string's length without the copied bytes: the literals' bytes and the slots' widths.</summary>
            public int Length => Literals.Sum(l => l.Length) + Widths.Sum();

            /// <summary>The slot of width 0, or -1.</summary>
            public int CopySlot => Array.IndexOf(Widths, 0);
        }

        public Dictionary<ulong, Field> Fields { get; } = [];

        public int Version { get; private init; }

        /// <summary>The keys (<c>key &lt;&lt; 1 | items</c>) some field names as its source.</summary>
        public HashSet<ulong> Sources => [.. Fields.Values.Where(f => f.Source >= 0).Select(f => (ulong)f.Source)];

        public bool HasTemplates => Fields.Values.Any(f => f.Templates.Count > 0);

        public static IndependentFieldModel Parse(byte[] bytes, int totalKeys)
        {
            Assert.Equal("FLDM"u8.ToArray(), bytes[..4]);
            Assert.True(bytes[4] is 1 or 2 or 3, "version 1, 2 (sources) or 3 (parts of sources)");
            Assert.Equal(new byte[] { 0, 0 }, bytes[5..7]);
            // XxHash32 (seed 0) of everything before the last 4 bytes, little-endian.
            Assert.Equal(XxHash32.HashToUInt32(bytes.AsSpan(0, bytes.Length - 4)), BinaryPrimitives.ReadUInt32LittleEndian(bytes.AsSpan(bytes.Length - 4)));
            var model = new IndependentFieldModel { Version = bytes[4] };
            int at = 7;
            ulong count = ReadLeb128U64(bytes, ref at);
            Assert.InRange(count, 0UL, 2048UL);
            long previous = -1;
            for (ulong f = 0; f < count; f++)
            {
                ulong keyAndItems = ReadLeb128U64(bytes, ref at);
                Assert.True((long)keyAndItems > previous, "fields in ascending order");
                Assert.True(keyAndItems >> 1 < (ulong)totalKeys, "a key of the table");
                previous = (long)keyAndItems;
                // Version 2: varint source + 1 (0: none; else a key << 1 | items of the table, not the field's own),
                // then a flags byte: 0, or 1 for a relative range (which needs a source, and a range below). Version 3:
                // flag 2 too (copies a part: a source, then a delimiter byte, ASCII punctuation or space, and a skip byte
                // up to 15).
                long source = -1;
                bool relative = false;
                byte delimiter = 0, skip = 0;
                if (model.Version >= 2)
                {
                    source = (long)ReadLeb128U64(bytes, ref at) - 1;
                    Assert.True(source < 2L * totalKeys, "a source of the table");
                    Assert.NotEqual((long)keyAndItems, source);
                    byte flags = bytes[at++];
                    Assert.True(flags <= (model.Version == 3 ? 3 : 1), "flags 0 or 1 (version 3: to 3)");
                    relative = (flags & 1) != 0;
                    Assert.True(!relative || source >= 0, "a relative range has a source");
                    if ((flags & 2) != 0)
                    {
                        Assert.True(source >= 0, "a part of a source");
                        delimiter = bytes[at++];
                        skip = bytes[at++];
                        Assert.True(delimiter is >= 0x20 and < 0x7F && !char.IsAsciiLetterOrDigit((char)delimiter), "ASCII punctuation or space");
                        Assert.InRange(skip, 0, 15);
                    }
                }
                int n = (int)ReadLeb128U64(bytes, ref at);
                Assert.InRange(n, 0, 1024);
                var values = new List<byte[]>();
                for (int i = 0; i < n; i++)
                {
                    int valueLength = (int)ReadLeb128U64(bytes, ref at);
                    Assert.InRange(valueLength, 1, 96);
                    values.Add(bytes[at..(at + valueLength)]);
                    at += valueLength;
                }
                byte rangeTag = bytes[at++];
                long min = 0;
                int bits = 0;
                if (rangeTag != 0)
                {
                    Assert.True(rangeTag is 0x06 or 0x07 or 0x0A or (>= 0x10 and <= 0x1F), "a number's tag");
                    ulong zigzag = ReadLeb128U64(bytes, ref at);
                    min = (long)(zigzag >> 1) ^ -(long)(zigzag & 1);
                    bits = bytes[at++];
                    Assert.InRange(bits, 0, 48);
                }
                Assert.True(!relative || rangeTag != 0, "a relative range has a range");
                // Templates: a count (at most 64), then per template its slot count k (1-16), k times a literal (varint
                // length, bytes) and a slot (width byte 1-18, varint min under 10^width, bits byte 0-60, bits + 1
                // frequencies adding up to 4,096), then the last literal.
                int t = (int)ReadLeb128U64(bytes, ref at);
                Assert.InRange(t, 0, 64);
                var templates = new List<Template>();
                for (int i = 0; i < t; i++)
                {
                    int k = (int)ReadLeb128U64(bytes, ref at);
                    Assert.InRange(k, 1, 16);
                    var literals = new List<byte[]>();
                    var widths = new int[k];
                    var mins = new ulong[k];
                    var slotBits = new int[k];
                    var slotFrequencies = new int[k][];
                    for (int slot = 0; ; slot++)
                    {
                        int literalLength = (int)ReadLeb128U64(bytes, ref at);
                        literals.Add(bytes[at..(at + literalLength)]);
                        at += literalLength;
                        if (slot == k) break;
                        widths[slot] = bytes[at++];
                        if (widths[slot] == 0)
                        {
                            // A copy slot (version 2, a field with a source, one a template): nothing more follows it.
                            Assert.True(source >= 0, "a copy slot in a field with a source");
                            Assert.DoesNotContain(0, widths[..slot]); // at most one a template
                            continue;
                        }
                        Assert.InRange(widths[slot], 1, 18);
                        mins[slot] = ReadLeb128U64(bytes, ref at);
                        Assert.True(mins[slot] < Pow10(widths[slot]), "a slot's min fits its width");
                        slotBits[slot] = bytes[at++];
                        Assert.InRange(slotBits[slot], 0, 60);
                        slotFrequencies[slot] = ReadFrequencies(bytes, ref at, slotBits[slot] + 1);
                    }
                    var template = new Template(literals, widths, mins, slotBits, slotFrequencies);
                    Assert.InRange(template.Length, 0, 256);
                    Assert.DoesNotContain(templates, other => other.Widths.SequenceEqual(widths)
                        && other.Literals.Zip(literals).All(pair => pair.First.AsSpan().SequenceEqual(pair.Second)));
                    templates.Add(template);
                }
                int symbols = n + (rangeTag != 0 ? bits + 1 : 0) + t + 1;
                model.Fields.Add(keyAndItems, new Field(values, rangeTag, min, bits, templates, ReadFrequencies(bytes, ref at, symbols), source, relative) { Delimiter = delimiter, Skip = skip });
            }
            Assert.Equal(bytes.Length - 4, at); // nothing between the last field and the checksum
            return model;
        }

        /// <summary><paramref name="symbols"/> varints, each at least 1, adding up to 4,096.</summary>
        private static int[] ReadFrequencies(byte[] bytes, ref int at, int symbols)
        {
            var frequencies = new int[symbols];
            for (int i = 0; i < symbols; i++)
            {
                frequencies[i] = (int)ReadLeb128U64(bytes, ref at);
                Assert.True(frequencies[i] >= 1);
            }
            Assert.Equal(4096, frequencies.Sum());
            return frequencies;
        }
    }

    /// <summary>10^<paramref name="e"/> (0 to 18).</summary>
    private static ulong Pow10(int e)
    {
        ulong p = 1;
        for (int i = 0; i < e; i++) p *= 10;
        return p;
    }

    /// <summary>
    /// docs/field-model.md, "Joining", from the document alone: walks the residual as the packed stream is walked
    /// (docs/structure.md, "Packed stream"), taking a symbol from the rANS stream for every value of a modeled field,
    /// and keeping the latest value of each source key (model version 2). <see cref="Met"/> records which cases of the
    /// join it met.
    /// </summary>
    private sealed class IndependentJoiner(ShapeTable table, IndependentFieldModel model, byte[] residual, byte[] stream, int capacity, bool folded = false)
    {
        /// <summary>Codec 9: the checksum the final state held (the state minus 65,536).</summary>
        public ushort? Folded { get; private set; }

        private bool _checksumOnly; // codec 9, a stream of the checksum alone: no symbol may be read

        private readonly List<byte> _out = [];
        private int _in;   // position in the residual
        private int _next; // next byte of the symbol stream
        private uint _x;   // the rANS state

        // Per source key (key << 1 | items): its latest value in the document, a string's content or a number; none when absent.
        private readonly HashSet<ulong> _sources = model.Sources;
        private readonly Dictionary<ulong, byte[]> _latestString = [];
        private readonly Dictionary<ulong, long> _latestNumber = [];

        public HashSet<string> Met { get; } = [];

        public byte[] Join()
        {
            // The state: the stream's first 3 bytes, little-endian; a stream that codes no symbol is empty (the state is then
            // 65,536), or in codec 9 the checksum alone, 2 bytes little-endian (the state is then 65,536 plus it).
            if (folded && stream.Length == 2)
            {
                _x = 65536u + (uint)(stream[0] | stream[1] << 8);
                _next = 2;
                _checksumOnly = true;
            }
            else if (stream.Length == 0 && !folded)
            {
                _x = 65536;
            }
            else
            {
                Assert.True(stream.Length >= 3);
                _x = stream[0] | (uint)stream[1] << 8 | (uint)stream[2] << 16;
                _next = 3;
            }
            Object();
            Assert.Equal(residual.Length, _in);    // the packed stream ends with the residual
            Assert.Equal(stream.Length, _next);    // every byte of the symbol stream read
            if (folded)
            {
                Assert.InRange(_x, 65536u, 131071u); // the state back at L plus the 16-bit checksum
                Folded = (ushort)(_x - 65536);
            }
            else
            {
                Assert.Equal(65536u, _x);          // and the state back at L
            }
            Assert.True(_out.Count <= capacity);
            return [.. _out];
        }

        private void Object()
        {
            int id = (int)CopyVarint();
            if (id == 0)
            {
                // Keys inline: the count, then each key (length, bytes) before its value, which has no field.
                ulong count = CopyVarint();
                for (ulong m = 0; m < count; m++)
                {
                    int keyLength = (int)CopyVarint();
                    Copy(keyLength);
                    Value(-1, items: false);
                }
                return;
            }
            Assert.InRange(id, 1, table.Count);
            for (int m = 0; m < table.KeyCount(id); m++) Value(table.FirstKey(id) + m, items: false);
        }

        /// <summary>
        /// A value at key <paramref name="key"/> (or its items). At a source key: its latest value is none from the start
        /// of the value (so nothing inside an object or array there sees an older one), and once the value is written, the
        /// value itself when it is a string (its content) or a number of a range tag (its zigzag varint, decoded), else none.
        /// </summary>
        private void Value(int key, bool items)
        {
            ulong k = ((ulong)key << 1) | (items ? 1UL : 0);
            if (key < 0 || !_sources.Contains(k))
            {
                ValueOf(key, items);
                return;
            }
            _latestString.Remove(k);
            _latestNumber.Remove(k);
            int start = _out.Count;
            ValueOf(key, items);
            byte[] written = [.. _out.Skip(start)];
            byte tag = written[0];
            if (tag >= 0x20)
            {
                _latestString[k] = written[1..];
            }
            else if (tag == 0x05)
            {
                int at = 1;
                ReadLeb128U64(written, ref at);
                _latestString[k] = written[at..];
            }
            else if (tag is 0x06 or 0x07 or 0x0A or (>= 0x10 and <= 0x1F))
            {
                int at = 1;
                ulong zigzag = ReadLeb128U64(written, ref at);
                _latestNumber[k] = (long)(zigzag >> 1) ^ -(long)(zigzag & 1);
            }
        }

        private void ValueOf(int key, bool items)
        {
            if (key >= 0 && model.Fields.TryGetValue(((ulong)key << 1) | (items ? 1UL : 0), out var f))
            {
                if (items) Met.Add("array items");
                int symbol = DecodeSymbol(f.Frequencies);
                if (symbol < f.Values.Count)
                {
                    Met.Add("table hit");
                    _out.AddRange(f.Values[symbol]);
                    return;
                }
                int b = symbol - f.Values.Count;
                int rangeSymbols = f.RangeTag != 0 ? f.Bits + 1 : 0;
                if (b < rangeSymbols)
                {
                    // Bit length b: u = 0 for b = 0, else 2^(b-1) plus b - 1 raw bits, read 16 at a time, lowest first.
                    ulong u = Offset(b);
                    Met.Add(b >= 2 ? "range, bit length 2 or more" : "range, bit length 0 or 1");
                    long value = (long)((ulong)f.Min + u);
                    if (f.Relative)
                    {
                        // A relative range: the source's latest number + min + u, modulo 2^64; without one, corrupt.
                        if (!_latestNumber.TryGetValue((ulong)f.Source, out long from))
                            throw new InvalidDataException("a relative range's value where the source has no latest number");
                        Met.Add("relative range");
                        value = (long)((ulong)from + (ulong)value);
                    }
                    _out.Add(f.RangeTag);
                    WriteVarint(((ulong)value << 1) ^ (ulong)(value >> 63));
                    return;
                }
                int t = b - rangeSymbols;
                if (t < f.Templates.Count)
                {
                    WriteTemplate(f, f.Templates[t]);
                    return;
                }
                Assert.Equal(f.Frequencies.Length - 1, symbol); // the escape: the value is in the residual
                Met.Add(residual[_in] is 0x03 or 0x04 ? "escape of a container" : "escape of a scalar");
                if (f.Templates.Count > 0 && residual[_in] is 0x05 or >= 0x20) Met.Add("escape of a string in a templated field");
            }
            else if (key >= 0)
            {
                Met.Add("no model");
            }

            byte tag = residual[_in];
            switch (tag)
            {
                case 0x03:
                    Copy(1);
                    Object();
                    break;
                case 0x04:
                    Copy(1);
                    ulong count = CopyVarint();
                    for (ulong i = 0; i < count; i++) Value(key, items: true);
                    break;
                default:
                    Copy(ScalarLength(residual, _in));
                    break;
            }
        }

        /// <summary>docs/structure.md's tag table: the bytes of the scalar value (tag and payload) at <paramref name="at"/>.</summary>
        private static int ScalarLength(byte[] data, int at)
        {
            byte tag = data[at];
            int VarintEnd(int from)
            {
                while ((data[from] & 0x80) != 0) from++;
                return from + 1;
            }
            int LengthPrefixed(int lengthAt, int extra)
            {
                int p = lengthAt;
                ulong n = ReadLeb128U64(data, ref p);
                return p + extra + (int)n - at;
            }
            return tag switch
            {
                0x00 or 0x01 or 0x02 => 1,
                0x05 or 0x08 => LengthPrefixed(at + 1, 0),
                0x06 or 0x07 or 0x0A or (>= 0x10 and <= 0x1F) => VarintEnd(at + 1) - at,
                0x09 => 9,
                0x0B => 13,
                0x0C => LengthPrefixed(at + 1, 1),
                0x0D => LengthPrefixed(at + 2, 0),
                >= 0x20 => 1 + tag - 0x20,
                _ => throw new InvalidDataException($"tag 0x{tag:x2}"),
            };
        }

        /// <summary>
        /// A template's string: tag 0x20 + L for L up to 223, else 0x05 and the varint L; then the literals, and between
        /// them each slot's number: its bit length (a symbol with the slot's frequencies) and low bits as a range's,
        /// min + u in decimal, zero-padded to the slot's width (more digits would be corrupt).
        /// </summary>
        private void WriteTemplate(IndependentFieldModel.Field f, IndependentFieldModel.Template template)
        {
            Met.Add("template");
            int length = template.Length;
            // A copy slot writes the source's latest string (its content bytes), which the length counts too; without one, corrupt.
            byte[] copy = [];
            if (template.CopySlot >= 0)
            {
                if (!_latestString.TryGetValue((ulong)f.Source, out copy!))
                    throw new InvalidDataException("a copy slot where the source has no latest string");
                Met.Add("copy slot");
                if (f.Delimiter != 0)
                {
                    // Version 3: the part after the delimiter's last occurrence, less the skip; corrupt without one.
                    int last = Array.LastIndexOf(copy, f.Delimiter);
                    if (last < 0 || last + 1 + f.Skip > copy.Length) throw new InvalidDataException("a copy of a part the source's string does not have");
                    copy = copy[(last + 1 + f.Skip)..];
                    Met.Add(f.Skip > 0 ? "copy of a part, skipping" : "copy of a part");
                }
                length += copy.Length;
            }
            if (length <= 223)
            {
                _out.Add((byte)(0x20 + length));
            }
            else
            {
                _out.Add(0x05);
                WriteVarint((ulong)length);
            }
            for (int slot = 0; ; slot++)
            {
                _out.AddRange(template.Literals[slot]);
                if (slot == template.Widths.Length) break;
                if (slot == template.CopySlot)
                {
                    _out.AddRange(copy);
                    continue;
                }
                int b = DecodeSymbol(template.Frequencies[slot]);
                Met.Add(b >= 2 ? "template slot, bit length 2 or more" : "template slot, bit length 0 or 1");
                ulong value = template.Mins[slot] + Offset(b);
                int width = template.Widths[slot];
                Assert.True(value < Pow10(width), $"a slot's number {value} has more than its {width} digits: corrupt");
                string digits = value.ToString(System.Globalization.CultureInfo.InvariantCulture);
                if (digits.Length < width) Met.Add("template slot, zero-padded");
                _out.AddRange(Encoding.ASCII.GetBytes(digits.PadLeft(width, '0')));
            }
        }

        /// <summary>u of bit length b: 0 for b = 0, else 2^(b-1) plus b - 1 raw bits, read 16 at a time, lowest first.</summary>
        private ulong Offset(int b)
        {
            if (b == 0) return 0;
            ulong u = 1UL << (b - 1);
            for (int shift = 0, left = b - 1; left > 0; )
            {
                int k = Math.Min(16, left);
                u |= (ulong)RawBits(k) << shift;
                shift += k;
                left -= k;
            }
            return u;
        }

        /// <summary>rANS, 12-bit frequencies: slot = x &amp; 4095, the symbol s whose [start, start + freq) holds it, x = freq (x &gt;&gt; 12) + slot - start.</summary>
        private int DecodeSymbol(int[] frequencies)
        {
            Assert.False(_checksumOnly, "a symbol read from a codec 9 stream that holds the checksum alone");
            int slot = (int)(_x & 4095);
            int start = 0, s = 0;
            while (slot >= start + frequencies[s]) start += frequencies[s++];
            _x = (uint)frequencies[s] * (_x >> 12) + (uint)(slot - start);
            Renormalize();
            return s;
        }

        /// <summary>k raw bits (k at most 16): slot = x &amp; (2^k - 1), x = x &gt;&gt; k.</summary>
        private uint RawBits(int k)
        {
            Assert.False(_checksumOnly, "raw bits read from a codec 9 stream that holds the checksum alone");
            uint slot = _x & ((1u << k) - 1);
            _x >>= k;
            Renormalize();
            return slot;
        }

        private void Renormalize()
        {
            while (_x < 65536)
            {
                Assert.True(_next < stream.Length, "symbol stream truncated");
                _x = (_x << 8) | stream[_next++];
            }
        }

        private ulong CopyVarint()
        {
            int start = _in;
            ulong value = ReadLeb128U64(residual, ref _in);
            _out.AddRange(residual[start.._in]);
            return value;
        }

        private void Copy(int count)
        {
            _out.AddRange(residual[_in..(_in + count)]);
            _in += count;
        }

        private void WriteVarint(ulong value)
        {
            for (; value >= 0x80; value >>= 7) _out.Add((byte)(value | 0x80));
            _out.Add((byte)value);
        }
    }

    private static ulong ReadLeb128U64(byte[] data, ref int offset)
    {
        ulong value = 0;
        for (int shift = 0; ; shift += 7)
        {
            byte b = data[offset++];
            value |= (ulong)(b & 0x7F) << shift;
            if ((b & 0x80) == 0) return value;
        }
    }

    /// <summary>docs/format.md, "Format v2": a zstd frame around a raw compressed block of <paramref name="length"/> decoded bytes.</summary>
    private static byte[] WrapBlockInFrame(byte[] block, uint length)
    {
        var frame = new List<byte> { 0x28, 0xB5, 0x2F, 0xFD };
        if (length < 256) frame.AddRange([0x20, (byte)length]); // FCS flag 0 with Single_Segment: 1 byte
        else if (length < 65536 + 256) frame.AddRange([0x60, (byte)(length - 256), (byte)((length - 256) >> 8)]); // flag 1: 2 bytes, minus 256
        else frame.AddRange([0xA0, (byte)length, (byte)(length >> 8), (byte)(length >> 16), (byte)(length >> 24)]); // flag 2: 4 bytes
        uint blockHeader = 1u | (2u << 1) | ((uint)block.Length << 3); // Last_Block, Block_Type 2 (Compressed), Block_Size
        frame.AddRange([(byte)blockHeader, (byte)(blockHeader >> 8), (byte)(blockHeader >> 16)]);
        frame.AddRange(block);
        return [.. frame];
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Vector_DeterministicCodec_ReencodesToTheSameBytes(string name)
    {
        Vector v = Get(name);
        // Packed zstd and field zstd are not settings: a zstd writer packs by itself when its dictionary carries a shape
        // table, and splits the packed stream with the field model when the dictionary carries one too.
        CompressionCodec setting = v.Structured ? CompressionCodec.Zstd : v.CodecId;
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = setting, Level = v.Level, Checksum = v.Checksum, MinimumSize = 0, Format = v.FormatId })
        {
            FoldChecksum = v.CodecId == CompressionCodec.FieldZstdFoldedChecksum, // the v3 codec 8 vectors were written before codec 9
        };
        ZstdDictionary? dictionary = DictionaryFor(v);
        byte[] reencoded = compressor.Compress(v.Expected, dictionary);
        if (v.Packed is not null)
        {
            // The library's packing gives the vector's packed stream.
            byte[] packed = new byte[v.Expected.Length];
            Assert.True(dictionary!.Shapes!.TryEncode(v.Expected, packed, out int packedLength));
            Assert.Equal(v.Packed, Convert.ToHexString(packed, 0, packedLength).ToLowerInvariant());
        }
        if (v.Residual is not null)
        {
            // The library's split of that packed stream gives the vector's residual and symbol stream.
            var (_, residual, symbols) = FieldVectorSources.Split(dictionary!.Shapes!, v.Expected, v.CodecId == CompressionCodec.FieldZstdFoldedChecksum);
            Assert.Equal(v.Residual, Convert.ToHexString(residual).ToLowerInvariant());
            Assert.Equal(v.Symbols, Convert.ToHexString(symbols).ToLowerInvariant());
        }
        if (v.CodecId is CompressionCodec.Deflate or CompressionCodec.Gzip)
        {
            // The platform's zlib may differ between platforms and versions: only decoding is fixed by the contract.
            Assert.Equal(v.Expected, compressor.Decompress(reencoded));
            return;
        }
        Assert.Equal(v.Envelope, Convert.ToHexString(reencoded).ToLowerInvariant());
    }

    [Fact]
    public void DictionaryFixture_HasTheDocumentedHash()
    {
        foreach (var v in s_vectors.Value.Where(v => v.Dictionary is not null))
        {
            byte[] bytes = File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary!));
            Assert.Equal(v.DictionarySha256, Convert.ToHexString(SHA256.HashData(bytes)).ToLowerInvariant());
            Assert.Equal(ZstdDictionary.DictionaryMagic, BinaryPrimitives.ReadUInt32LittleEndian(bytes));
        }
    }

    [Fact]
    public void FormatDocument_ContainsEveryVector()
    {
        string format = File.ReadAllText(Path.Combine(FindRepositoryRoot(), "docs", "format.md"));
        foreach (var v in s_vectors.Value)
        {
            Assert.True(format.Contains(v.Envelope, StringComparison.Ordinal), $"docs/format.md lacks the envelope of {v.Name}");
            if (v.Text is { Length: > 0 }) Assert.True(format.Contains(v.Text, StringComparison.Ordinal), $"docs/format.md lacks the text of {v.Name}");
            if (v.Hex is not null) Assert.True(format.Contains(v.Hex, StringComparison.Ordinal), $"docs/format.md lacks the bytes of {v.Name}");
            if (v.DictionarySha256 is not null) Assert.Contains(v.DictionarySha256, format);
            if (v.Packed is not null) Assert.True(format.Contains(v.Packed, StringComparison.Ordinal), $"docs/format.md lacks the packed stream of {v.Name}");
            if (v.Residual is not null) Assert.True(format.Contains(v.Residual, StringComparison.Ordinal), $"docs/format.md lacks the residual of {v.Name}");
            if (v.Symbols is not null) Assert.True(format.Contains($"`{v.Symbols}`", StringComparison.Ordinal), $"docs/format.md lacks the symbol stream of {v.Name}");
            if (v.StructureModelBytes is { } model)
            {
                Assert.Contains(v.Fields!, format);
                Assert.True(format.Contains(Convert.ToHexString(model).ToLowerInvariant(), StringComparison.Ordinal), $"docs/format.md lacks the bytes of {v.Fields}");
            }
            if (v.ShapeTableBytes is { } table)
            {
                Assert.Contains(v.Shapes!, format);
                Assert.True(format.Contains(Convert.ToHexString(table).ToLowerInvariant(), StringComparison.Ordinal), $"docs/format.md lacks the bytes of {v.Shapes}");
            }
            Assert.Contains($"`{v.Name}`", format);
        }
    }

    private static string FindRepositoryRoot()
    {
        string? directory = AppContext.BaseDirectory;
        while (directory is not null && !File.Exists(Path.Combine(directory, "Compression.sln"))) directory = Path.GetDirectoryName(directory);
        Assert.NotNull(directory);
        return directory;
    }

    private static uint ReadLeb128(byte[] data, ref int offset)
    {
        uint value = 0;
        for (int shift = 0; ; shift += 7)
        {
            byte b = data[offset++];
            value |= (uint)(b & 0x7F) << shift;
            if ((b & 0x80) == 0) return value;
        }
    }

    private static byte[] Inflate(Stream zip)
    {
        using (zip)
        {
            var output = new MemoryStream();
            zip.CopyTo(output);
            return output.ToArray();
        }
    }
}
