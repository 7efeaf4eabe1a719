using System.Text;
using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// docz's live commands on MongoDB collections (<c>database.collection</c>), built in: documents are read in <c>_id</c>
/// order through one cursor (<see cref="DocumentScan"/>), each replacement is a compare-and-swap on the whole document as
/// it was read (<see cref="CollectionRewriter"/>), checkpoints are kept in <c>_compression.migrations</c>
/// (<see cref="RewriteCheckpoint"/>), and documents are split and merged in the serializer's own stored layout
/// (<see cref="StoredDocumentCodec"/>, in Compression.MongoDB).
/// </summary>
internal sealed class MongoBackend : IDoczBackend
{
    public static readonly MongoBackend Instance = new();

    /// <summary>What the command says of a failure of the driver (<see cref="DoczBackends.Failure"/>), or null when it is not one.</summary>
    public static string? Failure(Exception exception) => exception switch
    {
        TimeoutException => $"cannot reach the MongoDB server: {LiveRunner.FirstLine(exception.Message)}",
        MongoException => LiveRunner.FirstLine(exception.Message),
        _ => null,
    };

    public async Task<int> TrainAsync(LiveSettings settings, FileInfo? from, int maxDocuments, LiveOutput console, CancellationToken cancellationToken)
    {
        await using MongoSession session = MongoSession.Open(settings);
        if (from is not null && session.Namespaces.Count != 1) throw new UsageException("--from trains one namespace: give exactly one --namespace.");
        var results = new List<TrainResult>();
        foreach (MongoNamespace ns in session.Namespaces)
        {
            StoredDocumentCodec codec = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
            results.Add(from is null
                ? await TrainFromCollectionAsync(session, ns, codec, settings, maxDocuments, console, cancellationToken).ConfigureAwait(false)
                : await TrainFromFileAsync(ns, codec, from, maxDocuments, cancellationToken).ConfigureAwait(false));
        }
        var report = new TrainReport("train", results, results.Any(r => !r.Succeeded) ? 1 : 0);
        console.Write(report, TrainCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> RewriteAsync(string command, LiveSettings settings, RewriteOptions options, bool train, DateTimeOffset? olderThan, LiveOutput console,
        CancellationToken cancellationToken)
    {
        BsonDocument? filter = olderThan is DateTimeOffset date ? new BsonDocument("_id", new BsonDocument("$lt", ObjectIdAt(date))) : null;
        Action<string, CompressionEngineOptions>? @override = options.Level is int level
            ? (ns, engine) => engine.Namespaces[ns].Level = level
            : null;
        await using MongoSession session = MongoSession.Open(settings, @override);
        var results = new List<RewriteResult>();
        var trained = new List<TrainResult>();
        foreach (MongoNamespace ns in session.Namespaces)
        {
            StoredDocumentCodec codec = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
            if (options.Mode == RewriteMode.Compress)
                await IndexCheck.EnsureClearAsync(session.Collection(ns), ns, codec, cancellationToken).ConfigureAwait(false);
            if (train && options.Mode == RewriteMode.Compress && codec.Namespace.State.UsesDictionary && codec.Namespace.CurrentDictionary is null)
            {
                // The first dictionary, from the documents about to be compressed (as `train` would): otherwise every one of
                // them would be compressed without any.
                trained.Add(await TrainFromCollectionAsync(session, ns, codec, settings, 20_000, console, cancellationToken).ConfigureAwait(false));
            }
            var collection = session.Collection(ns);
            long total = await collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
            RewriteResult result = await console.ProgressAsync($"{options.ModeName} {ns}", total,
                progress => new CollectionRewriter(session, ns, codec, options, settings, filter) { Progress = progress }.RunAsync(cancellationToken)).ConfigureAwait(false);
            results.Add(result);
        }
        var report = new RewriteReport(command, results, trained, results.Any(r => r.Failed > 0) ? 1 : 0);
        console.Write(report, MigrateCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> VerifyAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        await using MongoSession session = MongoSession.Open(settings);
        var results = new List<VerifyResult>();
        foreach (MongoNamespace ns in session.Namespaces)
        {
            results.Add(await VerifyAsync(session, ns, settings, console, cancellationToken).ConfigureAwait(false));
        }
        long failed = results.Sum(r => r.Failed);
        var report = new VerifyReport("verify", results, failed, failed > 0 ? 1 : 0);
        console.Write(report, VerifyCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> StatsAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        await using MongoSession session = MongoSession.Open(settings);
        var results = new List<StatsResult>();
        foreach (MongoNamespace ns in session.Namespaces)
        {
            results.Add(await StatsAsync(session, ns, settings, console, cancellationToken).ConfigureAwait(false));
        }
        var report = new StatsReport("stats", results, results.Any(r => r.Unreadable > 0) ? 1 : 0);
        console.Write(report, StatsCommand.ToTable);
        return report.ExitCode;
    }

    /// <summary>The smallest ObjectId made at <paramref name="date"/>: every ObjectId made before it sorts lower.</summary>
    private static ObjectId ObjectIdAt(DateTimeOffset date)
    {
        long seconds = Math.Clamp(date.ToUnixTimeSeconds(), 0, uint.MaxValue);
        byte[] bytes = new byte[12];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)seconds);
        return new ObjectId(bytes);
    }

    /// <summary>Offers the compressed part of up to <paramref name="max"/> documents (in <c>_id</c> order) to the engine's sample, then trains.</summary>
    internal static async Task<TrainResult> TrainFromCollectionAsync(MongoSession session, MongoNamespace ns, StoredDocumentCodec codec, LiveSettings settings,
        int max, LiveOutput console, CancellationToken cancellationToken)
    {
        var collection = session.Collection(ns);
        long total = Math.Min(max, await collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false));
        (long read, long skipped) = await console.ProgressAsync($"sample {ns}", total, async progress =>
        {
            long read = 0, skipped = 0;
            await foreach (var batch in DocumentScan.BatchesAsync(collection, null, null, Math.Min(settings.BatchSize, max), cancellationToken).ConfigureAwait(false))
            {
                foreach (ScannedDocument document in batch)
                {
                    if (read == max) break;
                    read++;
                    try
                    {
                        byte[] plain = StoredDocumentCodec.Classify(document.Bytes) switch
                        {
                            StoredKind.Plain => document.Bytes,
                            StoredKind.Compressed => await DecodeAsync(codec, document.Bytes, cancellationToken).ConfigureAwait(false),
                            _ => throw new InvalidDataException("not this library's '_z'"),
                        };
                        Offer(codec, plain);
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                    {
                        skipped++; // verify names them
                    }
                }
                progress(batch.Count);
                if (read == max) break;
            }
            return (read, skipped);
        }).ConfigureAwait(false);
        return await TrainAsync(ns, codec, "collection", read, skipped, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<TrainResult> TrainFromFileAsync(MongoNamespace ns, StoredDocumentCodec codec, FileInfo file, int max, CancellationToken cancellationToken)
    {
        long read = 0, skipped = 0;
        using var reader = new StreamReader(file.FullName, Encoding.UTF8);
        while (read < max && await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
        {
            if (string.IsNullOrWhiteSpace(line)) continue;
            read++;
            try
            {
                BsonDocument document = BsonDocument.Parse(line);
                Offer(codec, document.ToBson());
            }
            catch (Exception ex) when (ex is FormatException or InvalidDataException or BsonSerializationException or InvalidCastException)
            {
                skipped++;
            }
        }
        return await TrainAsync(ns, codec, file.FullName, read, skipped, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<byte[]> DecodeAsync(StoredDocumentCodec codec, byte[] stored, CancellationToken cancellationToken)
    {
        await codec.EnsureDictionaryAsync(stored, cancellationToken).ConfigureAwait(false);
        return codec.Decode(stored);
    }

    /// <summary>What the namespace would compress of this document goes into its sample (without compressing anything).</summary>
    private static void Offer(StoredDocumentCodec codec, byte[] plain) => codec.Namespace.State.Reservoir.Offer(codec.CompressedPart(plain));

    private static async Task<TrainResult> TrainAsync(MongoNamespace ns, StoredDocumentCodec codec, string source, long read, long skipped,
        CancellationToken cancellationToken)
    {
        int samples = codec.Namespace.State.Reservoir.Count;
        DictionaryRecord? before = codec.Namespace.CurrentDictionary;
        TrainingResult result = await codec.Namespace.TrainAsync(cancellationToken).ConfigureAwait(false);
        DictionaryRecord? after = result.Dictionary;
        bool succeeded = result.Outcome is TrainingOutcome.Adopted or TrainingOutcome.AdoptedFromOtherClient or TrainingOutcome.NotBetter;
        return new TrainResult(ns.Name, source, read, skipped, samples, result.Outcome, succeeded, before?.Version,
            after is null ? null : new TrainedDictionary(after.Id, after.Version, after.Content.Length, after.SampleCount, Math.Round(after.Ratio, 4)));
    }

    private static async Task<VerifyResult> VerifyAsync(MongoSession session, MongoNamespace ns, LiveSettings settings, LiveOutput console,
        CancellationToken cancellationToken)
    {
        StoredDocumentCodec codec = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
        var collection = session.Collection(ns);
        long total = await collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        return await console.ProgressAsync($"verify {ns}", total, async progress =>
        {
            long documents = 0, compressed = 0, plain = 0, failed = 0;
            var failures = new List<RewriteFailure>();
            await foreach (var batch in DocumentScan.BatchesAsync(collection, null, null, settings.BatchSize, cancellationToken).ConfigureAwait(false))
            {
                foreach (ScannedDocument document in batch)
                {
                    documents++;
                    string? problem = await CheckAsync(codec, document, cancellationToken).ConfigureAwait(false);
                    if (problem is null)
                    {
                        if (StoredDocumentCodec.Classify(document.Bytes) == StoredKind.Plain) plain++;
                        else compressed++;
                        continue;
                    }
                    failed++;
                    if (failures.Count < settings.MaxFailures) failures.Add(new RewriteFailure(Shell.Of(document.Id), problem));
                }
                progress(batch.Count);
            }
            return new VerifyResult(ns.Name, documents, compressed, plain, failed, failures);
        }).ConfigureAwait(false);
    }

    /// <summary>Null when the document reads back whole; else why not.</summary>
    private static async Task<string?> CheckAsync(StoredDocumentCodec codec, ScannedDocument document, CancellationToken cancellationToken)
    {
        try
        {
            switch (StoredDocumentCodec.Classify(document.Bytes))
            {
                case StoredKind.Plain:
                    return null;
                default:
                    await codec.EnsureDictionaryAsync(document.Bytes, cancellationToken).ConfigureAwait(false);
                    LiveChecks.WellFormed(codec.Decode(document.Bytes));
                    return null;
            }
        }
        catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
        {
            return ex.Message;
        }
    }

    private static async Task<StatsResult> StatsAsync(MongoSession session, MongoNamespace ns, LiveSettings settings, LiveOutput console,
        CancellationToken cancellationToken)
    {
        StoredDocumentCodec codec = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
        var versions = new Dictionary<uint, int>();
        await foreach (DictionaryRecord record in session.Engine(ns).Store.ListAsync(ns.Name, cancellationToken).ConfigureAwait(false))
        {
            versions[record.Id] = record.Version;
        }

        var collection = session.Collection(ns);
        long total = await collection.EstimatedDocumentCountAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        return await console.ProgressAsync($"stats {ns}", total, async progress =>
        {
            long documents = 0, compressed = 0, plain = 0, unreadable = 0, stored = 0, raw = 0, noDictionary = 0;
            var perDictionary = new SortedDictionary<uint, long>();
            var failures = new List<RewriteFailure>();
            await foreach (var batch in DocumentScan.BatchesAsync(collection, null, null, settings.BatchSize, cancellationToken).ConfigureAwait(false))
            {
                foreach (ScannedDocument document in batch)
                {
                    documents++;
                    stored += document.Bytes.Length;
                    try
                    {
                        switch (StoredDocumentCodec.Classify(document.Bytes))
                        {
                            case StoredKind.Plain:
                                plain++;
                                raw += document.Bytes.Length;
                                continue;
                        }
                        await codec.EnsureDictionaryAsync(document.Bytes, cancellationToken).ConfigureAwait(false);
                        raw += codec.Decode(document.Bytes).Length;
                        compressed++;
                        if (DocumentEnvelope.TryReadHeader(StoredDocumentCodec.Envelope(document.Bytes), out EnvelopeHeader header)
                            && header.DictionaryId is uint id)
                        {
                            perDictionary[id] = perDictionary.GetValueOrDefault(id) + 1;
                        }
                        else
                        {
                            noDictionary++;
                        }
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                    {
                        unreadable++;
                        if (failures.Count < settings.MaxFailures) failures.Add(new RewriteFailure(Shell.Of(document.Id), ex.Message));
                    }
                }
                progress(batch.Count);
            }
            var dictionaries = perDictionary.Select(p => new DictionaryUse(p.Key, versions.TryGetValue(p.Key, out int v) ? v : null, p.Value)).ToList();
            if (noDictionary > 0) dictionaries.Insert(0, new DictionaryUse(null, null, noDictionary));
            double? ratio = stored > 0 && unreadable == 0 ? Math.Round((double)raw / stored, 4) : null;
            return new StatsResult(ns.Name, documents, compressed, plain, unreadable, stored, raw, ratio, codec.Namespace.CurrentDictionary?.Version,
                dictionaries, failures);
        }).ConfigureAwait(false);
    }
}
