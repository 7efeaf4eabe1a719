namespace Compression.Dictionaries;

/// <summary>
/// Where dictionary versions live, shared by every client of a database: the seam the adapters implement (in memory for
/// tests, a folder, MongoDB, Couchbase). Versions are insert-only: a store never overwrites or deletes one.
/// </summary>
/// <remarks>
/// A store is untrusted input: the engine checks every record it returns (id, namespace, version, size, content hash)
/// before using it. Implementations should still check what they can see themselves, such as the size of a record
/// before reading it whole, and report a damaged record as <see cref="InvalidDataException"/> naming
/// <see cref="Location"/>.
/// </remarks>
public abstract class DictionaryStore
{
    /// <summary>Creates the store.</summary>
    protected DictionaryStore()
    {
    }

    /// <summary>Where the store keeps its records, for error messages (a folder, a collection, a bucket).</summary>
    public abstract string Location { get; }

    /// <summary>
    /// Whether <see cref="Get"/> works: a store whose client has a synchronous API overrides both. Synchronous decode
    /// paths use it on a cache miss instead of blocking on an asynchronous call.
    /// </summary>
    /// <value>Defaults to <see langword="false"/>.</value>
    public virtual bool CanGetSynchronously => false;

    /// <summary>The dictionary with this id, or <see langword="null"/> when the store has none.</summary>
    public abstract ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default);

    /// <summary>
    /// The dictionary with this id, or <see langword="null"/> when the store has none, read through the client's own
    /// synchronous API. Only called when <see cref="CanGetSynchronously"/> is <see langword="true"/>.
    /// </summary>
    /// <exception cref="NotSupportedException">The store has no synchronous API (the default).</exception>
    public virtual DictionaryRecord? Get(uint id) =>
        throw new NotSupportedException($"{GetType().Name} has no synchronous API; load dictionaries with GetAsync.");

    /// <summary>
    /// The newest version for <paramref name="namespace"/>, or <see langword="null"/> when none is published. A store
    /// skips the records it cannot read (reporting each with <see cref="ReportSkippedRecord"/>), so that one broken or
    /// hostile record never hides the versions below it; the engine skips, through <see cref="GetNewestBelowAsync"/>,
    /// the ones it cannot validate.
    /// </summary>
    public abstract ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default);

    /// <summary>
    /// The newest version for <paramref name="namespace"/> below <paramref name="version"/>, or <see langword="null"/>:
    /// what the engine reads when the current record is not valid. Skips what the store cannot read, as
    /// <see cref="GetCurrentAsync"/> does.
    /// </summary>
    /// <remarks>The default reads <see cref="ListAsync"/> whole; a store that can ask for one record overrides it.</remarks>
    public virtual async ValueTask<DictionaryRecord?> GetNewestBelowAsync(string @namespace, int version, CancellationToken cancellationToken = default)
    {
        DictionaryRecord? newest = null;
        await foreach (DictionaryRecord record in ListAsync(@namespace, cancellationToken).ConfigureAwait(false))
        {
            if (record.Version < version && (newest is null || record.Version > newest.Version)) newest = record;
        }
        return newest;
    }

    /// <summary>
    /// Inserts <paramref name="candidate"/> as version <see cref="DictionaryRecord.Version"/> of its namespace, insert-only.
    /// When that version is taken, nothing is written and the record holding it (the winner) is returned, or an
    /// <see cref="InvalidDataException"/> when the store cannot read that record; the engine then publishes the
    /// candidate as the next version. Otherwise the candidate is returned. Publication never depends on other versions.
    /// </summary>
    /// <exception cref="DictionaryIdConflictException">The candidate's id is taken by another dictionary.</exception>
    public abstract ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default);

    /// <summary>Every version, of one namespace or of all when <paramref name="namespace"/> is <see langword="null"/>, oldest first.</summary>
    public abstract IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Reports a record the store skipped because it could not read it (its problem, naming <see cref="Location"/>):
    /// the engines using this store log it once.
    /// </summary>
    protected void ReportSkippedRecord(string problem) => RecordSkipped?.Invoke(problem);

    /// <summary>Raised by <see cref="ReportSkippedRecord"/>; engines subscribe while they run.</summary>
    internal event Action<string>? RecordSkipped;

    /// <summary>How many unreadable records a store skips at most before it reports the namespace unreadable.</summary>
    protected const int MaxSkippedRecords = 16;

    /// <inheritdoc/>
    public override string ToString() => Location;
}

/// <summary>Thrown by <see cref="DictionaryStore.PublishAsync"/> when the candidate's id is already used by another dictionary.</summary>
public sealed class DictionaryIdConflictException : Exception
{
    /// <summary>Creates the exception.</summary>
    public DictionaryIdConflictException(uint id) : base($"Dictionary id {id} is already taken in this store.") => Id = id;

    /// <summary>Creates the exception.</summary>
    public DictionaryIdConflictException() : base("Dictionary id already taken.") { }

    /// <summary>Creates the exception.</summary>
    public DictionaryIdConflictException(string message) : base(message) { }

    /// <summary>Creates the exception.</summary>
    public DictionaryIdConflictException(string message, Exception innerException) : base(message, innerException) { }

    /// <summary>The conflicting id.</summary>
    public uint Id { get; }
}
