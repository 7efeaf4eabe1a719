using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// Where a rewrite of a collection (<c>migrate</c>, <c>migrate --decompress</c>, <c>recompress</c>) stands, kept in the
/// collection <c>_compression.migrations</c> of the same database, one document per collection and command:
/// <c>{ _id: "collection:mode", ns, mode, parameters, after, written, skipped, unchanged, failed, failures, runs, started, updated, done }</c>.
/// It is written after each batch's writes are acknowledged (write concern majority), so everything up to
/// <c>after</c> is in its final form; a run that finds it unfinished starts after <c>after</c>, one that finds it done starts
/// over (and finds every document already in its final form). A run of one command removes the checkpoints of the other
/// commands on the same collection: it rewrites documents they may have passed, so they start over.
/// </summary>
internal sealed class RewriteCheckpoint
{
    public const string CollectionName = "_compression.migrations";

    private readonly IMongoCollection<BsonDocument> _collection;

    private RewriteCheckpoint(IMongoCollection<BsonDocument> collection, string id) => (_collection, Id) = (collection, id);

    public string Id { get; }

    public BsonValue? After { get; set; }

    public long Written { get; set; }

    public long Skipped { get; set; }

    public long Unchanged { get; set; }

    public long Failed { get; set; }

    public List<RewriteFailure> Failures { get; } = [];

    public int Runs { get; private set; }

    public bool Resumed { get; private set; }

    public DateTime Started { get; private set; }

    /// <summary>
    /// Reads the checkpoint of <paramref name="ns"/> and <paramref name="mode"/>: resumed when it is unfinished and was
    /// made with the same <paramref name="parameters"/> (and <paramref name="restart"/> is false), else a fresh one.
    /// </summary>
    /// <exception cref="InvalidDataException">The stored checkpoint is damaged; the message names it.</exception>
    public static async Task<RewriteCheckpoint> LoadAsync(IMongoDatabase database, MongoNamespace ns, string mode, string parameters, bool restart,
        CancellationToken cancellationToken)
    {
        IMongoCollection<BsonDocument> collection = database.GetCollection<BsonDocument>(CollectionName).WithWriteConcern(WriteConcern.WMajority);
        var checkpoint = new RewriteCheckpoint(collection, $"{ns.Collection}:{mode}") { Started = DateTime.UtcNow, Runs = 1 };

        // This run rewrites documents that an unfinished run of another command may already have passed: that run's
        // checkpoint no longer says where the collection stands (an interrupted --decompress, then a full migrate, then
        // --decompress again resumed after the old point and left the first documents compressed). Its next run starts over.
        await collection.DeleteManyAsync(new BsonDocument { { "ns", ns.Name }, { "_id", new BsonDocument("$ne", checkpoint.Id) } }, cancellationToken)
            .ConfigureAwait(false);

        BsonDocument? stored = await collection.Find(new BsonDocument("_id", checkpoint.Id)).Limit(1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        if (stored is null || restart) return checkpoint;
        try
        {
            if (stored["done"].AsBoolean || stored["parameters"].AsString != parameters || stored["ns"].AsString != ns.Name) return checkpoint;
            checkpoint.Resumed = true;
            checkpoint.After = stored["after"] is { IsBsonNull: false } after ? after : null;
            checkpoint.Written = Count(stored, "written");
            checkpoint.Skipped = Count(stored, "skipped");
            checkpoint.Unchanged = Count(stored, "unchanged");
            checkpoint.Failed = Count(stored, "failed");
            checkpoint.Runs = checked((int)Count(stored, "runs") + 1);
            checkpoint.Started = stored["started"].ToUniversalTime();
            foreach (BsonValue failure in stored["failures"].AsBsonArray)
            {
                checkpoint.Failures.Add(new RewriteFailure(failure["id"].AsString, failure["error"].AsString));
            }
            return checkpoint;
        }
        catch (Exception ex) when (ex is KeyNotFoundException or InvalidCastException or NotSupportedException or OverflowException or ArgumentException)
        {
            throw new InvalidDataException(
                $"The checkpoint '{checkpoint.Id}' in {database.DatabaseNamespace.DatabaseName}.{CollectionName} is damaged ({ex.Message}); run again with --restart to start over.", ex);
        }
    }

    public void AddFailure(BsonValue id, string error, int keep)
    {
        Failed++;
        if (Failures.Count < keep) Failures.Add(new RewriteFailure(Shell.Of(id), error));
    }

    /// <summary>Writes the checkpoint (call it only once the batch it follows has been acknowledged).</summary>
    public Task SaveAsync(MongoNamespace ns, string mode, string parameters, bool done, CancellationToken cancellationToken)
    {
        var document = new BsonDocument
        {
            { "_id", Id },
            { "ns", ns.Name },
            { "mode", mode },
            { "parameters", parameters },
            { "after", After ?? BsonNull.Value },
            { "written", Written },
            { "skipped", Skipped },
            { "unchanged", Unchanged },
            { "failed", Failed },
            { "failures", new BsonArray(Failures.Select(f => new BsonDocument { { "id", f.Id }, { "error", f.Error } })) },
            { "runs", Runs },
            { "started", Started },
            { "updated", DateTime.UtcNow },
            { "done", done },
        };
        return _collection.ReplaceOneAsync(new BsonDocument("_id", Id), document, new ReplaceOptions { IsUpsert = true }, cancellationToken);
    }

    private static long Count(BsonDocument stored, string name)
    {
        long value = stored[name].ToInt64();
        return value >= 0 ? value : throw new ArgumentException($"'{name}' is negative ({value})");
    }
}
