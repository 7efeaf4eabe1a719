using System.Text.Json;
using Compression.Dictionaries;
using Compression.Tool.Backends;
using Compression.Tool.Live;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

/// <summary>
/// docz's live commands on Couchbase collections (<c>bucket.scope.collection</c>), with the same options, reports and exit
/// codes as on MongoDB (docs/docz.md). Documents are enumerated by a KV range scan (ids only), then read and replaced one
/// by one through the SDK: each replacement carries the CAS of the version read, so it can only replace that version.
/// </summary>
internal sealed partial class CouchbaseBackend : IDoczBackend
{
    public async Task<int> VerifyAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        await using CouchbaseSession session = Open(settings);
        var results = new List<VerifyResult>();
        foreach (CouchbaseNamespace ns in session.Namespaces)
        {
            CompressionNamespace handle = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
            ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
            List<string> keys = await BodyAccess.KeysAsync(collection, null, cancellationToken).ConfigureAwait(false);
            results.Add(await console.ProgressAsync($"verify {ns}", keys.Count, async progress =>
            {
                long documents = 0, compressed = 0, plain = 0, failed = 0;
                var failures = new List<RewriteFailure>();
                await foreach (var batch in BodyAccess.BatchesAsync(collection, keys, settings.BatchSize, cancellationToken).ConfigureAwait(false))
                {
                    foreach (StoredBody body in batch)
                    {
                        documents++;
                        try
                        {
                            if (await DecodeAsync(handle, body, cancellationToken).ConfigureAwait(false) is null) plain++;
                            else compressed++;
                        }
                        catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                        {
                            failed++;
                            if (failures.Count < settings.MaxFailures) failures.Add(new RewriteFailure(body.Key, ex.Message));
                        }
                    }
                    progress(batch.Count);
                }
                return new VerifyResult(ns.Name, documents, compressed, plain, failed, failures);
            }).ConfigureAwait(false));
        }
        long total = results.Sum(r => r.Failed);
        var report = new VerifyReport("verify", results, total, total > 0 ? 1 : 0);
        console.Write(report, VerifyCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> StatsAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        await using CouchbaseSession session = Open(settings);
        var results = new List<StatsResult>();
        foreach (CouchbaseNamespace ns in session.Namespaces)
        {
            CompressionNamespace handle = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
            var versions = new Dictionary<uint, int>();
            await foreach (DictionaryRecord record in session.Engine(ns).Store.ListAsync(ns.Name, cancellationToken).ConfigureAwait(false))
            {
                versions[record.Id] = record.Version;
            }
            ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
            List<string> keys = await BodyAccess.KeysAsync(collection, null, cancellationToken).ConfigureAwait(false);
            results.Add(await console.ProgressAsync($"stats {ns}", keys.Count, async progress =>
            {
                long documents = 0, compressed = 0, plain = 0, unreadable = 0, stored = 0, raw = 0, noDictionary = 0;
                var perDictionary = new SortedDictionary<uint, long>();
                var failures = new List<RewriteFailure>();
                await foreach (var batch in BodyAccess.BatchesAsync(collection, keys, settings.BatchSize, cancellationToken).ConfigureAwait(false))
                {
                    foreach (StoredBody body in batch)
                    {
                        documents++;
                        stored += body.Body.Length;
                        try
                        {
                            byte[]? json = await DecodeAsync(handle, body, cancellationToken).ConfigureAwait(false);
                            if (json is null)
                            {
                                plain++;
                                raw += body.Body.Length;
                                continue;
                            }
                            raw += json.Length;
                            compressed++;
                            if (BodyAccess.DictionaryOf(body.Body) is uint id) perDictionary[id] = perDictionary.GetValueOrDefault(id) + 1;
                            else noDictionary++;
                        }
                        catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                        {
                            unreadable++;
                            if (failures.Count < settings.MaxFailures) failures.Add(new RewriteFailure(body.Key, ex.Message));
                        }
                    }
                    progress(batch.Count);
                }
                var dictionaries = perDictionary.Select(p => new DictionaryUse(p.Key, versions.TryGetValue(p.Key, out int v) ? v : null, p.Value)).ToList();
                if (noDictionary > 0) dictionaries.Insert(0, new DictionaryUse(null, null, noDictionary));
                double? ratio = stored > 0 && unreadable == 0 ? Math.Round((double)raw / stored, 4) : null;
                return new StatsResult(ns.Name, documents, compressed, plain, unreadable, stored, raw, ratio, handle.CurrentDictionary?.Version, dictionaries, failures);
            }).ConfigureAwait(false));
        }
        var report = new StatsReport("stats", results, results.Any(r => r.Unreadable > 0) ? 1 : 0);
        console.Write(report, StatsCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> TrainAsync(LiveSettings settings, FileInfo? from, int maxDocuments, LiveOutput console, CancellationToken cancellationToken)
    {
        await using CouchbaseSession session = Open(settings);
        if (from is not null && session.Namespaces.Count != 1) throw new UsageException("--from trains one namespace: give exactly one --namespace.");
        var results = new List<TrainResult>();
        foreach (CouchbaseNamespace ns in session.Namespaces)
        {
            CompressionNamespace handle = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
            results.Add(from is null
                ? await TrainFromCollectionAsync(session, ns, handle, settings, maxDocuments, console, cancellationToken).ConfigureAwait(false)
                : await TrainFromFileAsync(ns, handle, from, maxDocuments, cancellationToken).ConfigureAwait(false));
        }
        var report = new TrainReport("train", results, results.Any(r => !r.Succeeded) ? 1 : 0);
        console.Write(report, TrainCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> RewriteAsync(string command, LiveSettings settings, RewriteOptions options, bool train, DateTimeOffset? olderThan, LiveOutput console,
        CancellationToken cancellationToken)
    {
        if (olderThan is not null)
        {
            throw new UsageException("--older-than works on MongoDB ObjectIds; Couchbase keys carry no time, so it is not available with a Couchbase connection string.");
        }
        Action<string, CompressionEngineOptions>? @override = options.Level is int level ? (ns, engine) => engine.Namespaces[ns].Level = level : null;
        await using CouchbaseSession session = Open(settings, @override);
        var results = new List<RewriteResult>();
        var trained = new List<TrainResult>();
        foreach (CouchbaseNamespace ns in session.Namespaces)
        {
            // Every namespace is checked before the first one is trained or rewritten: a refusal then writes nothing at all.
            await BodyAccess.EnsureExpiryKeptAsync(await session.CollectionAsync(ns).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
        }
        foreach (CouchbaseNamespace ns in session.Namespaces)
        {
            CompressionNamespace handle = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
            if (train && options.Mode == RewriteMode.Compress && handle.State.UsesDictionary && handle.CurrentDictionary is null)
            {
                trained.Add(await TrainFromCollectionAsync(session, ns, handle, settings, 20_000, console, cancellationToken).ConfigureAwait(false));
            }
            results.Add(await RewriteAsync(session, ns, handle, options, settings, console, cancellationToken).ConfigureAwait(false));
        }
        var report = new RewriteReport(command, results, trained, results.Any(r => r.Failed > 0) ? 1 : 0);
        console.Write(report, MigrateCommand.ToTable);
        return report.ExitCode;
    }

    private static CouchbaseSession Open(LiveSettings settings, Action<string, CompressionEngineOptions>? @override = null) => CouchbaseSession.Open(settings, @override);

    /// <summary>The JSON of a compressed document (checked), or null for one that is read as it is (plain or other).</summary>
    /// <exception cref="InvalidDataException">It cannot be read.</exception>
    private static async Task<byte[]?> DecodeAsync(CompressionNamespace handle, StoredBody body, CancellationToken cancellationToken)
    {
        switch (body.Kind)
        {
            case BodyKind.Plain:
            case BodyKind.Other:
                return null;
            case BodyKind.Foreign:
                throw new InvalidDataException(StoredBody.ForeignMessage);
        }
        await handle.EnsureDictionaryAsync(body.Body, cancellationToken).ConfigureAwait(false);
        byte[] json = handle.Decompress(body.Body);
        WellFormed(json);
        return json;
    }

    /// <summary>
    /// The check <c>verify</c> and <c>--decompress</c> make on a decompressed document, and <c>migrate</c> on a plain one
    /// before compressing it, so that nothing is compressed that could not be decompressed again. Deep nesting is allowed
    /// (4096 levels: System.Text.Json's default of 64 refused documents that the compressed collection stores).
    /// </summary>
    private static void WellFormed(ReadOnlyMemory<byte> json, string what = "the decompressed document")
    {
        try
        {
            using var _ = JsonDocument.Parse(json, new JsonDocumentOptions { MaxDepth = 4096 });
        }
        catch (JsonException ex)
        {
            throw new InvalidDataException($"{what} is not well-formed JSON: {ex.Message}", ex);
        }
    }

    private static async Task<TrainResult> TrainFromCollectionAsync(CouchbaseSession session, CouchbaseNamespace ns, CompressionNamespace handle, LiveSettings settings,
        int max, LiveOutput console, CancellationToken cancellationToken)
    {
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        List<string> keys = await BodyAccess.KeysAsync(collection, null, cancellationToken).ConfigureAwait(false);
        if (keys.Count > max) keys.RemoveRange(max, keys.Count - max);
        (long read, long skipped) = await console.ProgressAsync($"sample {ns}", keys.Count, async progress =>
        {
            long read = 0, skipped = 0;
            await foreach (var batch in BodyAccess.BatchesAsync(collection, keys, settings.BatchSize, cancellationToken).ConfigureAwait(false))
            {
                foreach (StoredBody body in batch)
                {
                    read++;
                    try
                    {
                        byte[]? json = body.Kind == BodyKind.Other ? null : await DecodeAsync(handle, body, cancellationToken).ConfigureAwait(false) ?? body.Body;
                        if (json is null) skipped++; // not JSON: the collection would not compress it either
                        else handle.State.Reservoir.Offer(json);
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                    {
                        skipped++; // verify names them
                    }
                }
                progress(batch.Count);
            }
            return (read, skipped);
        }).ConfigureAwait(false);
        return await TrainAsync(ns, handle, "collection", read, skipped, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<TrainResult> TrainFromFileAsync(CouchbaseNamespace ns, CompressionNamespace handle, FileInfo file, int max, CancellationToken cancellationToken)
    {
        long read = 0, skipped = 0;
        using var reader = new StreamReader(file.FullName, System.Text.Encoding.UTF8);
        while (read < max && await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
        {
            if (string.IsNullOrWhiteSpace(line)) continue;
            read++;
            byte[] json = System.Text.Encoding.UTF8.GetBytes(line.Trim());
            try
            {
                WellFormed(json);
                handle.State.Reservoir.Offer(json);
            }
            catch (InvalidDataException)
            {
                skipped++;
            }
        }
        return await TrainAsync(ns, handle, file.FullName, read, skipped, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<TrainResult> TrainAsync(CouchbaseNamespace ns, CompressionNamespace handle, string source, long read, long skipped,
        CancellationToken cancellationToken)
    {
        int samples = handle.State.Reservoir.Count;
        DictionaryRecord? before = handle.CurrentDictionary;
        TrainingResult result = await handle.TrainAsync(cancellationToken).ConfigureAwait(false);
        DictionaryRecord? after = result.Dictionary;
        bool succeeded = result.Outcome is TrainingOutcome.Adopted or TrainingOutcome.AdoptedFromOtherClient or TrainingOutcome.NotBetter;
        return new TrainResult(ns.Name, source, read, skipped, samples, result.Outcome, succeeded, before?.Version,
            after is null ? null : new TrainedDictionary(after.Id, after.Version, after.Content.Length, after.SampleCount, Math.Round(after.Ratio, 4)));
    }
}
