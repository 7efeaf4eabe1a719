using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Compression.Benchmarks;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Core.IO.Serializers;
using Couchbase.KeyValue;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Compression.Couchbase.Benchmarks;

/// <summary>
/// Upserting and getting a batch of corpus documents through <c>CouchbaseNetClient</c> 3.9.5 (<c>Cluster.ConnectAsync</c>,
/// real sockets) against the loopback KV server of tests/Compression.Testing (in the benchmark process, so its work is
/// in the times and allocations too), plain against compressed. Plain: the bucket's default collection with the SDK's
/// default <c>JsonTranscoder</c>. Compressed: the same collection through <c>WithCompression</c> (zstd level 3, checksum
/// on, a dictionary trained beforehand on the corpus's 20% training split and published to the
/// <see cref="CouchbaseDictionaryStore"/> in the same bucket, so a batch measures the steady state, not the
/// bootstrap). Documents are <see cref="JObject"/>s on both sides, as an application without a class for them holds
/// them. One batch is 1,000 operations started together and awaited together (the SDK's way to batch), the same 1,000
/// keys each time; a get batch also deserializes every document. Each setup runs upserts and gets for 20 s before
/// BenchmarkDotNet's own warm-up, so that the batches measured are the steady state, not the warm-up (see
/// <see cref="SteadyState"/>). Wire bytes per document are whole KV messages (headers,
/// keys and extras included) both ways for one batch, counted by the server.
/// </summary>
[MemoryDiagnoser]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)]
public class CouchbaseSdkBenchmarks
{
    public const int BatchSize = 1000;

    private readonly string[] _keys = [.. Enumerable.Range(0, BatchSize).Select(i => $"doc::{i:D4}")];
    private readonly Task<IMutationResult>[] _writes = new Task<IMutationResult>[BatchSize];
    private readonly Task<IGetResult>[] _reads = new Task<IGetResult>[BatchSize];
    private CouchbaseLoopbackServer _server = null!;
    private ICluster _cluster = null!;
    private CompressionEngine? _engine;
    private ICouchbaseCollection _collection = null!;
    private JObject[] _documents = [];

    public static IEnumerable<string> Corpora() => global::Compression.Benchmarks.Corpus.Selected("movies", "flights");

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    [GlobalSetup(Targets = [nameof(UpsertPlain), nameof(GetPlain)])]
    public void SetupPlain() => SetupAsync(compressed: false).GetAwaiter().GetResult();

    [GlobalSetup(Targets = [nameof(UpsertCompressed), nameof(GetCompressed)])]
    public void SetupCompressed() => SetupAsync(compressed: true).GetAwaiter().GetResult();

    private async Task SetupAsync(bool compressed)
    {
        var corpus = global::Compression.Benchmarks.Corpus.Load(Corpus);
        _documents = [.. corpus.Measured.Take(BatchSize).Select(Parse)];
        if (_documents.Length != BatchSize) throw new InvalidOperationException($"{Corpus} has {_documents.Length} measured documents, fewer than {BatchSize}.");

        _server = await CouchbaseLoopbackServer.StartAsync();
        var options = new ClusterOptions
        {
            // Generous: a batch is 1,000 operations in flight at once on a shared 2-core machine.
            KvTimeout = TimeSpan.FromSeconds(30),
            KvConnectTimeout = TimeSpan.FromSeconds(10),
            EnableDnsSrvResolution = false,
        }.WithPasswordAuthentication(_server.Username, _server.Password);
        _cluster = await Cluster.ConnectAsync(_server.ConnectionString, options);
        IBucket bucket = await _cluster.BucketAsync(_server.BucketName);
        ICouchbaseCollection plain = bucket.DefaultCollection();
        _collection = plain;

        if (compressed)
        {
            _engine = new CompressionEngine(new CouchbaseDictionaryStore(plain), EngineOptions(corpus));
            _collection = plain.WithCompression(_engine);
            CompressionNamespace ns = _collection.GetCompressingTranscoder()!.Namespace;
            // The training split written through the compressed collection: the engine samples it (bootstrap, no dictionary yet).
            await Task.WhenAll(corpus.Training.Select((json, i) => _collection.UpsertAsync($"train::{i}", Parse(json))));
            await _engine.WhenIdleAsync(); // the last of the writes above started the training run in the background
            if (ns.CurrentDictionary is null)
            {
                TrainingResult result = await ns.TrainAsync();
                if (ns.CurrentDictionary is null) throw new InvalidOperationException($"No dictionary was adopted for {Corpus}: {result.Outcome}.");
            }
            DictionaryRecord adopted = ns.CurrentDictionary;
            Console.WriteLine($"// {Corpus}: dictionary v{adopted.Version}, {adopted.Content.Length} bytes, {adopted.SampleCount} samples, ratio {adopted.Ratio:F2} on held-out documents");
        }

        // The batch the get benchmarks read (and the upsert benchmarks overwrite).
        await UpsertBatchAsync();

        // Facts for the report: raw JSON bytes (what the SDK's serializer writes for the batch), stored bodies, and
        // the wire bytes of one batch of each kind.
        long rawBytes = _documents.Sum(d => (long)Serialized(d).Length);
        long storedBytes = _keys.Sum(k => _server.TryGetDocument(k, out KvDocument? doc) ? (long)doc.Value.Length : throw new InvalidOperationException($"{k} was not stored."));
        string upsert = compressed ? nameof(UpsertCompressed) : nameof(UpsertPlain);
        string get = compressed ? nameof(GetCompressed) : nameof(GetPlain);
        long before = Wire();
        await UpsertBatchAsync();
        FactsFile.Append(WireKey(upsert), (Wire() - before) / BatchSize, 0);
        FactsFile.Append(CaseKey.Of(upsert, (nameof(Corpus), Corpus)), rawBytes, (double)rawBytes / storedBytes);
        before = Wire();
        int read = await GetBatchAsync();
        if (read != BatchSize) throw new InvalidOperationException($"Read {read} documents, not {BatchSize}.");
        FactsFile.Append(WireKey(get), (Wire() - before) / BatchSize, 0);
        FactsFile.Append(CaseKey.Of(get, (nameof(Corpus), Corpus)), rawBytes, (double)rawBytes / storedBytes);

        // Upserts and gets until the process has settled (SteadyState: 10-20 s of batches on this machine).
        await SteadyState.WarmUpAsync(async () =>
        {
            await UpsertBatchAsync();
            await GetBatchAsync();
        });
    }

    /// <summary>
    /// The engine's defaults (zstd level 3, checksum on, 32 KiB dictionaries) except when training happens: once, on the
    /// whole training split (up to the reservoir's size), and never while measuring. Without the first change the
    /// bootstrap training starts after 32 documents and how many it saw depended on the writing threads' race.
    /// </summary>
    internal static CompressionEngineOptions EngineOptions(global::Compression.Benchmarks.Corpus corpus)
    {
        var options = new CompressionEngineOptions { PollInterval = TimeSpan.FromHours(1) };
        options.Defaults.Level = 3;
        DictionaryOptions dictionary = options.Defaults.Dictionary;
        dictionary.MinTrainingInterval = TimeSpan.FromHours(1);
        dictionary.MinSampleCount = Math.Min(corpus.Training.Length, dictionary.MaxSampleCount);
        return options;
    }

    private long Wire() => _server.BytesReceived + _server.BytesSent;

    private string WireKey(string method) => "wire|" + CaseKey.Of(method, (nameof(Corpus), Corpus));

    internal static JObject Parse(byte[] json)
    {
        using var reader = new JsonTextReader(new StringReader(System.Text.Encoding.UTF8.GetString(json))) { DateParseHandling = DateParseHandling.None };
        return JObject.Load(reader);
    }

    private static byte[] Serialized(JObject document)
    {
        using var stream = new MemoryStream();
        new DefaultSerializer().Serialize(stream, document);
        return stream.ToArray();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _engine?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _engine = null;
        _cluster.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _server.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    /// <summary>Upserts the batch through the SDK's default collection (JSON).</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("Upsert")]
    public Task UpsertPlain() => UpsertBatchAsync();

    /// <summary>Upserts the batch through the compressed collection.</summary>
    [Benchmark, BenchmarkCategory("Upsert")]
    public Task UpsertCompressed() => UpsertBatchAsync();

    /// <summary>Gets the batch and deserializes every document, plain.</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("Get")]
    public Task<int> GetPlain() => GetBatchAsync();

    /// <summary>Gets the batch and deserializes every document, compressed.</summary>
    [Benchmark, BenchmarkCategory("Get")]
    public Task<int> GetCompressed() => GetBatchAsync();

    private async Task UpsertBatchAsync()
    {
        for (int i = 0; i < BatchSize; i++) _writes[i] = _collection.UpsertAsync(_keys[i], _documents[i]);
        await Task.WhenAll(_writes).ConfigureAwait(false);
    }

    private async Task<int> GetBatchAsync()
    {
        for (int i = 0; i < BatchSize; i++) _reads[i] = _collection.GetAsync(_keys[i]);
        await Task.WhenAll(_reads).ConfigureAwait(false);
        int count = 0;
        for (int i = 0; i < BatchSize; i++)
        {
            using IGetResult result = _reads[i].Result;
            if (result.ContentAs<JObject>() is { Count: > 0 }) count++;
        }
        return count;
    }
}
