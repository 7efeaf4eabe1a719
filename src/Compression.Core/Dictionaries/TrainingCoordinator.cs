using System.Buffers;
using System.Security.Cryptography;
using Compression.Internal;
using Microsoft.Extensions.Logging;

namespace Compression.Dictionaries;

/// <summary>
/// Decides when a namespace trains, runs the training (held-out measurement, adoption threshold), publishes the winner
/// insert-only through the catalog and adopts it, and adopts what other clients published. Never on the write path:
/// a write only calls <see cref="OnWrite"/>, which reads a few counters and, when training is due, starts it in the background.
/// </summary>
internal sealed class TrainingCoordinator
{
    private const int MaxIdConflicts = 8;

    /// <summary>The fewest held-out documents drawn from the samples the last training did not see; with fewer, a random share of all samples is held out.</summary>
    private const int MinUnseenHoldout = 8;

    private readonly DictionaryCatalog _catalog;
    private readonly BackgroundWork _background;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly CompressionMetrics _metrics;

    public TrainingCoordinator(DictionaryCatalog catalog, BackgroundWork background, TimeProvider time, ILogger logger, CompressionMetrics metrics)
    {
        _catalog = catalog;
        _background = background;
        _time = time;
        _logger = logger;
        _metrics = metrics;
    }

    /// <summary>The longest a deferred training waits before the clock is read again (timers take at most about 49 days).</summary>
    internal static readonly TimeSpan MaxDeferral = TimeSpan.FromDays(1);

    /// <summary>Replay hook: train on the writing thread at the moment a background run would start.</summary>
    public bool InlineTraining { get; set; }

    /// <summary>The random source for sampling and hold-out splits (seeded for repeatable replays).</summary>
    public Random Random { get; set; } = Random.Shared;

    /// <summary>Test hook: called at the start of every training run, on the training thread.</summary>
    public Action<string>? TrainingStarting { get; set; }

    /// <summary>After a write: starts a background training run when one is due. A few reads in the common case.</summary>
    public void OnWrite(NamespaceState state)
    {
        if (state.IsTraining || !state.Loaded || state.TrainingDeferred) return;
        DictionaryOptions d = state.Settings.Dictionary;
        if (!IsTrainingDue(state, d)) return;
        long now = _time.GetTimestamp();
        if (state.LastTrainingTimestamp != 0)
        {
            TimeSpan elapsed = _time.GetElapsedTime(state.LastTrainingTimestamp, now);
            if (elapsed < d.MinTrainingInterval)
            {
                // Due, but too soon: a timer ends the wait, so the writes in between do not each read the clock again.
                // (Not once the engine stops: no timer outlives it, and those writes read the clock as before.)
                TimeSpan wait = elapsed < TimeSpan.Zero ? d.MinTrainingInterval : d.MinTrainingInterval - elapsed;
                if (!_background.IsStopping) state.DeferTraining(_time, wait < MaxDeferral ? wait : MaxDeferral);
                if (_background.IsStopping || state.Evicted) state.EndDeferral(); // raced with the engine's stop or an eviction
                return;
            }
        }
        if (!state.TryBeginTraining()) return;
        state.LastTrainingTimestamp = now;
        if (InlineTraining) RunAsync(state, CancellationToken.None).GetAwaiter().GetResult();
        else StartInBackground(state);
    }

    // Its own method: a lambda capturing a parameter of OnWrite would allocate its closure on every write.
    private void StartInBackground(NamespaceState state) => _background.Run(token => RunAsync(state, token));

    /// <summary>
    /// A training run now, whatever the triggers and the rate limit say; with <paramref name="documents"/>, from them as
    /// well as the samples (see <see cref="CompressionNamespace.TrainAsync(IEnumerable{ReadOnlyMemory{byte}}, CancellationToken)"/>).
    /// </summary>
    public Task<TrainingResult> TrainNowAsync(NamespaceState state, CancellationToken cancellationToken, IEnumerable<ReadOnlyMemory<byte>>? documents = null)
    {
        if (!state.UsesDictionary) return Task.FromResult(new TrainingResult(TrainingOutcome.Disabled, null));
        if (!state.TryBeginTraining()) return Task.FromResult(new TrainingResult(TrainingOutcome.AlreadyRunning, state.Current?.Record));
        state.LastTrainingTimestamp = _time.GetTimestamp();
        (byte[] Document, long Sequence)[] given = [];
        if (documents is not null)
        {
            try
            {
                given = Given(state, documents);
            }
            catch
            {
                state.EndTraining();
                throw;
            }
        }
        return RunAsync(state, cancellationToken, given);
    }

    /// <summary>
    /// The documents a caller gave, within the reservoir's bounds (what the reservoir does not hold yet: a uniform sample
    /// when they are more), each as a sample no training has seen.
    /// </summary>
    private (byte[] Document, long Sequence)[] Given(NamespaceState state, IEnumerable<ReadOnlyMemory<byte>> documents)
    {
        DictionaryOptions d = state.Settings.Dictionary;
        int room = Math.Max(0, d.MaxSampleCount - state.Reservoir.Count);
        long bytes = Math.Max(0, d.MaxSampleBytes - state.Reservoir.Bytes);
        if (room == 0 || bytes == 0) return [];
        var sample = new SampleReservoir(room, bytes, d.MaxSampleDocumentSize, new Random(Random.Next()));
        foreach (ReadOnlyMemory<byte> document in documents) sample.Offer(document.Span);
        return [.. sample.TakeSnapshot().Select(document => (document, long.MaxValue))];
    }

    /// <summary>Adopts the newest version in the store when it is newer than the namespace's. Store failures propagate.</summary>
    public async Task RefreshAsync(NamespaceState state, CancellationToken cancellationToken)
    {
        try
        {
            if (!state.UsesDictionary) return;
            var current = await _catalog.GetCurrentAsync(state.Name, cancellationToken).ConfigureAwait(false);
            if (current is not { } found || found.Record.Version <= (state.Current?.Record.Version ?? 0)) return;
            Adopt(state, new AdoptedDictionary(found.Dictionary, found.Record, found.Record.Ratio), "another client");
        }
        finally
        {
            state.Loaded = true;
        }
    }

    /// <summary><see cref="RefreshAsync"/> for background callers: a failure is logged, and the next poll tries again.</summary>
    public async Task TryRefreshAsync(NamespaceState state, CancellationToken cancellationToken)
    {
        try
        {
            await RefreshAsync(state, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException and not OutOfMemoryException)
        {
            Log.PollFailed(_logger, ex, state.Name);
        }
    }

    private static bool IsTrainingDue(NamespaceState state, DictionaryOptions d)
    {
        if (!state.UsesDictionary) return false;
        if (state.PendingPublication is not null) return true;
        if (state.DocsAtLastTraining == 0)
            return state.Reservoir.Count >= d.MinSampleCount && state.Reservoir.Bytes >= d.MinSampleBytes;
        if (state.SamplesAtLastTraining < d.MaxSampleCount && state.DocsSeen >= state.DocsAtLastTraining * d.GrowthFactor) return true;
        AdoptedDictionary? current = state.Current;
        return current is not null && state.DocsSinceAdoption >= d.DriftMinDocuments && state.ObservedRatio < current.BaselineRatio * d.DriftThreshold;
    }

    private async Task<TrainingResult> RunAsync(NamespaceState state, CancellationToken cancellationToken, (byte[] Document, long Sequence)[]? given = null)
    {
        long started = _time.GetTimestamp();
        TrainingOutcome outcome = TrainingOutcome.NoDictionary;
        try
        {
            TrainingStarting?.Invoke(state.Name);
            outcome = await TrainAsync(state, given ?? [], cancellationToken).ConfigureAwait(false);
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

    private async Task<TrainingOutcome> TrainAsync(NamespaceState state, (byte[] Document, long Sequence)[] given, CancellationToken cancellationToken)
    {
        DictionaryOptions d = state.Settings.Dictionary;

        // Start from the newest version in the store: another client may have published since our last poll.
        await TryRefreshAsync(state, cancellationToken).ConfigureAwait(false);

        if (state.PendingPublication is { } pending)
        {
            state.PendingPublication = null;
            int nextVersion = (state.Current?.Record.Version ?? 0) + 1;
            if (pending.Record.Version == nextVersion)
                return await PublishAndAdoptAsync(state, pending.Record, pending.Dictionary, null, cancellationToken).ConfigureAwait(false);
        }

        (byte[] Document, long Sequence)[] sequenced = [.. state.Reservoir.TakeSequencedSnapshot(), .. given];
        long seenBefore = state.SampleSequenceAtLastTraining;
        state.SampleSequenceAtLastTraining = state.Reservoir.Offered;
        // Documents given to train from count as seen: a bulk load trained from its first batch retrains once the writes
        // have doubled what training saw, not after its second write.
        state.DocsAtLastTraining = Math.Max(1, state.DocsSeen + given.Length);
        state.SamplesAtLastTraining = sequenced.Length;
        if (sequenced.Length < d.MinSampleCount) return TrainingOutcome.TooFewSamples;

        // The held-out documents are HoldoutFraction of the samples the last training did not see, when that gives
        // enough of them: the reservoir keeps samples across trainings, and measuring the current dictionary on
        // documents it was trained on flattered it, so better candidates were refused. Only a share of the unseen
        // samples is held out, so the candidate still trains on the rest of them (after a change of shape, the unseen
        // samples are the new shape). With too few unseen samples, a random share of all of them, as before.
        Random.Shuffle(sequenced);
        int holdoutCount = Math.Max(1, (int)(sequenced.Length * d.HoldoutFraction));
        int unseenHoldout = (int)(sequenced.Count(s => s.Sequence > seenBefore) * d.HoldoutFraction);
        if (seenBefore > 0 && unseenHoldout >= Math.Max(MinUnseenHoldout, holdoutCount / 4))
        {
            holdoutCount = unseenHoldout;
            sequenced = [.. sequenced.OrderByDescending(s => s.Sequence > seenBefore)]; // stable: unseen first, shuffled within
        }
        byte[][] samples = [.. sequenced.Select(s => s.Document)];
        byte[][] holdout = samples[..holdoutCount];
        byte[][] training = samples[holdoutCount..];
        long trainingBytes = training.Sum(s => (long)s.Length);
        int size = d.GetTrainingSize(training.Length, trainingBytes);
        // MinSampleBytes is what the trigger counts (every sample, held-out ones included): checking the training share
        // against it instead refused the first training of tiny documents (flights: 47 samples, 3.3 KB after the hold-out).
        if (size < ZstdDictionary.MinimumSize || trainingBytes + holdout.Sum(s => (long)s.Length) < d.MinSampleBytes) return TrainingOutcome.TooFewSamples;

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
        if (CanPack(state)) (candidate, candidateBytes) = ChooseShapes(state, training, holdout, size, candidate, candidateBytes);
        long currentBytes = MeasureEnvelopeBytes(state, holdout, current?.Dictionary);
        if (candidateBytes > currentBytes * d.AdoptionThreshold)
        {
            Log.NotAdopted(_logger, state.Name, candidateBytes, currentBytes, d.AdoptionThreshold);
            // Nothing better exists for these documents: judge future drift against what they give today.
            if (current is not null) state.Rebaseline(Math.Min(current.BaselineRatio, (double)raw / currentBytes));
            return TrainingOutcome.NotBetter;
        }

        byte[] shapes = candidate.Shapes?.Serialize() ?? [];
        var record = new DictionaryRecord
        {
            Id = candidate.Id,
            Namespace = state.Name,
            Version = (current?.Record.Version ?? 0) + 1,
            Content = candidate.Content,
            ContentHash = DictionaryRecord.ComputeContentHash(candidate.Content.Span),
            Shapes = shapes,
            ShapesHash = shapes.Length == 0 ? 0 : DictionaryRecord.ComputeContentHash(shapes),
            Created = _time.GetUtcNow(),
            Codec = CompressionCodec.Zstd,
            Level = state.Compressor.Level,
            SampleCount = training.Length,
            Ratio = (double)raw / candidateBytes,
        };
        return await PublishAndAdoptAsync(state, record, candidate, holdout, cancellationToken).ConfigureAwait(false);
    }

    private async Task<TrainingOutcome> PublishAndAdoptAsync(NamespaceState state, DictionaryRecord record, ZstdDictionary dictionary,
        byte[][]? holdout, CancellationToken cancellationToken)
    {
        (DictionaryRecord Record, ZstdDictionary Dictionary) winner;
        try
        {
            for (int conflicts = 0; ; conflicts++)
            {
                try
                {
                    winner = await _catalog.PublishAsync(record, dictionary, cancellationToken).ConfigureAwait(false);
                    break;
                }
                catch (DictionaryIdConflictException) when (conflicts < MaxIdConflicts)
                {
                    // Ids are short random numbers (they are written in every envelope); on a clash draw another, wider one.
                    dictionary = dictionary.WithId(NewDictionaryId(conflicts + 1));
                    record = record with { Id = dictionary.Id };
                }
            }
        }
        catch (Exception ex) when (ex is not OperationCanceledException and not OutOfMemoryException)
        {
            // Not used by anyone until published: nobody else could read it. Retried before the next training.
            Log.PublishFailed(_logger, ex, state.Name, record.Id);
            state.PendingPublication = (record, dictionary);
            return TrainingOutcome.PublishFailed;
        }

        if (winner.Record.Id == record.Id && winner.Record.ContentHash == record.ContentHash && winner.Record.ShapesHash == record.ShapesHash)
        {
            // Ours (its version may be above the one asked for, past versions held by invalid records).
            Adopt(state, new AdoptedDictionary(winner.Dictionary, winner.Record, record.Ratio), "this client");
            return TrainingOutcome.Adopted;
        }

        // Another client published this version first: the loser adopts the winner's dictionary.
        double baseline = holdout is null ? winner.Record.Ratio
            : (double)holdout.Sum(s => (long)s.Length) / MeasureEnvelopeBytes(state, holdout, winner.Dictionary);
        Adopt(state, new AdoptedDictionary(winner.Dictionary, winner.Record, baseline), "another client");
        return TrainingOutcome.AdoptedFromOtherClient;
    }

    private void Adopt(NamespaceState state, AdoptedDictionary adopted, string source)
    {
        if (!state.TryAdopt(adopted)) return;
        _metrics.Adopted(state.Name, adopted.Record.Version);
        Log.Adopted(_logger, state.Name, adopted.Record.Id, adopted.Record.Version, adopted.BaselineRatio, source);
    }

    /// <summary>Whether the namespace's writer can use a shape table: zstd in format v2 or v3 with the checksum, and the setting on.</summary>
    private static bool CanPack(NamespaceState state) =>
        state.Settings.Dictionary.PackDocuments && state.Compressor.Codec == CompressionCodec.Zstd
        && state.Compressor.Format != EnvelopeFormat.V1 && state.Compressor.Checksum;

    /// <summary>
    /// Learns a shape table from the same training samples and trains its dictionary on the packed samples; keeps it
    /// when its held-out envelopes (through the namespace's own compressor) are at most
    /// <see cref="Structure.StructureTrainer.DefaultThreshold"/> of the plain candidate's, so a table is adopted only
    /// where it clearly pays for the training and the write-time packing. With <see cref="DictionaryOptions.ModelFields"/>,
    /// the table comes with the field model its training chose (none when no field pays on its check samples), and the
    /// dictionary is trained on what codec 8 leaves to zstd.
    /// </summary>
    private (ZstdDictionary Candidate, long Bytes) ChooseShapes(NamespaceState state, byte[][] training, byte[][] holdout, int size,
        ZstdDictionary plain, long plainBytes)
    {
        Structure.StructureModel? model = Structure.StructureTrainer.TryTrain(training, size, plain.Id, kind: null,
            fieldModel: state.Settings.Dictionary.ModelFields);
        if (model is null) return (plain, plainBytes);
        long packedBytes = MeasureEnvelopeBytes(state, holdout, model.Dictionary, out int packed);
        bool chosen = packedBytes <= plainBytes * Structure.StructureTrainer.DefaultThreshold;
        if (_logger.IsEnabled(LogLevel.Information))
        {
            Log.ShapesMeasured(_logger, state.Name, model.Table.Count, packedBytes, plainBytes, packed, holdout.Length,
                !chosen ? "not used: under 5% smaller"
                : model.Transform.Fields is { } fields ? $"the shape table and a field model of {fields.Model.FieldCount} fields are published with the dictionary"
                : "the shape table is published with the dictionary");
        }
        return chosen ? (model.Dictionary, packedBytes) : (plain, plainBytes);
    }

    private static long MeasureEnvelopeBytes(NamespaceState state, byte[][] documents, ZstdDictionary? dictionary) =>
        MeasureEnvelopeBytes(state, documents, dictionary, out _);

    /// <summary>The envelope bytes of <paramref name="documents"/> through the namespace's compressor, and how many were written packed (codec 7).</summary>
    private static long MeasureEnvelopeBytes(NamespaceState state, byte[][] documents, ZstdDictionary? dictionary, out int packed)
    {
        int max = documents.Max(d => d.Length);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(DocumentCompressor.GetMaxEnvelopeLength(max));
        try
        {
            long total = 0;
            packed = 0;
            foreach (byte[] document in documents)
            {
                state.Compressor.TryCompress(document, buffer, out int written, dictionary);
                total += written;
                if (Codecs.CodecRegistry.For((CompressionCodec)(buffer[1] & DocumentEnvelope.CodecMask)).IsStructured) packed++;
            }
            return total;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer, clearArray: true);
        }
    }

    /// <summary>
    /// A random dictionary id. Ids are written in every envelope, so they are kept short: 7 bits (a 1-byte varint) for
    /// the first two draws, then 14 bits (2 bytes), then 7 more bits after each further conflict the store reports. A
    /// store holds few dictionaries (a few versions per namespace), so most get a 1-byte id; a crowded store costs a
    /// publication one or two conflicts and its documents one more byte, never a wrong id (publication is insert-only).
    /// </summary>
    internal static uint NewDictionaryId(int conflicts = 0)
    {
        int bits = conflicts < 2 ? 7 : Math.Min(14 + 7 * (conflicts - 2), 30);
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
}
