using System.Buffers;
using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class ConcurrencyTests
{
    private const int Tasks = 8;
    private const int OperationsPerTask = 3000;

    [Fact]
    public async Task CompressAndDecompress_EightTasksSharingCompressorsAndADictionary_AreByteExact()
    {
        // Every codec, one shared compressor each; zstd also with one shared dictionary (pooled contexts bound to it).
        var compressors = Corpus.AllCodecs.Select(c => new DocumentCompressor(new DocumentCompressorOptions { Codec = c })).ToArray();
        var zstd19 = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = 19 });
        var dictionary = Corpus.Dictionary;
        var setups = compressors.Select(c => (Compressor: c, Dictionary: (ZstdDictionary?)null))
            .Append((Compressor: compressors[(int)CompressionCodec.Zstd], Dictionary: (ZstdDictionary?)dictionary))
            .Append((Compressor: zstd19, Dictionary: (ZstdDictionary?)dictionary))
            .ToArray();

        // The expected envelopes, computed on one thread first: concurrency must not change a single byte.
        var random = new Random(99);
        var documents = Corpus.Mixed(60, 0, 3000, 5).Concat(Enumerable.Range(0, 60).Select(_ => Corpus.JsonRecord(random))).ToArray();
        var expected = setups.Select(s => documents.Select(d => s.Compressor.Compress(d, s.Dictionary)).ToArray()).ToArray();

        using var start = new Barrier(Tasks);
        var tasks = Enumerable.Range(0, Tasks).Select(t => Task.Factory.StartNew(() =>
        {
            var r = new Random(t);
            var writer = new ArrayBufferWriter<byte>();
            start.SignalAndWait();
            for (int i = 0; i < OperationsPerTask; i++)
            {
                int s = r.Next(setups.Length), d = r.Next(documents.Length);
                var (compressor, dict) = setups[s];
                byte[] document = documents[d];
                switch (i % 4)
                {
                    case 0:
                        byte[] envelope = compressor.Compress(document, dict);
                        Assert.Equal(expected[s][d], envelope);
                        Assert.Equal(document, compressor.Decompress(envelope, dict));
                        break;
                    case 1:
                        var buffer = new byte[DocumentCompressor.GetMaxEnvelopeLength(document.Length)];
                        Assert.True(compressor.TryCompress(document, buffer, out int written, dict));
                        Assert.True(buffer.AsSpan(0, written).SequenceEqual(expected[s][d]));
                        var output = new byte[document.Length];
                        Assert.True(compressor.TryDecompress(buffer.AsSpan(0, written), output, out int read, dict));
                        Assert.Equal(document.Length, read);
                        Assert.Equal(document, output);
                        break;
                    case 2:
                        writer.Clear();
                        compressor.Decompress(expected[s][d], writer, dict);
                        Assert.True(writer.WrittenSpan.SequenceEqual(document));
                        break;
                    default:
                        // A corrupt envelope in between: a failed decode must not poison the pooled context for others.
                        byte[] corrupt = (byte[])expected[s][d].Clone();
                        corrupt[corrupt.Length / 2] ^= 0x5A;
                        try
                        {
                            Assert.Equal(document, compressor.Decompress(corrupt, dict));
                        }
                        catch (InvalidDataException)
                        {
                        }
                        catch (DictionaryNotFoundException)
                        {
                        }
                        break;
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default));
        await Task.WhenAll(tasks);
    }
}
