using System.Runtime.CompilerServices;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Serializers;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>One document as stored: its <c>_id</c> and its exact bytes.</summary>
internal sealed record ScannedDocument(BsonValue Id, byte[] Bytes);

/// <summary>Reads a collection in <c>_id</c> order, in batches, through one cursor.</summary>
internal static class DocumentScan
{
    private static readonly BsonDocument IdOrder = new("_id", 1);

    /// <summary>The documents whose <c>_id</c> is after <paramref name="after"/> (all when null) and matches <paramref name="extra"/>.</summary>
    public static async IAsyncEnumerable<IReadOnlyList<ScannedDocument>> BatchesAsync(IMongoCollection<RawBsonDocument> collection,
        BsonValue? after, BsonDocument? extra, int batchSize, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        var clauses = new BsonArray();
        if (after is not null) clauses.Add(After(after));
        if (extra is not null) clauses.Add(extra);
        BsonDocument filter = clauses.Count switch
        {
            0 => [],
            1 => clauses[0].AsBsonDocument,
            _ => new BsonDocument("$and", clauses),
        };

        var options = new FindOptions<RawBsonDocument> { Sort = IdOrder, BatchSize = batchSize };
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
        // The _id is taken from the copy, not from the document: a document-valued _id (a compound key) would be a
        // RawBsonDocument over the cursor's buffer, disposed with its parent before the checkpoint, the compare-and-swap
        // re-read and the failure reports use it.
        return new ScannedDocument(IdOf(bytes), bytes);
    }

    /// <summary>The <c>_id</c> of a stored document, as a value that owns its memory (<see cref="BsonNull"/> when there is none).</summary>
    internal static BsonValue IdOf(byte[] bytes)
    {
        using var reader = new BsonBinaryReader(new MemoryStream(bytes, writable: false));
        reader.ReadStartDocument();
        while (reader.ReadBsonType() != BsonType.EndOfDocument)
        {
            if (reader.ReadName() == "_id") return BsonValueSerializer.Instance.Deserialize(BsonDeserializationContext.CreateRoot(reader));
            reader.SkipValue();
        }
        return BsonNull.Value;
    }

    // MongoDB's order of BSON types when it sorts or compares values, one bracket of $type aliases per entry.
    private static readonly string[][] TypeBrackets =
    [
        ["minKey"], ["undefined"], ["null"], ["double", "int", "long", "decimal"], ["string", "symbol"], ["object"], ["array"],
        ["binData"], ["objectId"], ["bool"], ["date"], ["timestamp"], ["regex"], ["dbPointer"], ["javascript"],
        ["javascriptWithScope"], ["maxKey"],
    ];

    /// <summary>
    /// The documents after <paramref name="after"/> in <c>_id</c> order. <c>$gt</c> alone matches only <c>_id</c>s of
    /// the same type bracket as its operand (a number never matches a string), so the types that sort after it are added
    /// by <c>$type</c>: a resumed scan of a collection whose <c>_id</c>s mix types skips none.
    /// </summary>
    internal static BsonDocument After(BsonValue after)
    {
        var greater = new BsonDocument("_id", new BsonDocument("$gt", after));
        int bracket = Array.FindIndex(TypeBrackets, aliases => aliases.Contains(TypeAlias(after.BsonType)));
        if (bracket < 0) throw new InvalidOperationException($"An _id of BSON type {after.BsonType} has no place in MongoDB's type order.");
        var later = new BsonArray(TypeBrackets.Skip(bracket + 1).SelectMany(aliases => aliases));
        return later.Count == 0
            ? greater
            : new BsonDocument("$or", new BsonArray { greater, new BsonDocument("_id", new BsonDocument("$type", later)) });
    }

    private static string TypeAlias(BsonType type) => type switch
    {
        BsonType.MinKey => "minKey",
        BsonType.Undefined => "undefined",
        BsonType.Null => "null",
        BsonType.Double => "double",
        BsonType.Int32 => "int",
        BsonType.Int64 => "long",
        BsonType.Decimal128 => "decimal",
        BsonType.String => "string",
        BsonType.Symbol => "symbol",
        BsonType.Document => "object",
        BsonType.Array => "array",
        BsonType.Binary => "binData",
        BsonType.ObjectId => "objectId",
        BsonType.Boolean => "bool",
        BsonType.DateTime => "date",
        BsonType.Timestamp => "timestamp",
        BsonType.RegularExpression => "regex",
        BsonType.JavaScript => "javascript",
        BsonType.JavaScriptWithScope => "javascriptWithScope",
        BsonType.MaxKey => "maxKey",
        _ => type.ToString(),
    };

    /// <summary>A filter on exactly this <c>_id</c>.</summary>
    public static BsonDocument ById(BsonValue id) => new("_id", IdEquals(id));

    // $eq where the value would otherwise read as an operator document or a pattern.
    private static BsonValue IdEquals(BsonValue id) => id is BsonDocument or BsonArray or BsonRegularExpression ? new BsonDocument("$eq", id) : id;

    /// <summary>
    /// A filter that matches the document only as it was read, byte for byte as far as the server compares: its
    /// <c>_id</c>, and the whole document equal to the copy read (<c>$expr</c>, <c>$$ROOT</c> against a
    /// <c>$literal</c>): a field changed, removed or <em>added</em> since, whatever its name, fails it. A replacement
    /// with it (and the simple collation, so strings compare as bytes) is a compare-and-swap: a document another client
    /// changed or compressed since is not matched. The one difference the server does not see: a number rewritten as
    /// another numeric type of equal value (<c>1</c> as <c>1.0</c>).
    /// </summary>
    public static BsonDocument AsRead(byte[] bytes)
    {
        BsonDocument document = BsonSerializer.Deserialize<BsonDocument>(bytes);
        BsonValue id = document.GetValue("_id", BsonNull.Value);
        return new BsonDocument
        {
            { "_id", IdEquals(id) },
            { "$expr", new BsonDocument("$eq", new BsonArray { "$$ROOT", new BsonDocument("$literal", document) }) },
        };
    }
}
