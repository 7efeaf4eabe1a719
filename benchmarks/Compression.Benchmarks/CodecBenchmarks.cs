using BenchmarkDotNet.Attributes;
using Compression.Dictionaries;

namespace Compression.Benchmarks;

/// <summary>
/// Every codec and a few levels over a corpus: one operation compresses (or decompresses) every measured document
/// once, through <see cref="DocumentCompressor"/> into a reused buffer, so the allocations shown are the library's own.
/// </summary>
[MemoryDiagnoser]
public class CodecBenchmarks
{
    private DocumentCompressor _compressor = null!;
    private ZstdDictionary? _dictionary;
    private byte[][] _documents = null!;
    private byte[] _buffer = null!;
    private byte[] _envelopes = null!;
    private int[] _offsets = null!;

    public static IEnumerable<string> Corpora => Benchmarks.Corpus.Selected("movies", "flights", "earthquakes", "caniuse");

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    [Params("zstd-1", "zstd-3", "zstd-3+dict", "zstd-9+dict", "lz4-0", "snappy", "deflate-6", "gzip-6", "brotli-4")]
    public string Case { get; set; } = "zstd-3";

    [GlobalSetup]
    public void Setup()
    {
        var corpus = Benchmarks.Corpus.Load(Corpus);
        string[] parts = Case.Split('-', '+');
        var codec = Enum.Parse<CompressionCodec>(parts[0], ignoreCase: true);
        int level = parts.Length > 1 ? int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture) : 0;
        _compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Level = level });
        _dictionary = Case.EndsWith("+dict", StringComparison.Ordinal) ? ZstdDictionaryTrainer.TryTrain(corpus.Training, 32 * 1024, 1) : null;
        _documents = corpus.Measured;
        _buffer = new byte[DocumentCompressor.GetMaxEnvelopeLength(corpus.MaxDocument)];
        _envelopes = new byte[_documents.Sum(d => (long)DocumentCompressor.GetMaxEnvelopeLength(d.Length))];
        _offsets = new int[_documents.Length + 1];
        int at = 0;
        for (int i = 0; i < _documents.Length; i++)
        {
            _compressor.TryCompress(_documents[i], _envelopes.AsSpan(at), out int written, _dictionary);
            at += written;
            _offsets[i + 1] = at;
        }
        double ratio = (double)corpus.RawBytes / at;
        foreach (string method in new[] { nameof(Compress), nameof(Decompress) })
            FactsFile.Append(CaseKey.Of(method, (nameof(Corpus), Corpus), (nameof(Case), Case)), corpus.RawBytes, ratio);
    }

    [Benchmark]
    public int Compress()
    {
        int total = 0;
        foreach (byte[] document in _documents)
        {
            _compressor.TryCompress(document, _buffer, out int written, _dictionary);
            total += written;
        }
        return total;
    }

    [Benchmark]
    public int Decompress()
    {
        int total = 0;
        for (int i = 0; i < _documents.Length; i++)
        {
            _compressor.TryDecompress(_envelopes.AsSpan(_offsets[i], _offsets[i + 1] - _offsets[i]), _buffer, out int written, _dictionary);
            total += written;
        }
        return total;
    }
}
