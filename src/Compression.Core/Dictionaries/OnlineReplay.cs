using System.Buffers;

namespace Compression.Dictionaries;

/// <summary>A dictionary version adopted during an <see cref="OnlineReplay"/>.</summary>
/// <param name="Id">The dictionary id.</param>
/// <param name="Version">The version in the namespace.</param>
/// <param name="AfterDocuments">How many documents had been written when it was adopted.</param>
/// <param name="Ratio">The ratio it was measured at on held-out samples.</param>
/// <param name="Shapes">Whether it carries a shape table (documents written with it are packed where the packing applies).</param>
internal sealed record OnlineVersion(uint Id, int Version, long AfterDocuments, double Ratio, bool Shapes);

/// <summary>
/// The outcome of an <see cref="OnlineReplay"/>: <paramref name="Packed"/> documents were written packed (codec 7);
/// <paramref name="Trainings"/> training runs started (adopted or not, a bulk load's included), taking
/// <paramref name="TrainingTime"/> of wall-clock time in all (inline, so measured around the writes that ran them).
/// </summary>
internal sealed record OnlineReplayResult(long Documents, long RawBytes, long EnvelopeBytes, IReadOnlyList<OnlineVersion> Versions, long Packed = 0,
    int Trainings = 0, TimeSpan TrainingTime = default, int[]? EnvelopeSizes = null)
{
    public double Ratio => EnvelopeBytes == 0 ? 0 : (double)RawBytes / EnvelopeBytes;
}

/// <summary>
/// Feeds documents, in order, through a <see cref="CompressionEngine"/> as the writes of one live collection, with an
/// in-memory store, and reports the total ratio (bootstrap included) and the versions adopted. Training runs inline
/// (at the moment the engine would start it in the background) so that a replay is repeatable; the time-based rate
/// limit does not apply to a replay. Every envelope is decoded again and compared, so a replay also checks correctness.
/// </summary>
internal static class OnlineReplay
{
    public const string Namespace = "replay.collection";

    /// <summary>
    /// Replays <paramref name="documents"/>; <paramref name="written"/>, when given, hears the count of documents written
    /// after each one. With <paramref name="trainFirst"/>, the first that many documents train a dictionary before any is
    /// written, as an application does before a bulk load (<see cref="CompressionNamespace.TrainAsync(IEnumerable{ReadOnlyMemory{byte}}, CancellationToken)"/>).
    /// </summary>
    public static async Task<OnlineReplayResult> RunAsync(IReadOnlyList<byte[]> documents, NamespaceOptions options, int seed = 42, CancellationToken cancellationToken = default, Action<int>? written = null, int trainFirst = 0)
    {
        var engineOptions = new CompressionEngineOptions { Defaults = options.Clone(), PollInterval = TimeSpan.FromHours(1) };
        engineOptions.Defaults.Dictionary.MinTrainingInterval = TimeSpan.Zero;
        var store = new InMemoryDictionaryStore();
        int trainings = 0;
        await using var engine = new CompressionEngine(store, engineOptions) { InlineTraining = true, Random = new Random(seed), TrainingStarting = _ => trainings++ };
        long trainingTicks = 0;
        CompressionNamespace ns = engine.GetNamespace(Namespace);
        await ns.RefreshAsync(cancellationToken).ConfigureAwait(false);
        await engine.WhenIdleAsync().ConfigureAwait(false);

        var versions = new List<OnlineVersion>();
        var envelopes = new byte[documents.Count][];
        var writer = new ArrayBufferWriter<byte>();
        long raw = 0, output = 0, packed = 0;
        int currentVersion = 0;
        if (trainFirst > 0)
        {
            long trainStarted = System.Diagnostics.Stopwatch.GetTimestamp();
            await ns.TrainAsync(documents.Take(trainFirst).Select(d => (ReadOnlyMemory<byte>)d), cancellationToken).ConfigureAwait(false);
            if (ns.CurrentDictionary is { } first)
            {
                currentVersion = first.Version;
                versions.Add(new OnlineVersion(first.Id, first.Version, 0, first.Ratio, !first.Shapes.IsEmpty));
            }
            trainingTicks += System.Diagnostics.Stopwatch.GetTimestamp() - trainStarted;
        }
        for (int i = 0; i < documents.Count; i++)
        {
            cancellationToken.ThrowIfCancellationRequested();
            writer.ResetWrittenCount();
            int trainingsBefore = trainings;
            long writeStarted = System.Diagnostics.Stopwatch.GetTimestamp();
            ns.Compress(documents[i], writer);
            if (trainings != trainingsBefore) trainingTicks += System.Diagnostics.Stopwatch.GetTimestamp() - writeStarted;
            envelopes[i] = writer.WrittenSpan.ToArray();
            raw += documents[i].Length;
            output += writer.WrittenCount;
            if (Codecs.CodecRegistry.For((CompressionCodec)(writer.WrittenSpan[1] & DocumentEnvelope.CodecMask)).IsStructured) packed++;
            var current = ns.CurrentDictionary;
            if (current is not null && current.Version != currentVersion)
            {
                currentVersion = current.Version;
                versions.Add(new OnlineVersion(current.Id, current.Version, i + 1, current.Ratio, !current.Shapes.IsEmpty));
            }
            written?.Invoke(i + 1);
        }

        for (int i = 0; i < documents.Count; i++)
        {
            if (!ns.Decompress(envelopes[i]).AsSpan().SequenceEqual(documents[i]))
                throw new InvalidOperationException($"Replay check failed: document {i} did not decode to its original bytes.");
        }
        return new OnlineReplayResult(documents.Count, raw, output, versions, packed, trainings,
            TimeSpan.FromSeconds((double)trainingTicks / System.Diagnostics.Stopwatch.Frequency), [.. envelopes.Select(e => e.Length)]);
    }
}
