using System.Buffers;
using BenchmarkDotNet.Attributes;
using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Structure;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;

namespace Compression.Benchmarks;

/// <summary>
/// What the nesting checks of a read cost (issue 35: a body nested 20,000 levels deep overflowed a recursive reader's
/// stack): the JSON scan the Couchbase transcoder makes after decompressing, against that decompression (a trained
/// dictionary, as reads run); the BSON walk the MongoDB serializer makes over the decompressed elements, against the
/// driver reading the same document as a <c>BsonDocument</c>. Ratios within one run are what to quote.
/// </summary>
[MemoryDiagnoser]
public class NestingCheckBenchmarks
{
    private byte[][] _json = [];
    private byte[][] _envelopes = [];
    private byte[][] _bson = [];
    private CompressionEngine _engine = null!;
    private CompressionNamespace _namespace = null!;
    private readonly ArrayBufferWriter<byte> _output = new(1 << 20);

    public static IEnumerable<string> Corpora => Benchmarks.Corpus.Selected("movies", "flights", "earthquakes", "caniuse");

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    [GlobalSetup]
    public void Setup()
    {
        Corpus corpus = Benchmarks.Corpus.Load(Corpus);
        _json = corpus.Measured;
        _engine = new CompressionEngine(new InMemoryDictionaryStore());
        _namespace = _engine.GetNamespace("bench." + Corpus);
        foreach (byte[] document in corpus.Training) _namespace.Compress(document);
        _engine.WhenIdleAsync().GetAwaiter().GetResult();
        _envelopes = [.. _json.Select(j => _namespace.Compress(j))];
        _bson = [.. _json.Select(j => BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(j)).ToBson())];
    }

    [GlobalCleanup]
    public void Cleanup() => _engine.DisposeAsync().AsTask().GetAwaiter().GetResult();

    [Benchmark(Baseline = true, Description = "JSON: decompress (trained dictionary)")]
    public long Decompress()
    {
        long total = 0;
        foreach (byte[] envelope in _envelopes)
        {
            _output.ResetWrittenCount();
            _namespace.Decompress(envelope, _output);
            total += _output.WrittenCount;
        }
        return total;
    }

    [Benchmark(Description = "JSON: depth scan (JsonNesting)")]
    public long JsonDepth()
    {
        long within = 0;
        foreach (byte[] json in _json) within += JsonNesting.IsWithinLimit(json) ? 1 : 0;
        return within;
    }

    [Benchmark(Description = "BSON: read as BsonDocument")]
    public long ReadBsonDocument()
    {
        long elements = 0;
        foreach (byte[] bson in _bson) elements += BsonSerializer.Deserialize<BsonDocument>(bson).ElementCount;
        return elements;
    }

    [Benchmark(Description = "BSON: top-level walk only (the serializer's own)")]
    public long BsonTopLevel()
    {
        long elements = 0;
        foreach (byte[] bson in _bson)
        {
            var walker = new RawBsonWalker(bson);
            while (walker.TryNext(out RawBsonElement element)) elements += element.Type;
        }
        return elements;
    }

    [Benchmark(Description = "BSON: top-level walk + depth check (BsonNesting)")]
    public long BsonDepth()
    {
        long within = 0;
        foreach (byte[] bson in _bson)
        {
            var elements = new RawBsonWalker(bson);
            while (elements.TryNext(out RawBsonElement element)) within += BsonNesting.IsWithinLimit(bson, element) ? 1 : 0;
        }
        return within;
    }
}
