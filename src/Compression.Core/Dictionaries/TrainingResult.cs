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

/// <summary>The result of a training run asked for (<see cref="CompressionNamespace.TrainAsync(CancellationToken)"/>, <see cref="CompressionNamespace.TrainAsync(IEnumerable{ReadOnlyMemory{byte}}, CancellationToken)"/>).</summary>
/// <param name="Outcome">What happened.</param>
/// <param name="Dictionary">The dictionary in use afterwards, if any.</param>
public sealed record TrainingResult(TrainingOutcome Outcome, DictionaryRecord? Dictionary);
