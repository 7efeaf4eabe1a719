using Microsoft.Extensions.Logging;
using Compression.Core.Tests.Dictionaries;
using Compression.Couchbase.Internal;
using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.KeyValue;
using Microsoft.Extensions.Time.Testing;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Where the adapter's portable tests run: a loopback server started for the test, or the real cluster named by
/// <c>COMPRESSION_TEST_COUCHBASE_CONNSTR</c> (with <c>COMPRESSION_TEST_COUCHBASE_USERNAME</c>, <c>_PASSWORD</c> and
/// <c>_BUCKET</c>, by default Administrator, password and default). On a real cluster every key a test writes, the
/// dictionary store's included, starts with a prefix of its own, so tests do not see each other's documents.
/// </summary>
internal sealed class CouchbaseTarget : IAsyncDisposable
{
    public const string ConnectionStringVariable = "COMPRESSION_TEST_COUCHBASE_CONNSTR";

    private readonly TestLog _log;
    private readonly List<Client> _clients = [];

    private CouchbaseTarget(CouchbaseLoopbackServer? loopback, string connectionString, string username, string password, string bucketName, TestLog log)
    {
        Loopback = loopback;
        ConnectionString = connectionString;
        Username = username;
        Password = password;
        BucketName = bucketName;
        _log = log;
        Prefix = loopback is null ? $"test-{Guid.NewGuid():N}"[..17] + "::" : "";
    }

    /// <summary>The loopback server, or null against a real cluster.</summary>
    public CouchbaseLoopbackServer? Loopback { get; }

    public string ConnectionString { get; }

    public string Username { get; }

    public string Password { get; }

    public string BucketName { get; }

    /// <summary>What every key starts with: empty on the loopback server (one per test), a unique run prefix on a real cluster.</summary>
    public string Prefix { get; }

    public string StoreKeyPrefix => Prefix + CouchbaseDictionaryStore.DefaultKeyPrefix;

    public static async Task<CouchbaseTarget> StartAsync(ITestOutputHelper output)
    {
        var log = new TestLog(output);
        string? real = Environment.GetEnvironmentVariable(ConnectionStringVariable);
        if (!string.IsNullOrWhiteSpace(real))
        {
            log.Write($"target: the real cluster at {real}");
            return new CouchbaseTarget(null, real,
                Environment.GetEnvironmentVariable("COMPRESSION_TEST_COUCHBASE_USERNAME") ?? "Administrator",
                Environment.GetEnvironmentVariable("COMPRESSION_TEST_COUCHBASE_PASSWORD") ?? "password",
                Environment.GetEnvironmentVariable("COMPRESSION_TEST_COUCHBASE_BUCKET") ?? "default", log);
        }
        CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = log.Write });
        return new CouchbaseTarget(server, server.ConnectionString, server.Username, server.Password, server.BucketName, log);
    }

    public string Key(string key) => Prefix + key;

    /// <summary>A new client: its own cluster connection, its own engine (cold cache, fake clock) and its own store object.</summary>
    public async Task<Client> ConnectAsync(CompressionEngineOptions? engineOptions = null, Action<ClusterOptions>? configure = null,
        CompressedCollectionOptions? collectionOptions = null, Func<Client, Task<ICouchbaseCollection>>? storeCollection = null)
    {
        var options = new ClusterOptions
        {
            KvTimeout = TimeSpan.FromSeconds(5),
            KvConnectTimeout = TimeSpan.FromSeconds(5),
            EnableDnsSrvResolution = false,
        }.WithPasswordAuthentication(Username, Password)
         .WithLogging(Microsoft.Extensions.Logging.LoggerFactory.Create(b => b.SetMinimumLevel(Microsoft.Extensions.Logging.LogLevel.Warning).AddProvider(_log)));
        configure?.Invoke(options);
        ICluster cluster = await Cluster.ConnectAsync(ConnectionString, options);
        IBucket bucket = await cluster.BucketAsync(BucketName);
        var client = new Client(this, cluster, bucket, engineOptions ?? CompressionEngineOptionsBuilder.Fast(), collectionOptions);
        ICouchbaseCollection store = storeCollection is null ? client.Plain : await storeCollection(client);
        client.Initialize(new CouchbaseDictionaryStore(_ => ValueTask.FromResult(store), CouchbaseCollectionCompressionExtensions.NamespaceName(store),
            ZstdDictionary.DefaultMaximumSize, StoreKeyPrefix));
        lock (_clients) _clients.Add(client);
        return client;
    }

    /// <summary>A document's body and flags as stored, read through the SDK without decoding.</summary>
    public static async Task<RawBody> ReadRawAsync(ICouchbaseCollection plain, string key)
    {
        using IGetResult result = await plain.GetAsync(key, new GetOptions().Transcoder(RawBodyTranscoder.Instance));
        RawBody body = result.ContentAs<RawBody>()!;
        return new RawBody(body.Data.ToArray(), body.Flags);
    }

    public async ValueTask DisposeAsync()
    {
        Client[] clients;
        lock (_clients) clients = [.. _clients];
        foreach (Client client in clients) await client.DisposeAsync();
        if (Loopback is not null)
        {
            Xunit.Assert.Empty(Loopback.ProtocolErrors);
            await Loopback.DisposeAsync();
        }
    }
}

/// <summary>One application: a cluster connection, an engine with its dictionary store in the bucket, and the compressed default collection.</summary>
internal sealed class Client(CouchbaseTarget target, ICluster cluster, IBucket bucket, CompressionEngineOptions engineOptions, CompressedCollectionOptions? collectionOptions)
    : IAsyncDisposable
{
    private bool _disposed;

    public CouchbaseTarget Target => target;

    public ICluster Cluster => cluster;

    public IBucket Bucket => bucket;

    /// <summary>The SDK's default collection, undecorated.</summary>
    public ICouchbaseCollection Plain { get; } = bucket.DefaultCollection();

    public CompressionEngine Engine { get; private set; } = null!;

    public CouchbaseDictionaryStore Store { get; private set; } = null!;

    /// <summary>The default collection, compressed.</summary>
    public ICouchbaseCollection Compressed { get; private set; } = null!;

    public CompressionNamespace Namespace => Compressed.GetCompressingTranscoder()!.Namespace;

    public FakeTimeProvider Time { get; } = new();

    internal void Initialize(CouchbaseDictionaryStore store)
    {
        Store = store;
        Engine = new CompressionEngine(store, engineOptions, timeProvider: Time);
        Compressed = Plain.WithCompression(Engine, collectionOptions);
    }

    public async ValueTask DisposeAsync()
    {
        if (_disposed) return;
        _disposed = true;
        await Engine.DisposeAsync();
        await cluster.DisposeAsync();
    }
}
