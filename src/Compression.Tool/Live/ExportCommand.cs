using System.CommandLine;
using System.Text;
using Compression.Tool.Backends;

namespace Compression.Tool.Live;

/// <summary>
/// <c>export</c>: a whole namespace as decoded JSON Lines in a file, one document a line with its id, resumable from a
/// checkpoint file beside it (docs/docz.md, "export and import").
/// </summary>
internal static class ExportCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var to = new Option<FileInfo>("--to") { Description = "The JSON Lines file to write (its checkpoint is FILE.docz-checkpoint until the export is done).", Required = true };
        var restart = new Option<bool>("--restart") { Description = "Ignore an unfinished checkpoint (and overwrite the file): start from the first document." };
        var command = new Command("export",
            "Write every document of one namespace, decoded, to a JSON Lines file (MongoDB: canonical Extended JSON; Couchbase: {\"id\",\"value\"}); resumable.")
        {
            to, restart,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("export", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            FileInfo file = parse.GetValue(to)!;
            if (Directory.Exists(file.FullName)) throw new UsageException($"--to {file.FullName} is a directory; give a file name.");
            var options = new TransferOptions { File = file.FullName, Restart = parse.GetValue(restart) };
            var console = new LiveOutput(output, error, settings);
            return await DoczBackends.Choose(settings).ExportAsync(settings, options, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }

    public static string ToTable(TransferReport report)
    {
        var text = new StringBuilder();
        text.AppendLine($"{report.Namespace} {(report.Command == "export" ? "->" : "<-")} {report.File}{(report.Resumed ? $", resumed (run {report.Runs})" : "")}");
        foreach (TrainResult t in report.Trained)
            text.AppendLine($"  no dictionary yet; trained from {t.Documents:N0} lines: {t.Outcome}{(t.Dictionary is { } d ? $" (version {d.Version}, id {d.Id})" : "")}");
        if (report.Command == "import") text.AppendLine($"  lines read       {report.Lines,12:N0}");
        text.AppendLine($"  documents        {report.Documents,12:N0}");
        text.AppendLine($"  failed           {report.Failed,12:N0}");
        foreach (RewriteFailure f in report.Failures) text.AppendLine(report.Command == "export" ? $"  _id {f.Id}: {f.Error}" : $"  {f.Id}: {f.Error}");
        if (report.Failed > report.Failures.Count) text.AppendLine($"  ... and {report.Failed - report.Failures.Count:N0} more (--max-failures)");
        text.Append(report.ExitCode == 0
            ? $"{report.Command}: done."
            : report.Command == "export"
                ? $"{report.Command}: done, with failures (the documents named above cannot be read and are not in the file)."
                : $"{report.Command}: done, with failures (the lines named above were not written).");
        return text.ToString();
    }
}

/// <summary>Settings of one <c>export</c> or <c>import</c>.</summary>
internal sealed record TransferOptions
{
    /// <summary>The JSON Lines file: written by <c>export</c>, read by <c>import</c>.</summary>
    public required string File { get; init; }

    /// <summary>Ignore an unfinished checkpoint and start over.</summary>
    public bool Restart { get; init; }

    /// <summary><c>import</c>: train a first dictionary from the file when the namespace has none (not with <c>--no-train</c>).</summary>
    public bool Train { get; init; } = true;

    /// <summary>Test hook: runs after a batch is written, before its checkpoint is (a crash there leaves the batch past the checkpoint).</summary>
    internal Func<TransferCheckpoint, Task>? BeforeCheckpoint { get; init; }
}

/// <summary>The report of <c>export</c> and <c>import</c>: one namespace, its file, what was written (this run and the runs before it).</summary>
internal sealed record TransferReport(string Command, string Namespace, string File, bool Resumed, int Runs, long Lines, long Documents, long Failed,
    IReadOnlyList<RewriteFailure> Failures, IReadOnlyList<TrainResult> Trained, int ExitCode);
