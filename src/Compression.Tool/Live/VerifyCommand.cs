using System.CommandLine;
using System.Text;
using Compression.Tool.Backends;

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
            return await DoczBackends.Choose(settings).VerifyAsync(settings, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
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
