using System.Buffers;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Compression.Dictionaries;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Transcoders;
using Newtonsoft.Json.Linq;
using ZstdSharp;

namespace Compression.Couchbase.Benchmarks;

/// <summary>
/// Where the time of <see cref="CouchbaseSdkBenchmarks"/> goes on the client, without the SDK and the server: one batch
/// of the same 1,000 <see cref="JObject"/>s encoded by the SDK's <see cref="JsonTranscoder"/> (the plain side's whole
/// client-side encoding) and by <see cref="CompressingTranscoder"/>, into a reused stream that is also a buffer writer
/// (as the SDK's operation builder is), and decoded back from the bytes the server would hold. The parts: the engine's
/// compress and decompress alone (a namespace, checksum on, the same dictionary), and one bare ZstdSharp call with the
/// same dictionary and level. Dictionary trained on the 20% training split, zstd level 3, as in the SDK suite
/// (<see cref="CouchbaseSdkBenchmarks.EngineOptions"/>).
/// </summary>
[MemoryDiagnoser]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)]
public class TranscoderOverheadBenchmarks
{
    private const string Namespace = "default._default._default";
    private readonly BufferWriterStream _output = new();
    private readonly ArrayBufferWriter<byte> _writer = new(1 << 16);
    private readonly JsonTranscoder _json = new();
    private readonly Flags _jsonFlags = new() { DataFormat = DataFormat.Json, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = TypeCode.Object };
    private readonly Flags _binaryFlags = new() { DataFormat = DataFormat.Binary, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = TypeCode.Object };
    private CompressionEngine _engine = null!;
    private CompressionNamespace _namespace = null!;
    private CompressingTranscoder _transcoder = null!;
    private Compressor _compressor = null!;
    private Decompressor _decompressor = null!;
    private JObject[] _documents = [];
    private byte[][] _jsonBytes = [];
    private byte[][] _envelopes = [];
    private byte[][] _bareFrames = [];
    private byte[] _scratch = [];

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    public static IEnumerable<string> Corpora() => global::Compression.Benchmarks.Corpus.Selected("movies", "flights");

    [GlobalSetup]
    public void Setup() => SetupAsync().GetAwaiter().GetResult();

    private async Task SetupAsync()
    {
        var corpus = global::Compression.Benchmarks.Corpus.Load(Corpus);
        _documents = [.. corpus.Measured.Take(CouchbaseSdkBenchmarks.BatchSize).Select(CouchbaseSdkBenchmarks.Parse)];
        _engine = new CompressionEngine(new InMemoryDictionaryStore(), CouchbaseSdkBenchmarks.EngineOptions(corpus));
        _namespace = _engine.GetNamespace(Namespace);
        _transcoder = new CompressingTranscoder(_namespace);
        // The training split goes through the transcoder (sampled as the collection's writes would be), then one training.
        foreach (byte[] json in corpus.Training)
        {
            _output.Reset();
            _transcoder.Encode(_output, CouchbaseSdkBenchmarks.Parse(json), _binaryFlags, OpCode.Set);
        }
        await _engine.WhenIdleAsync();
        if (_namespace.CurrentDictionary is null) await _namespace.TrainAsync();
        DictionaryRecord dictionary = _namespace.CurrentDictionary ?? throw new InvalidOperationException($"No dictionary was adopted for {Corpus}.");

        _jsonBytes = [.. _documents.Select(d => { _output.Reset(); _json.Encode(_output, d, _jsonFlags, OpCode.Set); return _output.WrittenSpan.ToArray(); })];
        _envelopes = [.. _documents.Select(d => { _output.Reset(); _transcoder.Encode(_output, d, _binaryFlags, OpCode.Set); return _output.WrittenSpan.ToArray(); })];
        _compressor = new Compressor(3);
        _compressor.LoadDictionary(dictionary.Content.Span);
        _decompressor = new Decompressor();
        _decompressor.LoadDictionary(dictionary.Content.Span);
        _bareFrames = [.. _jsonBytes.Select(j => _compressor.Wrap(j).ToArray())];
        _scratch = new byte[Compressor.GetCompressBound(_jsonBytes.Max(j => j.Length)) + 64];

        for (int i = 0; i < _documents.Length; i++)
        {
            if (!JToken.DeepEquals(_documents[i], _transcoder.Decode<JObject>(_envelopes[i], _binaryFlags, OpCode.Get)))
                throw new InvalidOperationException($"Document {i} of {Corpus} did not round-trip.");
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _compressor.Dispose();
        _decompressor.Dispose();
        _engine.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    /// <summary>What the plain side does on the client: the SDK's JSON transcoder writes the document.</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("Encode")]
    public long EncodeJson()
    {
        long total = 0;
        foreach (JObject document in _documents)
        {
            _output.Reset();
            _json.Encode(_output, document, _jsonFlags, OpCode.Set);
            total += _output.WrittenCount;
        }
        return total;
    }

    /// <summary>What the compressed side does: JSON, then the envelope written into the output.</summary>
    [Benchmark, BenchmarkCategory("Encode")]
    public long EncodeCompressed()
    {
        long total = 0;
        foreach (JObject document in _documents)
        {
            _output.Reset();
            _transcoder.Encode(_output, document, _binaryFlags, OpCode.Set);
            total += _output.WrittenCount;
        }
        return total;
    }

    /// <summary>The same work without the transcoder: JSON into a reused stream, then the namespace compresses it into the output.</summary>
    [Benchmark, BenchmarkCategory("Encode")]
    public long EncodeThenCompressByHand()
    {
        long total = 0;
        foreach (JObject document in _documents)
        {
            _output.Reset();
            _json.Encode(_output, document, _jsonFlags, OpCode.Set);
            _writer.ResetWrittenCount();
            _namespace.Compress(_output.WrittenSpan, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }

    /// <summary>The engine's part of a compressed encode: the namespace compresses the JSON into a buffer writer.</summary>
    [Benchmark, BenchmarkCategory("Encode")]
    public long EngineCompressOnly()
    {
        long total = 0;
        foreach (byte[] json in _jsonBytes)
        {
            _writer.ResetWrittenCount();
            _namespace.Compress(json, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }

    /// <summary>One bare ZstdSharp call per document, same dictionary and level: the floor under the engine.</summary>
    [Benchmark, BenchmarkCategory("Encode")]
    public long BareZstdCompressOnly()
    {
        long total = 0;
        foreach (byte[] json in _jsonBytes) total += _compressor.Wrap(json, _scratch);
        return total;
    }

    /// <summary>What the plain side does with a body read: the SDK's JSON transcoder reads the document.</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("Decode")]
    public int DecodeJson()
    {
        int count = 0;
        foreach (byte[] json in _jsonBytes) count += _json.Decode<JObject>(json, _jsonFlags, OpCode.Get)!.Count;
        return count;
    }

    /// <summary>What the compressed side does: the envelope decompressed, then the JSON read.</summary>
    [Benchmark, BenchmarkCategory("Decode")]
    public int DecodeCompressed()
    {
        int count = 0;
        foreach (byte[] envelope in _envelopes) count += _transcoder.Decode<JObject>(envelope, _binaryFlags, OpCode.Get)!.Count;
        return count;
    }

    /// <summary>The same work without the transcoder: the namespace decompresses into a reused buffer, the JSON transcoder reads it.</summary>
    [Benchmark, BenchmarkCategory("Decode")]
    public int DecompressThenDecodeByHand()
    {
        int count = 0;
        foreach (byte[] envelope in _envelopes)
        {
            _writer.ResetWrittenCount();
            _namespace.Decompress(envelope, _writer);
            count += _json.Decode<JObject>(_writer.WrittenMemory, _jsonFlags, OpCode.Get)!.Count;
        }
        return count;
    }

    /// <summary>The engine's part of a compressed decode.</summary>
    [Benchmark, BenchmarkCategory("Decode")]
    public long EngineDecompressOnly()
    {
        long total = 0;
        foreach (byte[] envelope in _envelopes)
        {
            _writer.ResetWrittenCount();
            _namespace.Decompress(envelope, _writer);
            total += _writer.WrittenCount;
        }
        return total;
    }

    /// <summary>One bare ZstdSharp call per document, same dictionary.</summary>
    [Benchmark, BenchmarkCategory("Decode")]
    public long BareZstdDecompressOnly()
    {
        long total = 0;
        foreach (byte[] frame in _bareFrames) total += _decompressor.Unwrap(frame, _scratch);
        return total;
    }
}

/// <summary>A write-only stream that is also a buffer writer over one reused array, like the SDK's operation builder.</summary>
internal sealed class BufferWriterStream : Stream, IBufferWriter<byte>
{
    private readonly ArrayBufferWriter<byte> _buffer = new(1 << 16);

    public ReadOnlySpan<byte> WrittenSpan => _buffer.WrittenSpan;

    public int WrittenCount => _buffer.WrittenCount;

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => _buffer.WrittenCount;

    public override long Position
    {
        get => _buffer.WrittenCount;
        set => throw new NotSupportedException();
    }

    public void Reset() => _buffer.ResetWrittenCount();

    public void Advance(int count) => _buffer.Advance(count);

    public Memory<byte> GetMemory(int sizeHint = 0) => _buffer.GetMemory(sizeHint);

    public Span<byte> GetSpan(int sizeHint = 0) => _buffer.GetSpan(sizeHint);

    public override void Write(byte[] buffer, int offset, int count) => _buffer.Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer) => _buffer.Write(buffer);

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
