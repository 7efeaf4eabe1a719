using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// Where MongoDB keeps a rewrite's <see cref="RewriteCheckpoint{TKey}"/>: in the collection <c>_compression.migrations</c>
/// of the same database, one document per collection and command, written with write concern majority:
/// <c>{ _id: "collection:mode", ns, mode, parameters, after, written, skipped, unchanged, failed, failures, runs, started, updated, done }</c>.
/// </summary>
internal sealed class MongoCheckpointStore : ICheckpointStore<BsonValue>
{
    public const string CollectionName = "_compression.migrations";

    private readonly IMongoCollection<BsonDocument> _collection;
    private readonly MongoNamespace _ns;

    public MongoCheckpointStore(IMongoDatabase database, MongoNamespace ns, string mode)
    {
        _collection = database.GetCollection<BsonDocument>(CollectionName).WithWriteConcern(WriteConcern.WMajority);
        _ns = ns;
        Id = $"{ns.Collection}:{mode}";
        Location = $"{database.DatabaseNamespace.DatabaseName}.{CollectionName}";
    }

    public string Id { get; }

    public string Location { get; }

    public Task RemoveOtherCommandsAsync(CancellationToken cancellationToken) =>
        _collection.DeleteManyAsync(new BsonDocument { { "ns", _ns.Name }, { "_id", new BsonDocument("$ne", Id) } }, cancellationToken);

    public async Task<IStoredCheckpoint<BsonValue>?> ReadAsync(CancellationToken cancellationToken)
    {
        BsonDocument? stored = await _collection.Find(new BsonDocument("_id", Id)).Limit(1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return stored is null ? null : new Stored(stored);
    }

    public bool IsDamage(Exception exception) => exception is KeyNotFoundException or InvalidCastException or NotSupportedException;

    public Task WriteAsync(RewriteCheckpoint<BsonValue> checkpoint, bool done, CancellationToken cancellationToken)
    {
        var document = new BsonDocument
        {
            { "_id", Id },
            { "ns", checkpoint.Namespace },
            { "mode", checkpoint.Mode },
            { "parameters", checkpoint.Parameters },
            { "after", checkpoint.After ?? BsonNull.Value },
            { "written", checkpoint.Written },
            { "skipped", checkpoint.Skipped },
            { "unchanged", checkpoint.Unchanged },
            { "failed", checkpoint.Failed },
            { "failures", new BsonArray(checkpoint.Failures.Select(f => new BsonDocument { { "id", f.Id }, { "error", f.Error } })) },
            { "runs", checkpoint.Runs },
            { "started", checkpoint.Started },
            { "updated", DateTime.UtcNow },
            { "done", done },
        };
        return _collection.ReplaceOneAsync(new BsonDocument("_id", Id), document, new ReplaceOptions { IsUpsert = true }, cancellationToken);
    }

    private sealed class Stored(BsonDocument stored) : IStoredCheckpoint<BsonValue>
    {
        public bool Done => stored["done"].AsBoolean;

        public string Parameters => stored["parameters"].AsString;

        public string Namespace => stored["ns"].AsString;

        public BsonValue? After => stored["after"] is { IsBsonNull: false } after ? after : null;

        public long Count(string name) => stored[name].ToInt64();

        public DateTime Started => stored["started"].ToUniversalTime();

        public IEnumerable<RewriteFailure> Failures =>
            stored["failures"].AsBsonArray.Select(failure => new RewriteFailure(failure["id"].AsString, failure["error"].AsString));
    }
}
