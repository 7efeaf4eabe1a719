using Compression.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// Before <c>migrate</c> compresses a collection: an index on a field that is not stored in the clear would no longer see
/// it once the field is inside <c>_z</c>. A TTL index would stop expiring documents, a unique one would refuse the
/// second document without the field, any other would stop serving its queries, and none of it says so. The run is
/// refused, naming the index and the field, before anything is written.
/// </summary>
internal static class IndexCheck
{
    public static async Task EnsureClearAsync(IMongoCollection<RawBsonDocument> collection, MongoNamespace ns, StoredDocumentCodec codec,
        CancellationToken cancellationToken)
    {
        using IAsyncCursor<BsonDocument> cursor = await collection.Indexes.ListAsync(cancellationToken).ConfigureAwait(false);
        var problems = new List<string>();
        foreach (BsonDocument index in await cursor.ToListAsync(cancellationToken).ConfigureAwait(false))
        {
            string name = index.GetValue("name", "?").ToString()!;
            foreach (string field in Fields(index).Distinct(StringComparer.Ordinal))
            {
                if (!codec.IsClear(field))
                    problems.Add($"index '{name}' on '{field}'");
            }
        }
        if (problems.Count > 0)
            throw new UsageException(
                $"{ns}: {string.Join(", ", problems)}: the field would be compressed inside '_z', where the index no longer sees it " +
                "(a TTL index stops expiring documents, a unique index refuses the second document without the field, any other stops " +
                "serving its queries). Add the field to the namespace's ClearFields, or drop the index, then run migrate again.");
    }

    /// <summary>The top-level fields an index reads: its key's (a text index's: its weights'); a wildcard over all fields names none.</summary>
    private static IEnumerable<string> Fields(BsonDocument index)
    {
        BsonDocument key = index.GetValue("key", new BsonDocument()).AsBsonDocument;
        IEnumerable<string> paths = key.Contains("_fts") && index.GetValue("weights", null) is BsonDocument weights
            ? weights.Names.Concat(key.Names.Where(n => n is not ("_fts" or "_ftsx")))
            : key.Names;
        foreach (string path in paths)
        {
            if (path == "$**") continue; // a wildcard index names no field of its own
            string top = path.Split('.')[0];
            if (top.Length > 0) yield return top;
        }
    }
}
