using Compression.Tool.Backends.MongoDB;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>The backend of a command line: by its connection string (<see cref="CouchbasePlugin.Connection"/>).</summary>
internal static class DoczBackends
{
    /// <summary>
    /// The MongoDB test double for <c>--loopback</c>; else the Couchbase plugin for a <c>couchbase://</c> or
    /// <c>couchbases://</c> connection string, else MongoDB. Nothing is opened yet: the backend opens its session when
    /// the command runs.
    /// </summary>
    /// <exception cref="UsageException">The configuration file cannot be read, or it is for Couchbase and the plugin is missing or cannot be loaded.</exception>
    public static IDoczBackend Choose(LiveSettings settings) =>
        settings.Loopback ? MongoLoopbackBackend.Instance : CouchbasePlugin.Find(settings) ?? MongoBackend.Instance;

    /// <summary>
    /// What the command says of a failure of a backend's driver or SDK (exit 1; the message's first line), or null when
    /// <paramref name="exception"/> is not one: MongoDB's, then the Couchbase plugin's.
    /// </summary>
    public static string? Failure(Exception exception) => MongoBackend.Failure(exception) ?? CouchbasePlugin.Failure(exception);
}
