using BenchmarkDotNet.Attributes;
using MongoDB.Driver.Core.Compression;
using MongoDB.Driver.Core.Configuration;
using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;

namespace Compression.Benchmarks;

/// <summary>A corpus document as the plain side stores it: <c>{ _id, ...fields }</c> through the class map.</summary>
public sealed class PlainCorpusDocument
{
    [BsonId]
    public int Id { get; set; }

    [BsonExtraElements]
    public BsonDocument Fields { get; set; } = [];
}

/// <summary>The same document through <see cref="CompressedDocumentSerializer{T}"/> (registered once per process).</summary>
public sealed class CompressedCorpusDocument
{
    [BsonId]
    public int Id { get; set; }

    [BsonExtraElements]
    public BsonDocument Fields { get; set; } = [];
}

/// <summary>
/// Writing and reading a batch of corpus documents through <c>MongoDB.Driver</c> 3.14 over a real socket, against the
/// loopback MongoDB server of tests/Compression.Testing (in the benchmark process, so its work is in the times too),
/// plain against compressed with a trained dictionary (zstd level 3; the dictionary trained beforehand on the corpus's
/// 20% training split, so the batch measures the steady state, not the bootstrap). Each setup writes and reads for 20 s
/// before BenchmarkDotNet's own warm-up, so that the process has settled too (<see cref="SteadyState"/>). Wire bytes per
/// document are the whole messages (headers included) the server received and sent for one operation, counted by the
/// server.
/// </summary>
[MemoryDiagnoser]
public class MongoDriverBenchmarks
{
    public const int BatchSize = 1000;
    private static CompressionEngine? s_engine;

    private MongoLoopbackServer _server = null!;
    private MongoClient _client = null!;
    private List<PlainCorpusDocument> _plain = [];
    private List<CompressedCorpusDocument> _compressed = [];
    private IMongoCollection<PlainCorpusDocument> _plainWrite = null!, _plainRead = null!;
    private IMongoCollection<CompressedCorpusDocument> _compressedWrite = null!, _compressedRead = null!;
    private int _nextId;

    public enum Side
    {
        Plain,
        Compressed,
    }

    /// <summary>The driver's own wire compression (<c>compressors=</c>), negotiated with the loopback server (OP_COMPRESSED).</summary>
    public enum WireCompressor
    {
        None,
        Snappy,
        Zstd,
    }

    public static IEnumerable<string> Corpora() => Benchmarks.Corpus.Selected("movies", "flights");

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    [Params(Side.Plain, Side.Compressed)]
    public Side Mode { get; set; }

    /// <summary>
    /// What a user picks instead of (or beside) us: the driver's <c>compressors=snappy</c> or <c>zstd</c> (inserts at
    /// the driver's zstd level 6, replies at the server's level 3, as mongod). <c>COMPRESSION_BENCH_WIRE</c> (comma
    /// separated: None, Snappy, Zstd) picks them; all three by default.
    /// </summary>
    [ParamsSource(nameof(WireCompressors))]
    public WireCompressor Wire { get; set; }

    public static IEnumerable<WireCompressor> WireCompressors() =>
        Environment.GetEnvironmentVariable("COMPRESSION_BENCH_WIRE") is { Length: > 0 } list
            ? list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(Enum.Parse<WireCompressor>)
            : [WireCompressor.None, WireCompressor.Snappy, WireCompressor.Zstd];

    [GlobalSetup]
    public void Setup() => SetupAsync().GetAwaiter().GetResult();

    private async Task SetupAsync()
    {
        var corpus = Benchmarks.Corpus.Load(Corpus);
        _server = await MongoLoopbackServer.StartAsync();
        MongoClientSettings settings = MongoClientSettings.FromConnectionString(_server.ConnectionString);
        settings.Compressors = Wire switch
        {
            WireCompressor.Snappy => [new CompressorConfiguration(CompressorType.Snappy)],
            WireCompressor.Zstd => [new CompressorConfiguration(CompressorType.ZStandard)],
            _ => [],
        };
        _client = new MongoClient(settings);
        IMongoDatabase database = _client.GetDatabase("bench");
        var measured = corpus.Measured.Take(BatchSize).Select(json => BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(json))).ToList();
        foreach (var d in measured) d.Remove("_id");
        _plain = [.. measured.Select((d, i) => new PlainCorpusDocument { Id = i, Fields = d })];
        _compressed = [.. measured.Select((d, i) => new CompressedCorpusDocument { Id = i, Fields = d })];
        _nextId = BatchSize;

        if (Mode == Side.Compressed)
        {
            var options = new CompressionEngineOptions { PollInterval = TimeSpan.FromHours(1) };
            options.Defaults.Level = 3;
            options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.FromHours(1); // only the training below
            s_engine = new CompressionEngine(new MongoDictionaryStore(database), options);
            CompressionNamespace ns = s_engine.GetNamespace("bench.docs");
            CompressedDocumentSerializer.Register<CompressedCorpusDocument>(ns);
            var training = corpus.Training.Select((json, i) =>
            {
                var d = BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(json));
                d.Remove("_id");
                return new CompressedCorpusDocument { Id = -1 - i, Fields = d };
            });
            await database.GetCollection<CompressedCorpusDocument>("training").InsertManyAsync(training);
            await s_engine.WhenIdleAsync(); // the writes above started a training run in the background
            if (ns.CurrentDictionary is null)
            {
                TrainingResult result = await ns.TrainAsync();
                if (ns.CurrentDictionary is null) throw new InvalidOperationException($"No dictionary was adopted for {Corpus}: {result.Outcome}.");
            }
        }

        _plainWrite = database.GetCollection<PlainCorpusDocument>("plain_write");
        _plainRead = database.GetCollection<PlainCorpusDocument>("plain_read");
        _compressedWrite = Mode == Side.Compressed ? database.GetCollection<CompressedCorpusDocument>("compressed_write") : null!;
        _compressedRead = Mode == Side.Compressed ? database.GetCollection<CompressedCorpusDocument>("compressed_read") : null!;
        if (Mode == Side.Plain) await _plainRead.InsertManyAsync(_plain);
        else await _compressedRead.InsertManyAsync(_compressed);

        // Wire bytes of one operation of each kind, counted by the server.
        long plainBytes = _plain.Sum(p => (long)p.ToBson().Length);
        _server.ResetCounters();
        Write();
        FactsFile.Append(WireKey(nameof(Write)), (_server.BytesReceived + _server.BytesSent) / BatchSize, 0);
        FactsFile.Append(CaseKey.Of(nameof(Write), (nameof(Corpus), Corpus), (nameof(Mode), Mode), (nameof(Wire), Wire)), plainBytes, 0);
        FactsFile.Append("docs|" + CaseKey.Of(nameof(Write), (nameof(Corpus), Corpus), (nameof(Mode), Mode), (nameof(Wire), Wire)), BatchSize, 0);
        _server.ResetCounters();
        int read = Read();
        if (read != BatchSize) throw new InvalidOperationException($"Read {read} documents, not {BatchSize}.");
        FactsFile.Append(WireKey(nameof(Read)), (_server.BytesReceived + _server.BytesSent) / BatchSize, 0);
        FactsFile.Append(CaseKey.Of(nameof(Read), (nameof(Corpus), Corpus), (nameof(Mode), Mode), (nameof(Wire), Wire)), plainBytes, 0);
        FactsFile.Append("docs|" + CaseKey.Of(nameof(Read), (nameof(Corpus), Corpus), (nameof(Mode), Mode), (nameof(Wire), Wire)), BatchSize, 0);
        if (Wire != WireCompressor.None && _server.CompressedMessagesSent.Values.Sum() == 0)
            throw new InvalidOperationException($"compressors={Wire} was asked for, but the server sent nothing compressed.");

        // Writes and reads until the process has settled (SteadyState: 10-20 s of batches on this machine); the written
        // documents are deleted after each write, so the server's memory does not grow with the warm-up.
        await SteadyState.WarmUpAsync(() =>
        {
            Write();
            if (Mode == Side.Plain) _plainWrite.DeleteMany(FilterDefinition<PlainCorpusDocument>.Empty);
            else _compressedWrite.DeleteMany(FilterDefinition<CompressedCorpusDocument>.Empty);
            Read();
            return Task.CompletedTask;
        });
    }

    private string WireKey(string method) => "wire|" + CaseKey.Of(method, (nameof(Corpus), Corpus), (nameof(Mode), Mode), (nameof(Wire), Wire));

    [GlobalCleanup]
    public void Cleanup()
    {
        _client.Dispose();
        _server.DisposeAsync().AsTask().GetAwaiter().GetResult();
        s_engine?.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    /// <summary>Inserts the batch (InsertMany, new ids each time).</summary>
    [Benchmark]
    public void Write()
    {
        int first = _nextId;
        _nextId += BatchSize;
        if (Mode == Side.Plain)
        {
            for (int i = 0; i < _plain.Count; i++) _plain[i].Id = first + i;
            _plainWrite.InsertMany(_plain);
        }
        else
        {
            for (int i = 0; i < _compressed.Count; i++) _compressed[i].Id = first + i;
            _compressedWrite.InsertMany(_compressed);
        }
    }

    /// <summary>Reads the batch back (one Find over the whole collection, deserialized).</summary>
    [Benchmark]
    public int Read() => Mode == Side.Plain
        ? _plainRead.Find(FilterDefinition<PlainCorpusDocument>.Empty).ToList().Count
        : _compressedRead.Find(FilterDefinition<CompressedCorpusDocument>.Empty).ToList().Count;
}
