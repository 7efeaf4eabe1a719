using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Tool.Live;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// docz's live commands on MongoDB collections (<c>database.collection</c>), built in: the commands' flow is
/// <see cref="LiveBackend{TSession, TNamespace, TDocument}"/>'s; MongoDB's parts are its session (<see cref="MongoSession"/>),
/// its collections (<see cref="MongoLiveCollection"/>: documents read in <c>_id</c> order through one cursor,
/// <see cref="DocumentScan"/>, split and merged in the serializer's own stored layout, <see cref="StoredDocumentCodec"/>),
/// each replacement a compare-and-swap on the whole document as it was read (<see cref="CollectionRewriter"/>), and
/// checkpoints kept in <c>_compression.migrations</c> (<see cref="MongoCheckpointStore"/>).
/// </summary>
internal sealed class MongoBackend : LiveBackend<MongoSession, MongoNamespace, ScannedDocument>
{
    public static readonly MongoBackend Instance = new();

    /// <summary>What the command says of a failure of the driver (<see cref="DoczBackends.Failure"/>), or null when it is not one.</summary>
    public static string? Failure(Exception exception) => exception switch
    {
        TimeoutException => $"cannot reach the MongoDB server: {LiveRunner.FirstLine(exception.Message)}",
        MongoException => LiveRunner.FirstLine(exception.Message),
        _ => null,
    };

    /// <summary>Every stored document, each as its record or its problem: one that does not read never hides the others.</summary>
    protected override IAsyncEnumerable<(DictionaryRecord? Record, string? Problem)> ListStoredAsync(DictionaryStore store, string? name,
        CancellationToken cancellationToken) =>
        store is MongoDictionaryStore mongo ? mongo.ListEachAsync(name, cancellationToken) : base.ListStoredAsync(store, name, cancellationToken);

    protected override MongoSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override) => MongoSession.Open(settings, @override);

    protected override Task ConnectAsync(MongoSession session, CancellationToken cancellationToken) => session.ConnectAsync(cancellationToken);

    protected override async Task<LiveCollection<ScannedDocument>> OpenAsync(MongoSession session, MongoNamespace ns, CancellationToken cancellationToken) =>
        new MongoLiveCollection(session, ns, await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false));
}
