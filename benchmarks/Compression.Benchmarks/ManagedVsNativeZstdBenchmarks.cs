using BenchmarkDotNet.Attributes;
using Compression.Dictionaries;
using ZstdSharp;
using ZstdSharp.Unsafe;

namespace Compression.Benchmarks;

/// <summary>
/// The same zstd work (same documents, level, dictionary and frame settings) through ZstdSharp, the managed port the
/// library uses, and through the native libzstd: the physical limit beside ours. Native is the baseline.
/// </summary>
[MemoryDiagnoser]
public unsafe class ManagedVsNativeZstdBenchmarks
{
    private byte[][] _documents = null!;
    private byte[][] _frames = null!;
    private byte[] _buffer = null!;
    private Compressor _managed = null!;
    private Decompressor _managedDecompressor = null!;
    private nint _native;
    private nint _nativeDecompressor;

    public static IEnumerable<string> Corpora => Benchmarks.Corpus.Selected("movies", "flights", "caniuse");

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    [Params(1, 3)]
    public int Level { get; set; } = 3;

    [Params(false, true)]
    public bool Dictionary { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var corpus = Benchmarks.Corpus.Load(Corpus);
        byte[] dictionary = Dictionary ? ZstdDictionaryTrainer.TryTrain(corpus.Training, 32 * 1024, 1)!.Content.ToArray() : [];
        _documents = corpus.Measured;
        _buffer = new byte[corpus.MaxDocument * 2 + 1024];

        _managed = new Compressor(Level);
        _managed.SetParameter(ZSTD_cParameter.ZSTD_c_contentSizeFlag, 0);
        _managed.SetParameter(ZSTD_cParameter.ZSTD_c_checksumFlag, 0);
        _managed.SetParameter(ZSTD_cParameter.ZSTD_c_dictIDFlag, 0);
        _managed.SetParameter(ZSTD_cParameter.ZSTD_c_experimentalParam2, (int)ZSTD_format_e.ZSTD_f_zstd1_magicless);
        _managedDecompressor = new Decompressor();
        _managedDecompressor.SetParameter(ZSTD_dParameter.ZSTD_d_experimentalParam1, (int)ZSTD_format_e.ZSTD_f_zstd1_magicless);
        if (dictionary.Length > 0)
        {
            _managed.LoadDictionary(dictionary);
            _managedDecompressor.LoadDictionary(dictionary);
        }
        _native = NativeZstd.CreateCompressor(Level, dictionary);
        _nativeDecompressor = NativeZstd.CreateDecompressor(dictionary);

        // Same format both ways: native frames decode with the port and the port's with native; same sizes.
        _frames = new byte[_documents.Length][];
        long managedBytes = 0, nativeBytes = 0;
        for (int i = 0; i < _documents.Length; i++)
        {
            byte[] managedFrame = _managed.Wrap(_documents[i]).ToArray();
            byte[] nativeFrame = NativeCompress(_documents[i]).ToArray();
            managedBytes += managedFrame.Length;
            nativeBytes += nativeFrame.Length;
            int decoded = _managedDecompressor.Unwrap(nativeFrame, _buffer);
            if (!_buffer.AsSpan(0, decoded).SequenceEqual(_documents[i])) throw new InvalidOperationException("native frame did not decode with ZstdSharp");
            if (!NativeDecompress(managedFrame, _documents[i].Length).SequenceEqual(_documents[i])) throw new InvalidOperationException("managed frame did not decode with libzstd");
            _frames[i] = nativeFrame;
        }
        foreach (string method in new[] { nameof(NativeCompress), nameof(ManagedCompress) })
            FactsFile.Append(CaseKey.Of(method, (nameof(Corpus), Corpus), (nameof(Level), Level), (nameof(Dictionary), Dictionary)), corpus.RawBytes, (double)corpus.RawBytes / (method == nameof(NativeCompress) ? nativeBytes : managedBytes));
        foreach (string method in new[] { nameof(NativeDecompress), nameof(ManagedDecompress) })
            FactsFile.Append(CaseKey.Of(method, (nameof(Corpus), Corpus), (nameof(Level), Level), (nameof(Dictionary), Dictionary)), corpus.RawBytes, (double)corpus.RawBytes / nativeBytes);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        NativeZstd.FreeCCtx(_native);
        NativeZstd.FreeDCtx(_nativeDecompressor);
        _managed.Dispose();
        _managedDecompressor.Dispose();
    }

    [Benchmark(Baseline = true)]
    public long NativeCompress()
    {
        long total = 0;
        foreach (byte[] document in _documents) total += NativeCompress(document).Length;
        return total;
    }

    [Benchmark]
    public long ManagedCompress()
    {
        long total = 0;
        foreach (byte[] document in _documents) total += _managed.Wrap(document, _buffer);
        return total;
    }

    [Benchmark]
    public long NativeDecompress()
    {
        long total = 0;
        for (int i = 0; i < _frames.Length; i++) total += NativeDecompress(_frames[i], _documents[i].Length).Length;
        return total;
    }

    [Benchmark]
    public long ManagedDecompress()
    {
        long total = 0;
        for (int i = 0; i < _frames.Length; i++) total += _managedDecompressor.Unwrap(_frames[i], _buffer);
        return total;
    }

    private Span<byte> NativeCompress(byte[] document)
    {
        fixed (byte* src = document)
        fixed (byte* dst = _buffer)
        {
            nuint n = NativeZstd.Check(NativeZstd.Compress2(_native, dst, (nuint)_buffer.Length, src, (nuint)document.Length));
            return _buffer.AsSpan(0, (int)n);
        }
    }

    private Span<byte> NativeDecompress(byte[] frame, int length)
    {
        fixed (byte* src = frame)
        fixed (byte* dst = _buffer)
        {
            nuint n = NativeZstd.Check(NativeZstd.DecompressDCtx(_nativeDecompressor, dst, (nuint)length, src, (nuint)frame.Length));
            return _buffer.AsSpan(0, (int)n);
        }
    }
}
