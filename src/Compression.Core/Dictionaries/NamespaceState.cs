namespace Compression.Dictionaries;

/// <summary>The dictionary in use by a namespace, with the ratio it was adopted at (the baseline for drift).</summary>
internal sealed record AdoptedDictionary(ZstdDictionary Dictionary, DictionaryRecord Record, double BaselineRatio);

/// <summary>Everything a <see cref="CompressionEngine"/> keeps per namespace.</summary>
internal sealed class NamespaceState
{
    private AdoptedDictionary? _current;
    private long _rawSinceAdoption;
    private long _outSinceAdoption;
    private long _docsSinceAdoption;
    private long _docsSeen;
    private int _training;

    public NamespaceState(string name, NamespaceOptions options, Random random)
    {
        Name = name;
        Options = options;
        Compressor = new DocumentCompressor(options.Compressor);
        UsesDictionary = options.Dictionary.Enabled && options.Compressor.Codec == CompressionCodec.Zstd;
        var d = options.Dictionary;
        Reservoir = new SampleReservoir(d.MaxSampleCount, d.MaxSampleBytes, d.MaxSampleDocumentSize, random);
    }

    public string Name { get; }

    public NamespaceOptions Options { get; }

    public DocumentCompressor Compressor { get; }

    public bool UsesDictionary { get; }

    public SampleReservoir Reservoir { get; }

    public AdoptedDictionary? Current => Volatile.Read(ref _current);

    /// <summary>Set once the first look-up of the store's current version has completed (successfully or not).</summary>
    public volatile bool Loaded;

    /// <summary>When the last training run started (TimeProvider timestamp), 0 before the first.</summary>
    public long LastTrainingTimestamp;

    /// <summary>Documents seen when the last training run started, and how many samples it had.</summary>
    public long DocsAtLastTraining;
    public int SamplesAtLastTraining;

    /// <summary>A trained, adopted-worthy candidate whose publication failed; retried before the next training.</summary>
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

    public void RecordWrite(int rawBytes, int envelopeBytes)
    {
        Interlocked.Increment(ref _docsSeen);
        Interlocked.Increment(ref _docsSinceAdoption);
        Interlocked.Add(ref _rawSinceAdoption, rawBytes);
        Interlocked.Add(ref _outSinceAdoption, envelopeBytes);
    }

    /// <summary>Adopts <paramref name="adopted"/> when it is newer than the current one. Returns whether it did.</summary>
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
