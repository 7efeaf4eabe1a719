using System.CommandLine;
using System.Globalization;
using System.Text;
using Compression.Tool.Backends;

namespace Compression.Tool.Live;

/// <summary>
/// <c>dictionaries list|export|import</c>: a database's dictionary store (every version of every namespace) shown,
/// written to one file (<see cref="DictionaryFile"/>) and published back from it, insert-only. A lost dictionary is lost
/// data: the documents that name it cannot be read (docs/reliability.md).
/// </summary>
internal static class DictionariesCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var command = new Command("dictionaries", "List, export and import the dictionary store: every version of every namespace, to one file and back.")
        {
            CreateList(output, error), CreateExport(output, error), CreateImport(output, error),
        };
        return command;
    }

    private static Command CreateList(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var command = new Command("list",
            "Every dictionary version per namespace (with --namespace, those namespaces; else every namespace in the stores of the configured ones' databases): id, codec, level, created, sizes, samples, ratio, which is current. Exit 1 when a record cannot be read.");
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("dictionaries list", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            var console = new LiveOutput(output, error, settings);
            return await Backend(settings).ListDictionariesAsync(settings, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }

    private static Command CreateExport(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var to = new Option<FileInfo>("--to") { Description = "The file to write (JSON Lines, docs/docz.md); it must not exist yet.", Required = true };
        var command = new Command("export",
            "Write every dictionary version (of --namespace, or of every namespace in the stores) to one file, to keep with the database's backups. Exit 1 when a record cannot be read (the file then lacks it).")
        {
            to,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("dictionaries export", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            FileInfo file = parse.GetValue(to)!;
            if (file.Exists || Directory.Exists(file.FullName))
                throw new UsageException($"--to {file.FullName} exists; give a new file (an export never overwrites one).");
            if (file.Directory is not { Exists: true })
                throw new UsageException($"--to {file.FullName}: directory {file.DirectoryName} not found.");
            var console = new LiveOutput(output, error, settings);
            return await Backend(settings).ExportDictionariesAsync(settings, file, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }

    private static Command CreateImport(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var from = new Option<FileInfo>("--from") { Description = "The file of dictionaries export.", Required = true };
        var command = new Command("import",
            "Publish every record of an export file (or those of --namespace) to its database's store, insert-only with its own id and version: one already there is 'present'; one whose id or version the store holds for another dictionary is refused (exit 1). The file is checked whole first: a damaged or changed file imports nothing.")
        {
            from,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("dictionaries import", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            FileInfo file = parse.GetValue(from)!;
            if (!file.Exists)
                throw new UsageException(Directory.Exists(file.FullName) ? $"--from {file.FullName} is a directory; give an export file." : $"--from {file.FullName}: file not found.");
            var console = new LiveOutput(output, error, settings);
            return await Backend(settings).ImportDictionariesAsync(settings, file, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }

    private static IDoczBackend Backend(LiveSettings settings) => DoczBackends.Choose(settings);

    public static string ToTable(DictionaryListReport report)
    {
        var text = new StringBuilder();
        foreach (StoreListing store in report.Stores)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"{store.Store}");
            foreach (NamespaceListing ns in store.Namespaces)
            {
                text.AppendLine(CultureInfo.InvariantCulture,
                    $"  {ns.Namespace}: {ns.Dictionaries.Count} version(s), current version {(ns.CurrentVersion?.ToString(CultureInfo.InvariantCulture) ?? "none")}");
                if (ns.Dictionaries.Count == 0) continue;
                text.AppendLine("      version          id  codec  level  created (UTC)              bytes   shapes     samples    ratio");
                foreach (DictionaryListing d in ns.Dictionaries)
                {
                    text.AppendLine(CultureInfo.InvariantCulture,
                        $"    {(d.Current ? "*" : " ")} {d.Version,7} {d.Id,11}  {d.Codec,-5} {d.Level,6}  {d.Created.UtcDateTime,-19:yyyy-MM-dd HH:mm:ss} {d.Bytes,13:N0} {d.ShapesBytes,8:N0} {d.Samples,11:N0} {d.Ratio,8:0.00}");
                }
            }
            foreach (string problem in store.Unreadable) text.AppendLine(CultureInfo.InvariantCulture, $"  unreadable: {problem}");
        }
        int unreadable = report.Stores.Sum(s => s.Unreadable.Count);
        text.Append(unreadable == 0 ? "dictionaries list: every record reads (* marks the current version)." : $"dictionaries list: {unreadable} record(s) cannot be read.");
        return text.ToString();
    }

    public static string ToTable(DictionaryExportReport report)
    {
        var text = new StringBuilder();
        foreach (ExportedNamespace ns in report.Namespaces)
            text.AppendLine(CultureInfo.InvariantCulture, $"{ns.Namespace}: {ns.Versions} version(s){(ns.Newest is int v ? $", newest {v}" : "")}");
        foreach (string problem in report.Unreadable) text.AppendLine(CultureInfo.InvariantCulture, $"unreadable, not in the file: {problem}");
        text.Append(report.Unreadable.Count == 0
            ? $"dictionaries export: {report.Records} record(s) written to {report.File}."
            : $"dictionaries export: {report.Records} record(s) written to {report.File}; {report.Unreadable.Count} record(s) cannot be read and are NOT in it.");
        return text.ToString();
    }

    public static string ToTable(DictionaryImportReport report)
    {
        var text = new StringBuilder();
        foreach (string problem in report.FileProblems) text.AppendLine(CultureInfo.InvariantCulture, $"{report.File}: {problem}");
        foreach (ImportedNamespace ns in report.Namespaces)
        {
            text.AppendLine(CultureInfo.InvariantCulture,
                $"{ns.Namespace} ({ns.Store}): current version now {(ns.CurrentVersion?.ToString(CultureInfo.InvariantCulture) ?? "none")}");
            foreach (ImportedRecord r in ns.Records)
                text.AppendLine(CultureInfo.InvariantCulture, $"  version {r.Version,7} id {r.Id,11}: {Name(r.Outcome)}{(r.Message is null ? "" : $": {r.Message}")}");
        }
        text.Append(report.FileProblems.Count > 0
            ? "dictionaries import: the file is refused; nothing was imported."
            : $"dictionaries import: {report.Imported} imported, {report.Present} already present, {report.NotImported} not imported.");
        return text.ToString();
    }

    private static string Name(ImportOutcome outcome) => outcome switch
    {
        ImportOutcome.Imported => "imported",
        ImportOutcome.Present => "present",
        ImportOutcome.Conflict => "CONFLICT, not imported",
        ImportOutcome.Refused => "refused",
        _ => "not imported",
    };
}

/// <summary>A dictionary version as <c>dictionaries list</c> shows it.</summary>
internal sealed record DictionaryListing(uint Id, int Version, string Codec, int Level, DateTimeOffset Created, int Bytes, int ShapesBytes, int Samples,
    double Ratio, bool Current, string ContentHash);

internal sealed record NamespaceListing(string Namespace, int? CurrentVersion, IReadOnlyList<DictionaryListing> Dictionaries);

/// <summary>A store's namespaces, and the problem of each record that does not read or is not valid.</summary>
internal sealed record StoreListing(string Store, IReadOnlyList<NamespaceListing> Namespaces, IReadOnlyList<string> Unreadable);

internal sealed record DictionaryListReport(string Command, IReadOnlyList<StoreListing> Stores, int ExitCode);

internal sealed record ExportedNamespace(string Namespace, int Versions, int? Newest);

internal sealed record DictionaryExportReport(string Command, string File, int Records, IReadOnlyList<ExportedNamespace> Namespaces, IReadOnlyList<string> Unreadable,
    int ExitCode);

/// <summary>What import did with a record.</summary>
internal enum ImportOutcome
{
    /// <summary>Published: the store did not have it.</summary>
    Imported,

    /// <summary>The store holds the same dictionary under the same id and version already.</summary>
    Present,

    /// <summary>The store holds another dictionary under its id or its version: refused, nothing overwritten.</summary>
    Conflict,

    /// <summary>The store cannot take it (too large for the configuration, or not following the store's newest version).</summary>
    Refused,

    /// <summary>Not tried: an earlier version of its namespace was not imported.</summary>
    NotImported,
}

internal sealed record ImportedRecord(uint Id, int Version, ImportOutcome Outcome, string? Message);

internal sealed record ImportedNamespace(string Namespace, string Store, int? CurrentVersion, IReadOnlyList<ImportedRecord> Records);

internal sealed record DictionaryImportReport(string Command, string File, int Imported, int Present, int NotImported, IReadOnlyList<ImportedNamespace> Namespaces,
    IReadOnlyList<string> FileProblems, int ExitCode);
