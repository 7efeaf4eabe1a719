using Compression.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// A MongoDB collection opened for a live command: scanned in <c>_id</c> order (<see cref="DocumentScan"/>), its
/// documents in the serializer's stored layout (<see cref="StoredDocumentCodec"/>: clear fields beside <c>_z</c>).
/// </summary>
internal sealed partial class MongoLiveCollection(MongoSession session, MongoNamespace ns, StoredDocumentCodec codec)
    : LiveCollection<ScannedDocument>(ns.Name, codec.Namespace)
{
    private readonly IMongoCollection<RawBsonDocument> _collection = session.Collection(ns);

    /// <summary>The progress bar expects the collection's estimated count (at most <paramref name="limit"/>).</summary>
    public override async Task<BatchScan<ScannedDocument>> ScanAsync(long limit, int batchSize, CancellationToken cancellationToken)
    {
        long total = Math.Min(limit, await _collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false));
        return new BatchScan<ScannedDocument>(total, DocumentScan.BatchesAsync(_collection, null, null, batchSize, cancellationToken));
    }

    public override string Describe(ScannedDocument document) => Shell.Of(document.Id);

    public override long StoredLength(ScannedDocument document) => document.Bytes.Length;

    /// <summary>The part of the document the namespace would compress (all but its clear fields).</summary>
    public override async Task<byte[]?> SampleAsync(ScannedDocument document, CancellationToken cancellationToken)
    {
        byte[] plain = StoredDocumentCodec.Classify(document.Bytes) switch
        {
            StoredKind.Plain => document.Bytes,
            StoredKind.Compressed => await DecodeStoredAsync(document.Bytes, cancellationToken).ConfigureAwait(false),
            _ => throw new InvalidDataException("not this library's '_z'"),
        };
        return codec.CompressedPart(plain);
    }

    /// <summary>The line as a BSON document (extended JSON), less its clear fields.</summary>
    public override byte[] SampleOf(string line)
    {
        try
        {
            return codec.CompressedPart(BsonDocument.Parse(line).ToBson());
        }
        catch (Exception ex) when (ex is FormatException or BsonSerializationException or InvalidCastException)
        {
            throw new InvalidDataException(ex.Message, ex);
        }
    }

    public override async Task<bool> VerifyAsync(ScannedDocument document, CancellationToken cancellationToken)
    {
        if (StoredDocumentCodec.Classify(document.Bytes) == StoredKind.Plain) return false;
        LiveChecks.WellFormed(await DecodeStoredAsync(document.Bytes, cancellationToken).ConfigureAwait(false));
        return true;
    }

    public override async Task<byte[]?> DecodeAsync(ScannedDocument document, CancellationToken cancellationToken) =>
        StoredDocumentCodec.Classify(document.Bytes) == StoredKind.Plain ? null : await DecodeStoredAsync(document.Bytes, cancellationToken).ConfigureAwait(false);

    public override uint? DictionaryOf(ScannedDocument document) =>
        DocumentEnvelope.TryReadHeader(StoredDocumentCodec.Envelope(document.Bytes), out EnvelopeHeader header) ? header.DictionaryId : null;

    /// <summary><c>migrate</c> is refused while an index reads a field that would move into <c>_z</c> (<see cref="IndexCheck"/>).</summary>
    public override Task CheckRewriteAsync(RewriteOptions options, CancellationToken cancellationToken) =>
        options.Mode == RewriteMode.Compress ? IndexCheck.EnsureClearAsync(_collection, ns, codec, cancellationToken) : Task.CompletedTask;

    /// <summary><paramref name="olderThan"/>: only documents whose ObjectId <c>_id</c> was made before it.</summary>
    public override Task<RewriteResult> RewriteAsync(RewriteOptions options, DateTimeOffset? olderThan, LiveSettings settings, LiveOutput console,
        CancellationToken cancellationToken)
    {
        BsonDocument? filter = olderThan is DateTimeOffset date ? new BsonDocument("_id", new BsonDocument("$lt", ObjectIdAt(date))) : null;
        return new CollectionRewriter(session, ns, codec, options, settings, filter).RunAsync(console, cancellationToken);
    }

    /// <summary>The smallest ObjectId made at <paramref name="date"/>: every ObjectId made before it sorts lower.</summary>
    private static ObjectId ObjectIdAt(DateTimeOffset date)
    {
        long seconds = Math.Clamp(date.ToUnixTimeSeconds(), 0, uint.MaxValue);
        byte[] bytes = new byte[12];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)seconds);
        return new ObjectId(bytes);
    }

    private async Task<byte[]> DecodeStoredAsync(byte[] stored, CancellationToken cancellationToken)
    {
        await codec.EnsureDictionaryAsync(stored, cancellationToken).ConfigureAwait(false);
        return codec.Decode(stored);
    }
}
