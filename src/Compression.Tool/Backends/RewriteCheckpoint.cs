using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>
/// Where a rewrite of a collection (<c>migrate</c>, <c>migrate --decompress</c>, <c>recompress</c>) stands: one per
/// collection and command, kept by the database's <see cref="ICheckpointStore{TKey}"/> in its own form (docs/docz.md).
/// It is written after each batch's writes are acknowledged, so every document up to <see cref="After"/> (in the scan's
/// order) is in its final form; a run that finds it unfinished starts after <see cref="After"/>, one that finds it done
/// starts over (and finds every document already in its final form). A run of one command removes the checkpoints of the
/// other commands on the same collection: it rewrites documents they may have passed, so they start over.
/// </summary>
/// <typeparam name="TKey">The key the database's scan resumes after (an <c>_id</c>, a document key).</typeparam>
internal sealed class RewriteCheckpoint<TKey>
    where TKey : class
{
    private RewriteCheckpoint(string ns, string mode, string parameters) => (Namespace, Mode, Parameters) = (ns, mode, parameters);

    /// <summary>The namespace's name, as in the configuration.</summary>
    public string Namespace { get; }

    /// <summary>The command's mode (<see cref="RewriteOptions.ModeName"/>).</summary>
    public string Mode { get; }

    /// <summary>What the run was made with (<see cref="RewriteOptions.ParametersFor"/>): a run with others does not resume it.</summary>
    public string Parameters { get; }

    public TKey? After { get; set; }

    public long Written { get; set; }

    public long Skipped { get; set; }

    public long Unchanged { get; set; }

    public long Failed { get; set; }

    public List<RewriteFailure> Failures { get; } = [];

    public int Runs { get; private set; }

    public bool Resumed { get; private set; }

    public DateTime Started { get; private set; }

    /// <summary>
    /// Reads the checkpoint <paramref name="store"/> keeps: resumed when it is unfinished and was made for
    /// <paramref name="ns"/> with the same <paramref name="parameters"/> (and <paramref name="restart"/> is false), else a
    /// fresh one. The checkpoints of the collection's other commands are removed first.
    /// </summary>
    /// <exception cref="InvalidDataException">The stored checkpoint is damaged; the message names it and where it is kept.</exception>
    public static async Task<RewriteCheckpoint<TKey>> LoadAsync(ICheckpointStore<TKey> store, string ns, string mode, string parameters, bool restart,
        CancellationToken cancellationToken)
    {
        var checkpoint = new RewriteCheckpoint<TKey>(ns, mode, parameters) { Started = DateTime.UtcNow, Runs = 1 };

        // This run rewrites documents that an unfinished run of another command may already have passed: that run's
        // checkpoint no longer says where the collection stands (an interrupted --decompress, then a full migrate, then
        // --decompress again resumed after the old point and left the first documents compressed). Its next run starts over.
        await store.RemoveOtherCommandsAsync(cancellationToken).ConfigureAwait(false);

        IStoredCheckpoint<TKey>? stored = await store.ReadAsync(cancellationToken).ConfigureAwait(false);
        if (stored is null || restart) return checkpoint;
        try
        {
            if (stored.Done || stored.Parameters != parameters || stored.Namespace != ns) return checkpoint;
            checkpoint.Resumed = true;
            checkpoint.After = stored.After;
            checkpoint.Written = Counter(stored, "written");
            checkpoint.Skipped = Counter(stored, "skipped");
            checkpoint.Unchanged = Counter(stored, "unchanged");
            checkpoint.Failed = Counter(stored, "failed");
            checkpoint.Runs = checked((int)Counter(stored, "runs") + 1);
            checkpoint.Started = stored.Started;
            checkpoint.Failures.AddRange(stored.Failures);
            return checkpoint;
        }
        catch (Exception ex) when (ex is ArgumentException or OverflowException || store.IsDamage(ex))
        {
            throw new InvalidDataException(
                $"The checkpoint '{store.Id}' in {store.Location} is damaged ({ex.Message}); run again with --restart to start over.", ex);
        }
    }

    /// <summary>Counts one document's outcome; of the failures, the first <paramref name="keep"/> are kept with their document's id and error.</summary>
    public void Count(DecisionKind kind, string id, string? error, int keep)
    {
        switch (kind)
        {
            case DecisionKind.Write: Written++; break;
            case DecisionKind.Skip: Skipped++; break;
            case DecisionKind.Unchanged: Unchanged++; break;
            default:
                Failed++;
                if (Failures.Count < keep) Failures.Add(new RewriteFailure(id, error!));
                break;
        }
    }

    private static long Counter(IStoredCheckpoint<TKey> stored, string name)
    {
        long value = stored.Count(name);
        return value >= 0 ? value : throw new ArgumentException($"'{name}' is negative ({value})");
    }
}

/// <summary>
/// Where a database keeps the checkpoint of one collection and command (<see cref="RewriteCheckpoint{TKey}"/>), with
/// the fields <c>ns, mode, parameters, after, written, skipped, unchanged, failed, failures, runs, started, updated, done</c>
/// in its own form.
/// </summary>
internal interface ICheckpointStore<TKey>
    where TKey : class
{
    /// <summary>The checkpoint's id or key, as a damaged checkpoint's message names it.</summary>
    string Id { get; }

    /// <summary>Where it is kept, as a damaged checkpoint's message names it.</summary>
    string Location { get; }

    /// <summary>Removes the checkpoints of the collection's other commands (those not found need nothing).</summary>
    Task RemoveOtherCommandsAsync(CancellationToken cancellationToken);

    /// <summary>The stored checkpoint, or null when there is none. Its fields are read when asked for.</summary>
    Task<IStoredCheckpoint<TKey>?> ReadAsync(CancellationToken cancellationToken);

    /// <summary>Whether <paramref name="exception"/>, from a field of <see cref="ReadAsync"/>'s checkpoint, says the stored checkpoint is damaged.</summary>
    bool IsDamage(Exception exception);

    /// <summary>Writes the checkpoint (called only once the batch it follows has been acknowledged); <c>updated</c> is now.</summary>
    Task WriteAsync(RewriteCheckpoint<TKey> checkpoint, bool done, CancellationToken cancellationToken);
}

/// <summary>
/// A stored checkpoint as its <see cref="ICheckpointStore{TKey}"/> reads it: each field is read when asked for, and a
/// missing or mistyped one throws what <see cref="ICheckpointStore{TKey}.IsDamage"/> recognizes.
/// </summary>
internal interface IStoredCheckpoint<out TKey>
    where TKey : class
{
    bool Done { get; }

    string Parameters { get; }

    string Namespace { get; }

    TKey? After { get; }

    /// <summary>One of the counters: <c>written</c>, <c>skipped</c>, <c>unchanged</c>, <c>failed</c>, <c>runs</c>.</summary>
    long Count(string name);

    DateTime Started { get; }

    IEnumerable<RewriteFailure> Failures { get; }
}
