using System.CommandLine;
using System.Text;
using Compression.Dictionaries;
using MongoDB.Bson;

namespace Compression.Tool.Live;

/// <summary>
/// <c>train</c>: samples a namespace's documents (live, or from a JSON Lines file) and runs the engine's own training on
/// them: held-out measurement, adoption only when clearly better, insert-only publication to the store in the database.
/// </summary>
internal static class TrainCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var from = new Option<FileInfo>("--from") { Description = "Train from this JSON Lines file (one document per line) instead of the collection's documents." };
        var maxDocuments = new Option<int>("--max-documents") { Description = "Documents read to draw the samples from.", DefaultValueFactory = _ => 20_000 };
        var command = new Command("train", "Train a zstd dictionary for each namespace from its documents and publish it to the dictionary store in its database.")
        {
            from, maxDocuments,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("train", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            int max = parse.GetValue(maxDocuments);
            if (max < 1) throw new UsageException($"--max-documents {max} must be at least 1.");
            FileInfo? file = parse.GetValue(from);
            if (file is not null && !file.Exists)
                throw new UsageException(Directory.Exists(file.FullName) ? $"--from {file.FullName} is a directory; give a JSON Lines file." : $"--from {file.FullName}: file not found.");
            var console = new LiveOutput(output, error, settings);
            if (CouchbasePlugin.Find(settings) is { } backend) return await backend.TrainAsync(settings, file, max, console, cancellationToken).ConfigureAwait(false);
            await using LiveSession session = LiveSession.Open(settings);
            if (file is not null && session.Namespaces.Count != 1) throw new UsageException("--from trains one namespace: give exactly one --namespace.");
            var results = new List<TrainResult>();
            foreach (LiveNamespace ns in session.Namespaces)
            {
                StoredDocumentCodec codec = await session.OpenAsync(ns, cancellationToken).ConfigureAwait(false);
                results.Add(file is null
                    ? await TrainFromCollectionAsync(session, ns, codec, settings, max, console, cancellationToken).ConfigureAwait(false)
                    : await TrainFromFileAsync(ns, codec, file, max, cancellationToken).ConfigureAwait(false));
            }
            var report = new TrainReport("train", results, results.Any(r => !r.Succeeded) ? 1 : 0);
            console.Write(report, ToTable);
            return report.ExitCode;
        }));
        return command;
    }

    /// <summary>Offers the compressed part of up to <paramref name="max"/> documents (in <c>_id</c> order) to the engine's sample, then trains.</summary>
    public static async Task<TrainResult> TrainFromCollectionAsync(LiveSession session, LiveNamespace ns, StoredDocumentCodec codec, LiveSettings settings,
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

    private static async Task<TrainResult> TrainFromFileAsync(LiveNamespace ns, StoredDocumentCodec codec, FileInfo file, int max, CancellationToken cancellationToken)
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

    private static async Task<TrainResult> TrainAsync(LiveNamespace ns, StoredDocumentCodec codec, string source, long read, long skipped,
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

    public static string ToTable(TrainReport report)
    {
        var text = new StringBuilder();
        foreach (TrainResult r in report.Namespaces)
        {
            text.AppendLine($"{r.Namespace}: {r.Documents:N0} documents read from {r.Source}{(r.Skipped > 0 ? $" ({r.Skipped:N0} unreadable, skipped)" : "")}, {r.Samples:N0} sampled");
            text.Append($"  outcome: {r.Outcome}");
            if (r.Dictionary is { } d)
                text.Append($"; current dictionary: id {d.Id}, version {d.Version}, {d.Bytes:N0} B, trained on {d.Samples:N0} samples, held-out ratio {d.Ratio:0.00}");
            text.AppendLine();
        }
        return text.ToString().TrimEnd();
    }
}

internal sealed record TrainedDictionary(uint Id, int Version, int Bytes, int Samples, double Ratio);

internal sealed record TrainResult(string Namespace, string Source, long Documents, long Skipped, int Samples, TrainingOutcome Outcome, bool Succeeded,
    int? PreviousVersion, TrainedDictionary? Dictionary);

internal sealed record TrainReport(string Command, IReadOnlyList<TrainResult> Namespaces, int ExitCode);
