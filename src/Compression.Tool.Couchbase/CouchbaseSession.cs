using Compression.Couchbase;
using Compression.Dictionaries;
using Compression.Tool.Backends;
using Compression.Tool.Live;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Compression.Tool.Couchbase;

/// <summary>The dictionary store's location would lose dictionaries, or could not be made or checked (exit 1, the message's first line).</summary>
internal sealed class StoreLocationException(string message, Exception inner) : IOException(message, inner);

/// <summary>A Couchbase collection named as in the configuration: <c>bucket.scope.collection</c>.</summary>
internal sealed record CouchbaseNamespace(string Name, string Bucket, string Scope, string Collection) : ILiveNamespace
{
    /// <summary>The bucket: one engine each.</summary>
    string ILiveNamespace.Database => Bucket;

    public static CouchbaseNamespace Parse(string name)
    {
        string[] parts = name.Split('.');
        if (parts.Length != 3 || parts.Any(string.IsNullOrEmpty))
            throw new UsageException($"'{name}' is not a Couchbase namespace: expected bucket.scope.collection (e.g. travel._default._default).");
        if (!NamespaceName.IsValid(name, out string? problem)) throw new UsageException($"'{name}' is not a namespace name: {problem}");
        return new CouchbaseNamespace(name, parts[0], parts[1], parts[2]);
    }

    public override string ToString() => Name;
}

/// <summary>
/// What every Couchbase command works on (<see cref="LiveSession{TNamespace}"/>): per bucket, the services the
/// application registers (<c>services.AddCouchbase(configuration.GetSection("Couchbase"))</c> and
/// <c>AddDocumentCompression(configuration).AddCouchbase(bucket)</c>), so dictionaries come from the same
/// <see cref="Compression.Couchbase.CouchbaseDictionaryStore"/> in the bucket.
/// </summary>
internal sealed class CouchbaseSession : LiveSession<CouchbaseNamespace>
{
    private readonly string _connection;

    private CouchbaseSession(IConfiguration configuration, string connection, IReadOnlyList<CouchbaseNamespace> namespaces,
        Action<string, CompressionEngineOptions>? @override)
        : base(configuration, namespaces, @override) => _connection = connection;

    /// <exception cref="UsageException">A missing or wrong namespace or setting; the message says which.</exception>
    public static CouchbaseSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override = null)
    {
        IConfiguration configuration = LiveConfiguration.Read(settings.ConfigPath);
        string connection = CouchbasePlugin.Connection(settings, configuration)
            ?? throw new UsageException($"No Couchbase connection string: give --connection couchbase://..., or --config with '{CouchbasePlugin.ConnectionKey}'.");
        List<CouchbaseNamespace> namespaces = [.. NamespaceNames(settings, configuration, "bucket.scope.collection").Select(CouchbaseNamespace.Parse)];
        var session = new CouchbaseSession(configuration, connection, namespaces, @override);
        session.BuildEngines();
        return session;
    }

    /// <summary>The connection string the session's clusters are opened with.</summary>
    public string ConnectionString => _connection;

    /// <summary>The SDK's collection itself (no compression decorator: the commands read and write bodies as they are).</summary>
    public async Task<ICouchbaseCollection> CollectionAsync(CouchbaseNamespace ns)
    {
        var bucket = await Provider(ns.Bucket).GetRequiredService<IBucketProvider>().GetBucketAsync(ns.Bucket).ConfigureAwait(false);
        var scope = await bucket.ScopeAsync(ns.Scope).ConfigureAwait(false);
        return await scope.CollectionAsync(ns.Collection).ConfigureAwait(false);
    }

    /// <summary>Where the dictionaries and the checkpoints of the bucket live (AddCouchbase's store scope and collection).</summary>
    public async Task<ICouchbaseCollection> StoreCollectionAsync(CouchbaseNamespace ns)
    {
        ServiceProvider provider = Provider(ns.Bucket);
        var options = provider.GetRequiredService<IOptions<CouchbaseCompressionOptions>>().Value;
        var bucket = await provider.GetRequiredService<IBucketProvider>().GetBucketAsync(ns.Bucket).ConfigureAwait(false);
        var scope = await bucket.ScopeAsync(options.StoreScopeName).ConfigureAwait(false);
        return await scope.CollectionAsync(options.StoreCollectionName).ConfigureAwait(false);
    }

    /// <summary>
    /// What the application's start-up does for each bucket's store (<c>AddCouchbase</c>'s hosted service): the default
    /// location created when missing, then checked to keep dictionaries for ever.
    /// </summary>
    /// <exception cref="StoreLocationException">A location that would lose dictionaries, or that could not be made or checked; the message says why.</exception>
    public async Task CheckStoreLocationsAsync(CancellationToken cancellationToken)
    {
        foreach (string bucket in Namespaces.Select(n => n.Bucket).Distinct(StringComparer.Ordinal))
        {
            foreach (CouchbaseStoreStartup startup in Provider(bucket).GetServices<Microsoft.Extensions.Hosting.IHostedService>().OfType<CouchbaseStoreStartup>())
            {
                try
                {
                    await startup.StartAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (InvalidOperationException ex)
                {
                    throw new StoreLocationException(ex.Message, ex);
                }
            }
        }
    }

    protected override DocumentCompressionBuilder AddCompression(IServiceCollection services, string database)
    {
        services.AddLogging();
        services.AddCouchbase(Configuration.GetSection("Couchbase"));
        services.Configure<global::Couchbase.ClusterOptions>(o => o.ConnectionString = _connection);
        return services.AddDocumentCompression(Configuration).AddCouchbase(database);
    }

    protected override void Validate(ServiceProvider provider)
    {
        base.Validate(provider);
        _ = provider.GetRequiredService<IOptions<CouchbaseCompressionOptions>>().Value;
    }

    /// <summary>The SDK's cluster is closed before its services are disposed.</summary>
    protected override async ValueTask CloseAsync(ServiceProvider provider)
    {
        if (provider.GetService<ICouchbaseLifetimeService>() is { } lifetime) await lifetime.CloseAsync().ConfigureAwait(false);
    }
}
