using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// Rewrites a collection in place, in <c>_id</c> order and in batches, resumable from its checkpoint
/// (<see cref="RewritePass{TItem, TKey}"/>, kept by <see cref="MongoCheckpointStore"/>).
/// Crash safety (docs/docz.md): every replacement is a compare-and-swap, filtered on the whole document exactly as it
/// was read (<see cref="DocumentScan.AsRead"/>), so a document already rewritten, or changed by someone else since, is never
/// rewritten from a stale copy; the checkpoint is written only after the batch's writes are acknowledged; on a restart
/// the documents after the checkpoint that are already in their final form are counted as skipped, not rewritten.
/// With a filter, only documents whose <c>_id</c> matches it too are rewritten (<c>recompress --older-than</c>).
/// </summary>
internal sealed class CollectionRewriter(MongoSession session, MongoNamespace ns, StoredDocumentCodec codec, RewriteOptions options, LiveSettings settings,
    BsonDocument? filter = null)
    : RewritePass<ScannedDocument, BsonValue>(codec.Namespace, ns.Name, new MongoCheckpointStore(session.Database(ns.Database), ns, options.ModeName), options,
        settings, FilterParameter(filter))
{
    private const int Attempts = 3;

    private readonly IMongoCollection<RawBsonDocument> _collection = session.Collection(ns);

    /// <summary>The <c>_id</c> filter as the checkpoint's parameters name it (<see cref="RewriteOptions.ParametersFor"/>): canonical extended JSON.</summary>
    internal static string? FilterParameter(BsonDocument? filter) =>
        filter?.ToJson(new global::MongoDB.Bson.IO.JsonWriterSettings { OutputMode = global::MongoDB.Bson.IO.JsonOutputMode.CanonicalExtendedJson });

    /// <summary>Test hook: runs after a batch is read and decided, before its writes (what another client may do meanwhile).</summary>
    internal Func<IReadOnlyList<ScannedDocument>, Task>? BeforeWrite { get; init; }

    /// <summary>The documents after <paramref name="after"/> that match the filter, through one cursor; the progress bar expects the whole collection.</summary>
    protected override async Task<BatchScan<ScannedDocument>> ScanAsync(BsonValue? after, CancellationToken cancellationToken)
    {
        long total = await _collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        return new BatchScan<ScannedDocument>(total, DocumentScan.BatchesAsync(_collection, after, filter, Settings.BatchSize, cancellationToken));
    }

    protected override BsonValue KeyOf(ScannedDocument item) => item.Id;

    /// <summary>Decides each document, then writes the replacements in one unordered bulk write; those that matched nothing are settled alone.</summary>
    protected override async Task RewriteBatchAsync(IReadOnlyList<ScannedDocument> batch, RewriteCheckpoint<BsonValue> checkpoint,
        CancellationToken cancellationToken)
    {
        var pending = new List<(ScannedDocument Read, byte[] Replacement)>(batch.Count);
        foreach (ScannedDocument document in batch)
        {
            Decision decision = await DecideAsync(document, Current, cancellationToken).ConfigureAwait(false);
            Count(checkpoint, document, decision, pending);
        }
        await WriteAsync(pending, checkpoint, Current, cancellationToken).ConfigureAwait(false);
    }

    private void Count(RewriteCheckpoint<BsonValue> checkpoint, ScannedDocument document, Decision decision, List<(ScannedDocument, byte[])> pending)
    {
        if (decision.Kind == DecisionKind.Write) pending.Add((document, decision.Replacement!));
        else checkpoint.Count(decision.Kind, Shell.Of(document.Id), decision.Error, Settings.MaxFailures);
    }

    /// <summary>Writes a batch's replacements; those that matched nothing are read again and decided anew.</summary>
    private async Task WriteAsync(List<(ScannedDocument Read, byte[] Replacement)> pending, RewriteCheckpoint<BsonValue> checkpoint, DictionaryRecord? current,
        CancellationToken cancellationToken)
    {
        if (pending.Count == 0) return;
        if (BeforeWrite is not null) await BeforeWrite([.. pending.Select(p => p.Read)]).ConfigureAwait(false);
        var models = pending.Select(p => new ReplaceOneModel<RawBsonDocument>(DocumentScan.AsRead(p.Read.Bytes), new RawBsonDocument(p.Replacement))
        {
            Collation = Collation.Simple,
        }).ToList();
        var errors = new Dictionary<int, string>();
        long matched;
        try
        {
            BulkWriteResult<RawBsonDocument> result = await _collection.BulkWriteAsync(models, new BulkWriteOptions { IsOrdered = false }, cancellationToken)
                .ConfigureAwait(false);
            matched = result.MatchedCount;
        }
        catch (MongoBulkWriteException<RawBsonDocument> ex)
        {
            foreach (BulkWriteError error in ex.WriteErrors) errors[error.Index] = $"the server refused the replacement: {error.Message}";
            matched = -1;
        }
        finally
        {
            foreach (ReplaceOneModel<RawBsonDocument> model in models) model.Replacement.Dispose();
        }

        if (matched == pending.Count)
        {
            checkpoint.Written += pending.Count;
            return;
        }
        // Some replacement matched nothing (the document changed, was compressed or deleted since it was read) or failed:
        // each is settled alone, from what the collection holds now.
        for (int i = 0; i < pending.Count; i++)
        {
            (ScannedDocument read, byte[] replacement) = pending[i];
            if (errors.TryGetValue(i, out string? error))
            {
                checkpoint.Count(DecisionKind.Fail, Shell.Of(read.Id), error, Settings.MaxFailures);
                continue;
            }
            await SettleAsync(read, replacement, checkpoint, current, cancellationToken).ConfigureAwait(false);
        }
    }

    private async Task SettleAsync(ScannedDocument read, byte[] replacement, RewriteCheckpoint<BsonValue> checkpoint, DictionaryRecord? current,
        CancellationToken cancellationToken)
    {
        for (int attempt = 1; ; attempt++)
        {
            ScannedDocument? now = await ReadAsync(read.Id, cancellationToken).ConfigureAwait(false);
            if (now is null)
            {
                checkpoint.Skipped++; // deleted since: nothing to rewrite
                return;
            }
            if (now.Bytes.AsSpan().SequenceEqual(replacement))
            {
                checkpoint.Written++; // this replacement was applied
                return;
            }
            Decision decision = await DecideAsync(now, current, cancellationToken).ConfigureAwait(false);
            if (decision.Kind != DecisionKind.Write)
            {
                Count(checkpoint, now, decision, pending: []);
                return;
            }
            if (attempt == Attempts)
            {
                checkpoint.Count(DecisionKind.Fail, Shell.Of(read.Id), $"it changed under every one of {Attempts} attempts to replace it; left as it is", Settings.MaxFailures);
                return;
            }
            replacement = decision.Replacement!;
            using var document = new RawBsonDocument(replacement);
            ReplaceOneResult result = await _collection.ReplaceOneAsync(DocumentScan.AsRead(now.Bytes), document, new ReplaceOptions { Collation = Collation.Simple }, cancellationToken).ConfigureAwait(false);
            if (result.MatchedCount == 1)
            {
                checkpoint.Written++;
                return;
            }
            read = now;
        }
    }

    private async Task<ScannedDocument?> ReadAsync(BsonValue id, CancellationToken cancellationToken)
    {
        using RawBsonDocument? document = await _collection.Find(DocumentScan.ById(id)).Limit(1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return document is null ? null : DocumentScan.Read(document);
    }

    private async Task<Decision> DecideAsync(ScannedDocument document, DictionaryRecord? current, CancellationToken cancellationToken)
    {
        Decision decision = await DecideCoreAsync(document, current, cancellationToken).ConfigureAwait(false);
        return decision.Kind == DecisionKind.Write ? WithinStatementLimit(document, decision) : decision;
    }

    /// <summary>
    /// The margin of an update statement over the server's document limit: the driver refuses a statement larger than
    /// that before sending anything (a <see cref="FormatException"/> that stopped the whole run, at the same batch on
    /// every resume) rather than the server refusing the one document.
    /// </summary>
    private const int StatementMargin = 16 * 1024;

    /// <summary>
    /// One replacement statement carries the compare-and-swap filter (the whole document read) and the replacement. Where
    /// the two pass the limit on a statement, the document fails alone and is left as it is (docs/docz.md, "Limits").
    /// </summary>
    private Decision WithinStatementLimit(ScannedDocument document, Decision decision)
    {
        long limit = (long)(_maxDocumentSize ??= MaxDocumentSize()) + StatementMargin;
        long estimate = (long)document.Bytes.Length + decision.Replacement!.Length;
        if (estimate < limit - 64 * 1024) return decision; // far below: no need to measure the statement
        long statement = DocumentScan.AsRead(document.Bytes).ToBson().Length + (long)decision.Replacement.Length + 256; // q, u, collation and their names
        return statement <= limit
            ? decision
            : Decision.Fail($"its compare-and-swap statement (the document read and its replacement) would take {statement:N0} bytes, over the server's limit of {limit:N0} on a statement: left as it is");
    }

    private async Task<Decision> DecideCoreAsync(ScannedDocument document, DictionaryRecord? current, CancellationToken cancellationToken)
    {
        try
        {
            StoredKind kind = StoredDocumentCodec.Classify(document.Bytes);
            switch (Options.Mode)
            {
                case RewriteMode.Compress:
                    if (kind == StoredKind.Plain) return Checked(document.Bytes, codec.Compress(document.Bytes));
                    // Compressed already; rewritten only when ClearFields changed since (a field made clear is moved out of
                    // _z, one no longer clear into it).
                    (byte[] decoded, bool legacyPlaceholders) = await DecodeAsync(document, cancellationToken).ConfigureAwait(false);
                    // A MinKey shadowed by a clear value of its name may be the older placeholder: rewritten with today's,
                    // which stays known as a placeholder after its field leaves ClearFields.
                    if (!legacyPlaceholders && codec.SplitIsCurrent(document.Bytes, decoded)) return Decision.Skip;
                    LiveChecks.WellFormed(decoded);
                    return Checked(decoded, codec.Compress(decoded));
                case RewriteMode.Decompress:
                    if (kind == StoredKind.Plain) return Decision.Skip;
                    byte[] plain = (await DecodeAsync(document, cancellationToken).ConfigureAwait(false)).Plain;
                    LiveChecks.WellFormed(plain);
                    // The serializer sends only the compressed form, so a document may be over the server's limit once plain.
                    int limit = _maxDocumentSize ??= MaxDocumentSize();
                    if (plain.Length > limit)
                        return Decision.Fail($"its plain form has {plain.Length:N0} bytes, over the server's document limit of {limit:N0}: left compressed");
                    return Decision.Write(plain);
                default:
                    if (kind == StoredKind.Plain) return Decision.Unchanged; // migrate compresses it
                    if (Options.Level is null && EnvelopeDictionary(document.Bytes) is { } used && used == current?.Id) return Decision.Unchanged;
                    byte[] original = (await DecodeAsync(document, cancellationToken).ConfigureAwait(false)).Plain;
                    LiveChecks.WellFormed(original);
                    Decision again = Checked(original, codec.Compress(original));
                    return again.Kind == DecisionKind.Write && again.Replacement!.Length >= document.Bytes.Length ? Decision.Unchanged : again;
            }
        }
        // ArgumentException: the engine refuses a document over MaxUncompressedLength; a failure of that document, not of the run.
        catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException or FormatException or EndOfStreamException or ArgumentException)
        {
            return Decision.Fail(ex.Message);
        }
    }

    /// <summary>
    /// The plain form of a compressed document, its dictionary loaded first when it is not in memory, and whether it holds
    /// placeholders of the older form (<see cref="StoredDocumentCodec.Decode(ReadOnlySpan{byte}, out bool)"/>).
    /// </summary>
    private async Task<(byte[] Plain, bool LegacyPlaceholders)> DecodeAsync(ScannedDocument document, CancellationToken cancellationToken)
    {
        await codec.EnsureDictionaryAsync(document.Bytes, cancellationToken).ConfigureAwait(false);
        byte[] plain = codec.Decode(document.Bytes, out bool legacyPlaceholders);
        return (plain, legacyPlaceholders);
    }

    private int? _maxDocumentSize;

    /// <summary>The largest document the server takes (its <c>maxBsonObjectSize</c>; 16 MiB on every MongoDB version).</summary>
    private int MaxDocumentSize() =>
        _collection.Database.Client.Cluster.Description.Servers.Select(s => s.MaxDocumentSize).Where(size => size > 0).DefaultIfEmpty(16 * 1024 * 1024).Min();

    /// <summary>A replacement is written only when it reads back as the very bytes it replaces.</summary>
    private Decision Checked(byte[] plain, byte[] stored) =>
        codec.Decode(stored).AsSpan().SequenceEqual(plain)
            ? Decision.Write(stored)
            : Decision.Fail("its compressed form does not decompress to the same bytes (left as it is)");

    private static uint? EnvelopeDictionary(byte[] stored) =>
        DocumentEnvelope.TryReadHeader(StoredDocumentCodec.Envelope(stored), out EnvelopeHeader header) ? header.DictionaryId : null;

    private readonly record struct Decision(DecisionKind Kind, byte[]? Replacement, string? Error)
    {
        public static Decision Skip => new(DecisionKind.Skip, null, null);

        public static Decision Unchanged => new(DecisionKind.Unchanged, null, null);

        public static Decision Write(byte[] replacement) => new(DecisionKind.Write, replacement, null);

        public static Decision Fail(string error) => new(DecisionKind.Fail, null, error);
    }
}

/// <summary>Checks shared by the commands.</summary>
internal static class LiveChecks
{
    /// <summary>Parses the whole document, nested ones included.</summary>
    /// <exception cref="InvalidDataException">It is not well-formed BSON.</exception>
    public static void WellFormed(byte[] document)
    {
        try
        {
            _ = global::MongoDB.Bson.Serialization.BsonSerializer.Deserialize<BsonDocument>(document);
        }
        catch (Exception ex) when (ex is FormatException or EndOfStreamException or BsonSerializationException or ArgumentException or InvalidOperationException)
        {
            throw new InvalidDataException($"the decompressed document is not well-formed BSON: {ex.Message}", ex);
        }
    }
}
