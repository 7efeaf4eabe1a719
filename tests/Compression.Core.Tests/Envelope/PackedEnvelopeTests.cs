using System.Diagnostics;
using System.IO.Hashing;
using System.Text;
using Compression.Core.Tests.Structure;
using Compression.Internal;
using Compression.Structure;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// Codec 7, packed zstd (docs/format.md, docs/structure.md): written when the dictionary carries a shape table (format
/// v2, checksum on), read back byte for byte, refused clearly when anything it needs is missing or wrong, and never
/// wrong bytes under mutation.
/// </summary>
public sealed class PackedEnvelopeTests(ITestOutputHelper output)
{
    private static readonly DocumentCompressor V2 = new(new DocumentCompressorOptions { Format = EnvelopeFormat.V2, MinimumSize = 0 });

    /// <summary>JSON text, BSON documents, and BSON elements without their document's framing (what the MongoDB serializer compresses under format v2).</summary>
    public static TheoryData<string> Kinds() => ["json", "bson", "bson-elements"];

    private static readonly List<byte[]> ElementsTraining = [.. StructureModelTests.BsonTraining.Select(d => d[4..^1])];
    private static readonly List<byte[]> ElementsHeldOut = [.. StructureModelTests.BsonHeldOut.Select(d => d[4..^1])];

    private static (List<byte[]> Training, List<byte[]> HeldOut) Data(string kind) => kind switch
    {
        "json" => (StructureModelTests.JsonTraining, StructureModelTests.JsonHeldOut),
        "bson" => (StructureModelTests.BsonTraining, StructureModelTests.BsonHeldOut),
        _ => (ElementsTraining, ElementsHeldOut),
    };

    internal static ZstdDictionary Packing(string kind)
    {
        StructureModel model = StructureModelTests.Train(Data(kind).Training);
        Assert.Equal(kind switch { "json" => DocumentKind.Json, "bson" => DocumentKind.Bson, _ => DocumentKind.BsonElements }, model.Table.Kind);
        Assert.True(model.Dictionary.HasShapeTable);
        Assert.Equal(model.Table.Serialize(), ShapeTable.Parse(model.Table.Serialize()).Serialize());
        return model.Dictionary;
    }

    private static EnvelopeHeader Header(byte[] envelope) =>
        DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header : throw new InvalidOperationException("not an envelope");

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Compress_DictionaryWithShapes_WritesPackedZstd_ReadsBackByteForByte_AndIsSmallerThanPlainZstd(string kind)
    {
        (List<byte[]> training, List<byte[]> heldOut) = Data(kind);
        ZstdDictionary packing = Packing(kind);
        ZstdDictionary plain = Compression.Dictionaries.ZstdDictionaryTrainer.TryTrain(training, 8 * 1024, 76)!;
        Assert.False(plain.HasShapeTable);

        long packedBytes = 0, plainBytes = 0;
        int packed = 0, stored = 0;
        foreach (byte[] document in heldOut)
        {
            byte[] envelope = V2.Compress(document, packing);
            EnvelopeHeader header = Header(envelope);
            if (header.Codec == CompressionCodec.PackedZstd)
            {
                packed++;
                Assert.Equal(packing.Id, header.DictionaryId);
                Assert.True(header.HasChecksum);
                Assert.Equal(EnvelopeFormat.V2, header.Format);
            }
            else if (header.Codec == CompressionCodec.Stored)
            {
                stored++;
            }
            Assert.Equal(document, V2.Decompress(envelope, packing));
            packedBytes += envelope.Length;
            plainBytes += V2.Compress(document, plain).Length;
        }
        output.WriteLine($"{kind}: {packed} of {heldOut.Count} packed, {stored} stored (tiny); {packedBytes} envelope bytes packed, {plainBytes} plain zstd with a dictionary of the same size");
        // The generated JSON has numbers the packing keeps as text and tiny documents that are stored: most, not all, pack.
        Assert.True(packed >= (heldOut.Count - stored) * 0.8, $"{packed} of {heldOut.Count - stored} compressed documents packed");
        Assert.True(packedBytes < plainBytes * 0.97, $"packed {packedBytes}, plain {plainBytes}");
        if (kind == "bson-elements")
        {
            // The elements pack to exactly the stream of the document that frames them: one byte fewer in each envelope's
            // declared length at most, so within a few bytes of the whole documents' envelopes.
            long documents = StructureModelTests.BsonHeldOut.Sum(d => (long)V2.Compress(d, Packing("bson")).Length);
            output.WriteLine($"the same documents with their framing: {documents} bytes");
            Assert.InRange(packedBytes, documents - 2 * heldOut.Count, documents + heldOut.Count);
        }
    }

    [Fact]
    public void Compress_DocumentThePackingCannotReproduce_IsPlainZstdWithTheSameDictionary()
    {
        ZstdDictionary packing = Packing("json");
        // Whitespace between tokens: the packing writes compact JSON only, so this document is not packed.
        byte[] spaced = Encoding.UTF8.GetBytes("{ \"title\": \"The Night of the Hunter\", \"year\": 1955, \"rating\": 8.0, \"tags\": [\"noir\", \"thriller\"] }");
        byte[] envelope = V2.Compress(spaced, packing);
        EnvelopeHeader header = Header(envelope);
        Assert.Equal(CompressionCodec.Zstd, header.Codec);
        Assert.Equal(packing.Id, header.DictionaryId);
        Assert.Equal(spaced, V2.Decompress(envelope, packing));
    }

    [Theory]
    [InlineData(EnvelopeFormat.V1, true)]
    [InlineData(EnvelopeFormat.V2, false)]
    public void Compress_FormatV1OrNoChecksum_NeverPacks(EnvelopeFormat format, bool checksum)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Format = format, Checksum = checksum, MinimumSize = 0 });
        ZstdDictionary packing = Packing("json");
        foreach (byte[] document in StructureModelTests.JsonHeldOut.Take(50))
        {
            byte[] envelope = compressor.Compress(document, packing);
            Assert.NotEqual(CompressionCodec.PackedZstd, Header(envelope).Codec);
            Assert.Equal(document, compressor.Decompress(envelope, packing));
        }
    }

    [Fact]
    public void Decompress_PackedEnvelope_WithTheSameDictionaryButNoShapeTable_IsRefusedNamingIt()
    {
        ZstdDictionary packing = Packing("json");
        (_, List<byte[]> envelopes) = PackedOnly(StructureModelTests.JsonHeldOut, packing);
        byte[] envelope = envelopes[0];
        ZstdDictionary withoutShapes = ZstdDictionary.Create(packing.Id, packing.Content.Span);
        var ex = Assert.Throws<InvalidDataException>(() => V2.Decompress(envelope, withoutShapes));
        Assert.Contains("shape table", ex.Message);
        Assert.Contains($"dictionary {packing.Id}", ex.Message);
        Assert.Throws<DictionaryNotFoundException>(() => V2.Decompress(envelope));
    }

    [Fact]
    public void ReadHeader_PackedZstdOutsideItsRules_IsCorrupt() => ReadHeaderOutsideTheRules(7);

    /// <summary>Codec 8 (field zstd) has codec 7's rules: formats v2 and v3, a checksum, a dictionary id, at most 128 KiB.</summary>
    [Fact]
    public void ReadHeader_FieldZstdOutsideItsRules_IsCorrupt() => ReadHeaderOutsideTheRules(8);

    private static void ReadHeaderOutsideTheRules(int codec)
    {
        ZstdDictionary packing = Packing("json");
        byte[] envelope = V2.Compress(StructureModelTests.JsonHeldOut[1], packing);
        Assert.Equal(0xD7, envelope[1]); // dictionary id, checksum, v2, codec 7
        envelope[1] = (byte)(0xD0 | codec);

        byte[] v1 = (byte[])envelope.Clone();
        v1[1] = (byte)(0xC0 | codec);
        Assert.Contains("format v1", Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(v1, out _)).Message);

        byte[] noChecksum = envelope[..^2];
        noChecksum[1] = (byte)(0x90 | codec);
        Assert.Contains("without a checksum", Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(noChecksum, out _)).Message);

        byte[] noDictionary = [envelope[0], (byte)(0x50 | codec), .. RemoveDictionaryId(envelope)];
        Assert.Contains("without a dictionary id", Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(noDictionary, out _)).Message);

        // A declared length over 128 KiB: documents that large are never packed, and nothing is allocated for the claim.
        Span<byte> header = stackalloc byte[16];
        int at = 0;
        header[at++] = DocumentEnvelope.Magic;
        header[at++] = (byte)(0xD0 | codec);
        at += Varint.Write(header[at..], 128 * 1024 + 1);
        at += Varint.Write(header[at..], packing.Id);
        byte[] lying = [.. header[..at], .. new byte[40], 0, 0];
        long before = GC.GetAllocatedBytesForCurrentThread();
        var ex = Assert.Throws<InvalidDataException>(() => V2.Decompress(lying, packing));
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Contains("decodes to at most 131072", ex.Message);
        Assert.True(allocated < 16 * 1024, $"{allocated} bytes allocated for a lying header");
    }

    /// <summary>The envelope's bytes after the header byte, without the dictionary-id varint.</summary>
    private static byte[] RemoveDictionaryId(byte[] envelope)
    {
        Assert.True(Varint.TryRead(envelope.AsSpan(2), out _, out int lengthBytes));
        Assert.True(Varint.TryRead(envelope.AsSpan(2 + lengthBytes), out _, out int idBytes));
        return [.. envelope.AsSpan(2, lengthBytes), .. envelope.AsSpan(2 + lengthBytes + idBytes)];
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Decompress_TenThousandMutantsOfPackedEnvelopes_OnlyDocumentedExceptions_NeverWrongBytes(string kind)
    {
        const int Mutants = 10_000;
        ZstdDictionary packing = Packing(kind);
        (List<byte[]> originals, List<byte[]> envelopes) = PackedOnly(Data(kind).HeldOut, packing);

        var random = new Random(kind == "json" ? 701 : 702);
        int rejected = 0, missing = 0, exact = 0, wrong = 0;
        var stopwatch = Stopwatch.StartNew();
        for (int n = 0; n < Mutants;)
        {
            int pick = random.Next(envelopes.Count);
            byte[] mutant = Mutate(envelopes[pick], random);
            if (mutant.AsSpan().SequenceEqual(envelopes[pick])) continue;
            n++;
            byte[] result;
            try
            {
                result = V2.Decompress(mutant, packing);
            }
            catch (InvalidDataException)
            {
                rejected++;
                continue;
            }
            catch (DictionaryNotFoundException)
            {
                missing++;
                continue;
            }
            if (result.AsSpan().SequenceEqual(originals[pick])) exact++;
            else wrong++;
        }
        output.WriteLine($"{kind} packed envelopes: {Mutants:N0} mutants in {stopwatch.ElapsedMilliseconds} ms: {rejected} InvalidDataException, " +
            $"{missing} DictionaryNotFoundException (a changed id), {exact} decoded to the original, {wrong} to other bytes");
        Assert.Equal(0, wrong);
        Assert.Equal(Mutants, rejected + missing + exact);
    }

    /// <summary>
    /// What the 2-byte checksum keeps for packed envelopes: mutants decoded without any checksum show how many wrong
    /// outputs the block and the packed stream's own structure let through; each of those passes v2's check with
    /// probability 2^-16. Reported, and the structure must reject most mutants by itself.
    /// </summary>
    [Fact]
    public void PackedEnvelopes_WithoutTheChecksum_StructureRejectsMostMutants_AndTheRestMeetTheShortChecksum()
    {
        const int Mutants = 20_000;
        ZstdDictionary packing = Packing("json");
        (List<byte[]> originals, List<byte[]> envelopes) = PackedOnly(StructureModelTests.JsonHeldOut, packing);
        var random = new Random(703);
        int rejected = 0, harmless = 0, wrong = 0, pass16 = 0;
        for (int n = 0; n < Mutants;)
        {
            int pick = random.Next(envelopes.Count);
            EnvelopeHeader header = Header(envelopes[pick]);
            // Mutate the payload only, then decode it as the codec does (no checksum): the structure's own defence.
            byte[] payload = envelopes[pick].AsSpan(header.HeaderLength, header.PayloadLength).ToArray();
            byte[] mutant = Mutate(payload, random);
            if (mutant.AsSpan().SequenceEqual(payload) || mutant.Length == 0) continue;
            n++;
            byte[] result = new byte[originals[pick].Length];
            try
            {
                Compression.Codecs.PackedZstdCodec.Instance.Decompress(mutant, result, packing);
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
        double missRate = (double)wrong / Mutants;
        output.WriteLine($"packed json payloads, no checksum: {Mutants} mutants, {rejected} rejected by the block and the packed stream, {harmless} harmless, " +
            $"{wrong} wrong ({missRate:P2}); {pass16} of those pass v2's 16-bit checksum; detection with it: 1 - {missRate:F4} x 2^-16 = {1 - missRate / 65536:P6}");
        Assert.Equal(Mutants, rejected + harmless + wrong);
        Assert.True(rejected > Mutants / 2, $"only {rejected} of {Mutants} rejected by the structure");
        Assert.True(pass16 <= 1 + wrong / 16384, $"{pass16} of {wrong} wrong outputs pass a 16-bit check");
    }

    /// <summary>The first 60 documents that are written packed (the tiny ones are stored), and their envelopes.</summary>
    private static (List<byte[]> Originals, List<byte[]> Envelopes) PackedOnly(List<byte[]> documents, ZstdDictionary packing)
    {
        var pairs = documents.Select(d => (Document: d, Envelope: V2.Compress(d, packing)))
            .Where(p => Header(p.Envelope).Codec == CompressionCodec.PackedZstd).Take(60).ToList();
        Assert.Equal(60, pairs.Count);
        return (pairs.Select(p => p.Document).ToList(), pairs.Select(p => p.Envelope).ToList());
    }

    /// <summary>The mutations of the structure's own mutation tests: flipped bits, overwritten, inserted or deleted bytes, cuts, duplicated tails.</summary>
    private static byte[] Mutate(byte[] bytes, Random random) => StructureMutationTests.Mutate(bytes, random);
}
