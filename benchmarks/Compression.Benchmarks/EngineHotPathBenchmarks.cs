using System.Buffers;
using BenchmarkDotNet.Attributes;
using Compression.Dictionaries;
using ZstdSharp;

namespace Compression.Benchmarks;

/// <summary>
/// The engine's own cost on the hot path: a namespace's compress and decompress against one bare ZstdSharp call with
/// the same dictionary and level, per document (movies and flights, 80% split, dictionary trained on the 20%).
/// Target: engine at 1.1x of bare or better, no allocation beyond the output.
/// </summary>
[MemoryDiagnoser]
[MinColumn, MedianColumn] // on a shared machine the mean drifts with the load; ratios of minimums and medians are quoted too
[GroupBenchmarksBy(BenchmarkDotNet.Configs.BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class EngineHotPathBenchmarks
{
    private const string Namespace = "bench.hotpath";
    private CompressionEngine _engine = null!;
    private EngineAdapter _adapter = null!;
    private CompressionEngine _noChecksumEngine = null!;
    private CompressionNamespace _noChecksum = null!;
    private byte[][] _noChecksumEnvelopes = null!;
    private Compressor _compressor = null!;
    private Decompressor _decompressor = null!;
    private Compressor _checkedCompressor = null!;
    private Decompressor _checkedDecompressor = null!;
    private byte[][] _checkedBareEnvelopes = null!;
    private byte[][] _documents = null!;
    private byte[][] _bareEnvelopes = null!;
    private byte[][] _engineEnvelopes = null!;
    private ZstdDictionary _blockDictionary = null!;
    private byte[][] _blocks = null!;
    private byte[] _output = null!;
    private readonly ArrayBufferWriter<byte> _writer = new(1 << 20);

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    public static IEnumerable<string> Corpora() => Benchmarks.Corpus.Selected("movies", "flights");

    [GlobalSetup]
    public void Setup()
    {
        var corpus = Benchmarks.Corpus.Load(Corpus);
        _documents = corpus.Measured;
        var options = new CompressionEngineOptions();
        options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.FromDays(1);
        options.Defaults.Dictionary.GrowthFactor = 1000; // no retraining while measuring
        // The engine's own cost against the same zstd call: no shape table (packing is another codec, measured in
        // docs/structure.md and the Serializer benchmarks).
        options.Defaults.Dictionary.PackDocuments = false;
        _engine = new CompressionEngine(new InMemoryDictionaryStore(), options);
        _adapter = new EngineAdapter(_engine, Namespace);
        _adapter.Train(corpus.Training);
        DictionaryRecord dictionary = _adapter.Current ?? throw new InvalidOperationException("no dictionary adopted");

        _compressor = new Compressor(3);
        _compressor.LoadDictionary(dictionary.Content.Span);
        _decompressor = new Decompressor();
        _decompressor.LoadDictionary(dictionary.Content.Span);
        int max = _documents.Max(d => d.Length);
        _output = new byte[Math.Max(Compressor.GetCompressBound(max), DocumentCompressor.GetMaxEnvelopeLength(max))];
        _bareEnvelopes = [.. _documents.Select(d => _compressor.Wrap(d).ToArray())];
        // The bare call doing what the envelope's checksum does: zstd's own content checksum (4 bytes of XXH64), written
        // by the compressor and verified by every decompression. Like for like with the engine's checksummed rows.
        _checkedCompressor = new Compressor(3);
        _checkedCompressor.SetParameter(ZstdSharp.Unsafe.ZSTD_cParameter.ZSTD_c_checksumFlag, 1);
        _checkedCompressor.LoadDictionary(dictionary.Content.Span);
        _checkedDecompressor = new Decompressor();
        _checkedDecompressor.LoadDictionary(dictionary.Content.Span);
        _checkedBareEnvelopes = [.. _documents.Select(d => _checkedCompressor.Wrap(d).ToArray())];
        // Format v2's payload, one raw zstd block, written and read straight through the block API: what the engine's
        // v2 path costs against, apart from the envelope (the rows above compare with zstd frames).
        _blockDictionary = ZstdDictionary.Create(dictionary.Id, dictionary.Content.Span);
        _blocks = [.. _documents.Select(d =>
        {
            byte[] block = new byte[d.Length];
            return Compression.Codecs.ZstdBlockCodec.Instance.TryCompress(d, block, 3, _blockDictionary, out int n) ? block[..n] : throw new InvalidOperationException("a document did not compress to a block");
        })];

        // The same dictionary (same store and namespace) without the envelope's checksum: what the checksum costs.
        var noChecksum = new CompressionEngineOptions();
        noChecksum.Defaults.Checksum = false;
        noChecksum.Defaults.Dictionary.MinTrainingInterval = TimeSpan.FromDays(1);
        noChecksum.Defaults.Dictionary.GrowthFactor = 1000;
        noChecksum.Defaults.Dictionary.PackDocuments = false;
        _noChecksumEngine = new CompressionEngine(_engine.Store, noChecksum);
        _noChecksum = _noChecksumEngine.GetNamespace(Namespace);
        _noChecksum.RefreshAsync().GetAwaiter().GetResult();
        if (_noChecksum.CurrentDictionary?.Id != dictionary.Id) throw new InvalidOperationException("the no-checksum namespace did not adopt the dictionary");
        _noChecksumEnvelopes = [.. _documents.Select(d => _noChecksum.Compress(d))];
        _engineEnvelopes = [.. _documents.Select(d => _adapter.Compress(d))];
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _compressor.Dispose();
        _decompressor.Dispose();
        _checkedCompressor.Dispose();
        _checkedDecompressor.Dispose();
        _engine.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _noChecksumEngine.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    [Benchmark(Description = "engine compress, no checksum")]
    [BenchmarkCategory("compress")]
    public long CompressEngineNoChecksum()
    {
        long total = 0;
        foreach (byte[] document in _documents)
        {
            _writer.ResetWrittenCount();
            _noChecksum.Compress(document, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }

    [Benchmark(Description = "engine decompress, no checksum")]
    [BenchmarkCategory("decompress")]
    public long DecompressEngineNoChecksum()
    {
        long total = 0;
        foreach (byte[] envelope in _noChecksumEnvelopes)
        {
            _writer.ResetWrittenCount();
            _noChecksum.Decompress(envelope, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }

    [Benchmark(Baseline = true, Description = "bare zstd compress")]
    [BenchmarkCategory("compress")]
    public long CompressBare()
    {
        long total = 0;
        foreach (byte[] document in _documents) total += _compressor.Wrap(document, _output);
        return total;
    }

    [Benchmark(Description = "bare zstd compress, zstd checksum")]
    [BenchmarkCategory("compress")]
    public long CompressBareChecked()
    {
        long total = 0;
        foreach (byte[] document in _documents) total += _checkedCompressor.Wrap(document, _output);
        return total;
    }

    [Benchmark(Description = "engine compress")]
    [BenchmarkCategory("compress")]
    public long CompressEngine()
    {
        long total = 0;
        foreach (byte[] document in _documents)
        {
            _writer.ResetWrittenCount();
            _adapter.Compress(document, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }

    [Benchmark(Baseline = true, Description = "bare zstd decompress")]
    [BenchmarkCategory("decompress")]
    public long DecompressBare()
    {
        long total = 0;
        foreach (byte[] envelope in _bareEnvelopes) total += _decompressor.Unwrap(envelope, _output);
        return total;
    }

    [Benchmark(Description = "bare zstd decompress, zstd checksum")]
    [BenchmarkCategory("decompress")]
    public long DecompressBareChecked()
    {
        long total = 0;
        foreach (byte[] envelope in _checkedBareEnvelopes) total += _checkedDecompressor.Unwrap(envelope, _output);
        return total;
    }

    [Benchmark(Description = "bare zstd block compress")]
    [BenchmarkCategory("compress")]
    public long CompressBareBlock()
    {
        long total = 0;
        foreach (byte[] document in _documents)
            total += Compression.Codecs.ZstdBlockCodec.Instance.TryCompress(document, _output, 3, _blockDictionary, out int n) ? n : 0;
        return total;
    }

    [Benchmark(Description = "bare zstd block decompress")]
    [BenchmarkCategory("decompress")]
    public long DecompressBareBlock()
    {
        long total = 0;
        for (int i = 0; i < _blocks.Length; i++)
            total += Compression.Codecs.ZstdBlockCodec.DecompressBlock(_blocks[i], _output.AsSpan(0, _documents[i].Length), _blockDictionary);
        return total;
    }

    [Benchmark(Description = "engine decompress")]
    [BenchmarkCategory("decompress")]
    public long DecompressEngine()
    {
        long total = 0;
        foreach (byte[] envelope in _engineEnvelopes)
        {
            _writer.ResetWrittenCount();
            _adapter.Decompress(envelope, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }
}
