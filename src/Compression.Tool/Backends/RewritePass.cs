using Compression.Dictionaries;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>What a rewrite makes of one document.</summary>
internal enum DecisionKind
{
    /// <summary>Replaced with its new form.</summary>
    Write,

    /// <summary>Already in its final form, or gone: nothing to rewrite.</summary>
    Skip,

    /// <summary>Left as it is on purpose (the rewrite would not make it better).</summary>
    Unchanged,

    /// <summary>Could not be rewritten; left as it is, and reported.</summary>
    Fail,
}

/// <summary>
/// What a scan will go through: <see cref="Expected"/> documents as far as the progress bar knows (an estimate where the
/// database gives one), in <see cref="Batches"/>.
/// </summary>
internal sealed record BatchScan<T>(long Expected, IAsyncEnumerable<IReadOnlyList<T>> Batches);

/// <summary>
/// One rewrite of a collection (<c>migrate</c>, <c>migrate --decompress</c>, <c>recompress</c>), resumable from its
/// <see cref="RewriteCheckpoint{TKey}"/>. The loop is shared: load the checkpoint, scan after it in batches, have the
/// database rewrite each batch, then move the checkpoint past the batch and write it (only once the batch's writes are
/// acknowledged, so everything before it is in its final form). A database provides the rest: where its checkpoints are
/// kept, its scan in a stable order, and the compare-and-swap replacement of a batch (<see cref="RewriteBatchAsync"/>),
/// which never replaces a document from a stale copy.
/// </summary>
/// <typeparam name="TItem">What the scan yields: a document as read, or only its key when the batch reads each one itself.</typeparam>
/// <typeparam name="TKey">The key the scan resumes after.</typeparam>
/// <param name="handle">The namespace's handle: its current dictionary, compression and decompression.</param>
/// <param name="ns">The namespace's name, as in the configuration.</param>
/// <param name="checkpoints">Where the database keeps this collection's checkpoint of this command.</param>
/// <param name="options">The command's mode and options.</param>
/// <param name="settings">The batch size and how many failures are kept.</param>
/// <param name="filter">The scan's filter when the run covers part of the collection only, as the checkpoint's parameters name it.</param>
internal abstract class RewritePass<TItem, TKey>(CompressionNamespace handle, string ns, ICheckpointStore<TKey> checkpoints, RewriteOptions options,
    LiveSettings settings, string? filter)
    where TKey : class
{
    /// <summary>The namespace's handle: its current dictionary, compression and decompression.</summary>
    protected CompressionNamespace Handle => handle;

    protected RewriteOptions Options => options;

    protected LiveSettings Settings => settings;

    /// <summary>The dictionary the run compresses with: the namespace's current one when the run starts.</summary>
    protected DictionaryRecord? Current { get; private set; }

    /// <summary>Rewrites the collection from its checkpoint on, with a progress bar on <paramref name="console"/>.</summary>
    /// <exception cref="InvalidDataException">The stored checkpoint is damaged.</exception>
    public async Task<RewriteResult> RunAsync(LiveOutput console, CancellationToken cancellationToken)
    {
        Current = handle.CurrentDictionary;
        string parameters = options.ParametersFor(Current, filter);
        RewriteCheckpoint<TKey> checkpoint = await RewriteCheckpoint<TKey>.LoadAsync(checkpoints, ns, options.ModeName, parameters, options.Restart,
            cancellationToken).ConfigureAwait(false);
        BatchScan<TItem> scan = await ScanAsync(checkpoint.After, cancellationToken).ConfigureAwait(false);
        long scanned = await console.ProgressAsync($"{options.ModeName} {ns}", scan.Expected, async progress =>
        {
            long scanned = 0;
            await foreach (IReadOnlyList<TItem> batch in scan.Batches.ConfigureAwait(false))
            {
                await RewriteBatchAsync(batch, checkpoint, cancellationToken).ConfigureAwait(false);
                checkpoint.After = KeyOf(batch[^1]);
                await checkpoints.WriteAsync(checkpoint, done: false, cancellationToken).ConfigureAwait(false);
                scanned += batch.Count;
                progress(batch.Count);
            }
            return scanned;
        }).ConfigureAwait(false);
        await checkpoints.WriteAsync(checkpoint, done: true, cancellationToken).ConfigureAwait(false);
        return new RewriteResult(ns, options.ModeName, checkpoint.Resumed, checkpoint.Runs, scanned, checkpoint.Written, checkpoint.Skipped,
            checkpoint.Unchanged, checkpoint.Failed, checkpoint.Failures, Current?.Id, Current?.Version);
    }

    /// <summary>The collection's documents after <paramref name="after"/> (all when null), in batches of <see cref="LiveSettings.BatchSize"/>, in the order resuming relies on.</summary>
    protected abstract Task<BatchScan<TItem>> ScanAsync(TKey? after, CancellationToken cancellationToken);

    /// <summary>The key a checkpoint keeps of the last item of a batch.</summary>
    protected abstract TKey KeyOf(TItem item);

    /// <summary>
    /// Decides and replaces each document of the batch by compare-and-swap, and counts each one's outcome on
    /// <paramref name="checkpoint"/> (<see cref="RewriteCheckpoint{TKey}.Count"/>) once it is settled.
    /// </summary>
    protected abstract Task RewriteBatchAsync(IReadOnlyList<TItem> batch, RewriteCheckpoint<TKey> checkpoint, CancellationToken cancellationToken);
}
