using System.Runtime.CompilerServices;

namespace Compression.Dictionaries;

/// <summary>
/// An <see cref="DictionaryStore"/> in process memory, for tests and single-process tools. Thread-safe.
/// Its dictionaries die with the process, and with them the ability to read what they compressed: anything that
/// stores envelopes beyond the process's life needs a persistent store (<see cref="FileDictionaryStore"/>, or a
/// database's own).
/// </summary>
public sealed class InMemoryDictionaryStore : DictionaryStore
{
    private readonly object _gate = new();
    private readonly Dictionary<uint, DictionaryRecord> _byId = [];
    private readonly Dictionary<string, List<DictionaryRecord>> _byNamespace = new(StringComparer.Ordinal);

    /// <inheritdoc/>
    public override string Location => "the in-memory dictionary store";

    /// <inheritdoc/>
    public override bool CanGetSynchronously => true;

    /// <summary>How many versions the store holds.</summary>
    internal int Count { get { lock (_gate) return _byId.Count; } }

    /// <inheritdoc/>
    public override DictionaryRecord? Get(uint id)
    {
        lock (_gate) return _byId.GetValueOrDefault(id);
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(Get(id));
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            return ValueTask.FromResult(_byNamespace.TryGetValue(@namespace, out var list) && list.Count > 0 ? list[^1] : null);
        }
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            if (!_byNamespace.TryGetValue(candidate.Namespace, out var list)) _byNamespace[candidate.Namespace] = list = [];
            var existing = list.Find(r => r.Version == candidate.Version);
            if (existing is not null) return ValueTask.FromResult(existing);
            if (_byId.ContainsKey(candidate.Id)) throw new DictionaryIdConflictException(candidate.Id);
            var stored = candidate with { Content = candidate.Content.ToArray(), Shapes = candidate.Shapes.ToArray() };
            _byId.Add(stored.Id, stored);
            int at = list.FindIndex(r => r.Version > stored.Version); // kept in version order: the newest last
            list.Insert(at < 0 ? list.Count : at, stored);
            return ValueTask.FromResult(stored);
        }
    }

    /// <inheritdoc/>
    public override async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        DictionaryRecord[] snapshot;
        lock (_gate)
        {
            snapshot = @namespace is null
                ? [.. _byId.Values.OrderBy(r => r.Created).ThenBy(r => r.Namespace, StringComparer.Ordinal).ThenBy(r => r.Version)]
                : _byNamespace.TryGetValue(@namespace, out var list) ? [.. list] : [];
        }
        foreach (var record in snapshot)
        {
            cancellationToken.ThrowIfCancellationRequested();
            yield return record;
        }
        await Task.CompletedTask.ConfigureAwait(false);
    }
}
