using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Tool.Live;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// What every live command works on (<see cref="LiveSession{TNamespace}"/>): one <see cref="MongoClient"/>, and per
/// database an engine built as the application builds its own (<c>AddDocumentCompression(configuration).AddMongoDB(database, ...)</c>),
/// so dictionaries come from the same <see cref="MongoDictionaryStore"/>.
/// </summary>
internal sealed class MongoSession : LiveSession<MongoNamespace>
{
    /// <summary>The configuration key of the connection string when <c>--connection</c> is not given (as in the samples).</summary>
    public const string ConnectionKey = "MongoDB:ConnectionString";

    private readonly MongoClient _client;

    private MongoSession(MongoClient client, IConfiguration configuration, IReadOnlyList<MongoNamespace> namespaces,
        Action<string, CompressionEngineOptions>? @override)
        : base(configuration, namespaces, @override) => _client = client;

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
        List<MongoNamespace> namespaces = [.. NamespaceNames(settings, configuration, "database.collection").Select(MongoNamespace.Parse)];

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
        session.BuildEngines();
        return session;
    }

    /// <summary>Checks that the deployment answers before anything is read (<see cref="MongoServerProbe"/>).</summary>
    /// <exception cref="NoServerException">No server answered; the message names the addresses and why.</exception>
    public async Task ConnectAsync(CancellationToken cancellationToken)
    {
        if (await MongoServerProbe.WhyNoServerAsync(_client, cancellationToken).ConfigureAwait(false) is { } why) throw new NoServerException(why);
    }

    public IMongoDatabase Database(string name) => _client.GetDatabase(name);

    public IMongoCollection<RawBsonDocument> Collection(MongoNamespace ns) =>
        Database(ns.Database).GetCollection<RawBsonDocument>(ns.Collection).WithWriteConcern(WriteConcern.WMajority);

    /// <summary>The namespace's handle with its current dictionary loaded, in the serializer's stored layout.</summary>
    public async Task<StoredDocumentCodec> OpenAsync(MongoNamespace ns, CancellationToken cancellationToken) =>
        new(await OpenNamespaceAsync(ns, cancellationToken).ConfigureAwait(false));

    protected override DocumentCompressionBuilder AddCompression(IServiceCollection services, string database) =>
        services.AddDocumentCompression(Configuration).AddMongoDB(_client.GetDatabase(database), _ => { });

    protected override void ReleaseClient() => _client.Dispose();
}

/// <summary>A collection named as in the configuration: <c>database.collection</c> (the first dot separates them).</summary>
internal sealed record MongoNamespace(string Name, string Database, string Collection) : ILiveNamespace
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
