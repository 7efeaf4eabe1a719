using Compression.Dictionaries;
using Compression.Tool.Backends;
using Compression.Tool.Live;

namespace Compression.Tool.Couchbase;

/// <summary>
/// docz's live commands on Couchbase collections (<c>bucket.scope.collection</c>), with the same options, reports and exit
/// codes as on MongoDB (docs/docz.md): the commands' flow is <see cref="LiveBackend{TSession, TNamespace, TDocument}"/>'s.
/// Couchbase's parts: its session (<see cref="CouchbaseSession"/>), its collections (<see cref="CouchbaseLiveCollection"/>:
/// documents enumerated by a KV range scan, ids only, then read by key), replacements that carry the CAS of the version
/// read, so that they can only replace that version (<see cref="CouchbaseRewrite"/>), and checkpoints kept in the bucket
/// beside the dictionaries (<see cref="CouchbaseCheckpointStore"/>).
/// </summary>
internal sealed class CouchbaseBackend : LiveBackend<CouchbaseSession, CouchbaseNamespace, StoredBody>
{
    protected override CouchbaseSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override) => CouchbaseSession.Open(settings, @override);

    /// <summary>
    /// The first node takes a connection, or the command stops with one line saying where and why (<see cref="CouchbaseServerProbe"/>);
    /// then each bucket's dictionary store gets what the application's start-up gives it: its default collection made when
    /// missing, and a location that would lose dictionaries (a maximum TTL, an evicting ephemeral bucket) refused, by
    /// every command, <c>verify</c> included, which so reports dictionaries that would expire.
    /// </summary>
    protected override async Task ConnectAsync(CouchbaseSession session, CancellationToken cancellationToken)
    {
        if (await CouchbaseServerProbe.WhyNoServerAsync(session.ConnectionString, cancellationToken).ConfigureAwait(false) is { } why)
            throw new NoServerException(why);
        await session.CheckStoreLocationsAsync(cancellationToken).ConfigureAwait(false);
    }

    protected override async Task<LiveCollection<StoredBody>> OpenAsync(CouchbaseSession session, CouchbaseNamespace ns, CancellationToken cancellationToken) =>
        new CouchbaseLiveCollection(session, ns, await session.OpenNamespaceAsync(ns, cancellationToken).ConfigureAwait(false));

    /// <summary>Every version, each as its record or its problem: one that does not read never hides the others.</summary>
    protected override IAsyncEnumerable<(DictionaryRecord? Record, string? Problem)> ListStoredAsync(DictionaryStore store, string? name,
        CancellationToken cancellationToken) =>
        store is global::Compression.Couchbase.CouchbaseDictionaryStore couchbase
            ? couchbase.ListEachAsync(name, cancellationToken)
            : base.ListStoredAsync(store, name, cancellationToken);

    /// <summary><c>recompress --older-than</c> is refused: Couchbase keys carry no time.</summary>
    protected override void CheckUsage(DateTimeOffset? olderThan)
    {
        if (olderThan is not null)
        {
            throw new UsageException("--older-than works on MongoDB ObjectIds; Couchbase keys carry no time, so it is not available with a Couchbase connection string.");
        }
    }

    /// <summary>
    /// Every namespace is checked before the first one is trained or rewritten: a server that cannot keep a document's
    /// expiry on replace refuses the run before anything is written (<see cref="BodyAccess.EnsureExpiryKeptAsync"/>).
    /// </summary>
    protected override async Task CheckRewriteAsync(CouchbaseSession session, CancellationToken cancellationToken)
    {
        foreach (CouchbaseNamespace ns in session.Namespaces)
        {
            await BodyAccess.EnsureExpiryKeptAsync(await session.CollectionAsync(ns).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
        }
    }
}
