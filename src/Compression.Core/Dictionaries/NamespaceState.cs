namespace Compression.Dictionaries;

/// <summary>The dictionary a namespace compresses with, with the ratio it was adopted at (the baseline for drift). Immutable.</summary>
internal sealed record AdoptedDictionary(ZstdDictionary Dictionary, DictionaryRecord Record, double BaselineRatio);

/// <summary>
/// What the engine keeps per namespace: its settings and compressor (fixed), the adopted dictionary (one immutable
/// <see cref="AdoptedDictionary"/>, swapped atomically), the sample reservoir and the counters the training triggers read.
/// </summary>
internal sealed class NamespaceState
{
    private AdoptedDictionary? _current;
    private long _docsSeen;
    private long _rawBytes;
    private long _envelopeBytes;
    private Observed _atAdoption = new(0, 0, 0);
    private int _training;
    private long _lastUse;
    private volatile bool _evicted;
    private volatile bool _loaded;
    private ITimer? _deferral;

    public NamespaceState(string name, NamespaceOptions settings, Random random)
    {
        Name = name;
        Settings = settings;
        Compressor = new DocumentCompressor(settings) { Pack = settings.Dictionary.PackDocuments, CodeFields = settings.Dictionary.ModelFields };
        UsesDictionary = settings.UsesDictionary;
        var d = settings.Dictionary;
        Reservoir = new SampleReservoir(d.MaxSampleCount, d.MaxSampleBytes, d.MaxSampleDocumentSize, random);
    }

    public string Name { get; }

    /// <summary>The engine's own copy of the namespace's settings; never the caller's object.</summary>
    public NamespaceOptions Settings { get; }

    public DocumentCompressor Compressor { get; }

    public bool UsesDictionary { get; }

    public SampleReservoir Reservoir { get; }

    /// <summary>The adopted dictionary: one volatile read gives a consistent dictionary, record and baseline.</summary>
    public AdoptedDictionary? Current => Volatile.Read(ref _current);

    /// <summary>Set once the first look-up of the store's current version has completed (successfully or not).</summary>
    public bool Loaded { get => _loaded; set => _loaded = value; }

    /// <summary>Set when the engine dropped this state; handles that still hold it resolve the namespace again.</summary>
    public bool Evicted => _evicted;

    public long LastUse => Volatile.Read(ref _lastUse);

    /// <summary>The order namespaces were created in: among namespaces last used in the same tick, the oldest goes first.</summary>
    public long Sequence { get; init; }

    /// <summary>When the last training run started (TimeProvider timestamp), 0 before the first.</summary>
    public long LastTrainingTimestamp;

    /// <summary>Documents seen when the last training run started, and how many samples it had.</summary>
    public long DocsAtLastTraining;
    public int SamplesAtLastTraining;

    /// <summary>The reservoir's sequence number when the last training took its samples: samples offered after it are unseen by that training.</summary>
    public long SampleSequenceAtLastTraining;

    /// <summary>A trained, adoption-worthy candidate whose publication failed; retried before the next training.</summary>
    public (DictionaryRecord Record, ZstdDictionary Dictionary)? PendingPublication;

    public long DocsSeen => Interlocked.Read(ref _docsSeen);

    public long DocsSinceAdoption => DocsSeen - Volatile.Read(ref _atAdoption).Docs;

    /// <summary>Raw bytes over envelope bytes of the writes since the current dictionary was adopted (0 before any).</summary>
    public double ObservedRatio
    {
        get
        {
            Observed start = Volatile.Read(ref _atAdoption);
            long output = Interlocked.Read(ref _envelopeBytes) - start.EnvelopeBytes;
            return output <= 0 ? 0 : (double)(Interlocked.Read(ref _rawBytes) - start.RawBytes) / output;
        }
    }

    /// <summary>Marks the state used at <paramref name="clock"/> (the engine's coarse use clock); a read, not a write, when unchanged.</summary>
    public void Touch(long clock)
    {
        if (Volatile.Read(ref _lastUse) != clock) Volatile.Write(ref _lastUse, clock);
    }

    public void MarkEvicted() => _evicted = true;

    public void RecordWrite(int rawBytes, int envelopeBytes)
    {
        Interlocked.Increment(ref _docsSeen);
        Interlocked.Add(ref _rawBytes, rawBytes);
        Interlocked.Add(ref _envelopeBytes, envelopeBytes);
    }

    /// <summary>Adopts <paramref name="adopted"/> when it is a newer version than the current one. Returns whether it did.</summary>
    public bool TryAdopt(AdoptedDictionary adopted)
    {
        while (true)
        {
            var current = Volatile.Read(ref _current);
            if (current is not null && current.Record.Version >= adopted.Record.Version) return false;
            if (Interlocked.CompareExchange(ref _current, adopted, current) == current)
            {
                ResetObservations();
                return true;
            }
        }
    }

    /// <summary>Replaces the drift baseline of the current dictionary (after a retraining that found nothing better).</summary>
    public void Rebaseline(double ratio)
    {
        var current = Volatile.Read(ref _current);
        if (current is not null) Interlocked.CompareExchange(ref _current, current with { BaselineRatio = ratio }, current);
        ResetObservations();
    }

    /// <summary>
    /// Set while a training run that is due waits out <see cref="DictionaryOptions.MinTrainingInterval"/>: writes then
    /// skip the trigger check (and its clock read) until the timer set by <see cref="DeferTraining"/> fires.
    /// </summary>
    public bool TrainingDeferred => Volatile.Read(ref _deferral) is not null;

    /// <summary>Makes <see cref="TrainingDeferred"/> true for <paramref name="wait"/> on <paramref name="time"/>'s clock (once: a deferral already running stays).</summary>
    public void DeferTraining(TimeProvider time, TimeSpan wait)
    {
        if (Volatile.Read(ref _deferral) is not null) return;
        // The timer does not carry the writer's execution context (its async locals) for the length of the wait.
        bool suppress = !ExecutionContext.IsFlowSuppressed();
        if (suppress) ExecutionContext.SuppressFlow();
        ITimer timer;
        try
        {
            timer = time.CreateTimer(static s => ((NamespaceState)s!).EndDeferral(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
        finally
        {
            if (suppress) ExecutionContext.RestoreFlow();
        }
        if (Interlocked.CompareExchange(ref _deferral, timer, null) is not null)
        {
            timer.Dispose();
            return;
        }
        timer.Change(wait, Timeout.InfiniteTimeSpan); // armed only once published, so its callback cannot run before
    }

    /// <summary>Ends a deferral: the next write checks the triggers and the clock again. Also on eviction and when the engine stops.</summary>
    public void EndDeferral() => Interlocked.Exchange(ref _deferral, null)?.Dispose();

    public bool TryBeginTraining() => Interlocked.CompareExchange(ref _training, 1, 0) == 0;

    public void EndTraining() => Volatile.Write(ref _training, 0);

    public bool IsTraining => Volatile.Read(ref _training) != 0;

    // The counters only grow; what was counted since an adoption is measured from a snapshot taken at it (one write
    // racing the snapshot counts on either side), so a write costs three interlocked additions, not four.
    private void ResetObservations() =>
        Volatile.Write(ref _atAdoption, new Observed(DocsSeen, Interlocked.Read(ref _rawBytes), Interlocked.Read(ref _envelopeBytes)));

    private sealed record Observed(long Docs, long RawBytes, long EnvelopeBytes);
}
