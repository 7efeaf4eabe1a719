using System.CommandLine;
using System.Text;
using Compression.Dictionaries;
using Compression.Tool.Backends;

namespace Compression.Tool.Live;

/// <summary>
/// <c>train</c>: samples a namespace's documents (live, or from a JSON Lines file) and runs the engine's own training on
/// them: held-out measurement, adoption only when clearly better, insert-only publication to the store in the database.
/// The backend (<see cref="IDoczBackend.TrainAsync"/>) reads the documents; this command owns the options and the report.
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
            return await DoczBackends.Choose(settings).TrainAsync(settings, file, max, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
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
