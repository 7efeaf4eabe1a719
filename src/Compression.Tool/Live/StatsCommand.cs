using System.CommandLine;
using System.Text;
using Compression.Tool.Backends;

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
            return await DoczBackends.Choose(settings).StatsAsync(settings, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
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
