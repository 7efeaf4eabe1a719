using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Tool.Live;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// What every live command works on: one <see cref="MongoClient"/>, and per database an engine built the way the
/// application builds its own (<c>AddDocumentCompression(configuration).AddMongoDB(database, ...)</c>), so namespaces
/// have the application's settings and dictionaries come from the same <see cref="MongoDictionaryStore"/>.
/// </summary>
internal sealed class MongoSession : IAsyncDisposable
{
    /// <summary>The configuration key of the connection string when <c>--connection</c> is not given (as in the samples).</summary>
    public const string ConnectionKey = "MongoDB:ConnectionString";

    private readonly MongoClient _client;
    private readonly Dictionary<string, ServiceProvider> _providers = new(StringComparer.Ordinal);
    private readonly IConfiguration _configuration;
    private readonly Action<string, CompressionEngineOptions>? _override;

    private MongoSession(MongoClient client, IConfiguration configuration, IReadOnlyList<MongoNamespace> namespaces,
        Action<string, CompressionEngineOptions>? @override)
    {
        _client = client;
        _configuration = configuration;
        Namespaces = namespaces;
        _override = @override;
    }

    public IReadOnlyList<MongoNamespace> Namespaces { get; }

    /// <summary>
    /// Reads the configuration, finds the connection string and the namespaces, and checks the compression settings by
    /// building each database's engine.
    /// </summary>
    /// <param name="settings">The command line's connection, configuration file and namespaces.</param>
    /// <param name="override">Changes a namespace's settings for this run (e.g. <c>--level</c>), after the configuration.</param>
    /// <exception cref="UsageException">Something the user gave is missing or wrong; the message says what.</exception>
    public static MongoSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override = null)
    {
        IConfiguration configuration = LiveConfiguration.Read(settings.ConfigPath);
        string connection = settings.Connection
            ?? configuration[ConnectionKey]
            ?? configuration.GetConnectionString("MongoDB")
            ?? throw new UsageException(
                $"No MongoDB connection string: give --connection mongodb://..., or --config with '{ConnectionKey}' (or 'ConnectionStrings:MongoDB').");

        List<string> names = settings.Namespaces.Count > 0
            ? [.. settings.Namespaces]
            : [.. configuration.GetSection($"{CompressionEngineOptions.SectionName}:Namespaces").GetChildren().Select(c => c.Key)];
        if (names.Count == 0)
        {
            throw new UsageException(
                "No namespace: give --namespace database.collection, or --config with 'Compression:Namespaces' keyed database.collection.");
        }
        var namespaces = new List<MongoNamespace>();
        foreach (string name in names.Distinct(StringComparer.Ordinal)) namespaces.Add(MongoNamespace.Parse(name));

        MongoClient client;
        try
        {
            client = new MongoClient(connection);
        }
        catch (Exception ex) when (ex is MongoConfigurationException or ArgumentException)
        {
            throw new UsageException($"The MongoDB connection string is not valid: {ex.Message}");
        }

        var session = new MongoSession(client, configuration, namespaces, @override);
        try
        {
            foreach (string database in namespaces.Select(n => n.Database).Distinct(StringComparer.Ordinal)) session.Provider(database);
        }
        catch
        {
            client.Dispose();
            throw;
        }
        return session;
    }

    public IMongoDatabase Database(string name) => _client.GetDatabase(name);

    public IMongoCollection<RawBsonDocument> Collection(MongoNamespace ns) =>
        Database(ns.Database).GetCollection<RawBsonDocument>(ns.Collection).WithWriteConcern(WriteConcern.WMajority);

    /// <summary>The engine of a namespace's database.</summary>
    public CompressionEngine Engine(MongoNamespace ns) => Provider(ns.Database).GetRequiredService<CompressionEngine>();

    /// <summary>
    /// The namespace's handle with its current dictionary loaded (store failures are thrown, not logged). The tool's engine
    /// never trains on its own: what it compresses uses the dictionary published when the command starts; <c>train</c>
    /// publishes new ones, explicitly.
    /// </summary>
    public async Task<StoredDocumentCodec> OpenAsync(MongoNamespace ns, CancellationToken cancellationToken)
    {
        CompressionNamespace handle = Engine(ns).GetNamespace(ns.Name);
        handle.State.LastTrainingTimestamp = TimeProvider.System.GetTimestamp(); // with MinTrainingInterval at its maximum
        await handle.RefreshAsync(cancellationToken).ConfigureAwait(false);
        return new StoredDocumentCodec(handle);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (ServiceProvider provider in _providers.Values) await provider.DisposeAsync().ConfigureAwait(false);
        _client.Dispose();
    }

    private ServiceProvider Provider(string database)
    {
        if (_providers.TryGetValue(database, out ServiceProvider? existing)) return existing;
        var services = new ServiceCollection();
        services.AddDocumentCompression(_configuration)
            .AddMongoDB(_client.GetDatabase(database), _ => { })
            .Configure(options =>
            {
                foreach (MongoNamespace ns in Namespaces.Where(n => n.Database == database))
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
        }
        catch (OptionsValidationException ex)
        {
            provider.Dispose();
            throw new UsageException($"The compression settings are invalid:{Environment.NewLine}  {string.Join($"{Environment.NewLine}  ", ex.Failures)}");
        }
        _providers[database] = provider;
        return provider;
    }
}

/// <summary>A collection named as in the configuration: <c>database.collection</c> (the first dot separates them).</summary>
internal sealed record MongoNamespace(string Name, string Database, string Collection)
{
    public static MongoNamespace Parse(string name)
    {
        int dot = name.IndexOf('.', StringComparison.Ordinal);
        if (dot <= 0 || dot == name.Length - 1)
            throw new UsageException($"'{name}' is not a MongoDB namespace: expected database.collection.");
        if (!NamespaceName.IsValid(name, out string? problem))
            throw new UsageException($"'{name}' is not a namespace name: {problem}");
        return new MongoNamespace(name, name[..dot], name[(dot + 1)..]);
    }

    public override string ToString() => Name;
}

/// <summary>Shell-style rendering of an <c>_id</c> (or any value) for messages: <c>ObjectId("...")</c>, <c>42</c>, <c>"a"</c>.</summary>
internal static class Shell
{
    private static readonly global::MongoDB.Bson.IO.JsonWriterSettings Settings = new() { OutputMode = global::MongoDB.Bson.IO.JsonOutputMode.Shell };

    public static string Of(BsonValue? value) => value is null ? "(none)" : value.ToJson(Settings);
}
