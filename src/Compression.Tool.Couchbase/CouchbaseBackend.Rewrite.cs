using Compression.Dictionaries;
using Compression.Tool.Live;
using Couchbase.Core.IO.Operations;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

// The rewriting commands (compress, decompress, migrate): each document is read, decided on, and replaced only if it is
// still the version read (its CAS); a changed one is read again.
internal sealed partial class CouchbaseBackend
{
    private const int Attempts = 3;

    private static async Task<RewriteResult> RewriteAsync(CouchbaseSession session, CouchbaseNamespace ns, CompressionNamespace handle, RewriteOptions options,
        LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        ICouchbaseCollection store = await session.StoreCollectionAsync(ns).ConfigureAwait(false);
        DictionaryRecord? current = handle.CurrentDictionary;
        string parameters = options.ParametersFor(current);
        CouchbaseCheckpoint checkpoint = await CouchbaseCheckpoint.LoadAsync(store, ns, options.ModeName, parameters, options.Restart, cancellationToken)
            .ConfigureAwait(false);
        List<string> keys = await BodyAccess.KeysAsync(collection, checkpoint.After, cancellationToken).ConfigureAwait(false);
        long scanned = 0;
        await console.ProgressAsync($"{options.ModeName} {ns}", keys.Count, async progress =>
        {
            for (int start = 0; start < keys.Count; start += settings.BatchSize)
            {
                string[] batch = [.. keys.Skip(start).Take(settings.BatchSize)];
                var outcomes = new Outcome[batch.Length];
                await Parallel.ForAsync(0, batch.Length, new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = cancellationToken },
                    async (i, token) => outcomes[i] = await SettleAsync(collection, handle, batch[i], options, current, token).ConfigureAwait(false))
                    .ConfigureAwait(false);
                for (int i = 0; i < batch.Length; i++)
                {
                    Outcome outcome = outcomes[i];
                    switch (outcome.Kind)
                    {
                        case DecisionKind.Write: checkpoint.Written++; break;
                        case DecisionKind.Skip: checkpoint.Skipped++; break;
                        case DecisionKind.Unchanged: checkpoint.Unchanged++; break;
                        default: checkpoint.AddFailure(batch[i], outcome.Error!, settings.MaxFailures); break;
                    }
                }
                checkpoint.After = batch[^1];
                await checkpoint.SaveAsync(ns, options.ModeName, parameters, done: false, cancellationToken).ConfigureAwait(false);
                scanned += batch.Length;
                progress(batch.Length);
            }
            return 0;
        }).ConfigureAwait(false);
        await checkpoint.SaveAsync(ns, options.ModeName, parameters, done: true, cancellationToken).ConfigureAwait(false);
        return new RewriteResult(ns.Name, options.ModeName, checkpoint.Resumed, checkpoint.Runs, scanned, checkpoint.Written, checkpoint.Skipped,
            checkpoint.Unchanged, checkpoint.Failed, checkpoint.Failures, current?.Id, current?.Version);
    }

    /// <summary>Reads the document, decides, and replaces it if it is still the version read; a changed one is read again (up to 3 times).</summary>
    private static async Task<Outcome> SettleAsync(ICouchbaseCollection collection, CompressionNamespace handle, string key, RewriteOptions options,
        DictionaryRecord? current, CancellationToken cancellationToken)
    {
        for (int attempt = 1; attempt <= Attempts; attempt++)
        {
            StoredBody? read = await BodyAccess.ReadAsync(collection, key, cancellationToken).ConfigureAwait(false);
            if (read is null) return new Outcome(DecisionKind.Skip, null, null, default); // removed since the scan: nothing to rewrite
            Outcome decision = await DecideAsync(handle, read, options, current, cancellationToken).ConfigureAwait(false);
            if (decision.Kind != DecisionKind.Write) return decision;
            try
            {
                if (await BodyAccess.ReplaceAsync(collection, read, decision.Replacement!, decision.Flags, cancellationToken).ConfigureAwait(false)) return decision;
            }
            catch (global::Couchbase.Core.Exceptions.KeyValue.ValueToolargeException ex)
            {
                return Outcome.Fail($"its new form has {decision.Replacement!.Length} bytes, over Couchbase's 20 MB limit; left as it is ({ex.Message})");
            }
        }
        return new Outcome(DecisionKind.Fail, null, $"it changed under every one of {Attempts} attempts to replace it; left as it is", default);
    }

    private static async Task<Outcome> DecideAsync(CompressionNamespace handle, StoredBody read, RewriteOptions options, DictionaryRecord? current,
        CancellationToken cancellationToken)
    {
        try
        {
            BodyKind kind = read.Kind;
            if (kind == BodyKind.Foreign) return Outcome.Fail(StoredBody.ForeignMessage + " (left as it is)");
            switch (options.Mode)
            {
                case RewriteMode.Compress:
                    if (kind == BodyKind.Compressed) return Outcome.Skip;
                    if (kind == BodyKind.Other) return Outcome.Unchanged; // not JSON: the compressed collection stores it as it is too
                    WellFormed(read.Body, "the document (flagged JSON)");
                    return Checked(handle, read.Body, handle.Compress(read.Body), read.With(DataFormat.Binary));
                case RewriteMode.Decompress:
                    if (kind != BodyKind.Compressed) return Outcome.Skip;
                    byte[] json = (await DecodeAsync(handle, read, cancellationToken).ConfigureAwait(false))!;
                    return Outcome.Write(json, read.With(DataFormat.Json));
                default:
                    if (kind != BodyKind.Compressed) return Outcome.Unchanged; // migrate compresses plain ones
                    if (options.Level is null && BodyAccess.DictionaryOf(read.Body) is { } used && used == current?.Id) return Outcome.Unchanged;
                    byte[] original = (await DecodeAsync(handle, read, cancellationToken).ConfigureAwait(false))!;
                    Outcome again = Checked(handle, original, handle.Compress(original), read.Flags);
                    return again.Kind == DecisionKind.Write && again.Replacement!.Length >= read.Body.Length ? Outcome.Unchanged : again;
            }
        }
        catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException or ArgumentException)
        {
            return Outcome.Fail(ex.Message);
        }
    }

    /// <summary>A replacement is written only when it reads back as the very bytes it replaces.</summary>
    private static Outcome Checked(CompressionNamespace handle, byte[] json, byte[] envelope, Flags flags) =>
        handle.Decompress(envelope).AsSpan().SequenceEqual(json)
            ? Outcome.Write(envelope, flags)
            : Outcome.Fail("its compressed form does not decompress to the same bytes (left as it is)");

    private enum DecisionKind
    {
        Write,
        Skip,
        Unchanged,
        Fail,
    }

    private readonly record struct Outcome(DecisionKind Kind, byte[]? Replacement, string? Error, Flags Flags)
    {
        public static Outcome Skip => new(DecisionKind.Skip, null, null, default);

        public static Outcome Unchanged => new(DecisionKind.Unchanged, null, null, default);

        public static Outcome Write(byte[] replacement, Flags flags) => new(DecisionKind.Write, replacement, null, flags);

        public static Outcome Fail(string error) => new(DecisionKind.Fail, null, error, default);
    }
}
