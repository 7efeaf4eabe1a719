using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Security.Cryptography;
using Compression.Internal;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Compression.Dictionaries;

/// <summary>What a training run did.</summary>
public enum TrainingOutcome
{
    /// <summary>A new dictionary was trained, published and adopted.</summary>
    Adopted,

    /// <summary>Another client published the same version first; its dictionary was adopted instead.</summary>
    AdoptedFromOtherClient,

    /// <summary>The candidate was not clearly better than the current setting on held-out samples.</summary>
    NotBetter,

    /// <summary>zstd could not train from the samples (too few, too small or too uniform).</summary>
    NoDictionary,

    /// <summary>Not enough samples yet.</summary>
    TooFewSamples,

    /// <summary>The candidate could not be published; writes continue with the current dictionary and publication is retried.</summary>
    PublishFailed,

    /// <summary>Dictionaries are disabled for the namespace, or its codec is not zstd.</summary>
    Disabled,

    /// <summary>A training run of the namespace was already under way.</summary>
    AlreadyRunning,
}

/// <summary>The result of <see cref="CompressionEngine.TrainAsync"/>.</summary>
/// <param name="Outcome">What happened.</param>
/// <param name="Dictionary">The dictionary in use afterwards, if any.</param>
public sealed record TrainingResult(TrainingOutcome Outcome, DictionaryRecord? Dictionary);

/// <summary>
/// Compresses and decompresses documents per namespace with shared, versioned zstd dictionaries: it samples written
/// documents, trains dictionaries in the background (never on the write path), adopts a candidate only when it is
/// clearly better on held-out samples, publishes it insert-only to an <see cref="IDictionaryStore"/>, and picks up the
/// versions other clients publish. Thread-safe; one per application and store.
/// </summary>
public sealed class CompressionEngine : IAsyncDisposable, IDisposable
{
    private readonly IDictionaryStore _store;
    private readonly CompressionEngineOptions _options;
    private readonly ILogger _logger;
    private readonly TimeProvider _time;
    private readonly CompressionMetrics _metrics;
    private readonly ConcurrentDictionary<string, NamespaceState> _namespaces = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<uint, CachedDictionary> _cache = new();
    private readonly ConcurrentDictionary<uint, Lazy<Task<ZstdDictionary>>> _inflight = new();
    private readonly ConcurrentDictionary<Task, byte> _background = new();
    private readonly object _syncFetchGate = new();
    private readonly CancellationTokenSource _stopping = new();
    private readonly Task _pollLoop;
    private long _useClock;

    /// <summary>Creates an engine over <paramref name="store"/>. It starts polling the store for new versions at once.</summary>
    /// <exception cref="ArgumentException">The options are invalid; the message lists every problem.</exception>
    public CompressionEngine(IDictionaryStore store, CompressionEngineOptions? options = null, ILoggerFactory? loggerFactory = null,
        IMeterFactory? meterFactory = null, TimeProvider? timeProvider = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        options ??= new CompressionEngineOptions();
        var errors = options.Validate();
        if (errors.Count > 0) throw new ArgumentException("Invalid compression options:" + Environment.NewLine + string.Join(Environment.NewLine, errors), nameof(options));
        _store = store;
        _options = options;
        _logger = (ILogger?)loggerFactory?.CreateLogger<CompressionEngine>() ?? NullLogger.Instance;
        _time = timeProvider ?? TimeProvider.System;
        _metrics = new CompressionMetrics(meterFactory);
        _pollLoop = Task.Run(PollLoopAsync);
    }

    /// <summary>Test and replay hook: run training on the writing thread instead of in the background.</summary>
    internal bool InlineTraining { get; set; }

    /// <summary>Replay hook: the random source for sampling and hold-out splits (seeded for repeatable replays). Thread-safe by default.</summary>
    internal Random Random { get; init; } = Random.Shared;

    /// <summary>Test hook: called at the start of every training run, on the training thread.</summary>
    internal Action<string>? TrainingStarting { get; set; }

    /// <summary>
    /// Compresses <paramref name="document"/> for <paramref name="namespace"/> into an envelope appended to
    /// <paramref name="destination"/>, with the namespace's current dictionary when it has one. Samples the document
    /// and, when due, starts a background training run; it never waits for one.
    /// </summary>
    public void Compress(string @namespace, ReadOnlySpan<byte> document, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        NamespaceState state = GetState(@namespace);
        AdoptedDictionary? current = state.UsesDictionary ? state.Current : null;
        Span<byte> span = destination.GetSpan(DocumentCompressor.GetMaxEnvelopeLength(document.Length));
        if (!state.Compressor.TryCompress(document, span, out int written, current?.Dictionary))
            ThrowHelper.ThrowDestinationTooSmall(nameof(destination));
        var codec = (CompressionCodec)(span[1] & DocumentEnvelope.CodecMask);
        destination.Advance(written);

        _metrics.Compressed(state.Name, codec, document.Length, written);
        state.RecordWrite(document.Length, written);
        if (state.UsesDictionary)
        {
            state.Reservoir.Offer(document);
            MaybeStartTraining(state);
        }
    }

    /// <summary>Compresses into a new array. Allocates; prefer the <see cref="IBufferWriter{T}"/> overload on hot paths.</summary>
    public byte[] Compress(string @namespace, ReadOnlySpan<byte> document)
    {
        var writer = new ArrayBufferWriter<byte>(DocumentCompressor.GetMaxEnvelopeLength(document.Length));
        Compress(@namespace, document, writer);
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>
    /// Decompresses an envelope of <paramref name="namespace"/> synchronously. A dictionary that is not cached is fetched
    /// through the store's synchronous API when it has one (<see cref="ISynchronousDictionaryStore"/>); otherwise call
    /// <see cref="EnsureDictionaryAsync"/> first, or use <see cref="DecompressAsync"/>.
    /// </summary>
    /// <exception cref="InvalidDataException">The value is not an envelope, or it is corrupt.</exception>
    /// <exception cref="DictionaryNotFoundException">The dictionary it names cannot be found.</exception>
    public void Decompress(string @namespace, ReadOnlySpan<byte> envelope, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        NamespaceState state = GetState(@namespace);
        try
        {
            EnvelopeHeader header = state.Compressor.ReadHeader(envelope);
            ZstdDictionary? dictionary = header.DictionaryId is uint id ? GetDictionary(id, state.Name) : null;
            state.Compressor.Decompress(envelope, destination, dictionary);
        }
        catch (InvalidDataException)
        {
            _metrics.DecodeFailed(state.Name, "corrupt");
            throw;
        }
        catch (DictionaryNotFoundException)
        {
            _metrics.DecodeFailed(state.Name, "dictionary_not_found");
            throw;
        }
    }

    /// <summary>Decompresses into a new array. Allocates.</summary>
    /// <inheritdoc cref="Decompress(string, ReadOnlySpan{byte}, IBufferWriter{byte})" path="/exception"/>
    public byte[] Decompress(string @namespace, ReadOnlySpan<byte> envelope)
    {
        var writer = new ArrayBufferWriter<byte>(Math.Max(1, envelope.Length * 4));
        Decompress(@namespace, envelope, writer);
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>Makes sure the dictionary an envelope names is in memory, fetching it from the store (single-flight) when not.</summary>
    /// <exception cref="DictionaryNotFoundException">The store has no such dictionary, or could not be reached after the configured attempts.</exception>
    public async ValueTask EnsureDictionaryAsync(string @namespace, ReadOnlyMemory<byte> envelope, CancellationToken cancellationToken = default)
    {
        NamespaceState state = GetState(@namespace);
        if (DocumentEnvelope.TryReadHeader(envelope.Span, out EnvelopeHeader header, state.Options.Compressor.MaxUncompressedLength)
            && header.DictionaryId is uint id)
        {
            await GetDictionaryAsync(id, state.Name, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Fetches the dictionary if needed, then decompresses. Allocates the result.</summary>
    public async ValueTask<byte[]> DecompressAsync(string @namespace, ReadOnlyMemory<byte> envelope, CancellationToken cancellationToken = default)
    {
        await EnsureDictionaryAsync(@namespace, envelope, cancellationToken).ConfigureAwait(false);
        return Decompress(@namespace, envelope.Span);
    }

    /// <summary>Loads the namespace's current dictionary from the store, so the first writes already use it.</summary>
    public async ValueTask InitializeAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        NamespaceState state = GetState(@namespace, startLoad: false);
        await RefreshAsync(state, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Asks the store for versions other clients published, for every namespace in use.</summary>
    public async Task RefreshAsync(CancellationToken cancellationToken = default)
    {
        foreach (var state in _namespaces.Values)
        {
            try
            {
                await RefreshAsync(state, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                Log.PollFailed(_logger, ex, state.Name);
            }
        }
    }

    /// <summary>The dictionary the namespace compresses with now, or <see langword="null"/>.</summary>
    public DictionaryRecord? GetCurrentDictionary(string @namespace) =>
        _namespaces.TryGetValue(@namespace, out var state) ? state.Current?.Record : null;

    /// <summary>
    /// Runs a training run for the namespace now, from the samples it has, whatever the triggers say
    /// (the rate limit does not apply). Used by tools and tests; the write path trains on its own.
    /// </summary>
    public Task<TrainingResult> TrainAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        NamespaceState state = GetState(@namespace);
        if (!state.UsesDictionary) return Task.FromResult(new TrainingResult(TrainingOutcome.Disabled, null));
        if (!state.TryBeginTraining()) return Task.FromResult(new TrainingResult(TrainingOutcome.AlreadyRunning, state.Current?.Record));
        state.LastTrainingTimestamp = _time.GetTimestamp();
        return RunTrainingAsync(state, cancellationToken);
    }

    /// <summary>Waits until no background training or load is running (for tests and orderly shutdown).</summary>
    internal async Task WhenIdleAsync()
    {
        while (!_background.IsEmpty)
        {
            await Task.WhenAll(_background.Keys).ConfigureAwait(false);
        }
    }

    internal long GetSampleBytes(string @namespace) => _namespaces.TryGetValue(@namespace, out var s) ? s.Reservoir.Bytes : 0;

    internal int GetSampleCount(string @namespace) => _namespaces.TryGetValue(@namespace, out var s) ? s.Reservoir.Count : 0;

    internal int CachedDictionaryCount => _cache.Count;

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        if (_stopping.IsCancellationRequested) return;
        await _stopping.CancelAsync().ConfigureAwait(false);
        try
        {
            await _pollLoop.ConfigureAwait(false);
            await WhenIdleAsync().ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        _metrics.Dispose();
        _stopping.Dispose();
    }

    /// <inheritdoc/>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    private NamespaceState GetState(string @namespace, bool startLoad = true)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        if (_namespaces.TryGetValue(@namespace, out var state)) return state;
        var options = (_options.Namespaces.TryGetValue(@namespace, out var specific) ? specific : _options.Defaults).Clone();
        var created = new NamespaceState(@namespace, options, Random);
        state = _namespaces.GetOrAdd(@namespace, created);
        if (ReferenceEquals(state, created) && startLoad)
        {
            RunInBackground(async () =>
            {
                try
                {
                    await RefreshAsync(state, _stopping.Token).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is not OperationCanceledException)
                {
                    Log.PollFailed(_logger, ex, state.Name);
                }
                finally
                {
                    state.Loaded = true;
                }
                // Writes that came before the load finished could not start training: check once more now.
                if (state.UsesDictionary && !_stopping.IsCancellationRequested) MaybeStartTraining(state);
            });
        }
        return state;
    }

    private async Task RefreshAsync(NamespaceState state, CancellationToken cancellationToken)
    {
        try
        {
            if (!state.UsesDictionary) return;
            DictionaryRecord? record = await _store.GetCurrentAsync(state.Name, cancellationToken).ConfigureAwait(false);
            if (record is null || record.Version <= (state.Current?.Record.Version ?? 0)) return;
            ZstdDictionary dictionary = GetDictionary(record, state.Name);
            Adopt(state, new AdoptedDictionary(dictionary, record, record.Ratio), "another client");
        }
        finally
        {
            state.Loaded = true;
        }
    }

    private void MaybeStartTraining(NamespaceState state)
    {
        if (state.IsTraining || !state.Loaded) return;
        DictionaryOptions d = state.Options.Dictionary;
        long now = _time.GetTimestamp();
        if (state.LastTrainingTimestamp != 0 && _time.GetElapsedTime(state.LastTrainingTimestamp, now) < d.MinTrainingInterval) return;
        if (!IsTrainingDue(state, d)) return;
        if (!state.TryBeginTraining()) return;
        state.LastTrainingTimestamp = now;
        if (InlineTraining)
        {
            RunTrainingAsync(state, CancellationToken.None).GetAwaiter().GetResult();
            return;
        }
        RunInBackground(() => RunTrainingAsync(state, _stopping.Token));
    }

    private static bool IsTrainingDue(NamespaceState state, DictionaryOptions d)
    {
        if (state.PendingPublication is not null) return true;
        AdoptedDictionary? current = state.Current;
        if (state.DocsAtLastTraining == 0)
            return state.Reservoir.Count >= d.MinSampleCount && state.Reservoir.Bytes >= d.MinSampleBytes;
        bool grown = state.SamplesAtLastTraining < d.MaxSampleCount && state.DocsSeen >= state.DocsAtLastTraining * d.GrowthFactor;
        if (grown) return true;
        if (current is null) return false;
        return state.DocsSinceAdoption >= d.DriftMinDocuments && state.ObservedRatio < current.BaselineRatio * d.DriftThreshold;
    }

    private async Task<TrainingResult> RunTrainingAsync(NamespaceState state, CancellationToken cancellationToken)
    {
        long started = _time.GetTimestamp();
        TrainingOutcome outcome = TrainingOutcome.NoDictionary;
        try
        {
            TrainingStarting?.Invoke(state.Name);
            outcome = await TrainCoreAsync(state, cancellationToken).ConfigureAwait(false);
            return new TrainingResult(outcome, state.Current?.Record);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            Log.TrainingFailed(_logger, ex, state.Name);
            throw;
        }
        finally
        {
            _metrics.Training(state.Name, OutcomeName(outcome), _time.GetElapsedTime(started));
            state.EndTraining();
        }
    }

    private async Task<TrainingOutcome> TrainCoreAsync(NamespaceState state, CancellationToken cancellationToken)
    {
        DictionaryOptions d = state.Options.Dictionary;

        // Start from the newest version in the store: another client may have published since our last poll.
        try
        {
            await RefreshAsync(state, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            Log.PollFailed(_logger, ex, state.Name);
        }

        if (state.PendingPublication is { } pending)
        {
            state.PendingPublication = null;
            int nextVersion = (state.Current?.Record.Version ?? 0) + 1;
            if (pending.Record.Version == nextVersion)
                return await PublishAndAdoptAsync(state, pending.Record, pending.Dictionary, pending.Record.Ratio, cancellationToken).ConfigureAwait(false);
        }

        byte[][] samples = state.Reservoir.TakeSnapshot();
        state.DocsAtLastTraining = Math.Max(1, state.DocsSeen);
        state.SamplesAtLastTraining = samples.Length;
        if (samples.Length < d.MinSampleCount) return TrainingOutcome.TooFewSamples;

        Random.Shuffle(samples);
        int holdoutCount = Math.Max(1, (int)(samples.Length * d.HoldoutFraction));
        byte[][] holdout = samples[..holdoutCount];
        byte[][] training = samples[holdoutCount..];
        long trainingBytes = training.Sum(s => (long)s.Length);
        int size = d.GetTrainingSize(training.Length, trainingBytes);
        if (size < ZstdDictionary.MinimumSize || trainingBytes < d.MinSampleBytes) return TrainingOutcome.TooFewSamples;

        Log.TrainingStarted(_logger, state.Name, training.Length, trainingBytes, size);
        ZstdDictionary? candidate = ZstdDictionaryTrainer.TryTrain(training, size, NewDictionaryId());
        if (candidate is null)
        {
            Log.TrainingProducedNothing(_logger, state.Name);
            return TrainingOutcome.NoDictionary;
        }

        AdoptedDictionary? current = state.Current;
        long raw = holdout.Sum(s => (long)s.Length);
        long candidateBytes = MeasureEnvelopeBytes(state, holdout, candidate);
        long currentBytes = MeasureEnvelopeBytes(state, holdout, current?.Dictionary);
        if (candidateBytes > currentBytes * d.AdoptionThreshold)
        {
            Log.NotAdopted(_logger, state.Name, candidateBytes, currentBytes, d.AdoptionThreshold);
            // Nothing better exists for these documents: judge future drift against what they give today.
            if (current is not null) state.Rebaseline(Math.Min(current.BaselineRatio, (double)raw / currentBytes));
            return TrainingOutcome.NotBetter;
        }

        var record = new DictionaryRecord
        {
            Id = candidate.Id,
            Namespace = state.Name,
            Version = (current?.Record.Version ?? 0) + 1,
            Content = candidate.Content,
            Created = _time.GetUtcNow(),
            Codec = CompressionCodec.Zstd,
            Level = state.Options.Compressor.EffectiveLevel,
            SampleCount = training.Length,
            Ratio = (double)raw / candidateBytes,
        };
        return await PublishAndAdoptAsync(state, record, candidate, record.Ratio, cancellationToken, holdout).ConfigureAwait(false);
    }

    private async Task<TrainingOutcome> PublishAndAdoptAsync(NamespaceState state, DictionaryRecord record, ZstdDictionary dictionary,
        double ratio, CancellationToken cancellationToken, byte[][]? holdout = null)
    {
        DictionaryRecord winner;
        try
        {
            for (int conflicts = 0; ; conflicts++)
            {
                try
                {
                    winner = await _store.PublishAsync(record, cancellationToken).ConfigureAwait(false);
                    break;
                }
                catch (DictionaryIdConflictException) when (conflicts < MaxIdConflicts)
                {
                    // Ids are short random numbers (they are written in every envelope); on a clash draw another, wider one.
                    dictionary = ZstdDictionary.Create(NewDictionaryId(conflicts + 1), dictionary.Content.Span, _options.MaxDictionaryBytes);
                    record = record with { Id = dictionary.Id };
                }
            }
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            Log.PublishFailed(_logger, ex, state.Name, record.Id);
            state.PendingPublication = (record, dictionary);
            return TrainingOutcome.PublishFailed;
        }

        if (winner.Id == record.Id)
        {
            AddToCache(dictionary);
            Adopt(state, new AdoptedDictionary(dictionary, winner, ratio), "this client");
            return TrainingOutcome.Adopted;
        }

        // Another client published this version first: the loser adopts the winner's dictionary.
        ZstdDictionary theirs = GetDictionary(winner, state.Name);
        double baseline = holdout is null ? winner.Ratio : (double)holdout.Sum(s => (long)s.Length) / MeasureEnvelopeBytes(state, holdout, theirs);
        Adopt(state, new AdoptedDictionary(theirs, winner, baseline), "another client");
        return TrainingOutcome.AdoptedFromOtherClient;
    }

    private void Adopt(NamespaceState state, AdoptedDictionary adopted, string source)
    {
        if (!state.TryAdopt(adopted)) return;
        _metrics.Adopted(state.Name, adopted.Record.Version);
        Log.Adopted(_logger, state.Name, adopted.Record.Id, adopted.Record.Version, adopted.BaselineRatio, source);
    }

    private static long MeasureEnvelopeBytes(NamespaceState state, byte[][] documents, ZstdDictionary? dictionary)
    {
        int max = documents.Max(d => d.Length);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(DocumentCompressor.GetMaxEnvelopeLength(max));
        try
        {
            long total = 0;
            foreach (byte[] document in documents)
            {
                state.Compressor.TryCompress(document, buffer, out int written, dictionary);
                total += written;
            }
            return total;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer, clearArray: true);
        }
    }

    private ZstdDictionary GetDictionary(uint id, string @namespace)
    {
        if (TryGetCached(id, out var cached)) return cached;
        if (_store is not ISynchronousDictionaryStore syncStore)
            throw new DictionaryNotFoundException(id, @namespace, "it is not loaded and the store has no synchronous API; call EnsureDictionaryAsync or DecompressAsync first");
        lock (_syncFetchGate)
        {
            if (TryGetCached(id, out cached)) return cached;
            Exception? last = null;
            for (int attempt = 1; attempt <= _options.FetchAttempts; attempt++)
            {
                DictionaryRecord? record;
                try
                {
                    record = syncStore.Get(id);
                }
                catch (Exception ex) when (ex is not OutOfMemoryException)
                {
                    last = ex;
                    Log.FetchFailed(_logger, ex, id, attempt, _options.FetchAttempts);
                    continue;
                }
                if (record is null) throw new DictionaryNotFoundException(id, @namespace, "the store has no dictionary with this id");
                return AddToCache(CreateValidated(id, record, @namespace));
            }
            throw new DictionaryNotFoundException(id, @namespace, $"the store could not be read after {_options.FetchAttempts} attempts", last);
        }
    }

    private Task<ZstdDictionary> GetDictionaryAsync(uint id, string @namespace, CancellationToken cancellationToken)
    {
        if (TryGetCached(id, out var cached)) return Task.FromResult(cached);
        var lazy = _inflight.GetOrAdd(id, key => new Lazy<Task<ZstdDictionary>>(() => FetchAsync(key, @namespace)));
        return lazy.Value.WaitAsync(cancellationToken);
    }

    private ZstdDictionary GetDictionary(DictionaryRecord record, string @namespace) =>
        TryGetCached(record.Id, out var cached) ? cached : AddToCache(CreateValidated(record.Id, record, @namespace));

    private async Task<ZstdDictionary> FetchAsync(uint id, string @namespace)
    {
        try
        {
            Exception? last = null;
            for (int attempt = 1; attempt <= _options.FetchAttempts; attempt++)
            {
                DictionaryRecord? record;
                try
                {
                    record = await _store.GetAsync(id, _stopping.Token).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is not OperationCanceledException)
                {
                    last = ex;
                    Log.FetchFailed(_logger, ex, id, attempt, _options.FetchAttempts);
                    if (attempt < _options.FetchAttempts) await Task.Delay(TimeSpan.FromMilliseconds(50 * attempt), _time, _stopping.Token).ConfigureAwait(false);
                    continue;
                }
                if (record is null) throw new DictionaryNotFoundException(id, @namespace, "the store has no dictionary with this id");
                return AddToCache(CreateValidated(id, record, @namespace));
            }
            throw new DictionaryNotFoundException(id, @namespace, $"the store could not be read after {_options.FetchAttempts} attempts", last);
        }
        finally
        {
            _inflight.TryRemove(id, out _); // failures are not cached: the next read tries again
        }
    }

    private ZstdDictionary CreateValidated(uint id, DictionaryRecord record, string @namespace)
    {
        if (record.Id != id)
            throw new InvalidDataException($"The store returned dictionary {record.Id} when asked for {id} (namespace '{@namespace}').");
        if (record.Content.Length > _options.MaxDictionaryBytes)
            throw new InvalidDataException($"Dictionary {id} has {record.Content.Length} bytes, over MaxDictionaryBytes ({_options.MaxDictionaryBytes}).");
        return ZstdDictionary.Create(id, record.Content.Span, _options.MaxDictionaryBytes);
    }

    private bool TryGetCached(uint id, out ZstdDictionary dictionary)
    {
        if (_cache.TryGetValue(id, out var entry))
        {
            entry.LastUse = Interlocked.Increment(ref _useClock);
            dictionary = entry.Dictionary;
            return true;
        }
        dictionary = null!;
        return false;
    }

    private ZstdDictionary AddToCache(ZstdDictionary dictionary)
    {
        var entry = _cache.GetOrAdd(dictionary.Id, _ => new CachedDictionary(dictionary) { LastUse = Interlocked.Increment(ref _useClock) });
        if (_cache.Count > _options.MaxCachedDictionaries) Evict();
        return entry.Dictionary;
    }

    private void Evict()
    {
        var pinned = new HashSet<uint>(_namespaces.Values.Select(s => s.Current?.Dictionary.Id ?? 0));
        foreach (var (id, _) in _cache.Where(e => !pinned.Contains(e.Key)).OrderBy(e => e.Value.LastUse).Take(_cache.Count - _options.MaxCachedDictionaries).ToList())
        {
            _cache.TryRemove(id, out _);
        }
    }

    private async Task PollLoopAsync()
    {
        try
        {
            while (!_stopping.IsCancellationRequested)
            {
                await Task.Delay(_options.PollInterval, _time, _stopping.Token).ConfigureAwait(false);
                await RefreshAsync(_stopping.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private void RunInBackground(Func<Task> work)
    {
        Task task = Task.Run(async () =>
        {
            try
            {
                await work().ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                // Logged where it happened; a background failure never reaches the write path.
            }
        });
        _background.TryAdd(task, 0);
        task.ContinueWith(t => _background.TryRemove(t, out _), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private const int MaxIdConflicts = 8;

    /// <summary>
    /// A random dictionary id. Ids are written in every envelope, so they are kept short: 14 bits (a 2-byte varint)
    /// at first, 7 more bits after each conflict the store reports.
    /// </summary>
    internal static uint NewDictionaryId(int conflicts = 0)
    {
        int bits = Math.Min(14 + 7 * conflicts, 30);
        return (uint)RandomNumberGenerator.GetInt32(1, 1 << bits);
    }

    private static string OutcomeName(TrainingOutcome outcome) => outcome switch
    {
        TrainingOutcome.Adopted => "adopted",
        TrainingOutcome.AdoptedFromOtherClient => "adopted_from_other_client",
        TrainingOutcome.NotBetter => "not_better",
        TrainingOutcome.NoDictionary => "no_dictionary",
        TrainingOutcome.TooFewSamples => "too_few_samples",
        TrainingOutcome.PublishFailed => "publish_failed",
        TrainingOutcome.Disabled => "disabled",
        _ => "already_running",
    };

    private sealed class CachedDictionary(ZstdDictionary dictionary)
    {
        public ZstdDictionary Dictionary { get; } = dictionary;

        public long LastUse;
    }
}
