using System.CommandLine;
using System.Globalization;
using System.Text;
using Compression.Tool.Backends;

namespace Compression.Tool.Live;

/// <summary><c>migrate</c> (compress in place, or <c>--decompress</c>) and <c>recompress</c>: resumable rewrites of a collection.</summary>
internal static class MigrateCommand
{
    public static Command CreateMigrate(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var decompress = new Option<bool>("--decompress") { Description = "Undo: write every compressed document back plain, byte for byte as it was." };
        var restart = new Option<bool>("--restart") { Description = "Ignore an unfinished checkpoint and start from the first document." };
        var noTrain = new Option<bool>("--no-train") { Description = "When the namespace has no dictionary yet, compress without one instead of training one first." };
        var command = new Command("migrate",
            "Compress every plain document of each namespace in place, in batches, resumable from a checkpoint in the database; documents already compressed are left alone.")
        {
            decompress, restart, noTrain,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("migrate", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            var options = new RewriteOptions { Mode = parse.GetValue(decompress) ? RewriteMode.Decompress : RewriteMode.Compress, Restart = parse.GetValue(restart) };
            return await RunAsync("migrate", output, error, settings, options, train: !parse.GetValue(noTrain), olderThan: null, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }

    public static Command CreateRecompress(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var level = new Option<int?>("--level") { Description = "Compression level for the rewrite (zstd 1-22; e.g. 19 for cold documents). Without it, only documents with an older dictionary are rewritten." };
        var olderThan = new Option<string>("--older-than") { Description = "Only documents whose ObjectId _id was made before this date (ISO 8601): the cold ones." };
        var restart = new Option<bool>("--restart") { Description = "Ignore an unfinished checkpoint and start from the first document." };
        var command = new Command("recompress",
            "Rewrite compressed documents with the current dictionary (and --level), oldest _id first, keeping a rewrite only when it is smaller; resumable like migrate.")
        {
            level, olderThan, restart,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("recompress", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            DateTimeOffset? before = null;
            if (parse.GetValue(olderThan) is { } text)
            {
                if (!DateTimeOffset.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out DateTimeOffset date))
                    throw new UsageException($"--older-than '{text}' is not a date (ISO 8601, e.g. 2026-01-31 or 2026-01-31T12:00:00Z).");
                before = date;
            }
            var options = new RewriteOptions { Mode = RewriteMode.Recompress, Level = parse.GetValue(level), Restart = parse.GetValue(restart) };
            return await RunAsync("recompress", output, error, settings, options, train: false, before, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }

    private static async Task<int> RunAsync(string name, TextWriter output, TextWriter error, LiveSettings settings, RewriteOptions options, bool train,
        DateTimeOffset? olderThan, CancellationToken cancellationToken)
    {
        var console = new LiveOutput(output, error, settings);
        return await DoczBackends.Choose(settings).RewriteAsync(name, settings, options, train, olderThan, console, cancellationToken).ConfigureAwait(false);
    }

    public static string ToTable(RewriteReport report)
    {
        var text = new StringBuilder();
        foreach (TrainResult t in report.Trained)
            text.AppendLine($"{t.Namespace}: no dictionary yet; trained from {t.Documents:N0} documents: {t.Outcome}{(t.Dictionary is { } d ? $" (version {d.Version}, id {d.Id})" : "")}");
        foreach (RewriteResult r in report.Namespaces)
        {
            string dictionary = r.DictionaryId is uint id ? $"dictionary {id} (version {r.DictionaryVersion})" : "no dictionary";
            text.AppendLine($"{r.Namespace}: {r.Mode}{(r.Resumed ? $", resumed (run {r.Runs})" : "")}, with {dictionary}");
            text.AppendLine($"  scanned this run {r.Scanned,12:N0}");
            text.AppendLine($"  written          {r.Written,12:N0}");
            text.AppendLine($"  already done     {r.Skipped,12:N0}");
            if (r.Mode == "recompress") text.AppendLine($"  left as they are {r.Unchanged,12:N0}  (plain, current dictionary, or not smaller)");
            text.AppendLine($"  failed           {r.Failed,12:N0}");
            foreach (RewriteFailure f in r.Failures) text.AppendLine($"  _id {f.Id}: {f.Error}");
        }
        text.Append(report.ExitCode == 0 ? $"{report.Command}: done." : $"{report.Command}: done, with failures (the documents named above are left as they were).");
        return text.ToString();
    }
}

/// <summary>The report of <c>migrate</c> and <c>recompress</c> (shared with the Couchbase plugin).</summary>
internal sealed record RewriteReport(string Command, IReadOnlyList<RewriteResult> Namespaces, IReadOnlyList<TrainResult> Trained, int ExitCode);
