using Microsoft.Extensions.Logging;

namespace Compression.Internal;

internal static partial class Log
{
    [LoggerMessage(1, LogLevel.Information, "Training a dictionary for {Namespace} from {SampleCount} samples ({SampleBytes} bytes), dictionary size {DictionarySize}.")]
    public static partial void TrainingStarted(ILogger logger, string @namespace, int sampleCount, long sampleBytes, int dictionarySize);

    [LoggerMessage(2, LogLevel.Information, "Adopted dictionary {DictionaryId} (version {Version}) for {Namespace}: held-out ratio {Ratio:F2}; published by {Source}.")]
    public static partial void Adopted(ILogger logger, string @namespace, uint dictionaryId, int version, double ratio, string source);

    [LoggerMessage(3, LogLevel.Information, "Candidate dictionary for {Namespace} not adopted: held-out output {CandidateBytes} bytes against {CurrentBytes} with the current setting (threshold {Threshold}).")]
    public static partial void NotAdopted(ILogger logger, string @namespace, long candidateBytes, long currentBytes, double threshold);

    [LoggerMessage(4, LogLevel.Information, "Training for {Namespace} produced no dictionary (too few or too uniform samples); documents keep being compressed without.")]
    public static partial void TrainingProducedNothing(ILogger logger, string @namespace);

    [LoggerMessage(5, LogLevel.Warning, "Publishing dictionary {DictionaryId} for {Namespace} failed; writes continue with the current dictionary and publication is retried later.")]
    public static partial void PublishFailed(ILogger logger, Exception exception, string @namespace, uint dictionaryId);

    [LoggerMessage(6, LogLevel.Warning, "Reading the current dictionary of {Namespace} from the store failed; retried at the next poll.")]
    public static partial void PollFailed(ILogger logger, Exception exception, string @namespace);

    [LoggerMessage(7, LogLevel.Error, "Training a dictionary for {Namespace} failed.")]
    public static partial void TrainingFailed(ILogger logger, Exception exception, string @namespace);

    [LoggerMessage(8, LogLevel.Warning, "{Operation} failed (attempt {Attempt} of {Attempts}).")]
    public static partial void StoreCallFailed(ILogger logger, Exception exception, string operation, int attempt, int attempts);

    [LoggerMessage(9, LogLevel.Information, "Shapes for {Namespace}: {Shapes} key lists; held-out bytes packed {PackedBytes}, plain {PlainBytes} ({Packed} of {Documents} documents packed); {Decision}.")]
    public static partial void ShapesMeasured(ILogger logger, string @namespace, int shapes, long packedBytes, long plainBytes, int packed, int documents, string decision);

    [LoggerMessage(10, LogLevel.Warning, "A dictionary record was skipped (reported once): {Problem} The namespace uses the newest valid version.")]
    public static partial void InvalidRecordSkipped(ILogger logger, string problem);
}
