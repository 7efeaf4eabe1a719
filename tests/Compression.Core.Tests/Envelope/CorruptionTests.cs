using System.Text;
using Compression.Internal;
using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class CorruptionTests
{
    private static readonly DocumentCompressor Checked = new();

    private static byte[] ValidEnvelope(CompressionCodec codec, bool checksum = true, int size = 2000)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum });
        return compressor.Compress(Corpus.Json(size, 7), codec == CompressionCodec.Zstd ? Corpus.Dictionary : null);
    }

    public static TheoryData<CompressionCodec> Codecs() => new(Corpus.AllCodecs);

    [Theory]
    [MemberData(nameof(Codecs))]
    public void Decompress_EveryTruncation_ThrowsInvalidData(CompressionCodec codec)
    {
        byte[] envelope = ValidEnvelope(codec);
        for (int length = 1; length < envelope.Length; length++)
        {
            var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress(envelope.AsSpan(0, length), Corpus.Dictionary));
            Assert.False(string.IsNullOrWhiteSpace(ex.Message));
        }
    }

    [Theory]
    [MemberData(nameof(Codecs))]
    public void Decompress_WrongChecksum_ThrowsNamingTheChecksum(CompressionCodec codec)
    {
        byte[] envelope = ValidEnvelope(codec);
        envelope[^1] ^= 0x01;
        var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress(envelope, Corpus.Dictionary));
        Assert.Contains("Checksum", ex.Message, StringComparison.OrdinalIgnoreCase);
    }

    [Theory]
    [MemberData(nameof(Codecs))]
    public void Decompress_FlippedPayloadBit_IsRejectedWhenChecksummed(CompressionCodec codec)
    {
        byte[] original = ValidEnvelope(codec);
        Assert.True(DocumentEnvelope.TryReadHeader(original, out var header));
        for (int bit = 0; bit < 8; bit++)
        {
            byte[] envelope = (byte[])original.Clone();
            envelope[header.HeaderLength + header.PayloadLength / 2] ^= (byte)(1 << bit);
            Assert.Throws<InvalidDataException>(() => Checked.Decompress(envelope, Corpus.Dictionary));
        }
    }

    [Theory]
    [InlineData(7)]
    [InlineData(8)]
    [InlineData(12)]
    [InlineData(15)]
    public void Decompress_UnknownCodecId_ThrowsNamingTheCodec(int codecId)
    {
        byte[] envelope = ValidEnvelope(CompressionCodec.Stored);
        envelope[1] = (byte)((envelope[1] & 0xF0) | codecId);
        var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress(envelope));
        Assert.Contains($"codec id {codecId}", ex.Message);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Decompress_UnknownVersion_ThrowsNamingTheVersion(int version)
    {
        byte[] envelope = ValidEnvelope(CompressionCodec.Zstd);
        envelope[1] = (byte)((envelope[1] & ~0x30) | (version << 4));
        var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress(envelope, Corpus.Dictionary));
        Assert.Contains($"version {version}", ex.Message);
    }

    [Fact]
    public void Decompress_DeclaredLengthOverTheLimit_ThrowsBeforeAllocating()
    {
        // A 20-byte envelope that claims 100 MiB: the default limit (64 MiB) refuses it.
        var envelope = new byte[20];
        envelope[0] = DocumentEnvelope.Magic;
        envelope[1] = (byte)CompressionCodec.Zstd;
        Varint.Write(envelope.AsSpan(2), 100u * 1024 * 1024);
        var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress(envelope));
        Assert.Contains("limit", ex.Message);

        var small = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = 1000 });
        byte[] valid = Checked.Compress(Corpus.Json(1001, 3));
        ex = Assert.Throws<InvalidDataException>(() => small.Decompress(valid));
        Assert.Contains("1000", ex.Message);
    }

    [Fact]
    public void Decompress_LengthThatLies_IsRejected()
    {
        byte[] document = Corpus.Json(3000, 4);
        foreach (var codec in Corpus.AllCodecs)
        {
            var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = false });
            byte[] envelope = compressor.Compress(document);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            foreach (int declared in new[] { 2999, 3001, 10, 60_000 })
            {
                // Rebuild the header with a lying length and the same payload.
                var forged = new List<byte> { envelope[0], envelope[1] };
                var varint = new byte[5];
                forged.AddRange(varint[..Varint.Write(varint, (uint)declared)]);
                forged.AddRange(envelope[header.HeaderLength..]);
                Assert.Throws<InvalidDataException>(() => compressor.Decompress(forged.ToArray()));
            }
        }
    }

    [Fact]
    public void Decompress_DictionaryIdOnANonZstdCodec_IsRejected()
    {
        byte[] envelope = ValidEnvelope(CompressionCodec.Lz4, checksum: false);
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        var forged = new List<byte> { envelope[0], (byte)(envelope[1] | 0x80) };
        forged.AddRange(envelope[2..header.HeaderLength]);
        forged.Add(5); // dictionary id 5
        forged.AddRange(envelope[header.HeaderLength..]);
        var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress(forged.ToArray()));
        Assert.Contains("dictionary", ex.Message);
    }

    [Fact]
    public void Decompress_MissingOrWrongDictionary_ThrowsDictionaryNotFound()
    {
        byte[] envelope = ValidEnvelope(CompressionCodec.Zstd);
        var ex = Assert.Throws<DictionaryNotFoundException>(() => Checked.Decompress(envelope));
        Assert.Equal(Corpus.Dictionary.Id, ex.DictionaryId);
        Assert.Contains(Corpus.Dictionary.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), ex.Message);

        var other = ZstdDictionary.Create(77, Corpus.Dictionary.Content.Span);
        ex = Assert.Throws<DictionaryNotFoundException>(() => Checked.Decompress(envelope, other));
        Assert.Contains("77", ex.Message);
    }

    [Fact]
    public void Decompress_EmptyOrNotAnEnvelope_ThrowsInvalidData()
    {
        Assert.Throws<InvalidDataException>(() => Checked.Decompress(ReadOnlySpan<byte>.Empty));
        var ex = Assert.Throws<InvalidDataException>(() => Checked.Decompress("{\"a\":1}"u8));
        Assert.Contains("not an envelope", ex.Message);
    }

    [Theory]
    [InlineData("{\"a\":1}")]
    [InlineData("[1,2]")]
    [InlineData("  {}")]
    [InlineData("\"text\"")]
    [InlineData("\uFEFF{}")]
    [InlineData("")]
    public void TryReadHeader_LegacyJson_ReturnsFalse(string json)
    {
        Assert.False(DocumentEnvelope.TryReadHeader(Encoding.UTF8.GetBytes(json), out _));
        Assert.False(DocumentEnvelope.IsEnvelope(Encoding.UTF8.GetBytes(json)));
    }

    [Fact]
    public void ZstdDictionary_Create_RejectsBadBytes()
    {
        Assert.Throws<InvalidDataException>(() => ZstdDictionary.Create(1, new byte[100]));
        Assert.Throws<InvalidDataException>(() => ZstdDictionary.Create(1, new byte[4096]));
        Assert.Throws<InvalidDataException>(() => ZstdDictionary.Create(1, Corpus.Dictionary.Content.Span, maximumSize: 1024));
        byte[] broken = Corpus.Dictionary.Content.ToArray();
        Array.Fill(broken, (byte)0xFF, 8, 200); // corrupt the entropy tables after the magic and id
        Assert.Throws<InvalidDataException>(() => ZstdDictionary.Create(1, broken));
    }
}

/// <summary>Snappy (Snappier) and raw deflate stop at the end of their stream and cannot report unread input; see docs/format.md.</summary>
public sealed class TrailingBytesTests
{
    [Theory]
    [InlineData(CompressionCodec.Stored)]
    [InlineData(CompressionCodec.Zstd)]
    [InlineData(CompressionCodec.Lz4)]
    [InlineData(CompressionCodec.Brotli)]
    public void Decompress_BytesAfterThePayload_AreRejected(CompressionCodec codec)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = false });
        byte[] envelope = compressor.Compress(Corpus.Json(3000, 9));
        foreach (byte extra in new byte[] { 0x00, 0x01, 0xFF })
        {
            byte[] longer = [.. envelope, extra];
            Assert.Throws<InvalidDataException>(() => compressor.Decompress(longer));
        }
    }
}

public sealed class DecompressionBombTests
{
    [Fact]
    public void Decompress_ZstdFrameExpandingFarBeyondTheDeclaredLength_IsRejectedWithoutAllocatingIt()
    {
        // 16 MiB of zeros compress to a few hundred bytes; the envelope declares 1,000.
        byte[] frame;
        using (var compressor = new ZstdSharp.Compressor(19))
        {
            compressor.SetParameter(ZstdSharp.Unsafe.ZSTD_cParameter.ZSTD_c_experimentalParam2, 1); // magicless, as the envelope expects
            frame = compressor.Wrap(new byte[16 * 1024 * 1024]).ToArray();
        }
        var envelope = new List<byte> { DocumentEnvelope.Magic, (byte)CompressionCodec.Zstd };
        var varint = new byte[5];
        envelope.AddRange(varint[..Compression.Internal.Varint.Write(varint, 1000)]);
        envelope.AddRange(frame);
        byte[] bomb = [.. envelope];

        var reader = new DocumentCompressor();
        long before = GC.GetAllocatedBytesForCurrentThread();
        var ex = Assert.Throws<InvalidDataException>(() => reader.Decompress(bomb));
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Contains("1000", ex.Message);
        Assert.True(allocated < 256 * 1024, $"{allocated} bytes allocated while rejecting the bomb");
    }

    [Theory]
    [InlineData(CompressionCodec.Lz4)]
    [InlineData(CompressionCodec.Snappy)]
    [InlineData(CompressionCodec.Deflate)]
    [InlineData(CompressionCodec.Brotli)]
    [InlineData(CompressionCodec.Gzip)]
    public void Decompress_PayloadExpandingBeyondTheDeclaredLength_IsRejected(CompressionCodec codec)
    {
        // A real payload of 1 MiB of zeros, under an envelope that declares 100 bytes.
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = false });
        byte[] honest = compressor.Compress(new byte[1024 * 1024]);
        Assert.True(DocumentEnvelope.TryReadHeader(honest, out var header));
        var forged = new List<byte> { honest[0], honest[1], 100 };
        forged.AddRange(honest[header.HeaderLength..]);
        long before = GC.GetAllocatedBytesForCurrentThread();
        Assert.Throws<InvalidDataException>(() => compressor.Decompress(forged.ToArray()));
        Assert.True(GC.GetAllocatedBytesForCurrentThread() - before < 512 * 1024);
    }
}
