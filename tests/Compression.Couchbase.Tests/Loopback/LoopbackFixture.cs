using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.KeyValue;
using Microsoft.Extensions.Logging;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>A loopback server plus a real SDK cluster connected to it through <see cref="Cluster.ConnectAsync(string, ClusterOptions)"/>.</summary>
internal sealed class LoopbackCluster : IAsyncDisposable
{
    private LoopbackCluster(CouchbaseLoopbackServer server, ICluster cluster, IBucket bucket)
    {
        Server = server;
        Cluster = cluster;
        Bucket = bucket;
        Collection = bucket.DefaultCollection();
    }

    public CouchbaseLoopbackServer Server { get; }

    public ICluster Cluster { get; }

    public IBucket Bucket { get; }

    public ICouchbaseCollection Collection { get; }

    public static async Task<LoopbackCluster> StartAsync(ITestOutputHelper output, CouchbaseLoopbackServerOptions? options = null, Action<ClusterOptions>? configure = null)
    {
        var log = new TestLog(output);
        CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(options ?? new CouchbaseLoopbackServerOptions { Log = log.Write });
        try
        {
            ClusterOptions clusterOptions = Options(server, log);
            configure?.Invoke(clusterOptions);
            ICluster cluster = await global::Couchbase.Cluster.ConnectAsync(server.ConnectionString, clusterOptions);
            IBucket bucket = await cluster.BucketAsync(server.BucketName);
            return new LoopbackCluster(server, cluster, bucket);
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }
    }

    public static ClusterOptions Options(CouchbaseLoopbackServer server, TestLog log) => new ClusterOptions
    {
        KvTimeout = TimeSpan.FromSeconds(5),
        KvConnectTimeout = TimeSpan.FromSeconds(5),
        EnableDnsSrvResolution = false,
    }
        .WithPasswordAuthentication(server.Username, server.Password)
        .WithLogging(LoggerFactory.Create(builder => builder.SetMinimumLevel(LogLevel.Warning).AddProvider(log)));

    public async ValueTask DisposeAsync()
    {
        await Cluster.DisposeAsync();
        await Server.DisposeAsync();
    }
}

/// <summary>Writes the server's log lines and the SDK's warnings to the test output (silently after the test ends).</summary>
internal sealed class TestLog(ITestOutputHelper output) : ILoggerProvider
{
    public void Write(string line)
    {
        try
        {
            output.WriteLine(line);
        }
        catch (InvalidOperationException)
        {
            // the test has finished; background lines are dropped
        }
    }

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    private sealed class Logger(TestLog log, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => log.Write($"[sdk {logLevel} {category}] {formatter(state, exception)}{(exception is null ? "" : " " + exception.GetType().Name + ": " + exception.Message)}");
    }
}
