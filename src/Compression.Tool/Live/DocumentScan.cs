using System.Runtime.CompilerServices;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;

namespace Compression.Tool.Live;

/// <summary>One document as stored: its <c>_id</c> and its exact bytes.</summary>
internal sealed record ScannedDocument(BsonValue Id, byte[] Bytes);

/// <summary>Reads a collection in <c>_id</c> order, in batches, through one cursor.</summary>
internal static class DocumentScan
{
    private static readonly BsonDocument ById = new("_id", 1);

    /// <summary>The documents whose <c>_id</c> is after <paramref name="after"/> (all when null) and matches <paramref name="extra"/>.</summary>
    public static async IAsyncEnumerable<IReadOnlyList<ScannedDocument>> BatchesAsync(IMongoCollection<RawBsonDocument> collection,
        BsonValue? after, BsonDocument? extra, int batchSize, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        var clauses = new BsonArray();
        if (after is not null) clauses.Add(new BsonDocument("_id", new BsonDocument("$gt", after)));
        if (extra is not null) clauses.Add(extra);
        BsonDocument filter = clauses.Count switch
        {
            0 => [],
            1 => clauses[0].AsBsonDocument,
            _ => new BsonDocument("$and", clauses),
        };

        var options = new FindOptions<RawBsonDocument> { Sort = ById, BatchSize = batchSize };
        using IAsyncCursor<RawBsonDocument> cursor = await collection.FindAsync(filter, options, cancellationToken).ConfigureAwait(false);
        var batch = new List<ScannedDocument>(batchSize);
        while (await cursor.MoveNextAsync(cancellationToken).ConfigureAwait(false))
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                using (document)
                {
                    batch.Add(Read(document));
                }
                if (batch.Count == batchSize)
                {
                    yield return batch;
                    batch = new List<ScannedDocument>(batchSize);
                }
            }
        }
        if (batch.Count > 0) yield return batch;
    }

    public static ScannedDocument Read(RawBsonDocument document)
    {
        var slice = document.Slice;
        byte[] bytes = new byte[slice.Length];
        slice.GetBytes(0, bytes, 0, bytes.Length);
        BsonValue id = document.TryGetValue("_id", out BsonValue value) ? value : BsonNull.Value;
        return new ScannedDocument(id, bytes);
    }

    /// <summary>
    /// A filter that matches the document only as it was read: its <c>_id</c> and every other top-level field by equality
    /// (a field whose name holds a dot or starts with <c>$</c> cannot be named in a filter and is left out). A replacement
    /// with it is a compare-and-swap: a document another client changed or compressed since is not matched.
    /// </summary>
    public static BsonDocument AsRead(byte[] bytes, bool plain)
    {
        BsonDocument document = BsonSerializer.Deserialize<BsonDocument>(bytes);
        var filter = new BsonDocument();
        foreach (BsonElement element in document)
        {
            if (element.Name.Contains('.', StringComparison.Ordinal) || element.Name.StartsWith('$')) continue;
            filter.Add(element.Name, element.Value is BsonDocument embedded && embedded.ElementCount > 0 && embedded.GetElement(0).Name.StartsWith('$')
                ? new BsonDocument("$eq", embedded) // an embedded document that would read as operators
                : element.Value);
        }
        // A plain document without _z must still have none; one with its own _z (not this library's) is matched by its value
        // above, which a compressed document's _z (BinData 0x80 or 0x81) never equals.
        if (plain && !document.Contains("_z")) filter.Add("_z", new BsonDocument("$exists", false));
        return filter;
    }
}
