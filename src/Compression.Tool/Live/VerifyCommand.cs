using System.CommandLine;
using System.Text;
using Compression.Dictionaries;

namespace Compression.Tool.Live;

/// <summary><c>verify</c>: read every document, decode every compressed one, and report those that cannot be read.</summary>
internal static class VerifyCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var command = new Command("verify", "Read every document of each namespace, decompress and check the compressed ones; exit 1 when any cannot be read.");
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("verify", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            var console = new LiveOutput(output, error, settings);
            if (CouchbasePlugin.Find(settings) is { } backend) return await backend.VerifyAsync(settings, console, cancellationToken).ConfigureAwait(false);
            await using LiveSession session = LiveSession.Open(settings);
            var results = new List<VerifyResult>();
            foreach (LiveNamespace ns in session.Namespaces)
            {
                results.Add(await VerifyAsync(session, ns, settings, console, cancellationToken).ConfigureAwait(false));
            }
            long failed = results.Sum(r => r.Failed);
            var report = new VerifyReport("verify", results, failed, failed > 0 ? 1 : 0);
            console.Write(report, ToTable);
            return report.ExitCode;
        }));
        return command;
    }

    public static async Task<VerifyResult> VerifyAsync(LiveSession session, LiveNamespace ns, LiveSettings settings, LiveOutput console,
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

    public static string ToTable(VerifyReport report)
    {
        var text = new StringBuilder();
        text.AppendLine("namespace                          documents   compressed        plain       failed");
        foreach (VerifyResult r in report.Namespaces)
        {
            text.AppendLine($"{r.Namespace,-32} {r.Documents,11:N0} {r.Compressed,12:N0} {r.Plain,12:N0} {r.Failed,12:N0}");
            foreach (RewriteFailure f in r.Failures) text.AppendLine($"  _id {f.Id}: {f.Error}");
            if (r.Failed > r.Failures.Count) text.AppendLine($"  ... and {r.Failed - r.Failures.Count:N0} more (--max-failures)");
        }
        text.Append(report.Failed == 0 ? "verify: every document reads back." : $"verify: {report.Failed:N0} document(s) cannot be read.");
        return text.ToString();
    }
}

internal sealed record VerifyResult(string Namespace, long Documents, long Compressed, long Plain, long Failed, IReadOnlyList<RewriteFailure> Failures);

internal sealed record VerifyReport(string Command, IReadOnlyList<VerifyResult> Namespaces, long Failed, int ExitCode);
