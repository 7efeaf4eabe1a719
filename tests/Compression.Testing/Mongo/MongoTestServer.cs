using System.Text;
using MongoDB.Driver;

namespace Compression.Testing.Mongo;

/// <summary>
/// The MongoDB server a suite runs against: the real one named by <c>COMPRESSION_TEST_MONGODB_URI</c> when that
/// environment variable is set, otherwise a <see cref="MongoLoopbackServer"/> started in-process. Tests take a unique
/// database each from <see cref="CreateDatabase"/> and it is dropped when disposed. Tests never skip.
/// </summary>
public sealed class MongoTestServer : IAsyncDisposable
{
    /// <summary>The environment variable naming a real server (a MongoDB connection string).</summary>
    public const string UriVariable = "COMPRESSION_TEST_MONGODB_URI";

    private MongoTestServer(string connectionString, MongoLoopbackServer? loopback)
    {
        ConnectionString = connectionString;
        Loopback = loopback;
        Client = new MongoClient(CreateClientSettings());
    }

    /// <summary>The connection string in use.</summary>
    public string ConnectionString { get; }

    /// <summary>The loopback server, or null when the suite runs against a real server.</summary>
    public MongoLoopbackServer? Loopback { get; }

    /// <summary>True when running against the loopback server.</summary>
    public bool IsLoopback => Loopback is not null;

    /// <summary>A client with short timeouts (5 s server selection and connect), shared by the suite.</summary>
    public IMongoClient Client { get; }

    /// <summary>Starts the loopback server, or connects nowhere yet when <c>COMPRESSION_TEST_MONGODB_URI</c> is set.</summary>
    public static async Task<MongoTestServer> StartAsync(CancellationToken cancellationToken = default)
    {
        string? uri = Environment.GetEnvironmentVariable(UriVariable);
        if (!string.IsNullOrWhiteSpace(uri))
        {
            return new MongoTestServer(uri, null);
        }

        var loopback = await MongoLoopbackServer.StartAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        return new MongoTestServer(loopback.ConnectionString, loopback);
    }

    /// <summary>Client settings for <see cref="ConnectionString"/> with short timeouts, so that a fault test fails in
    /// seconds rather than hanging.</summary>
    public MongoClientSettings CreateClientSettings(Action<MongoClientSettings>? configure = null)
    {
        var settings = MongoClientSettings.FromConnectionString(ConnectionString);
        settings.ServerSelectionTimeout = TimeSpan.FromSeconds(5);
        settings.ConnectTimeout = TimeSpan.FromSeconds(5);
        configure?.Invoke(settings);
        return settings;
    }

    /// <summary>A database with a unique name (derived from <paramref name="hint"/>), dropped when disposed.</summary>
    public MongoTestDatabase CreateDatabase(string hint = "test")
    {
        var name = new StringBuilder("t_");
        foreach (char c in hint)
        {
            name.Append(char.IsAsciiLetterOrDigit(c) ? c : '_');
            if (name.Length >= 40)
            {
                break;
            }
        }

        name.Append('_').Append(Guid.NewGuid().ToString("N").AsSpan(0, 12));
        return new MongoTestDatabase(Client, Client.GetDatabase(name.ToString()));
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        if (Loopback is not null)
        {
            await Loopback.DisposeAsync().ConfigureAwait(false);
        }
    }
}

/// <summary>A uniquely named database for one test; dropped on dispose.</summary>
public sealed class MongoTestDatabase : IAsyncDisposable
{
    private readonly IMongoClient _client;

    internal MongoTestDatabase(IMongoClient client, IMongoDatabase database)
    {
        _client = client;
        Database = database;
    }

    /// <summary>The database.</summary>
    public IMongoDatabase Database { get; }

    /// <summary>The database's name.</summary>
    public string Name => Database.DatabaseNamespace.DatabaseName;

    /// <summary>Drops the database.</summary>
    public async ValueTask DisposeAsync() => await _client.DropDatabaseAsync(Name).ConfigureAwait(false);
}
