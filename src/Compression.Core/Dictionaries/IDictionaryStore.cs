namespace Compression.Dictionaries;

/// <summary>
/// Where dictionary versions live, shared by every client of a database. Implementations: in memory (tests),
/// MongoDB, Couchbase. Versions are insert-only: a store never overwrites or deletes one.
/// </summary>
public interface IDictionaryStore
{
    /// <summary>The dictionary with this id, or <see langword="null"/> when the store has none.</summary>
    ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default);

    /// <summary>The newest version for <paramref name="namespace"/>, or <see langword="null"/> when none is published.</summary>
    ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default);

    /// <summary>
    /// Inserts <paramref name="candidate"/> as version <see cref="DictionaryRecord.Version"/> of its namespace, insert-only.
    /// When another client already published that version, nothing is written and that version (the winner) is returned;
    /// otherwise the candidate is returned. Throws <see cref="DictionaryIdConflictException"/> when the candidate's id is taken.
    /// </summary>
    ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default);

    /// <summary>Every version, of one namespace or of all when <paramref name="namespace"/> is <see langword="null"/>, oldest first.</summary>
    IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default);
}

/// <summary>
/// A store that can also fetch synchronously, through its client's own synchronous API. Synchronous decode paths use it
/// on a cache miss instead of blocking on an asynchronous call.
/// </summary>
public interface ISynchronousDictionaryStore : IDictionaryStore
{
    /// <summary>The dictionary with this id, or <see langword="null"/> when the store has none.</summary>
    DictionaryRecord? Get(uint id);
}

/// <summary>Thrown by <see cref="IDictionaryStore.PublishAsync"/> when the candidate's id is already used by another dictionary.</summary>
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
