using System.Text;
using Compression.Dictionaries;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>
/// The live commands as every database runs them: a session opened (<see cref="LiveSession{TNamespace}"/>), each
/// namespace opened (<see cref="LiveCollection{TDocument}"/>) and gone through, and the command's report written with
/// its exit code (docs/docz.md). A database's backend provides its session and its collections; the flow is here.
/// </summary>
internal abstract partial class LiveBackend<TSession, TNamespace, TDocument> : IDoczBackend
    where TSession : LiveSession<TNamespace>
    where TNamespace : ILiveNamespace
{
    /// <summary>How many documents a rewrite samples to train the first dictionary (<c>migrate</c> without <c>--no-train</c>).</summary>
    private const int FirstDictionarySamples = 20_000;

    public async Task<int> TrainAsync(LiveSettings settings, FileInfo? from, int maxDocuments, LiveOutput console, CancellationToken cancellationToken)
    {
        await using TSession session = Open(settings, @override: null);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        if (from is not null && session.Namespaces.Count != 1) throw new UsageException("--from trains one namespace: give exactly one --namespace.");
        var results = new List<TrainResult>();
        foreach (TNamespace ns in session.Namespaces)
        {
            LiveCollection<TDocument> collection = await OpenAsync(session, ns, cancellationToken).ConfigureAwait(false);
            results.Add(from is null
                ? await TrainFromCollectionAsync(collection, settings, maxDocuments, console, cancellationToken).ConfigureAwait(false)
                : await TrainFromFileAsync(collection, from, maxDocuments, cancellationToken).ConfigureAwait(false));
        }
        var report = new TrainReport("train", results, results.Any(r => !r.Succeeded) ? 1 : 0);
        console.Write(report, TrainCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> RewriteAsync(string command, LiveSettings settings, RewriteOptions options, bool train, DateTimeOffset? olderThan, LiveOutput console,
        CancellationToken cancellationToken)
    {
        CheckUsage(olderThan);
        Action<string, CompressionEngineOptions>? @override = options.Level is int level ? (ns, engine) => engine.Namespaces[ns].Level = level : null;
        await using TSession session = Open(settings, @override);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        await CheckRewriteAsync(session, cancellationToken).ConfigureAwait(false);
        var results = new List<RewriteResult>();
        var trained = new List<TrainResult>();
        foreach (TNamespace ns in session.Namespaces)
        {
            LiveCollection<TDocument> collection = await OpenAsync(session, ns, cancellationToken).ConfigureAwait(false);
            await collection.CheckRewriteAsync(options, cancellationToken).ConfigureAwait(false);
            CompressionNamespace handle = collection.Handle;
            if (train && options.Mode == RewriteMode.Compress && handle.State.UsesDictionary && handle.CurrentDictionary is null)
            {
                // The first dictionary, from the documents about to be compressed (as `train` would): otherwise every one of
                // them would be compressed without any.
                trained.Add(await TrainFromCollectionAsync(collection, settings, FirstDictionarySamples, console, cancellationToken).ConfigureAwait(false));
            }
            results.Add(await collection.RewriteAsync(options, olderThan, settings, console, cancellationToken).ConfigureAwait(false));
        }
        var report = new RewriteReport(command, results, trained, results.Any(r => r.Failed > 0) ? 1 : 0);
        console.Write(report, MigrateCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> VerifyAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        List<VerifyResult> results = await ForEachNamespaceAsync(settings,
            (_, _, collection) => VerifyAsync(collection, settings, console, cancellationToken), cancellationToken).ConfigureAwait(false);
        long failed = results.Sum(r => r.Failed);
        var report = new VerifyReport("verify", results, failed, failed > 0 ? 1 : 0);
        console.Write(report, VerifyCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> StatsAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        List<StatsResult> results = await ForEachNamespaceAsync(settings,
            (session, ns, collection) => StatsAsync(session, ns, collection, settings, console, cancellationToken), cancellationToken).ConfigureAwait(false);
        var report = new StatsReport("stats", results, results.Any(r => r.Unreadable > 0) ? 1 : 0);
        console.Write(report, StatsCommand.ToTable);
        return report.ExitCode;
    }

    /// <summary>Reads the configuration and opens the database's session (nothing is read from the database yet).</summary>
    /// <param name="settings">The command line's connection, configuration file and namespaces.</param>
    /// <param name="override">Changes a namespace's settings for this run (e.g. <c>--level</c>), after the configuration.</param>
    /// <exception cref="UsageException">Something the user gave is missing or wrong; the message says what.</exception>
    protected abstract TSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override);

    /// <summary>
    /// Checks, before anything is read, that the database answers, for a backend that can tell quickly and say why not
    /// (MongoDB: <c>Connection refused</c> at once rather than after the driver's server selection timeout).
    /// </summary>
    /// <exception cref="NoServerException">No server answered.</exception>
    protected virtual Task ConnectAsync(TSession session, CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>The namespace's collection, its handle opened (<see cref="LiveSession{TNamespace}.OpenNamespaceAsync"/>).</summary>
    protected abstract Task<LiveCollection<TDocument>> OpenAsync(TSession session, TNamespace ns, CancellationToken cancellationToken);

    /// <summary>Refuses, as bad usage and before anything is opened, a rewrite option this database cannot honour.</summary>
    /// <exception cref="UsageException">It cannot.</exception>
    protected virtual void CheckUsage(DateTimeOffset? olderThan)
    {
    }

    /// <summary>Refuses, before the first namespace is trained or rewritten, a rewrite the database cannot take: a refusal then writes nothing at all.</summary>
    /// <exception cref="UsageException">It cannot; the message says why.</exception>
    protected virtual Task CheckRewriteAsync(TSession session, CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Opens a session without overrides and runs <paramref name="run"/> on each namespace, opened, in turn.</summary>
    private async Task<List<TResult>> ForEachNamespaceAsync<TResult>(LiveSettings settings,
        Func<TSession, TNamespace, LiveCollection<TDocument>, Task<TResult>> run, CancellationToken cancellationToken)
    {
        await using TSession session = Open(settings, @override: null);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        var results = new List<TResult>();
        foreach (TNamespace ns in session.Namespaces)
        {
            LiveCollection<TDocument> collection = await OpenAsync(session, ns, cancellationToken).ConfigureAwait(false);
            results.Add(await run(session, ns, collection).ConfigureAwait(false));
        }
        return results;
    }

    /// <summary>Offers up to <paramref name="max"/> documents (in the scan's order) to the namespace's sample, then trains.</summary>
    private static async Task<TrainResult> TrainFromCollectionAsync(LiveCollection<TDocument> collection, LiveSettings settings, int max, LiveOutput console,
        CancellationToken cancellationToken)
    {
        BatchScan<TDocument> scan = await collection.ScanAsync(max, Math.Min(settings.BatchSize, max), cancellationToken).ConfigureAwait(false);
        (long read, long skipped) = await console.ProgressAsync($"sample {collection.Name}", scan.Expected, async progress =>
        {
            long read = 0, skipped = 0;
            await foreach (IReadOnlyList<TDocument> batch in scan.Batches.ConfigureAwait(false))
            {
                foreach (TDocument document in batch)
                {
                    if (read == max) break;
                    read++;
                    try
                    {
                        byte[]? sample = await collection.SampleAsync(document, cancellationToken).ConfigureAwait(false);
                        if (sample is null) skipped++; // the namespace would not compress it either
                        else collection.Handle.State.Reservoir.Offer(sample);
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
        return await TrainAsync(collection, "collection", read, skipped, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Offers up to <paramref name="max"/> lines of a JSON Lines file to the namespace's sample, then trains.</summary>
    private static async Task<TrainResult> TrainFromFileAsync(LiveCollection<TDocument> collection, FileInfo file, int max, CancellationToken cancellationToken)
    {
        long read = 0, skipped = 0;
        using var reader = new StreamReader(file.FullName, Encoding.UTF8);
        while (read < max && await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
        {
            if (string.IsNullOrWhiteSpace(line)) continue;
            read++;
            try
            {
                collection.Handle.State.Reservoir.Offer(collection.SampleOf(line));
            }
            catch (InvalidDataException)
            {
                skipped++;
            }
        }
        return await TrainAsync(collection, file.FullName, read, skipped, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<TrainResult> TrainAsync(LiveCollection<TDocument> collection, string source, long read, long skipped,
        CancellationToken cancellationToken)
    {
        CompressionNamespace handle = collection.Handle;
        int samples = handle.State.Reservoir.Count;
        DictionaryRecord? before = handle.CurrentDictionary;
        TrainingResult result = await handle.TrainAsync(cancellationToken).ConfigureAwait(false);
        DictionaryRecord? after = result.Dictionary;
        bool succeeded = result.Outcome is TrainingOutcome.Adopted or TrainingOutcome.AdoptedFromOtherClient or TrainingOutcome.NotBetter;
        return new TrainResult(collection.Name, source, read, skipped, samples, result.Outcome, succeeded, before?.Version,
            after is null ? null : new TrainedDictionary(after.Id, after.Version, after.Content.Length, after.SampleCount, Math.Round(after.Ratio, 4)));
    }

    private static async Task<VerifyResult> VerifyAsync(LiveCollection<TDocument> collection, LiveSettings settings, LiveOutput console,
        CancellationToken cancellationToken)
    {
        BatchScan<TDocument> scan = await collection.ScanAsync(long.MaxValue, settings.BatchSize, cancellationToken).ConfigureAwait(false);
        return await console.ProgressAsync($"verify {collection.Name}", scan.Expected, async progress =>
        {
            long documents = 0, compressed = 0, plain = 0, failed = 0;
            var failures = new List<RewriteFailure>();
            await foreach (IReadOnlyList<TDocument> batch in scan.Batches.ConfigureAwait(false))
            {
                foreach (TDocument document in batch)
                {
                    documents++;
                    try
                    {
                        if (await collection.VerifyAsync(document, cancellationToken).ConfigureAwait(false)) compressed++;
                        else plain++;
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                    {
                        failed++;
                        if (failures.Count < settings.MaxFailures) failures.Add(new RewriteFailure(collection.Describe(document), ex.Message));
                    }
                }
                progress(batch.Count);
            }
            return new VerifyResult(collection.Name, documents, compressed, plain, failed, failures);
        }).ConfigureAwait(false);
    }

    private static async Task<StatsResult> StatsAsync(TSession session, TNamespace ns, LiveCollection<TDocument> collection, LiveSettings settings,
        LiveOutput console, CancellationToken cancellationToken)
    {
        var versions = new Dictionary<uint, int>();
        await foreach (DictionaryRecord record in session.Engine(ns).Store.ListAsync(ns.Name, cancellationToken).ConfigureAwait(false))
        {
            versions[record.Id] = record.Version;
        }
        BatchScan<TDocument> scan = await collection.ScanAsync(long.MaxValue, settings.BatchSize, cancellationToken).ConfigureAwait(false);
        return await console.ProgressAsync($"stats {collection.Name}", scan.Expected, async progress =>
        {
            long documents = 0, compressed = 0, plain = 0, unreadable = 0, stored = 0, raw = 0, noDictionary = 0;
            var perDictionary = new SortedDictionary<uint, long>();
            var failures = new List<RewriteFailure>();
            await foreach (IReadOnlyList<TDocument> batch in scan.Batches.ConfigureAwait(false))
            {
                foreach (TDocument document in batch)
                {
                    documents++;
                    long length = collection.StoredLength(document);
                    stored += length;
                    try
                    {
                        byte[]? decoded = await collection.DecodeAsync(document, cancellationToken).ConfigureAwait(false);
                        if (decoded is null)
                        {
                            plain++;
                            raw += length;
                            continue;
                        }
                        raw += decoded.Length;
                        compressed++;
                        if (collection.DictionaryOf(document) is uint id) perDictionary[id] = perDictionary.GetValueOrDefault(id) + 1;
                        else noDictionary++;
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                    {
                        unreadable++;
                        if (failures.Count < settings.MaxFailures) failures.Add(new RewriteFailure(collection.Describe(document), ex.Message));
                    }
                }
                progress(batch.Count);
            }
            var dictionaries = perDictionary.Select(p => new DictionaryUse(p.Key, versions.TryGetValue(p.Key, out int v) ? v : null, p.Value)).ToList();
            if (noDictionary > 0) dictionaries.Insert(0, new DictionaryUse(null, null, noDictionary));
            double? ratio = stored > 0 && unreadable == 0 ? Math.Round((double)raw / stored, 4) : null;
            return new StatsResult(collection.Name, documents, compressed, plain, unreadable, stored, raw, ratio, collection.Handle.CurrentDictionary?.Version,
                dictionaries, failures);
        }).ConfigureAwait(false);
    }
}
