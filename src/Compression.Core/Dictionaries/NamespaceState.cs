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
    private long _rawSinceAdoption;
    private long _outSinceAdoption;
    private long _docsSinceAdoption;
    private long _docsSeen;
    private int _training;
    private long _lastUse;
    private volatile bool _evicted;
    private volatile bool _loaded;

    public NamespaceState(string name, NamespaceOptions settings, Random random)
    {
        Name = name;
        Settings = settings;
        Compressor = new DocumentCompressor(settings.ToCompressorOptions()) { Pack = settings.Dictionary.PackDocuments };
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

    public long DocsSinceAdoption => Interlocked.Read(ref _docsSinceAdoption);

    public double ObservedRatio
    {
        get
        {
            long output = Interlocked.Read(ref _outSinceAdoption);
            return output == 0 ? 0 : (double)Interlocked.Read(ref _rawSinceAdoption) / output;
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
        Interlocked.Increment(ref _docsSinceAdoption);
        Interlocked.Add(ref _rawSinceAdoption, rawBytes);
        Interlocked.Add(ref _outSinceAdoption, envelopeBytes);
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

    public bool TryBeginTraining() => Interlocked.CompareExchange(ref _training, 1, 0) == 0;

    public void EndTraining() => Volatile.Write(ref _training, 0);

    public bool IsTraining => Volatile.Read(ref _training) != 0;

    private void ResetObservations()
    {
        Interlocked.Exchange(ref _docsSinceAdoption, 0);
        Interlocked.Exchange(ref _rawSinceAdoption, 0);
        Interlocked.Exchange(ref _outSinceAdoption, 0);
    }
}
