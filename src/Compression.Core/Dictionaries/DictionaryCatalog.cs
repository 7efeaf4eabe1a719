using System.Collections.Concurrent;
using Compression.Internal;
using Microsoft.Extensions.Logging;

namespace Compression.Dictionaries;

/// <summary>
/// Every dictionary the engine has read or made, and the only way it reads the store: a bounded cache (least recently
/// used out, dictionaries in use pinned), single-flight fetches, one retry policy, missing ids remembered for a while,
/// and every record validated before it is used.
/// </summary>
internal sealed class DictionaryCatalog
{
    private readonly DictionaryStore _store;
    private readonly StoreRetryPolicy _retry;
    private readonly TimeProvider _time;
    private readonly int _maxCached;
    private readonly int _maxDictionaryBytes;
    private readonly TimeSpan _missRetention;
    private readonly Func<HashSet<uint>> _pinned;
    private readonly ConcurrentDictionary<uint, Entry> _cache = new();
    private readonly ConcurrentDictionary<uint, Lazy<Task<ZstdDictionary>>> _inflight = new();
    private readonly ConcurrentDictionary<uint, long> _missing = new();
    private readonly ConcurrentDictionary<uint, WeakReference<ZstdDictionary>> _evicted = new(); // until collected
    private readonly ConcurrentDictionary<string, byte> _reported = new(StringComparer.Ordinal);
    private readonly ILogger _logger;
    private readonly object _syncFetchGate = new();
    private readonly object _evictGate = new();
    private long _useClock;

    public DictionaryCatalog(DictionaryStore store, CompressionEngineOptions options, TimeProvider time, ILogger logger, Func<HashSet<uint>> pinned)
    {
        _store = store;
        _time = time;
        _maxCached = options.MaxCachedDictionaries;
        _maxDictionaryBytes = options.MaxDictionaryBytes;
        _missRetention = options.MissingDictionaryRetention;
        _pinned = pinned;
        _logger = logger;
        _retry = new StoreRetryPolicy(options.StoreAttempts, options.StoreRetryDelay, time, logger);
        store.RecordSkipped += ReportOnce;
    }

    /// <summary>How many invalid versions of a namespace are skipped, reading or publishing, before it is reported unusable.</summary>
    internal const int MaxInvalidVersions = 16;

    /// <summary>Stops listening to the store (the engine is stopping; the store may outlive it).</summary>
    public void Detach() => _store.RecordSkipped -= ReportOnce;

    /// <summary>Logs a skipped record's problem the first time it is seen (a bounded memory of them: at most 1,024).</summary>
    private void ReportOnce(string problem)
    {
        if (_reported.Count >= 1024 || !_reported.TryAdd(problem, 0)) return;
        Log.InvalidRecordSkipped(_logger, problem);
    }

    public DictionaryStore Store => _store;

    public StoreRetryPolicy Retry => _retry;

    public int Count => _cache.Count;

    /// <summary>Store look-ups made for ids (asynchronous and synchronous), for tests.</summary>
    internal long StoreLookups;

    public bool TryGetCached(uint id, out ZstdDictionary dictionary)
    {
        if (_cache.TryGetValue(id, out var entry))
        {
            // A read stamps the entry with the clock (which only additions move): no shared write on the read path.
            long now = Volatile.Read(ref _useClock);
            if (entry.LastUse != now) entry.LastUse = now;
            dictionary = entry.Dictionary;
            return true;
        }
        // An evicted dictionary that something still holds (a reader that has just loaded it and is about to decode) is
        // taken back rather than read again: without this, a load followed by a synchronous decode failed when other
        // readers' loads evicted it in between (found by review).
        if (_evicted.TryRemove(id, out WeakReference<ZstdDictionary>? evicted) && evicted.TryGetTarget(out ZstdDictionary? alive))
        {
            dictionary = Add(alive);
            return true;
        }
        dictionary = null!;
        return false;
    }

    /// <summary>The dictionary for a synchronous read: from the cache, else through the store's synchronous API when it has one.</summary>
    /// <exception cref="DictionaryNotFoundException">Not cached and not loadable synchronously, not in the store, or the store failed.</exception>
    /// <exception cref="InvalidDataException">The store's record is damaged.</exception>
    public ZstdDictionary Get(uint id, string @namespace)
    {
        if (TryGetCached(id, out var cached)) return cached;
        ThrowIfRememberedMissing(id, @namespace);
        if (!_store.CanGetSynchronously)
            throw new DictionaryNotFoundException(id, @namespace,
                $"it is not loaded and {_store.Location} has no synchronous API; call PreloadDictionaryAsync or DecompressAsync first");
        lock (_syncFetchGate)
        {
            if (TryGetCached(id, out cached)) return cached;
            ThrowIfRememberedMissing(id, @namespace);
            DictionaryRecord? record;
            try
            {
                Interlocked.Increment(ref StoreLookups);
                record = _retry.Execute(static s => s.Store.Get(s.Id), (Store: _store, Id: id), $"Reading dictionary {id} from {_store.Location}");
            }
            catch (StoreUnavailableException ex)
            {
                throw new DictionaryNotFoundException(id, @namespace, $"{_store.Location} could not be read after {_retry.Attempts} attempt(s)", ex.InnerException);
            }
            return Accept(id, record, @namespace);
        }
    }

    /// <summary>Makes sure the dictionary is in memory, fetching it once however many readers ask at the same time.</summary>
    public ValueTask<ZstdDictionary> GetAsync(uint id, string @namespace, CancellationToken cancellationToken)
    {
        if (TryGetCached(id, out var cached)) return ValueTask.FromResult(cached);
        ThrowIfRememberedMissing(id, @namespace);
        var lazy = _inflight.GetOrAdd(id, static (key, s) => new Lazy<Task<ZstdDictionary>>(() => s.Catalog.FetchAsync(key, s.Namespace)),
            (Catalog: this, Namespace: @namespace));
        return new ValueTask<ZstdDictionary>(lazy.Value.WaitAsync(cancellationToken));
    }

    /// <summary>
    /// The newest <em>valid</em> version of a namespace in the store, validated for adoption, or <see langword="null"/>
    /// when it has none. Invalid versions above it are skipped and reported once (at most
    /// <see cref="MaxInvalidVersions"/>); when there is no valid version, the newest one's problem is thrown.
    /// </summary>
    public async ValueTask<(DictionaryRecord Record, ZstdDictionary Dictionary)?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken)
    {
        DictionaryRecord? record = await _retry.ExecuteAsync(static (s, ct) => s.Store.GetCurrentAsync(s.Namespace, ct), (Store: _store, Namespace: @namespace),
            $"Reading the current dictionary of '{@namespace}' from {_store.Location}", cancellationToken).ConfigureAwait(false);
        InvalidDataException? newestProblem = null;
        for (int skipped = 0; record is not null; skipped++)
        {
            try
            {
                return Current(record, @namespace);
            }
            catch (InvalidDataException ex)
            {
                newestProblem ??= ex;
                ReportOnce(ex.Message);
                if (skipped == MaxInvalidVersions)
                    throw new InvalidDataException($"The {MaxInvalidVersions + 1} newest versions of '{@namespace}' in {_store.Location} are all invalid; none was adopted. The newest: {newestProblem.Message}", newestProblem);
            }
            record = await _retry.ExecuteAsync(static (s, ct) => s.Store.GetNewestBelowAsync(s.Namespace, s.Version, ct), (Store: _store, Namespace: @namespace, record.Version),
                $"Reading the version of '{@namespace}' below {record.Version} from {_store.Location}", cancellationToken).ConfigureAwait(false);
        }
        if (newestProblem is not null) throw newestProblem; // nothing valid: say why, as a namespace with one bad record always did
        return null;
    }

    private (DictionaryRecord Record, ZstdDictionary Dictionary) Current(DictionaryRecord record, string @namespace)
    {
        DictionaryRecordValidator.Check(record, _store, expectedId: null, expectedNamespace: @namespace, _maxDictionaryBytes);
        if (TryGetCached(record.Id, out var cached))
        {
            // Versions are immutable: the same id with other bytes means the store was changed under us.
            if (!cached.Content.Span.SequenceEqual(record.Content.Span)
                || (cached.Shapes is null ? !record.Shapes.IsEmpty : !cached.Shapes.Serialize().AsSpan().SequenceEqual(record.Shapes.Span)))
                throw new InvalidDataException($"Dictionary record {record.Id} from {_store.Location} now holds other bytes than when it was first read; it was not used.");
            return (record, cached);
        }
        ZstdDictionary dictionary = DictionaryRecordValidator.Validate(record, _store, expectedId: null, expectedNamespace: @namespace, _maxDictionaryBytes);
        return (record, Add(dictionary));
    }

    /// <summary>
    /// Publishes a candidate insert-only and returns the winner of its version, validated (it may be another client's).
    /// A version held by a record that is not valid (one the store cannot read, or one that fails validation) is
    /// reported once and skipped: the candidate is published as the next version, at most <see cref="MaxInvalidVersions"/>
    /// times and never above <see cref="DictionaryRecord.MaxVersion"/>. The record returned then carries the version it got.
    /// </summary>
    public async ValueTask<(DictionaryRecord Record, ZstdDictionary Dictionary)> PublishAsync(DictionaryRecord candidate, ZstdDictionary dictionary,
        CancellationToken cancellationToken)
    {
        for (int skipped = 0; ; skipped++)
        {
            if (candidate.Version > DictionaryRecord.MaxVersion)
                throw new InvalidDataException($"'{candidate.Namespace}' in {_store.Location} has reached the highest version a dictionary may have ({DictionaryRecord.MaxVersion}); nothing more is published.");
            try
            {
                DictionaryRecord winner = await _retry.ExecuteAsync(static (s, ct) => s.Store.PublishAsync(s.Candidate, ct), (Store: _store, Candidate: candidate),
                    $"Publishing dictionary {candidate.Id} (version {candidate.Version} of '{candidate.Namespace}') to {_store.Location}", cancellationToken).ConfigureAwait(false);
                if (winner.Id == candidate.Id && winner.Version == candidate.Version && winner.ContentHash == candidate.ContentHash
                    && winner.ShapesHash == candidate.ShapesHash && string.Equals(winner.Namespace, candidate.Namespace, StringComparison.Ordinal))
                {
                    return (candidate, Add(dictionary));
                }
                if (winner.Version != candidate.Version)
                    throw new InvalidOperationException($"{_store.Location} answered the publication of version {candidate.Version} of '{candidate.Namespace}' with version {winner.Version}.");
                ZstdDictionary theirs = DictionaryRecordValidator.Validate(winner, _store, expectedId: null, expectedNamespace: candidate.Namespace, _maxDictionaryBytes);
                return (winner, Add(theirs));
            }
            catch (InvalidDataException ex) when (skipped < MaxInvalidVersions)
            {
                // The version is held by a record nobody can use: it stays (nothing is ever deleted), the candidate goes above it.
                ReportOnce(ex.Message);
                candidate = candidate with { Version = candidate.Version + 1 };
            }
        }
    }

    public ZstdDictionary Add(ZstdDictionary dictionary)
    {
        _missing.TryRemove(dictionary.Id, out _);
        var entry = _cache.GetOrAdd(dictionary.Id, static (_, d) => new Entry(d), dictionary);
        entry.LastUse = Interlocked.Increment(ref _useClock);
        if (_cache.Count > _maxCached) Evict();
        return entry.Dictionary;
    }

    private async Task<ZstdDictionary> FetchAsync(uint id, string @namespace)
    {
        try
        {
            DictionaryRecord? record;
            try
            {
                Interlocked.Increment(ref StoreLookups);
                record = await _retry.ExecuteAsync(static (s, ct) => s.Store.GetAsync(s.Id, ct), (Store: _store, Id: id),
                    $"Reading dictionary {id} from {_store.Location}", CancellationToken.None).ConfigureAwait(false);
            }
            catch (StoreUnavailableException ex)
            {
                throw new DictionaryNotFoundException(id, @namespace, $"{_store.Location} could not be read after {_retry.Attempts} attempt(s)", ex.InnerException);
            }
            return Accept(id, record, @namespace);
        }
        finally
        {
            _inflight.TryRemove(id, out _); // failures are not cached: the next read tries again (misses are remembered, briefly)
        }
    }

    private ZstdDictionary Accept(uint id, DictionaryRecord? record, string @namespace)
    {
        if (record is null)
        {
            _missing[id] = _time.GetTimestamp();
            throw new DictionaryNotFoundException(id, @namespace, $"{_store.Location} has no dictionary with this id");
        }
        // Read by id: any namespace may name it (documents move between collections); the id and content must hold.
        return Add(DictionaryRecordValidator.Validate(record, _store, expectedId: id, expectedNamespace: null, _maxDictionaryBytes));
    }

    private void ThrowIfRememberedMissing(uint id, string @namespace)
    {
        if (!_missing.TryGetValue(id, out long since)) return;
        TimeSpan age = _time.GetElapsedTime(since);
        if (age < _missRetention)
            throw new DictionaryNotFoundException(id, @namespace,
                $"{_store.Location} had no dictionary with this id {age.TotalSeconds:F1} s ago (asked again after {_missRetention.TotalSeconds:F0} s)");
        _missing.TryRemove(new KeyValuePair<uint, long>(id, since));
    }

    /// <summary>
    /// Removes the least recently used dictionaries past <see cref="CompressionEngineOptions.MaxCachedDictionaries"/>,
    /// counted over the unpinned ones only: pinned dictionaries (those namespaces compress with) are always kept and do not
    /// take the others' room. (Counted over all of them, 64 namespaces with a dictionary left no room at all: a dictionary
    /// loaded for a read was evicted as it was added, and the synchronous decode that follows the load did not find it.)
    /// </summary>
    private void Evict()
    {
        lock (_evictGate)
        {
            HashSet<uint> pinned = _pinned();
            var unpinned = _cache.Where(e => !pinned.Contains(e.Key)).ToList();
            int excess = unpinned.Count - _maxCached;
            if (excess <= 0) return;
            foreach (var (id, _) in unpinned.OrderBy(e => e.Value.LastUse).Take(excess))
            {
                if (_cache.TryRemove(id, out Entry? removed)) _evicted[id] = new WeakReference<ZstdDictionary>(removed.Dictionary);
            }
            foreach (var (id, weak) in _evicted)
            {
                if (!weak.TryGetTarget(out _)) _evicted.TryRemove(new KeyValuePair<uint, WeakReference<ZstdDictionary>>(id, weak));
            }
        }
    }

    private sealed class Entry(ZstdDictionary dictionary)
    {
        public ZstdDictionary Dictionary { get; } = dictionary;

        public long LastUse;
    }
}
