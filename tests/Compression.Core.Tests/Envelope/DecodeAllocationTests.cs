using System.Buffers;
using Compression.Codecs;
using Compression.Internal;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// Decoding allocates what the data proves, not what a header claims (docs/reliability.md, "Lying headers"). Every
/// figure is <see cref="GC.GetAllocatedBytesForCurrentThread"/> around one call, the first of its kind in the test, so
/// pool warm-up counts against it.
/// </summary>
public sealed class DecodeAllocationTests(ITestOutputHelper output)
{
    private const int Declared64MiB = 64 * 1024 * 1024;
    private const long OneMiB = 1024 * 1024;

    private static readonly DocumentCompressor Reader = new();

    public static TheoryData<CompressionCodec, string> CodecsAndShapes()
    {
        var data = new TheoryData<CompressionCodec, string>();
        foreach (var codec in Corpus.AllCodecs)
        {
            foreach (string shape in new[] { "garbage-6", "garbage-64KiB", "valid-7", "valid-100KB-of-zeros" })
                data.Add(codec, shape);
        }
        return data;
    }

    public static TheoryData<CompressionCodec> CompressingCodecs() => new(Corpus.AllCodecs.Where(c => c != CompressionCodec.Stored));

    /// <summary>A raw payload of <paramref name="codec"/>, as the envelope holds it, for <paramref name="document"/>.</summary>
    private static byte[] Payload(CompressionCodec codec, byte[] document)
    {
        var c = Codec.For(codec);
        var buffer = new byte[document.Length * 2 + 1024];
        Assert.True(c.TryCompress(document, buffer, c.DefaultLevel, null, out int written));
        return buffer[..written];
    }

    private static byte[] Shape(CompressionCodec codec, string shape) => shape switch
    {
        "garbage-6" => [0x5A, 0xA5, 0x00, 0xFF, 0x13, 0x37],
        "garbage-64KiB" => Corpus.Random(64 * 1024, 99),
        "valid-7" => Payload(codec, "{\"a\":1}"u8.ToArray()),
        "valid-100KB-of-zeros" => Payload(codec, new byte[100_000]),
        _ => throw new ArgumentOutOfRangeException(nameof(shape)),
    };

    /// <summary>An envelope of <paramref name="codec"/> that declares <paramref name="declared"/> bytes around <paramref name="payload"/>.</summary>
    internal static byte[] Forge(CompressionCodec codec, int declared, ReadOnlySpan<byte> payload, uint? checksum = null)
    {
        var envelope = new List<byte> { DocumentEnvelope.Magic, (byte)((byte)codec | (checksum is null ? 0 : DocumentEnvelope.ChecksumFlag)) };
        var varint = new byte[Varint.MaxLength32];
        envelope.AddRange(varint[..Varint.Write(varint, (uint)declared)]);
        envelope.AddRange(payload.ToArray());
        if (checksum is uint hash) envelope.AddRange(BitConverter.GetBytes(hash));
        return [.. envelope];
    }

    private static long Measure(Action action)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        action();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    [Fact]
    public void Decompress_TwelveByteEnvelopeDeclaring64MiB_ThrowsForEveryCodecAllocatingUnder1MiB()
    {
        // The finding as reported: C5 <codec> 80 80 80 20 (64 MiB) and 6 bytes of payload.
        foreach (var codec in Corpus.AllCodecs)
        {
            byte[] envelope = Forge(codec, Declared64MiB, Shape(codec, "garbage-6"));
            Assert.Equal(12, envelope.Length);
            var writer = new ArrayBufferWriter<byte>();
            long toArray = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope)));
            long toWriter = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope, writer)));
            output.WriteLine($"{codec}: byte[] {toArray:N0} B, IBufferWriter {toWriter:N0} B");
            Assert.True(toArray < OneMiB, $"{codec}: Decompress(byte[]) allocated {toArray:N0} bytes");
            Assert.True(toWriter < OneMiB, $"{codec}: Decompress(IBufferWriter) allocated {toWriter:N0} bytes");
            Assert.Equal(0, writer.WrittenCount);
            Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(envelope, out _));
        }
    }

    [Theory]
    [MemberData(nameof(CodecsAndShapes))]
    public void Decompress_SmallPayloadDeclaring64MiB_ThrowsAllocatingUnder1MiB(CompressionCodec codec, string shape)
    {
        byte[] envelope = Forge(codec, Declared64MiB, Shape(codec, shape));
        var writer = new ArrayBufferWriter<byte>();
        InvalidDataException? first = null;
        long toArray = Measure(() => first = Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope)));
        long toWriter = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope, writer)));
        output.WriteLine($"{codec} {shape} ({envelope.Length} B envelope): byte[] {toArray:N0} B, IBufferWriter {toWriter:N0} B; {first!.Message}");
        Assert.True(toArray < OneMiB, $"{codec} {shape}: Decompress(byte[]) allocated {toArray:N0} bytes");
        Assert.True(toWriter < OneMiB, $"{codec} {shape}: Decompress(IBufferWriter) allocated {toWriter:N0} bytes");
        Assert.Equal(0, writer.WrittenCount);
    }

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void Decompress_ValidPayloadDecodingToLessThanThe64MiBDeclared_AllocatesInProportionToItsOutput(CompressionCodec codec)
    {
        foreach (int produced in new[] { 1024 * 1024, 4 * 1024 * 1024 })
        {
            byte[] envelope = Forge(codec, Declared64MiB, Payload(codec, new byte[produced]));
            var writer = new ArrayBufferWriter<byte>();
            long toArray = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope)));
            long toWriter = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope, writer)));
            output.WriteLine($"{codec}, payload of {envelope.Length:N0} B producing {produced:N0} B: byte[] {toArray:N0} B, IBufferWriter {toWriter:N0} B");
            long allowed = 2L * produced + OneMiB;
            Assert.True(toArray < allowed, $"{codec} {produced}: Decompress(byte[]) allocated {toArray:N0} bytes");
            Assert.True(toWriter < allowed, $"{codec} {produced}: Decompress(IBufferWriter) allocated {toWriter:N0} bytes");
            Assert.Equal(0, writer.WrittenCount);
        }
    }

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void Decompress_ValidPayloadDecodingToMoreThanALargeDeclaredLength_ThrowsAllocatingAboutTheDeclaredLength(CompressionCodec codec)
    {
        // 16 MiB of zeros under an envelope declaring 512 KiB (above the direct-decode limit).
        const int declared = 512 * 1024;
        byte[] envelope = Forge(codec, declared, Payload(codec, new byte[16 * 1024 * 1024]));
        var writer = new ArrayBufferWriter<byte>();
        InvalidDataException? ex = null;
        long toArray = Measure(() => ex = Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope)));
        long toWriter = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope, writer)));
        output.WriteLine($"{codec}: byte[] {toArray:N0} B, IBufferWriter {toWriter:N0} B; {ex!.Message}");
        Assert.Contains(codec.ToString(), ex.Message);
        Assert.True(toArray < declared + 512 * 1024, $"{codec}: Decompress(byte[]) allocated {toArray:N0} bytes");
        Assert.True(toWriter < declared + 512 * 1024, $"{codec}: Decompress(IBufferWriter) allocated {toWriter:N0} bytes");
        Assert.Equal(0, writer.WrittenCount);
    }

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void Decompress_LargeDocumentWithALengthOffByOne_ThrowsNamingTheCodec(CompressionCodec codec)
    {
        byte[] document = Corpus.Json(600_000, 31);
        byte[] payload = Payload(codec, document);
        foreach (int declared in new[] { document.Length - 1, document.Length + 1 })
        {
            foreach (bool checksum in new[] { false, true })
            {
                byte[] envelope = Forge(codec, declared, payload, checksum ? System.IO.Hashing.XxHash32.HashToUInt32(document) : null);
                var writer = new ArrayBufferWriter<byte>();
                var ex = Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope));
                Assert.Contains(codec.ToString(), ex.Message);
                Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope, writer));
                Assert.Equal(0, writer.WrittenCount);
                Assert.Throws<InvalidDataException>(() => Reader.TryDecompress(envelope, new byte[declared], out _));
            }
        }
    }

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void Decompress_LargeDocumentWithAWrongChecksum_ThrowsAndWritesNothing(CompressionCodec codec)
    {
        byte[] document = Corpus.Json(600_000, 32);
        byte[] envelope = Forge(codec, document.Length, Payload(codec, document), System.IO.Hashing.XxHash32.HashToUInt32(document) ^ 1);
        var writer = new ArrayBufferWriter<byte>();
        var ex = Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope, writer));
        Assert.Contains("checksum", ex.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Equal(0, writer.WrittenCount);
        Assert.Throws<InvalidDataException>(() => Reader.Decompress(envelope));

        // The same envelope with the right checksum decodes, through every API.
        envelope[^4] ^= 1;
        Assert.Equal(document, Reader.Decompress(envelope));
        Reader.Decompress(envelope, writer);
        Assert.True(writer.WrittenSpan.SequenceEqual(document));
        var span = new byte[document.Length];
        Assert.True(Reader.TryDecompress(envelope, span, out int written));
        Assert.Equal(document.Length, written);
        Assert.Equal(document, span);
    }

    [Theory]
    [InlineData(CompressionCodec.Stored)]
    [InlineData(CompressionCodec.Zstd)]
    [InlineData(CompressionCodec.Lz4)]
    public void TryDecompress_IntoTheCallersBuffer_AllocatesNothing(CompressionCodec codec)
    {
        // The span path stays allocation-free for the codecs whose libraries decode span to span without state objects
        // (as before this change: Snappier allocates an 80-byte decompressor per call; deflate, gzip and brotli a stream
        // or decoder handle).
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec });
        foreach (int size in new[] { 300, 4_000, 600_000 })
        {
            byte[] document = Corpus.Json(size, size);
            byte[] envelope = compressor.Compress(document);
            var destination = new byte[size];
            Assert.True(compressor.TryDecompress(envelope, destination, out _)); // warms the context pool
            // The least of three calls: the runtime may allocate on this thread now and then (a method promoted to its
            // optimized tier during a call, seen once as 944 B on a machine at load 13); a decoder that allocates does
            // so on every call and still fails.
            long allocated = Enumerable.Range(0, 3).Min(_ => Measure(() => Assert.True(compressor.TryDecompress(envelope, destination, out _))));
            Assert.Equal(0, allocated);
            Assert.Equal(document, destination);
        }
    }

    [Fact]
    public void TryDecompress_TwelveByteEnvelopeDeclaring64MiB_ThrowsAllocatingOnlyTheException()
    {
        foreach (var codec in Corpus.AllCodecs)
        {
            byte[] envelope = Forge(codec, Declared64MiB, Shape(codec, "garbage-6"));
            long allocated = Measure(() => Assert.Throws<InvalidDataException>(() => Reader.TryDecompress(envelope, Span<byte>.Empty, out _)));
            Assert.True(allocated < 16 * 1024, $"{codec}: {allocated:N0} bytes");
        }
    }
}

/// <summary>The per-codec worst-case expansion <see cref="DocumentEnvelope.TryReadHeader"/> checks declared lengths against.</summary>
public sealed class ExpansionBoundTests(ITestOutputHelper output)
{
    public static TheoryData<CompressionCodec> CompressingCodecs() => new(Corpus.AllCodecs.Where(c => c != CompressionCodec.Stored));

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void TryReadHeader_DeclaredOneOverTheCodecBound_ThrowsNamingTheCodecAndTheBound(CompressionCodec codec)
    {
        foreach (int payloadLength in new[] { 1, 6, 100, 2048 })
        {
            long most = Codec.For(codec).MaxDecodedLength(payloadLength);
            if (most >= DocumentCompressorOptions.DefaultMaxUncompressedLength) continue;
            byte[] payload = new byte[payloadLength];
            byte[] over = DecodeAllocationTests.Forge(codec, (int)most + 1, payload);
            var ex = Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(over, out _));
            Assert.Contains(codec.ToString(), ex.Message);
            Assert.Contains($"at most {most}", ex.Message);
            Assert.Throws<InvalidDataException>(() => new DocumentCompressor().ReadHeader(over));

            // At the bound the header is accepted (the payload, all zeros, is then refused by the decoder).
            Assert.True(DocumentEnvelope.TryReadHeader(DecodeAllocationTests.Forge(codec, (int)most, payload), out var header));
            Assert.Equal((int)most, header.UncompressedLength);
        }
    }

    [Theory]
    [InlineData(CompressionCodec.Stored, 1, 1)]
    [InlineData(CompressionCodec.Zstd, 4, 131_072)]
    [InlineData(CompressionCodec.Lz4, 1, 255)]
    [InlineData(CompressionCodec.Snappy, 3, 64)]
    [InlineData(CompressionCodec.Deflate, 1, 1032)]
    [InlineData(CompressionCodec.Gzip, 1, 1032)]
    [InlineData(CompressionCodec.Brotli, 4, 16 * 1024 * 1024)]
    public void MaxDecodedLength_IsTheDocumentedRatio(CompressionCodec codec, int payload, int produced)
    {
        Assert.Equal(produced, Codec.For(codec).MaxDecodedLength(payload));
        Assert.Equal(1000L * produced, Codec.For(codec).MaxDecodedLength(1000 * payload));
        Assert.Equal(0, Codec.For(codec).MaxDecodedLength(0));
    }

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void TryReadHeader_BestCaseCompressionAtEveryLevelExtreme_StaysWithinTheCodecBound(CompressionCodec codec)
    {
        // Zeros are the best case of every encoder: real writers must stay within the bound the reader enforces.
        var c = Codec.For(codec);
        foreach (int size in new[] { 1000, 1 << 20, 24 << 20 })
        {
            foreach (int level in new[] { c.MinLevel, c.DefaultLevel, c.MaxLevel }.Distinct())
            {
                var writer = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Level = level, Checksum = false });
                byte[] envelope = writer.Compress(new byte[size]);
                Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
                if (header.Codec != codec) continue; // stored: compression did not pay
                long most = c.MaxDecodedLength(header.PayloadLength);
                output.WriteLine($"{codec} level {level}: {size:N0} zeros -> {header.PayloadLength:N0} B payload, ratio {(double)size / header.PayloadLength:F1}, bound {most:N0}");
                Assert.InRange(size, 0, most);
                Assert.Equal(size, writer.Decompress(envelope).Length);
            }
        }
    }
}
