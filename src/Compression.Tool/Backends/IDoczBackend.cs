using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>
/// A database docz's live commands run on: the commands parse and check their options, choose the backend
/// (<see cref="DoczBackends.Choose"/>) and hand it the run. Every backend runs the commands' shared flow,
/// <see cref="LiveBackend{TSession, TNamespace, TDocument}"/> (session, namespaces, reports written through the
/// <see cref="LiveOutput"/> it is given with the command's own table, <c>TrainCommand.ToTable</c>, ...), and provides
/// only its database's parts: its session, its scan and stored layout, its compare-and-swap replace, its checkpoint
/// storage (docs/adapters.md, "docz backend"). MongoDB is built in
/// (<c>Backends/MongoDB/</c>); Couchbase is a plugin, <c>Compression.Tool.Couchbase</c>, outside Compression.sln because
/// CouchbaseNetClient does not restore everywhere (<c>Backends/Couchbase/CouchbasePlugin.cs</c> loads it).
/// Each method runs one command to the end and returns its exit code (docs/docz.md); bad usage is a <see cref="UsageException"/>.
/// </summary>
internal interface IDoczBackend
{
    /// <summary><c>train</c>: samples each namespace (or the JSON Lines file <paramref name="from"/>, one namespace only) and trains.</summary>
    Task<int> TrainAsync(LiveSettings settings, FileInfo? from, int maxDocuments, LiveOutput console, CancellationToken cancellationToken);

    /// <summary>
    /// <c>migrate</c>, <c>migrate --decompress</c> and <c>recompress</c> (<see cref="RewriteOptions.Mode"/>); <paramref name="train"/>:
    /// train a first dictionary before compressing; <paramref name="olderThan"/>: <c>recompress --older-than</c>, for a
    /// backend whose keys carry their time (others refuse it as bad usage).
    /// </summary>
    Task<int> RewriteAsync(string command, LiveSettings settings, RewriteOptions options, bool train, DateTimeOffset? olderThan, LiveOutput console,
        CancellationToken cancellationToken);

    /// <summary><c>verify</c>.</summary>
    Task<int> VerifyAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken);

    /// <summary><c>stats</c>.</summary>
    Task<int> StatsAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken);

    /// <summary><c>dictionaries list</c>.</summary>
    Task<int> ListDictionariesAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken);

    /// <summary><c>dictionaries export</c>: to the new file <paramref name="to"/>.</summary>
    Task<int> ExportDictionariesAsync(LiveSettings settings, FileInfo to, LiveOutput console, CancellationToken cancellationToken);

    /// <summary><c>dictionaries import</c>: from the export file <paramref name="from"/>.</summary>
    Task<int> ImportDictionariesAsync(LiveSettings settings, FileInfo from, LiveOutput console, CancellationToken cancellationToken);

    /// <summary>
    /// <c>cat</c>: the decoded documents <paramref name="query"/> selects in the one namespace, at most <paramref name="limit"/>,
    /// one JSON line each on <paramref name="documents"/>; those that cannot be read are named on stderr (exit 1).
    /// </summary>
    Task<int> CatAsync(LiveSettings settings, DocumentQuery query, long limit, TextWriter documents, LiveOutput console, CancellationToken cancellationToken);

    /// <summary><c>export</c>: the one namespace, decoded, to <see cref="TransferOptions.File"/> as JSON Lines, resumable.</summary>
    Task<int> ExportAsync(LiveSettings settings, TransferOptions options, LiveOutput console, CancellationToken cancellationToken);

    /// <summary><c>import</c>: <see cref="TransferOptions.File"/>'s JSON Lines into the one namespace, compressed, resumable.</summary>
    Task<int> ImportAsync(LiveSettings settings, TransferOptions options, LiveOutput console, CancellationToken cancellationToken);
}
