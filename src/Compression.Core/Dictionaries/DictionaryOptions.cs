namespace Compression.Dictionaries;

/// <summary>How a namespace samples documents and trains, adopts and retrains zstd dictionaries.</summary>
public sealed class DictionaryOptions
{
    /// <summary>Whether dictionaries are trained and used. Without, documents are compressed alone.</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// Whether training also learns the documents' shapes (their key lists, in a shape table published with the
    /// dictionary) and packs documents with them: keys become small ids and values are packed before zstd compresses
    /// them with the dictionary (docs/structure.md). The table is adopted only when it measures at least 5% smaller than
    /// the plain dictionary on held-out documents; a document the packing cannot reproduce byte for byte is written as
    /// plain zstd. Needs format v2 or v3 and the checksum (ignored otherwise), and readers of a version that knows codec 7.
    /// </summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool PackDocuments { get; set; } = true;

    /// <summary>
    /// Whether training with <see cref="PackDocuments"/> also learns a <em>field model</em> (docs/field-model.md): per
    /// field, a table of the values documents repeat and a range for its numbers, with their frequencies, published in
    /// the dictionary record with the shape table. Values the model holds are then entropy-coded with those frequencies
    /// (codec 8) instead of being left to zstd. Fields are chosen by measurement on samples held out of the model's own
    /// training, and only those that make the documents smaller are kept; when none does, the table is published alone
    /// (codec 7). Readers need a version that knows codec 8: turn this off while older readers remain.
    /// </summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool ModelFields { get; set; } = true;

    /// <summary>The largest dictionary trained, in bytes. A smaller one is trained while there are few samples (see <see cref="SampleBytesPerDictionaryByte"/>).</summary>
    /// <value>Defaults to 64 KiB (measured: see docs/dictionary-defaults.md and benchmarks/results/lab-notes.md, "Issue 18"); the sample caps below keep it small while samples are few.</value>
    public int DictionarySize { get; set; } = 64 * 1024;

    /// <summary>Sample bytes needed per dictionary byte: the trained size is at most the sample bytes divided by this.</summary>
    /// <value>Defaults to 4.</value>
    public int SampleBytesPerDictionaryByte { get; set; } = 4;

    /// <summary>
    /// Dictionary bytes allowed per training document: the trained size is at most this times the number of samples.
    /// Without it, a few large documents (8 KB each) get a dictionary far too large for them and compress worse.
    /// </summary>
    /// <value>Defaults to 256 (measured: see docs/dictionary-defaults.md).</value>
    public int MaxDictionaryBytesPerSample { get; set; } = 256;

    /// <summary>
    /// The most documents the sample reservoir holds. <see cref="MaxSampleBytes"/> binds first for documents over 256 bytes;
    /// this count lets tiny documents (88-byte flights: 1.4 MB) gather enough samples for a full-size dictionary.
    /// </summary>
    /// <value>Defaults to 16,000.</value>
    public int MaxSampleCount { get; set; } = 16_000;

    /// <summary>The most bytes the sample reservoir holds; it bounds the memory and time of a training run.</summary>
    /// <value>Defaults to 4 MiB.</value>
    public int MaxSampleBytes { get; set; } = 4 * 1024 * 1024;

    /// <summary>Documents larger than this are not sampled (they compress well alone).</summary>
    /// <value>Defaults to 32 KiB.</value>
    public int MaxSampleDocumentSize { get; set; } = 32 * 1024;

    /// <summary>Samples needed before the first training.</summary>
    /// <value>Defaults to 16 (online replay: see docs/dictionary-engine.md, "The bootstrap schedule").</value>
    public int MinSampleCount { get; set; } = 16;

    /// <summary>Sample bytes needed before the first training.</summary>
    /// <value>Defaults to 2 KiB (online replay: see docs/dictionary-engine.md, "The bootstrap schedule").</value>
    public int MinSampleBytes { get; set; } = 2 * 1024;

    /// <summary>The share of samples held out from training to measure a candidate.</summary>
    /// <value>Defaults to 0.2.</value>
    public double HoldoutFraction { get; set; } = 0.2;

    /// <summary>A candidate is adopted only when its held-out output is at most this share of the current output (0.95: 5% smaller).</summary>
    /// <value>Defaults to 0.95 (measured: see docs/dictionary-engine.md).</value>
    public double AdoptionThreshold { get; set; } = 0.95;

    /// <summary>Retrain when the ratio observed on writes falls below this share of the ratio recorded at adoption.</summary>
    /// <value>Defaults to 0.8.</value>
    public double DriftThreshold { get; set; } = 0.8;

    /// <summary>Writes observed since adoption before drift is judged.</summary>
    /// <value>Defaults to 200.</value>
    public int DriftMinDocuments { get; set; } = 200;

    /// <summary>Retrain when the documents seen have grown by this factor since the last training (while that training had fewer samples than the reservoir holds).</summary>
    /// <value>Defaults to 1.5 (online replay: see docs/dictionary-engine.md, "The bootstrap schedule").</value>
    public double GrowthFactor { get; set; } = 1.5;

    /// <summary>The least time between two training runs of one namespace (the rate limit).</summary>
    /// <value>Defaults to 30 seconds.</value>
    public TimeSpan MinTrainingInterval { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Every problem with these options, each naming its key under <paramref name="prefix"/>; empty when valid.</summary>
    internal List<string> Validate(string prefix)
    {
        var errors = new List<string>();
        string Key(string name) => prefix.Length == 0 ? name : $"{prefix}:{name}";
        void Range(string name, double value, double min, double max)
        {
            if (double.IsNaN(value) || value < min || value > max) errors.Add($"{Key(name)}: {value} is out of range; allowed: {min} to {max}.");
        }
        Range(nameof(DictionarySize), DictionarySize, ZstdDictionary.MinimumSize, ZstdDictionary.DefaultMaximumSize);
        Range(nameof(SampleBytesPerDictionaryByte), SampleBytesPerDictionaryByte, 1, 1000);
        Range(nameof(MaxDictionaryBytesPerSample), MaxDictionaryBytesPerSample, 16, ZstdDictionary.DefaultMaximumSize);
        Range(nameof(MaxSampleCount), MaxSampleCount, 10, 1_000_000);
        Range(nameof(MaxSampleBytes), MaxSampleBytes, 1024, 1024 * 1024 * 1024);
        Range(nameof(MaxSampleDocumentSize), MaxSampleDocumentSize, 1, int.MaxValue);
        Range(nameof(MinSampleCount), MinSampleCount, 10, MaxSampleCount);
        Range(nameof(MinSampleBytes), MinSampleBytes, ZstdDictionaryTrainer.MinimumSampleBytes, MaxSampleBytes);
        Range(nameof(HoldoutFraction), HoldoutFraction, 0.05, 0.5);
        Range(nameof(AdoptionThreshold), AdoptionThreshold, 0.1, 1.0);
        Range(nameof(DriftThreshold), DriftThreshold, 0.1, 1.0);
        Range(nameof(DriftMinDocuments), DriftMinDocuments, 1, int.MaxValue);
        Range(nameof(GrowthFactor), GrowthFactor, 1.1, 1000);
        if (MinTrainingInterval < TimeSpan.Zero) errors.Add($"{Key(nameof(MinTrainingInterval))}: {MinTrainingInterval} is negative; allowed: 00:00:00 or more.");
        return errors;
    }

    /// <summary>
    /// The size to train from <paramref name="sampleCount"/> samples of <paramref name="sampleBytes"/> bytes:
    /// min(<see cref="DictionarySize"/>, sample bytes / <see cref="SampleBytesPerDictionaryByte"/>,
    /// <see cref="MaxDictionaryBytesPerSample"/> x samples). Below <see cref="ZstdDictionary.MinimumSize"/> nothing is trained.
    /// </summary>
    internal int GetTrainingSize(int sampleCount, long sampleBytes) =>
        (int)Math.Min(Math.Min(DictionarySize, sampleBytes / SampleBytesPerDictionaryByte), (long)MaxDictionaryBytesPerSample * sampleCount);

    internal DictionaryOptions Clone() => (DictionaryOptions)MemberwiseClone();
}

