using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Compression.Internal;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Compression.Dictionaries;

/// <summary>
/// Compresses documents per namespace with shared, versioned zstd dictionaries. Each namespace
/// (<see cref="GetNamespace"/>) samples what it writes; dictionaries are trained in the background (never on the write
/// path), adopted only when clearly better on held-out samples, published insert-only to a <see cref="DictionaryStore"/>,
/// and picked up by every other client. One per application and store; thread-safe.
/// </summary>
/// <remarks>
/// Nothing runs in the background until it is needed: a namespace loads its current dictionary when first used and trains
/// when its samples call for it. <see cref="StartAsync"/> (called by the hosted service when the engine comes from
/// dependency injection) also loads the configured namespaces and polls the store for versions other clients publish.
/// <see cref="DisposeAsync"/> stops everything.
/// </remarks>
public sealed class CompressionEngine : IAsyncDisposable
{
    private readonly CompressionEngineOptions _options;
    private readonly ILogger _logger;
    private readonly TimeProvider _time;
    private readonly CompressionMetrics _metrics;
    private readonly BackgroundWork _background = new();
    private readonly ConcurrentDictionary<string, CompressionNamespace> _namespaces = new(StringComparer.Ordinal);
    private readonly object _lifecycleGate = new();
    private ITimer? _pollTimer;
    private int _polling;
    private int _disposed;
    // Completed once the first DisposeAsync has stopped everything: a concurrent second call waits for it instead of
    // returning at once, while a publication the first is waiting for may still be on its way (found by review).
    private readonly TaskCompletionSource _disposal = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _useClock = 1;
    private long _sequence;

    /// <summary>Creates an engine over <paramref name="store"/>. The options are validated and copied.</summary>
    /// <exception cref="ArgumentException">The options are invalid; the message lists every problem with its configuration key.</exception>
    public CompressionEngine(DictionaryStore store, CompressionEngineOptions? options = null, ILoggerFactory? loggerFactory = null,
        IMeterFactory? meterFactory = null, TimeProvider? timeProvider = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        options ??= new CompressionEngineOptions();
        options.ThrowIfInvalid();
        _options = options.Clone();
        _logger = (ILogger?)loggerFactory?.CreateLogger<CompressionEngine>() ?? NullLogger.Instance;
        _time = timeProvider ?? TimeProvider.System;
        _metrics = new CompressionMetrics(meterFactory);
        Catalog = new DictionaryCatalog(store, _options, _time, _logger, PinnedDictionaries);
        Coordinator = new TrainingCoordinator(Catalog, _background, _time, _logger, _metrics);
    }

    /// <summary>The store the engine reads and publishes dictionaries through.</summary>
    public DictionaryStore Store => Catalog.Store;

    internal DictionaryCatalog Catalog { get; }

    internal TrainingCoordinator Coordinator { get; }

    /// <summary>The coarse clock namespaces are stamped with when used: it moves one tick at every poll.</summary>
    internal long UseClock => Volatile.Read(ref _useClock);

    /// <summary>Test and replay hook: run training on the writing thread instead of in the background.</summary>
    internal bool InlineTraining { get => Coordinator.InlineTraining; set => Coordinator.InlineTraining = value; }

    /// <summary>
    /// Replay hook: the random source for sampling and hold-out splits (seeded for repeatable replays). It is the training
    /// coordinator's too: before, only the reservoirs got it and the hold-out split drew from <see cref="Random.Shared"/>,
    /// so two replays with one seed could adopt different dictionaries (movies online 4.71 to 4.86 with seed 42).
    /// </summary>
    internal Random Random
    {
        get => Coordinator.Random;
        init => Coordinator.Random = value;
    }

    /// <summary>Test hook: called at the start of every training run, on the training thread.</summary>
    internal Action<string>? TrainingStarting { get => Coordinator.TrainingStarting; set => Coordinator.TrainingStarting = value; }

    internal int NamespaceCount => _namespaces.Count;

    internal int CachedDictionaryCount => Catalog.Count;

    /// <summary>
    /// The namespace called <paramref name="name"/> (<c>database.collection</c> or <c>bucket.scope.collection</c>), with the
    /// settings configured for it or the defaults. The first call starts loading its current dictionary in the background.
    /// </summary>
    /// <exception cref="ArgumentException">The name is empty, too long or holds control characters.</exception>
    public CompressionNamespace GetNamespace(string name) => GetOrCreate(name, loadInBackground: true);

    private CompressionNamespace GetOrCreate(string name, bool loadInBackground)
    {
        if (_namespaces.TryGetValue(name ?? throw new ArgumentNullException(nameof(name)), out var handle)) return handle;
        if (!NamespaceName.IsValid(name, out string? problem)) throw new ArgumentException($"'{name}' is not a namespace name: {problem}", nameof(name));
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);

        NamespaceOptions settings = _options.Namespaces.TryGetValue(name, out var specific) ? specific : _options.Defaults;
        var state = new NamespaceState(name, settings, Random) { Sequence = Interlocked.Increment(ref _sequence) };
        var created = new CompressionNamespace(this, state);
        handle = _namespaces.GetOrAdd(name, created);
        if (!ReferenceEquals(handle, created)) return handle;

        state.Touch(UseClock);
        if (_namespaces.Count > _options.MaxNamespaces) EvictLeastRecentlyUsed(keep: handle);
        if (loadInBackground) _background.Run(async token =>
        {
            await Coordinator.TryRefreshAsync(state, token).ConfigureAwait(false);
            // Writes that came before the load finished could not start training: check once more now.
            Coordinator.OnWrite(state);
        });
        return handle;
    }

    /// <summary>
    /// Loads the current dictionary of every configured namespace (a store failure is logged, not thrown: writes go on
    /// without) and starts polling the store every <see cref="CompressionEngineOptions.PollInterval"/>.
    /// </summary>
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        foreach (string name in _options.Namespaces.Keys)
        {
            // Loaded here, awaited: not also in the background as a first use would.
            NamespaceState state = GetOrCreate(name, loadInBackground: false).State;
            await Coordinator.TryRefreshAsync(state, cancellationToken).ConfigureAwait(false);
            Coordinator.OnWrite(state);
        }
        lock (_lifecycleGate)
        {
            if (_pollTimer is null && !_background.IsStopping)
                _pollTimer = _time.CreateTimer(static s => ((CompressionEngine)s!).OnPollTimer(), this, _options.PollInterval, _options.PollInterval);
        }
    }

    /// <summary>Asks the store now for versions other clients published, for every namespace in use. Failures are logged.</summary>
    public async Task RefreshAsync(CancellationToken cancellationToken = default)
    {
        foreach (var handle in _namespaces.Values)
        {
            NamespaceState state = handle.State0; // a poll is not a use: it must not keep idle namespaces alive
            if (!state.Evicted) await Coordinator.TryRefreshAsync(state, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Stops polling and background training, and waits for what is running to end.</summary>
    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        ITimer? timer;
        lock (_lifecycleGate)
        {
            timer = _pollTimer;
            _pollTimer = null;
        }
        if (timer is not null) await timer.DisposeAsync().ConfigureAwait(false);
        try
        {
            await _background.StopAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            // No timer outlives the engine, also when the wait for the background work is cancelled: the stop was
            // requested (IsStopping), so no write makes a new one.
            foreach (var handle in _namespaces.Values) handle.State0.EndDeferral();
        }
    }

    /// <inheritdoc/>
    /// <remarks>Every call, also one made while another is still stopping the engine, returns once everything has stopped.</remarks>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            await _disposal.Task.ConfigureAwait(false);
            return;
        }
        try
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
            Catalog.Detach();
            _background.Dispose();
            _metrics.Dispose();
        }
        finally
        {
            _disposal.TrySetResult();
        }
    }

    /// <summary>Waits until no background load, poll or training is running (tests, replays).</summary>
    internal Task WhenIdleAsync() => _background.WhenIdleAsync();

    internal NamespaceState ResolveState(string name) => GetNamespace(name).State;

    internal void AfterWrite(NamespaceState state, ReadOnlySpan<byte> document, byte header, int written)
    {
        _metrics.Compressed(state.Name, (CompressionCodec)(header & DocumentEnvelope.CodecMask), document.Length, written);
        if (!state.UsesDictionary) return;
        state.RecordWrite(document.Length, written);
        state.Reservoir.Offer(document);
        Coordinator.OnWrite(state);
    }

    /// <summary>Counts a failed decode by reason; returns false so that it can sit in an exception filter.</summary>
    internal bool CountDecodeFailure(NamespaceState state, Exception ex)
    {
        if (ex is InvalidDataException) _metrics.DecodeFailed(state.Name, "corrupt");
        else if (ex is DictionaryNotFoundException) _metrics.DecodeFailed(state.Name, "dictionary_not_found");
        return false;
    }

    private void OnPollTimer()
    {
        Interlocked.Increment(ref _useClock);
        EvictIdle();
        if (Interlocked.Exchange(ref _polling, 1) != 0) return; // the previous poll is still running
        _background.Run(async token =>
        {
            try
            {
                await RefreshAsync(token).ConfigureAwait(false);
            }
            finally
            {
                Volatile.Write(ref _polling, 0);
            }
        });
    }

    /// <summary>Drops namespaces not used for <see cref="CompressionEngineOptions.NamespaceIdleTimeout"/> (in poll ticks).</summary>
    private void EvictIdle()
    {
        long ticks = Math.Max(1, (long)Math.Ceiling(_options.NamespaceIdleTimeout / _options.PollInterval));
        long threshold = UseClock - ticks;
        foreach (var (name, handle) in _namespaces)
        {
            NamespaceState state = handle.State0;
            if (state.LastUse < threshold && !state.IsTraining) Evict(name, handle);
        }
    }

    private void EvictLeastRecentlyUsed(CompressionNamespace keep)
    {
        int excess = _namespaces.Count - _options.MaxNamespaces;
        if (excess <= 0) return;
        excess += _options.MaxNamespaces / 8; // a batch, so that a stream of new namespaces does not sort the registry at every one
        foreach (var (name, handle) in _namespaces.Where(e => !ReferenceEquals(e.Value, keep) && !e.Value.State0.IsTraining)
                     .OrderBy(e => e.Value.State0.LastUse).ThenBy(e => e.Value.State0.Sequence).Take(excess).ToList())
        {
            Evict(name, handle);
        }
    }

    private void Evict(string name, CompressionNamespace handle)
    {
        if (_namespaces.TryRemove(new KeyValuePair<string, CompressionNamespace>(name, handle)))
        {
            handle.State0.MarkEvicted();
            handle.State0.EndDeferral();
        }
    }

    private HashSet<uint> PinnedDictionaries()
    {
        var pinned = new HashSet<uint>();
        foreach (var handle in _namespaces.Values)
        {
            if (handle.State0.Current is { } current) pinned.Add(current.Dictionary.Id);
        }
        return pinned;
    }
}
