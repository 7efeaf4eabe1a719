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

/// <summary>A Couchbase collection named as in the configuration: <c>bucket.scope.collection</c>.</summary>
internal sealed record CouchbaseNamespace(string Name, string Bucket, string Scope, string Collection)
{
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
/// What every Couchbase command works on: per bucket, the services the application registers
/// (<c>services.AddCouchbase(configuration.GetSection("Couchbase"))</c> and
/// <c>AddDocumentCompression(configuration).AddCouchbase(bucket)</c>), so namespaces have the application's settings and
/// dictionaries come from the same <see cref="Compression.Couchbase.CouchbaseDictionaryStore"/> in the bucket.
/// </summary>
internal sealed class CouchbaseSession : IAsyncDisposable
{
    private readonly Dictionary<string, ServiceProvider> _providers = new(StringComparer.Ordinal);
    private readonly IConfiguration _configuration;
    private readonly string _connection;
    private readonly Action<string, CompressionEngineOptions>? _override;

    private CouchbaseSession(IConfiguration configuration, string connection, IReadOnlyList<CouchbaseNamespace> namespaces,
        Action<string, CompressionEngineOptions>? @override)
    {
        _configuration = configuration;
        _connection = connection;
        Namespaces = namespaces;
        _override = @override;
    }

    public IReadOnlyList<CouchbaseNamespace> Namespaces { get; }

    /// <exception cref="UsageException">A missing or wrong namespace or setting; the message says which.</exception>
    public static CouchbaseSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override = null)
    {
        IConfiguration configuration = LiveConfiguration.Read(settings.ConfigPath);
        string connection = CouchbasePlugin.Connection(settings, configuration)
            ?? throw new UsageException($"No Couchbase connection string: give --connection couchbase://..., or --config with '{CouchbasePlugin.ConnectionKey}'.");
        List<string> names = settings.Namespaces.Count > 0
            ? [.. settings.Namespaces]
            : [.. configuration.GetSection($"{CompressionEngineOptions.SectionName}:Namespaces").GetChildren().Select(c => c.Key)];
        if (names.Count == 0)
        {
            throw new UsageException(
                "No namespace: give --namespace bucket.scope.collection, or --config with 'Compression:Namespaces' keyed bucket.scope.collection.");
        }
        var namespaces = names.Distinct(StringComparer.Ordinal).Select(CouchbaseNamespace.Parse).ToList();
        var session = new CouchbaseSession(configuration, connection, namespaces, @override);
        try
        {
            foreach (string bucket in namespaces.Select(n => n.Bucket).Distinct(StringComparer.Ordinal)) session.Provider(bucket);
        }
        catch
        {
            foreach (ServiceProvider provider in session._providers.Values) provider.Dispose();
            throw;
        }
        return session;
    }

    public CompressionEngine Engine(CouchbaseNamespace ns) => Provider(ns.Bucket).GetRequiredService<CompressionEngine>();

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

    /// <summary>The namespace's handle with its current dictionary loaded; the tool's engine never trains on its own.</summary>
    public async Task<CompressionNamespace> OpenAsync(CouchbaseNamespace ns, CancellationToken cancellationToken)
    {
        CompressionNamespace handle = Engine(ns).GetNamespace(ns.Name);
        handle.State.LastTrainingTimestamp = TimeProvider.System.GetTimestamp(); // with MinTrainingInterval at its maximum
        await handle.RefreshAsync(cancellationToken).ConfigureAwait(false);
        return handle;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (ServiceProvider provider in _providers.Values)
        {
            if (provider.GetService<ICouchbaseLifetimeService>() is { } lifetime) await lifetime.CloseAsync().ConfigureAwait(false);
            await provider.DisposeAsync().ConfigureAwait(false);
        }
    }

    private ServiceProvider Provider(string bucket)
    {
        if (_providers.TryGetValue(bucket, out ServiceProvider? existing)) return existing;
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddCouchbase(_configuration.GetSection("Couchbase"));
        services.Configure<global::Couchbase.ClusterOptions>(o => o.ConnectionString = _connection);
        services.AddDocumentCompression(_configuration)
            .AddCouchbase(bucket)
            .Configure(options =>
            {
                foreach (CouchbaseNamespace ns in Namespaces.Where(n => n.Bucket == bucket))
                {
                    if (!options.Namespaces.TryGetValue(ns.Name, out NamespaceOptions? settings))
                        options.Namespaces[ns.Name] = settings = options.Defaults.Clone();
                    settings.Dictionary.MinTrainingInterval = TimeSpan.MaxValue; // see OpenAsync
                    _override?.Invoke(ns.Name, options);
                }
            });
        ServiceProvider provider = services.BuildServiceProvider();
        try
        {
            _ = provider.GetRequiredService<IOptions<CompressionEngineOptions>>().Value; // validated here: every error at once
            _ = provider.GetRequiredService<IOptions<CouchbaseCompressionOptions>>().Value;
        }
        catch (OptionsValidationException ex)
        {
            provider.Dispose();
            throw new UsageException($"The compression settings are invalid:{Environment.NewLine}  {string.Join($"{Environment.NewLine}  ", ex.Failures)}");
        }
        _providers[bucket] = provider;
        return provider;
    }
}
