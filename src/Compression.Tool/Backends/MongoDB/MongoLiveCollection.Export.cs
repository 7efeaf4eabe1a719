using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;
using Compression.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Serializers;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// <c>cat</c>, <c>export</c> and <c>import</c> on MongoDB: a document's JSON line is its decoded BSON (what the
/// serializer reads: the plain document, <c>_id</c> first) in canonical Extended JSON, which keeps every type
/// (<c>{"$numberInt": "1"}</c> is not <c>{"$numberDouble": "1.0"}</c>), so that <c>import</c> writes the very bytes back.
/// </summary>
internal sealed partial class MongoLiveCollection
{
    private static readonly JsonWriterSettings Canonical = new() { OutputMode = JsonOutputMode.CanonicalExtendedJson, Indent = false };
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);
    private static readonly BsonDocument IdOrder = new("_id", 1);

    /// <summary>
    /// <paramref name="query"/>'s <c>--filter</c>, sent to the server as it is, in <c>_id</c> order. It may name only clear
    /// fields (<c>_id</c>, the namespace's <c>ClearFields</c>): the others are inside <c>_z</c>, where the server would
    /// match only the documents still plain.
    /// </summary>
    public override Task<BatchScan<ScannedDocument>> FindAsync(DocumentQuery query, long limit, int batchSize, CancellationToken cancellationToken)
    {
        if (query.Ids.Count > 0 || query.Prefix is not null)
            throw new UsageException("--id and --prefix select Couchbase keys; on MongoDB give --filter, e.g. --filter '{\"_id\": {\"$oid\": \"...\"}}'.");
        BsonDocument filter = [];
        if (query.Filter is { } text)
        {
            try
            {
                filter = BsonDocument.Parse(text);
            }
            catch (Exception ex) when (ex is FormatException or InvalidCastException or BsonException)
            {
                throw new UsageException($"--filter is not a JSON document: {LiveRunner.FirstLine(ex.Message)}");
            }
            EnsureClear(filter);
        }
        var options = new FindOptions<RawBsonDocument> { Sort = IdOrder, BatchSize = batchSize, Limit = limit >= int.MaxValue ? null : (int)limit };
        return Task.FromResult(new BatchScan<ScannedDocument>(limit, BatchesAsync(filter, options, batchSize, cancellationToken)));
    }

    public override async Task<BatchScan<ScannedDocument>> ScanAfterAsync(string? after, int batchSize, CancellationToken cancellationToken)
    {
        BsonValue? id = null;
        if (after is not null)
        {
            try
            {
                id = BsonDocument.Parse(after)["_id"];
            }
            catch (Exception ex) when (ex is FormatException or KeyNotFoundException or BsonException)
            {
                throw new InvalidDataException($"the checkpoint's key '{after}' is not an _id ({ex.Message}); give --restart to start over.", ex);
            }
        }
        long total = await _collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        return new BatchScan<ScannedDocument>(total, DocumentScan.BatchesAsync(_collection, id, null, batchSize, cancellationToken));
    }

    /// <summary><c>{"_id": ...}</c> in canonical Extended JSON.</summary>
    public override string KeyText(ScannedDocument document) => new BsonDocument("_id", document.Id).ToJson(Canonical);

    public override async Task<string> ToJsonLineAsync(ScannedDocument document, CancellationToken cancellationToken)
    {
        byte[] plain = StoredDocumentCodec.Classify(document.Bytes) == StoredKind.Plain
            ? document.Bytes
            : await DecodeStoredAsync(document.Bytes, cancellationToken).ConfigureAwait(false);
        try
        {
            using var text = new StringWriter(CultureInfo.InvariantCulture);
            using (var reader = new BsonBinaryReader(new MemoryStream(plain, writable: false)))
            using (var writer = new JsonWriter(text, Canonical))
            {
                BsonCopy.Document(reader, writer);
            }
            return text.ToString();
        }
        catch (Exception ex) when (ex is FormatException or EndOfStreamException or BsonSerializationException or InvalidOperationException)
        {
            throw new InvalidDataException($"the decoded document is not well-formed BSON: {ex.Message}", ex);
        }
    }

    /// <summary>An <c>import</c> is refused while an index reads a field that would move into <c>_z</c>, as <c>migrate</c> is (<see cref="IndexCheck"/>).</summary>
    public override Task CheckImportAsync(CancellationToken cancellationToken) => IndexCheck.EnsureClearAsync(_collection, ns, codec, cancellationToken);

    public override byte[]? SampleOfLine(ReadOnlyMemory<byte> line) => codec.CompressedPart(Parse(line.Span));

    /// <summary>
    /// Each line's document compressed as the serializer stores it (<see cref="StoredDocumentCodec.Compress"/>), checked to
    /// decompress to its very bytes, and written over the document of its <c>_id</c> (an upsert), in one unordered bulk write.
    /// </summary>
    public override async Task<IReadOnlyList<RewriteFailure>> ImportAsync(IReadOnlyList<ImportLine> lines, CancellationToken cancellationToken)
    {
        var failures = new List<(long Line, RewriteFailure Failure)>();
        var models = new List<ReplaceOneModel<RawBsonDocument>>(lines.Count);
        var written = new List<ImportLine>(lines.Count);
        int limit = _maxDocumentSize ??= MaxDocumentSize();
        foreach (ImportLine line in lines)
        {
            try
            {
                byte[] plain = Parse(line.Utf8);
                BsonValue id = IdOf(plain) ?? throw new InvalidDataException("the document has no _id (import writes each document under its _id)");
                byte[] stored = codec.Compress(plain);
                if (!codec.Decode(stored).AsSpan().SequenceEqual(plain))
                    throw new InvalidDataException("its compressed form does not decompress to the same bytes");
                if (stored.Length > limit)
                    throw new InvalidDataException($"its stored form has {stored.Length:N0} bytes, over the server's document limit of {limit:N0}");
                models.Add(new ReplaceOneModel<RawBsonDocument>(DocumentScan.ById(id), new RawBsonDocument(stored)) { IsUpsert = true });
                written.Add(line);
            }
            // ArgumentException: the engine refuses a document over MaxUncompressedLength.
            catch (Exception ex) when (ex is InvalidDataException or ArgumentException)
            {
                failures.Add((line.Number, new RewriteFailure(line.Name, LiveRunner.FirstLine(ex.Message))));
            }
        }
        if (models.Count > 0)
        {
            try
            {
                await _collection.BulkWriteAsync(models, new BulkWriteOptions { IsOrdered = false }, cancellationToken).ConfigureAwait(false);
            }
            catch (MongoBulkWriteException<RawBsonDocument> ex) when (ex.WriteErrors.Count > 0 && ex.WriteConcernError is null)
            {
                foreach (BulkWriteError error in ex.WriteErrors)
                    failures.Add((written[error.Index].Number, new RewriteFailure(written[error.Index].Name, $"the server refused it: {LiveRunner.FirstLine(error.Message)}")));
            }
            finally
            {
                foreach (ReplaceOneModel<RawBsonDocument> model in models) model.Replacement.Dispose();
            }
        }
        return [.. failures.OrderBy(f => f.Line).Select(f => f.Failure)];
    }

    private async IAsyncEnumerable<IReadOnlyList<ScannedDocument>> BatchesAsync(BsonDocument filter, FindOptions<RawBsonDocument> options, int batchSize,
        [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        using IAsyncCursor<RawBsonDocument> cursor = await _collection.FindAsync(filter, options, cancellationToken).ConfigureAwait(false);
        var batch = new List<ScannedDocument>(batchSize);
        while (await cursor.MoveNextAsync(cancellationToken).ConfigureAwait(false))
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                using (document)
                {
                    batch.Add(DocumentScan.Read(document));
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

    /// <summary>Refuses a filter on a field the namespace compresses (looked for at the top level and inside <c>$and</c>, <c>$or</c>, <c>$nor</c>).</summary>
    private void EnsureClear(BsonDocument filter)
    {
        foreach (BsonElement element in filter)
        {
            if (element.Name.StartsWith('$'))
            {
                if (element.Name is "$and" or "$or" or "$nor" && element.Value is BsonArray clauses)
                {
                    foreach (BsonDocument clause in clauses.OfType<BsonDocument>()) EnsureClear(clause);
                }
                continue; // $expr, $where, $text...: the server's business
            }
            string field = element.Name.Split('.', 2)[0];
            if (field == "_z" || !codec.IsClear(field))
            {
                throw new UsageException($"--filter names '{element.Name}', which {Name} compresses into _z: the server would match it only in documents still plain. "
                    + "Filter on _id or a field of the namespace's ClearFields.");
            }
        }
    }

    /// <summary>One line of Extended JSON as BSON, value by value (<see cref="BsonCopy"/>).</summary>
    /// <exception cref="InvalidDataException">It is not one JSON document.</exception>
    private static byte[] Parse(ReadOnlySpan<byte> line)
    {
        try
        {
            using var reader = new JsonReader(StrictUtf8.GetString(line));
            using var stream = new MemoryStream(line.Length);
            using (var writer = new BsonBinaryWriter(stream))
            {
                BsonCopy.Document(reader, writer);
            }
            if (!reader.IsAtEndOfFile()) throw new FormatException("more than one JSON value on the line");
            return stream.ToArray();
        }
        catch (Exception ex) when (ex is FormatException or InvalidOperationException or BsonException or EndOfStreamException or ArgumentException or OverflowException)
        {
            throw new InvalidDataException($"not a JSON document: {LiveRunner.FirstLine(ex.Message)}", ex);
        }
    }

    /// <summary>The top-level <c>_id</c> of a plain document, or null when it has none.</summary>
    private static BsonValue? IdOf(byte[] plain)
    {
        using var reader = new BsonBinaryReader(new MemoryStream(plain, writable: false));
        reader.ReadStartDocument();
        while (reader.ReadBsonType() != BsonType.EndOfDocument)
        {
            if (reader.ReadName() == "_id") return BsonValueSerializer.Instance.Deserialize(BsonDeserializationContext.CreateRoot(reader));
            reader.SkipValue();
        }
        return null;
    }

    private int? _maxDocumentSize;

    /// <summary>The largest document the server takes (its <c>maxBsonObjectSize</c>; 16 MiB on every MongoDB version).</summary>
    private int MaxDocumentSize() =>
        _collection.Database.Client.Cluster.Description.Servers.Select(s => s.MaxDocumentSize).Where(size => size > 0).DefaultIfEmpty(16 * 1024 * 1024).Min();
}
