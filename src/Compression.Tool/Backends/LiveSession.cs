using Compression.Dictionaries;
using Compression.Tool.Live;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Compression.Tool.Backends;

/// <summary>A namespace a live command works on, as its backend parsed it from its name.</summary>
internal interface ILiveNamespace
{
    /// <summary>The name as in the configuration (the engine's namespace).</summary>
    string Name { get; }

    /// <summary>The database (MongoDB) or bucket (Couchbase) whose engine serves the namespace: one engine each.</summary>
    string Database { get; }
}

/// <summary>
/// What every live command works on: the namespaces of the command line (or the configuration), and per database an
/// engine built the way the application builds its own (<c>AddDocumentCompression(configuration).Add...(database)</c>,
/// <see cref="AddCompression"/>), so namespaces have the application's settings and dictionaries come from the same
/// store. The engine never trains on its own: what a command compresses uses the dictionary published when it starts;
/// <c>train</c> publishes new ones, explicitly.
/// </summary>
internal abstract class LiveSession<TNamespace> : IAsyncDisposable
    where TNamespace : ILiveNamespace
{
    private readonly Dictionary<string, ServiceProvider> _providers = new(StringComparer.Ordinal);
    private readonly Action<string, CompressionEngineOptions>? _override;

    /// <param name="configuration">The application's configuration (<c>--config</c>).</param>
    /// <param name="namespaces">The namespaces the command works on.</param>
    /// <param name="override">Changes a namespace's settings for this run (e.g. <c>--level</c>), after the configuration.</param>
    protected LiveSession(IConfiguration configuration, IReadOnlyList<TNamespace> namespaces, Action<string, CompressionEngineOptions>? @override)
    {
        Configuration = configuration;
        Namespaces = namespaces;
        _override = @override;
    }

    public IReadOnlyList<TNamespace> Namespaces { get; }

    protected IConfiguration Configuration { get; }

    /// <summary>
    /// The namespace names of the command line, else those the configuration has settings for, each once.
    /// </summary>
    /// <param name="settings">The command line's namespaces.</param>
    /// <param name="configuration">The application's configuration.</param>
    /// <param name="shape">How the database names a namespace, for the message (<c>database.collection</c>).</param>
    /// <exception cref="UsageException">There is none.</exception>
    protected static IEnumerable<string> NamespaceNames(LiveSettings settings, IConfiguration configuration, string shape)
    {
        List<string> names = settings.Namespaces.Count > 0
            ? [.. settings.Namespaces]
            : [.. configuration.GetSection($"{CompressionEngineOptions.SectionName}:Namespaces").GetChildren().Select(c => c.Key)];
        if (names.Count == 0)
            throw new UsageException($"No namespace: give --namespace {shape}, or --config with 'Compression:Namespaces' keyed {shape}.");
        return names.Distinct(StringComparer.Ordinal);
    }

    /// <summary>The engine of a namespace's database.</summary>
    public CompressionEngine Engine(TNamespace ns) => Provider(ns.Database).GetRequiredService<CompressionEngine>();

    /// <summary>The largest dictionary the namespace's engine accepts (<c>Compression:MaxDictionaryBytes</c>): its store refuses larger ones.</summary>
    public int MaxDictionaryBytes(TNamespace ns) => Provider(ns.Database).GetRequiredService<IOptions<CompressionEngineOptions>>().Value.MaxDictionaryBytes;

    /// <summary>The namespace's handle with its current dictionary loaded (store failures are thrown, not logged).</summary>
    public async Task<CompressionNamespace> OpenNamespaceAsync(TNamespace ns, CancellationToken cancellationToken)
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
            await CloseAsync(provider).ConfigureAwait(false);
            await provider.DisposeAsync().ConfigureAwait(false);
        }
        ReleaseClient();
    }

    /// <summary>
    /// Builds every database's engine, which checks the compression settings: every error at once, before anything runs.
    /// On an error, what was built is released (and the database's client, <see cref="ReleaseClient"/>).
    /// </summary>
    /// <exception cref="UsageException">The compression settings are invalid.</exception>
    protected void BuildEngines()
    {
        try
        {
            foreach (string database in Namespaces.Select(n => n.Database).Distinct(StringComparer.Ordinal)) Provider(database);
        }
        catch
        {
            foreach (ServiceProvider provider in _providers.Values) provider.Dispose();
            ReleaseClient();
            throw;
        }
    }

    /// <summary>The services of a database: its engine, its dictionary store, and whatever the database's client registers.</summary>
    protected ServiceProvider Provider(string database)
    {
        if (_providers.TryGetValue(database, out ServiceProvider? existing)) return existing;
        var services = new ServiceCollection();
        AddCompression(services, database).Configure(options =>
        {
            foreach (TNamespace ns in Namespaces.Where(n => n.Database == database))
            {
                if (!options.Namespaces.TryGetValue(ns.Name, out NamespaceOptions? settings))
                    options.Namespaces[ns.Name] = settings = options.Defaults.Clone();
                settings.Dictionary.MinTrainingInterval = TimeSpan.MaxValue; // see OpenNamespaceAsync
                _override?.Invoke(ns.Name, options);
            }
        });
        ServiceProvider provider = services.BuildServiceProvider();
        try
        {
            Validate(provider); // every error at once
        }
        catch (OptionsValidationException ex)
        {
            provider.Dispose();
            throw new UsageException($"The compression settings are invalid:{Environment.NewLine}  {string.Join($"{Environment.NewLine}  ", ex.Failures)}");
        }
        _providers[database] = provider;
        return provider;
    }

    /// <summary>
    /// Registers what the application registers for one database: its client's services if any, then
    /// <c>AddDocumentCompression(Configuration)</c> and the adapter's <c>Add...</c> for <paramref name="database"/>.
    /// </summary>
    protected abstract DocumentCompressionBuilder AddCompression(IServiceCollection services, string database);

    /// <summary>Reads the options a database's engine is built with, so that their validation runs now.</summary>
    /// <exception cref="OptionsValidationException">They are invalid.</exception>
    protected virtual void Validate(ServiceProvider provider) => _ = provider.GetRequiredService<IOptions<CompressionEngineOptions>>().Value;

    /// <summary>Closes what a database's services hold open before they are disposed.</summary>
    protected virtual ValueTask CloseAsync(ServiceProvider provider) => ValueTask.CompletedTask;

    /// <summary>Releases the database's client the session holds of its own, if any (on dispose, and when opening fails).</summary>
    protected virtual void ReleaseClient()
    {
    }
}
