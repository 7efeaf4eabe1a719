using System.Buffers;
using Compression.Codecs;
using Compression.Internal;
using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class EnvelopeRoundTripTests
{
    private static readonly int[] Sizes = [0, 1, 2, 31, 32, 33, 100, 127, 128, 1000, 1024, 4095, 16_384, 65_536, 200_000, 1024 * 1024];

    public static TheoryData<CompressionCodec, bool, EnvelopeFormat> CodecsAndChecksum()
    {
        var data = new TheoryData<CompressionCodec, bool, EnvelopeFormat>();
        foreach (var format in Enum.GetValues<EnvelopeFormat>())
        {
            foreach (var codec in Corpus.AllCodecs)
            {
                data.Add(codec, true, format);
                data.Add(codec, false, format);
            }
        }
        return data;
    }

    /// <summary>The checksum length of a format: v1 4 bytes (XxHash32), v2 2 bytes (its low 16 bits).</summary>
    private static int ChecksumLength(bool checksum, EnvelopeFormat format) => !checksum ? 0 : format == EnvelopeFormat.V1 ? 4 : 2;

    /// <summary>The length of the stored envelope of a document: what no envelope may exceed.</summary>
    private static int StoredLength(int size, bool checksum, EnvelopeFormat format = EnvelopeFormat.V2) =>
        2 + Varint.GetLength((uint)size) + size + ChecksumLength(checksum, format);

    /// <summary>Compresses with all three APIs (which must agree), decodes with all three, and returns the envelope.</summary>
    private static byte[] RoundTripEveryApi(DocumentCompressor compressor, byte[] document, ZstdDictionary? dictionary, string because)
    {
        int max = DocumentCompressor.GetMaxEnvelopeLength(document.Length);

        // span in, span out
        var buffer = new byte[max];
        Assert.True(compressor.TryCompress(document, buffer, out int written, dictionary), because);
        Assert.InRange(written, 3, max);
        byte[] envelope = buffer[..written];

        // IBufferWriter, appending after what the writer already holds
        var writer = new ArrayBufferWriter<byte>();
        writer.Write<byte>([1, 2, 3]);
        compressor.Compress(document, writer, dictionary);
        Assert.True(writer.WrittenSpan[3..].SequenceEqual(envelope), $"{because}: buffer-writer envelope differs from span envelope");

        // byte[]
        Assert.Equal(envelope, compressor.Compress(document, dictionary));

        // span decode
        var output = new byte[document.Length];
        Assert.True(compressor.TryDecompress(envelope, output, out int read, dictionary), because);
        Assert.Equal(document.Length, read);
        Assert.True(output.AsSpan().SequenceEqual(document), $"{because}: span round trip");

        // span decode into a larger destination
        var larger = new byte[document.Length + 10];
        Assert.True(compressor.TryDecompress(envelope, larger, out read, dictionary), because);
        Assert.Equal(document.Length, read);
        Assert.True(larger.AsSpan(0, read).SequenceEqual(document), $"{because}: span round trip, larger destination");

        // IBufferWriter decode, appending
        var decoded = new ArrayBufferWriter<byte>();
        decoded.Write<byte>([9]);
        compressor.Decompress(envelope, decoded, dictionary);
        Assert.Equal(document.Length + 1, decoded.WrittenCount);
        Assert.True(decoded.WrittenSpan[1..].SequenceEqual(document), $"{because}: buffer-writer round trip");

        // byte[] decode
        Assert.Equal(document, compressor.Decompress(envelope, dictionary));
        return envelope;
    }

    [Theory]
    [MemberData(nameof(CodecsAndChecksum))]
    public void Compress_GeneratedDocuments0BTo1MiB_RoundTripByteExactThroughEveryApi(CompressionCodec codec, bool checksum, EnvelopeFormat format)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum, Format = format });
        foreach (int size in Sizes)
        {
            var documents = new (string Kind, byte[] Bytes)[] { ("json", Corpus.Json(size, size)), ("random", Corpus.Random(size, size)), ("zeros", Corpus.Zeros(size)) };
            foreach (var (kind, document) in documents)
            {
                string because = $"{codec} checksum={checksum} {format} {kind} {size} B";
                byte[] envelope = RoundTripEveryApi(compressor, document, dictionary: null, because);

                Assert.True(envelope.Length <= DocumentCompressor.GetMaxEnvelopeLength(size), because);
                Assert.True(envelope.Length <= StoredLength(size, checksum, format), because);
                Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header), because);
                Assert.Equal((int)format, header.FormatVersion);
                Assert.Equal(format, header.Format);
                Assert.Equal(size, header.UncompressedLength);
                Assert.Equal(checksum, header.HasChecksum);
                Assert.Equal(ChecksumLength(checksum, format), header.ChecksumLength);
                Assert.Null(header.DictionaryId);
                Assert.Equal(envelope.Length, header.HeaderLength + header.PayloadLength + ChecksumLength(checksum, format));
                Assert.Equal(2 + Varint.GetLength((uint)size), header.HeaderLength);

                if (size < 32 || kind == "random" || codec == CompressionCodec.Stored)
                {
                    // Under MinimumSize, incompressible, or asked for: stored, exactly the document plus the header.
                    Assert.Equal(CompressionCodec.Stored, header.Codec);
                    Assert.Equal(StoredLength(size, checksum, format), envelope.Length);
                    Assert.True(envelope.AsSpan(header.HeaderLength, size).SequenceEqual(document), because);
                }
                else
                {
                    // Zeros from 32 bytes on and JSON from 1000 bytes on compress with every codec.
                    if (kind == "zeros" || size >= 1000) Assert.True(header.Codec == codec, $"{because}: stored instead of {codec}");
                    if (header.Codec != CompressionCodec.Stored) Assert.True(envelope.Length < StoredLength(size, checksum, format), because);
                }
            }
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(19)]
    public void Compress_ZstdLevelWithoutDictionary_RoundTripsByteExact(int level)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = level });
        Assert.Equal(level, compressor.Level);
        foreach (byte[] document in Corpus.Mixed(100, 0, 5000, level).Append(Corpus.Json(1024 * 1024, level)))
        {
            byte[] envelope = RoundTripEveryApi(compressor, document, null, $"zstd level {level}, {document.Length} B");
            Assert.True(envelope.Length <= DocumentCompressor.GetMaxEnvelopeLength(document.Length));
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            Assert.Null(header.DictionaryId);
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(19)]
    public void Compress_ZstdLevelWithTrainedDictionary_RoundTripsByteExactAndNamesTheDictionary(int level)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = level });
        var dictionary = Corpus.Dictionary;
        var random = new Random(level);
        var documents = Corpus.Mixed(100, 0, 5000, 100 + level).Concat(Enumerable.Range(0, 100).Select(_ => Corpus.JsonRecord(random)));
        foreach (byte[] document in documents)
        {
            byte[] envelope = RoundTripEveryApi(compressor, document, dictionary, $"zstd level {level} with dictionary, {document.Length} B");
            Assert.True(envelope.Length <= DocumentCompressor.GetMaxEnvelopeLength(document.Length));
            Assert.True(envelope.Length <= StoredLength(document.Length, checksum: true));
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            if (header.Codec == CompressionCodec.Zstd)
            {
                Assert.Equal(Corpus.DictionaryId, header.DictionaryId);
                Assert.Equal(2 + Varint.GetLength((uint)document.Length) + Varint.GetLength(Corpus.DictionaryId), header.HeaderLength);
            }
            else
            {
                Assert.Equal(CompressionCodec.Stored, header.Codec);
                Assert.Null(header.DictionaryId); // a stored envelope never names a dictionary
            }
        }
    }

    [Fact]
    public void ZstdDictionaryTrainer_TwoHundredJsonDocuments_TrainsAUsableDictionaryOfAtMost16KiB()
    {
        var dictionary = Corpus.Dictionary;
        Assert.Equal(Corpus.DictionaryId, dictionary.Id);
        Assert.InRange(dictionary.Content.Length, ZstdDictionary.MinimumSize, 16 * 1024);
        Assert.Equal(ZstdDictionary.DictionaryMagic, System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(dictionary.Content.Span));
    }

    [Fact]
    public void Compress_SmallJsonRecordsWithDictionary_AreMuchSmallerThanWithout()
    {
        var compressor = new DocumentCompressor();
        var random = new Random(77);
        long plain = 0, withDictionary = 0;
        for (int i = 0; i < 200; i++)
        {
            byte[] document = Corpus.JsonRecord(random);
            plain += compressor.Compress(document).Length;
            withDictionary += compressor.Compress(document, Corpus.Dictionary).Length;
        }
        Assert.True(withDictionary < plain * 0.7, $"{withDictionary} B with the dictionary against {plain} B without");
    }

    /// <summary>The codecs a setting can name that take no dictionary (all but zstd).</summary>
    public static TheoryData<CompressionCodec> CodecsWithoutADictionary() => new(Corpus.AllCodecs.Where(c => !CodecRegistry.For(c).TakesDictionary));

    [Theory]
    [MemberData(nameof(CodecsWithoutADictionary))]
    public void Compress_DictionaryWithANonZstdCodec_IsIgnored(CompressionCodec codec)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec });
        byte[] document = Corpus.Json(3000, 5);
        byte[] envelope = compressor.Compress(document, Corpus.Dictionary);
        Assert.Equal(compressor.Compress(document), envelope);
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Null(header.DictionaryId);
        Assert.Equal(document, compressor.Decompress(envelope));
    }

    [Theory]
    [MemberData(nameof(CodecsAndChecksum))]
    public void Compress_IncompressibleOrUnderMinimumSize_IsStored(CompressionCodec codec, bool checksum, EnvelopeFormat format)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum, MinimumSize = 64, Format = format });
        foreach (byte[] document in new[] { Corpus.Random(5000, 1), Corpus.Random(40, 1), Corpus.Json(63, 2), Corpus.Zeros(63), [] })
        {
            byte[] envelope = compressor.Compress(document, Corpus.Dictionary);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            Assert.Equal(CompressionCodec.Stored, header.Codec);
            Assert.Null(header.DictionaryId);
            Assert.Equal(StoredLength(document.Length, checksum, format), envelope.Length);
            Assert.Equal(document, compressor.Decompress(envelope));
        }
    }

    public static TheoryData<CompressionCodec> CompressingCodecs() => new(Corpus.CompressingCodecs);

    [Theory]
    [MemberData(nameof(CompressingCodecs))]
    public void Compress_AtTheMinimumSizeBoundary_StoresBelowAndCompressesFrom(CompressionCodec codec)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec }); // MinimumSize 32
        Assert.True(DocumentEnvelope.TryReadHeader(compressor.Compress(Corpus.Zeros(31)), out var below));
        Assert.Equal(CompressionCodec.Stored, below.Codec);
        Assert.True(DocumentEnvelope.TryReadHeader(compressor.Compress(Corpus.Zeros(32)), out var at));
        Assert.Equal(codec, at.Codec);

        var zero = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, MinimumSize = 0 });
        Assert.True(DocumentEnvelope.TryReadHeader(zero.Compress(Corpus.Zeros(31)), out var tiny));
        Assert.Equal(codec, tiny.Codec);
        Assert.True(DocumentEnvelope.TryReadHeader(zero.Compress([]), out var empty));
        Assert.Equal(CompressionCodec.Stored, empty.Codec); // nothing to compress
    }

    [Fact]
    public void GetMaxEnvelopeLength_ExactAndNegative_CoversHeaderDictionaryIdAndChecksum()
    {
        Assert.Equal(2 + 1 + 5 + 0 + 4, DocumentCompressor.GetMaxEnvelopeLength(0));
        Assert.Equal(2 + 3 + 5 + 65_536 + 4, DocumentCompressor.GetMaxEnvelopeLength(65_536));
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentCompressor.GetMaxEnvelopeLength(-1));
    }

    [Fact]
    public void TryCompress_DestinationTooSmall_ReturnsFalse()
    {
        var stored = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Stored });
        byte[] document = Corpus.Json(100, 1);
        Assert.False(stored.TryCompress(document, new byte[50], out int written));
        Assert.Equal(0, written);

        // A destination that exactly fits the envelope is enough, one byte less is not.
        var zstd = new DocumentCompressor();
        byte[] envelope = zstd.Compress(document);
        Assert.True(zstd.TryCompress(document, new byte[envelope.Length], out written));
        Assert.Equal(envelope.Length, written);
        Assert.False(zstd.TryCompress(Corpus.Random(100, 1), new byte[100], out _));
    }

    [Fact]
    public void TryDecompress_DestinationTooSmall_ReturnsFalse()
    {
        var compressor = new DocumentCompressor();
        byte[] document = Corpus.Json(100, 1);
        byte[] envelope = compressor.Compress(document);
        Assert.False(compressor.TryDecompress(envelope, new byte[99], out int written));
        Assert.Equal(0, written);
        var exact = new byte[100];
        Assert.True(compressor.TryDecompress(envelope, exact, out written));
        Assert.Equal(document, exact);
    }

    [Fact]
    public void Compress_DocumentOverTheLimit_IsRefused()
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = 100 });
        Assert.Equal(100, compressor.Decompress(compressor.Compress(new byte[100])).Length);
        var ex = Assert.Throws<ArgumentException>(() => compressor.Compress(new byte[101]));
        Assert.Contains("MaxUncompressedLength", ex.Message);
    }

    [Fact]
    public void Compress_NullBufferWriter_Throws()
    {
        var compressor = new DocumentCompressor();
        Assert.Throws<ArgumentNullException>(() => compressor.Compress(new byte[10], (IBufferWriter<byte>)null!));
        Assert.Throws<ArgumentNullException>(() => compressor.Decompress(compressor.Compress(new byte[10]), (IBufferWriter<byte>)null!));
    }

    /// <summary>Each codec a setting can name that has more than one level, with its range (docs/configuration.md, "Level").</summary>
    public static TheoryData<CompressionCodec, int, int> CodecsWithLevels()
    {
        var data = new TheoryData<CompressionCodec, int, int>();
        foreach (var codec in Corpus.AllCodecs.Select(CodecRegistry.For).Where(c => c.MinLevel < c.MaxLevel)) data.Add(codec.Id, codec.MinLevel, codec.MaxLevel);
        return data;
    }

    [Theory]
    [MemberData(nameof(CodecsWithLevels))]
    public void Compress_EveryAllowedLevel_RoundTrips(CompressionCodec codec, int min, int max)
    {
        byte[] document = Corpus.Json(5000, 11);
        for (int level = min; level <= max; level++)
        {
            var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Level = level });
            byte[] envelope = compressor.Compress(document);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            // Deflate and gzip level 0 do not compress at all, so the document is stored.
            Assert.Equal(level == 0 && codec is CompressionCodec.Deflate or CompressionCodec.Gzip ? CompressionCodec.Stored : codec, header.Codec);
            Assert.Equal(document, compressor.Decompress(envelope));
        }
    }

    [Fact]
    public void Decompress_EnvelopeWrittenWithOtherSettings_IsReadByAnyCompressor()
    {
        // Envelopes are self-describing: the reader's codec, level and checksum settings do not matter.
        byte[] document = Corpus.Json(4000, 12);
        var readers = Corpus.AllCodecs.Select(c => new DocumentCompressor(new DocumentCompressorOptions { Codec = c, Checksum = false })).ToArray();
        foreach (var codec in Corpus.AllCodecs)
        {
            byte[] envelope = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Level = null }).Compress(document);
            foreach (var reader in readers) Assert.Equal(document, reader.Decompress(envelope));
        }
    }
}
