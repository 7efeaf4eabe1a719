using Compression.Dictionaries;
using Compression.Tool.Backends;
using Compression.Tool.Live;
using Couchbase.Core.IO.Operations;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

/// <summary>
/// A rewrite of a Couchbase collection (<see cref="RewritePass{TItem, TKey}"/>): the keys after the checkpoint, by a KV
/// range scan, in batches; each document of a batch is read, decided on, and replaced only if it is still the version
/// read (its CAS), up to 16 at a time; a changed one is read again.
/// </summary>
internal sealed class CouchbaseRewrite(ICouchbaseCollection collection, ICheckpointStore<string> checkpoints, CompressionNamespace handle, string ns,
    RewriteOptions options, LiveSettings settings)
    : RewritePass<string, string>(handle, ns, checkpoints, options, settings, filter: null)
{
    private const int Attempts = 3;

    /// <summary>The progress bar expects the keys found after the checkpoint.</summary>
    protected override async Task<BatchScan<string>> ScanAsync(string? after, CancellationToken cancellationToken)
    {
        List<string> keys = await BodyAccess.KeysAsync(collection, after, cancellationToken).ConfigureAwait(false);
        return new BatchScan<string>(keys.Count, keys.Chunk(Settings.BatchSize).ToAsyncEnumerable());
    }

    protected override string KeyOf(string item) => item;

    protected override async Task RewriteBatchAsync(IReadOnlyList<string> batch, RewriteCheckpoint<string> checkpoint, CancellationToken cancellationToken)
    {
        var outcomes = new Outcome[batch.Count];
        await Parallel.ForAsync(0, batch.Count, new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = cancellationToken },
            async (i, token) => outcomes[i] = await SettleAsync(batch[i], token).ConfigureAwait(false)).ConfigureAwait(false);
        for (int i = 0; i < batch.Count; i++) checkpoint.Count(outcomes[i].Kind, batch[i], outcomes[i].Error, Settings.MaxFailures);
    }

    /// <summary>Reads the document, decides, and replaces it if it is still the version read; a changed one is read again (up to 3 times).</summary>
    private async Task<Outcome> SettleAsync(string key, CancellationToken cancellationToken)
    {
        for (int attempt = 1; attempt <= Attempts; attempt++)
        {
            StoredBody? read = await BodyAccess.ReadAsync(collection, key, cancellationToken).ConfigureAwait(false);
            if (read is null) return Outcome.Skip; // removed since the scan: nothing to rewrite
            Outcome decision = await DecideAsync(read, cancellationToken).ConfigureAwait(false);
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
        return Outcome.Fail($"it changed under every one of {Attempts} attempts to replace it; left as it is");
    }

    private async Task<Outcome> DecideAsync(StoredBody read, CancellationToken cancellationToken)
    {
        try
        {
            BodyKind kind = read.Kind;
            if (kind == BodyKind.Foreign) return Outcome.Fail(StoredBody.ForeignMessage + " (left as it is)");
            switch (Options.Mode)
            {
                case RewriteMode.Compress:
                    if (kind == BodyKind.Compressed) return Outcome.Skip;
                    if (kind == BodyKind.Other) return Outcome.Unchanged; // not JSON: the compressed collection stores it as it is too
                    StoredJson.WellFormed(read.Body, "the document (flagged JSON)");
                    return Checked(read.Body, Handle.Compress(read.Body), read.With(DataFormat.Binary));
                case RewriteMode.Decompress:
                    if (kind != BodyKind.Compressed) return Outcome.Skip;
                    byte[] json = (await StoredJson.DecodeAsync(Handle, read, cancellationToken).ConfigureAwait(false))!;
                    return Outcome.Write(json, read.With(DataFormat.Json));
                default:
                    if (kind != BodyKind.Compressed) return Outcome.Unchanged; // migrate compresses plain ones
                    if (Options.Level is null && BodyAccess.DictionaryOf(read.Body) is { } used && used == Current?.Id) return Outcome.Unchanged;
                    byte[] original = (await StoredJson.DecodeAsync(Handle, read, cancellationToken).ConfigureAwait(false))!;
                    Outcome again = Checked(original, Handle.Compress(original), read.With(DataFormat.Binary));
                    return again.Kind == DecisionKind.Write && again.Replacement!.Length >= read.Body.Length ? Outcome.Unchanged : again;
            }
        }
        catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException or ArgumentException)
        {
            return Outcome.Fail(ex.Message);
        }
    }

    /// <summary>A replacement is written only when it reads back as the very bytes it replaces.</summary>
    private Outcome Checked(byte[] json, byte[] envelope, Flags flags) =>
        Handle.Decompress(envelope).AsSpan().SequenceEqual(json)
            ? Outcome.Write(envelope, flags)
            : Outcome.Fail("its compressed form does not decompress to the same bytes (left as it is)");

    private readonly record struct Outcome(DecisionKind Kind, byte[]? Replacement, string? Error, Flags Flags)
    {
        public static Outcome Skip => new(DecisionKind.Skip, null, null, default);

        public static Outcome Unchanged => new(DecisionKind.Unchanged, null, null, default);

        public static Outcome Write(byte[] replacement, Flags flags) => new(DecisionKind.Write, replacement, null, flags);

        public static Outcome Fail(string error) => new(DecisionKind.Fail, null, error, default);
    }
}
