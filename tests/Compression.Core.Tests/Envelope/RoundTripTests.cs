using System.Buffers;
using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class RoundTripTests
{
    public static TheoryData<CompressionCodec, bool> CodecsAndChecksum()
    {
        var data = new TheoryData<CompressionCodec, bool>();
        foreach (var codec in Corpus.AllCodecs)
        {
            data.Add(codec, true);
            data.Add(codec, false);
        }
        return data;
    }

    private static readonly int[] Sizes = [0, 1, 31, 32, 33, 100, 1000, 1024, 4095, 65536, 200_000, 1024 * 1024];

    [Theory]
    [MemberData(nameof(CodecsAndChecksum))]
    public void Compress_GeneratedDocumentsFrom0BTo1MB_RoundTripThroughEveryApi(CompressionCodec codec, bool checksum)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum });
        foreach (int size in Sizes)
        {
            foreach (byte[] document in new[] { Corpus.Json(size, size), Corpus.Random(size, size), Corpus.Zeros(size) })
            {
                // span in, span out
                var buffer = new byte[DocumentCompressor.GetMaxEnvelopeLength(document.Length)];
                Assert.True(compressor.TryCompress(document, buffer, out int written));
                Assert.InRange(written, 2, DocumentCompressor.GetMaxEnvelopeLength(document.Length));
                var envelope = buffer.AsSpan(0, written);
                var output = new byte[document.Length];
                Assert.True(compressor.TryDecompress(envelope, output, out int read));
                Assert.Equal(document.Length, read);
                Assert.True(output.AsSpan().SequenceEqual(document), $"{codec} {size} B span round trip");

                // buffer writer
                var writer = new ArrayBufferWriter<byte>();
                compressor.Compress(document, writer);
                Assert.True(writer.WrittenSpan.SequenceEqual(envelope));
                var decoded = new ArrayBufferWriter<byte>();
                compressor.Decompress(writer.WrittenSpan, decoded);
                Assert.True(decoded.WrittenSpan.SequenceEqual(document));

                // arrays
                Assert.Equal(document, compressor.Decompress(compressor.Compress(document)));

                Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
                Assert.Equal(document.Length, header.UncompressedLength);
                Assert.Equal(checksum, header.HasChecksum);
                Assert.Null(header.DictionaryId);
                if (size < 32) Assert.Equal(CompressionCodec.Stored, header.Codec); // under MinimumSize
            }
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(19)]
    public void Compress_ZstdLevelsWithAndWithoutDictionary_RoundTrip(int level)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = level });
        var dictionary = Corpus.Dictionary;
        foreach (byte[] document in Corpus.Mixed(200, 0, 5000, level))
        {
            byte[] plain = compressor.Compress(document);
            byte[] withDictionary = compressor.Compress(document, dictionary);
            Assert.Equal(document, compressor.Decompress(plain));
            Assert.Equal(document, compressor.Decompress(withDictionary, dictionary));
            Assert.True(DocumentEnvelope.TryReadHeader(withDictionary, out var header));
            if (header.Codec == CompressionCodec.Zstd) Assert.Equal(dictionary.Id, header.DictionaryId);
            // Never larger than storing the document (header, document, checksum).
            int stored = 2 + Compression.Internal.Varint.GetLength((uint)document.Length) + document.Length + 4;
            Assert.InRange(withDictionary.Length, 1, stored);
            Assert.InRange(plain.Length, 1, stored);
        }
    }

    [Fact]
    public void Compress_SmallJsonWithDictionary_IsMuchSmallerThanWithout()
    {
        var compressor = new DocumentCompressor();
        long plain = 0, withDictionary = 0;
        for (int i = 0; i < 200; i++)
        {
            byte[] document = Corpus.Json(300, 50_000 + i);
            plain += compressor.Compress(document).Length;
            withDictionary += compressor.Compress(document, Corpus.Dictionary).Length;
        }
        Assert.True(withDictionary < plain * 0.7, $"{withDictionary} B with the dictionary against {plain} B without");
    }

    [Theory]
    [MemberData(nameof(CodecsAndChecksum))]
    public void Compress_IncompressibleOrTinyInput_IsStored(CompressionCodec codec, bool checksum)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum, MinimumSize = 64 });
        foreach (byte[] document in new[] { Corpus.Random(5000, 1), Corpus.Json(63, 2) })
        {
            byte[] envelope = compressor.Compress(document);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
            Assert.Equal(CompressionCodec.Stored, header.Codec);
            int expected = 2 + (document.Length < 128 ? 1 : 2) + document.Length + (checksum ? 4 : 0);
            Assert.Equal(expected, envelope.Length);
            Assert.Equal(document, compressor.Decompress(envelope));
        }
    }

    [Fact]
    public void TryCompress_DestinationTooSmall_ReturnsFalse()
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Stored });
        byte[] document = Corpus.Json(100, 1);
        Assert.False(compressor.TryCompress(document, new byte[50], out int written));
        Assert.Equal(0, written);
        byte[] envelope = compressor.Compress(document);
        Assert.False(compressor.TryDecompress(envelope, new byte[99], out _));
    }

    [Fact]
    public void Compress_DocumentOverTheLimit_IsRefused()
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = 100 });
        Assert.Throws<ArgumentException>(() => compressor.Compress(new byte[101]));
    }

    [Fact]
    public async Task Compress_ParallelCallersSharingCompressorAndDictionary_AreByteExact()
    {
        var compressors = Corpus.AllCodecs.Select(c => new DocumentCompressor(new DocumentCompressorOptions { Codec = c })).ToArray();
        var dictionary = Corpus.Dictionary;
        var tasks = Enumerable.Range(0, 8).Select(t => Task.Run(() =>
        {
            var random = new Random(t);
            for (int i = 0; i < 1500; i++)
            {
                var compressor = compressors[random.Next(compressors.Length)];
                byte[] document = Corpus.Json(random.Next(0, 3000), t * 10_000 + i);
                byte[] envelope = compressor.Compress(document, dictionary);
                Assert.Equal(document, compressor.Decompress(envelope, dictionary));
            }
        }));
        await Task.WhenAll(tasks);
    }
}
