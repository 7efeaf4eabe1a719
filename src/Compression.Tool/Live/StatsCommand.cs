using System.CommandLine;
using System.Text;
using Compression.Dictionaries;

namespace Compression.Tool.Live;

/// <summary><c>stats</c>: per namespace, documents, stored and raw bytes, ratio, and how many documents use each dictionary version.</summary>
internal static class StatsCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var command = new Command("stats", "Per namespace: documents (plain and compressed), stored and raw BSON bytes, ratio, and documents per dictionary version.");
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("stats", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            var console = new LiveOutput(output, error, settings);
            if (CouchbasePlugin.Find(settings) is { } backend) return await backend.StatsAsync(settings, console, cancellationToken).ConfigureAwait(false);
            await using LiveSession session = LiveSession.Open(settings);
            var results = new List<StatsResult>();
            foreach (LiveNamespace ns in session.Namespaces)
            {
                results.Add(await StatsAsync(session, ns, settings, console, cancellationToken).ConfigureAwait(false));
            }
            var report = new StatsReport("stats", results, results.Any(r => r.Unreadable > 0) ? 1 : 0);
            console.Write(report, ToTable);
            return report.ExitCode;
        }));
        return command;
    }

    private static async Task<StatsResult> StatsAsync(LiveSession session, LiveNamespace ns, LiveSettings settings, LiveOutput console,
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

    public static string ToTable(StatsReport report)
    {
        var text = new StringBuilder();
        foreach (StatsResult r in report.Namespaces)
        {
            text.AppendLine($"{r.Namespace}");
            text.AppendLine($"  documents   {r.Documents,15:N0}  ({r.Compressed:N0} compressed, {r.Plain:N0} plain{(r.Unreadable > 0 ? $", {r.Unreadable:N0} unreadable" : "")})");
            text.AppendLine($"  stored      {r.StoredBytes,15:N0} B");
            text.AppendLine($"  raw         {r.RawBytes,15:N0} B{(r.Unreadable > 0 ? " (readable documents only)" : "")}");
            text.AppendLine($"  ratio       {(r.Ratio is double ratio ? ratio.ToString("0.00", System.Globalization.CultureInfo.InvariantCulture) : "-"),15}");
            text.AppendLine($"  current dictionary version: {(r.CurrentVersion?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "none")}");
            foreach (DictionaryUse use in r.Dictionaries)
            {
                string name = use.Id is uint id ? $"dictionary {id} (version {(use.Version?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "not in the store")})" : "no dictionary";
                text.AppendLine($"    {name,-48} {use.Documents,12:N0} documents");
            }
            foreach (RewriteFailure f in r.Failures) text.AppendLine($"  _id {f.Id}: {f.Error}");
        }
        return text.ToString().TrimEnd();
    }
}

/// <summary>How many compressed documents name a dictionary (<see cref="Id"/> null: compressed without one).</summary>
internal sealed record DictionaryUse(uint? Id, int? Version, long Documents);

internal sealed record StatsResult(string Namespace, long Documents, long Compressed, long Plain, long Unreadable, long StoredBytes, long RawBytes,
    double? Ratio, int? CurrentVersion, IReadOnlyList<DictionaryUse> Dictionaries, IReadOnlyList<RewriteFailure> Failures);

internal sealed record StatsReport(string Command, IReadOnlyList<StatsResult> Namespaces, int ExitCode);
