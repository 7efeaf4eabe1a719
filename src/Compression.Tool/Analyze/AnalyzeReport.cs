using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Compression.Tool.Analyze;

/// <summary>Renders an <see cref="AnalyzeResult"/> as a readable table or as one JSON object.</summary>
internal static class AnalyzeReport
{
    private static readonly JsonSerializerOptions Json = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
        WriteIndented = true,
    };

    public static string ToJson(AnalyzeResult result) => JsonSerializer.Serialize(result, Json);

    public static string ToTable(AnalyzeResult result, string name)
    {
        var c = CultureInfo.InvariantCulture;
        var sb = new StringBuilder();
        sb.AppendLine(c, $"{name}: {result.Documents:N0} document{(result.Documents == 1 ? "" : "s")}, {result.RawBytes:N0} bytes (average {result.RawBytes / Math.Max(1, result.Documents):N0} B)");
        if (result.Input is { Format: CorpusFormat.JsonArray })
            sb.AppendLine(c, $"read as a JSON array of {result.Documents:N0} document{(result.Documents == 1 ? "" : "s")}");
        if (result.Input is { SkippedLines: > 0 } input)
            sb.AppendLine(input.SkippedSummary());
        string dictionary = result.DictionarySize > 0
            ? $"dictionary of {result.DictionarySize:N0} B trained on the other {result.TrainDocuments:N0}"
            : $"no dictionary: the other {result.TrainDocuments:N0} documents are too few to train one";
        sb.AppendLine(c, $"every row measured on the same {result.TestDocuments:N0} documents (seeded 80%); {dictionary}{Shapes(result)}; checksum {(result.Checksum ? "on" : "off")}; seed {result.Seed}");
        if (result.ShapesNote is { } note) sb.AppendLine(note);
        sb.AppendLine();
        sb.AppendLine("| codec | level | dictionary | ratio | compress MB/s | decompress MB/s |");
        sb.AppendLine("|---|---:|---|---:|---:|---:|");
        foreach (var r in result.Results)
            sb.AppendLine(c, $"| {r.Codec} | {r.Level} | {DictionaryCell(r)} | {r.Ratio:F2} | {r.CompressMBps:F1} | {r.DecompressMBps:F1} |");
        sb.AppendLine();
        sb.AppendLine(c, $"limit (whole corpus as one zstd-{result.LimitLevel} frame): {result.LimitRatio:F2}");
        if (result.Online is { } online)
        {
            sb.AppendLine(c, $"online (file order through the dictionary engine, {Bootstrap(online)}): ratio {online.Ratio:F2}{OfTheLimit(result, online)}{Packed(online)}");
            foreach (var v in online.Versions)
                sb.AppendLine(c, $"  {Version(v)}");
        }
        sb.AppendLine(c, $"recommended: {result.Recommendation}");
        return sb.ToString();
    }

    /// <summary>The dictionary column: <c>no</c>, <c>yes</c>, or <c>yes + shapes</c> (documents packed with the shape table first).</summary>
    internal static string DictionaryCell(CodecResult r) => r.Shapes ? "yes + shapes" : r.Dictionary ? "yes" : "no";

    /// <summary>The header's words on the shape table of the rows with shapes; empty when there are none.</summary>
    internal static string Shapes(AnalyzeResult result) =>
        result.ShapeCount is { } n ? string.Create(CultureInfo.InvariantCulture, $"; rows with shapes: a shape table of {n:N0} shape{(n == 1 ? "" : "s")}{(result.ModelledFields is > 0 and var f ? $", a field model of {f:N0} field{(f == 1 ? "" : "s")} (codec 8)" : "")} and its own dictionary, trained on the same documents") : "";

    /// <summary>How the replay started: with the write path alone, or from the first documents (<c>--train-first</c>).</summary>
    internal static string Bootstrap(OnlineResult online) =>
        online.TrainedFirst > 0 ? string.Create(CultureInfo.InvariantCulture, $"the first {online.TrainedFirst:N0} documents trained from before any was written") : "bootstrap included";

    /// <summary>How many replayed documents were written packed: <c>; 3,137 of 3,201 documents written packed (shapes)</c>.</summary>
    internal static string Packed(OnlineResult online) =>
        string.Create(CultureInfo.InvariantCulture, $"; {online.PackedDocuments:N0} of {online.Documents:N0} documents written packed (shapes)");

    /// <summary>One adopted version: <c>version 2 (id 16255) adopted after 256 documents, held-out ratio 4.60, with a shape table</c>.</summary>
    internal static string Version(OnlineVersionResult v) =>
        string.Create(CultureInfo.InvariantCulture, $"version {v.Version} (id {v.Id}) adopted after {v.AfterDocuments:N0} documents, held-out ratio {v.Ratio:F2}{(v.Shapes ? ", with a shape table" : "")}");

    /// <summary>The online ratio as a share of the limit (what the replay reaches of what no per-document scheme can beat).</summary>
    internal static string OfTheLimit(AnalyzeResult result, OnlineResult online) =>
        result.LimitRatio > 0 ? string.Create(CultureInfo.InvariantCulture, $", {online.Ratio / result.LimitRatio:F3} of the limit") : "";

    /// <summary>The hidden <c>--sweep</c> output: markdown tables for docs/dictionary-defaults.md.</summary>
    public static string ToSweepTables(SweepResult result, string name)
    {
        var c = CultureInfo.InvariantCulture;
        var sb = new StringBuilder();
        int[] sizes = [.. result.Cells.Select(x => x.RequestedSize).Distinct()];
        int[] levels = [.. result.Cells.Where(x => x.TrainDocuments == result.TrainDocuments).Select(x => x.Level).Distinct()];
        long trainBytes = result.Cells.First(x => x.TrainDocuments == result.TrainDocuments).TrainBytes;
        sb.AppendLine(c, $"{name}: {result.Documents:N0} documents; dictionaries trained on {result.TrainDocuments:N0} ({trainBytes / 1024.0:N0} KiB), measured on {result.TestDocuments:N0}; cells: ratio @ compress MB/s");
        sb.AppendLine();
        sb.AppendLine("| dictionary | " + string.Join(" | ", levels.Select(l => $"level {l}")) + " |");
        sb.AppendLine("|---|" + string.Concat(levels.Select(_ => "---|")));
        foreach (int size in sizes)
        {
            var row = levels.Select(l => result.Cells.First(x => x.TrainDocuments == result.TrainDocuments && x.RequestedSize == size && x.Level == l));
            string cells = string.Join(" | ", row.Select(x => x.Ratio > 0 ? string.Create(c, $"{x.Ratio:F2} @ {x.CompressMBps:F0}") : "no dictionary"));
            sb.AppendLine(c, $"| {size / 1024} KiB | {cells} |");
        }
        sb.AppendLine();
        sb.AppendLine("level 3 ratio by training documents (first n of the training share) and dictionary size; best marked *");
        sb.AppendLine();
        sb.AppendLine("| training docs | sample KiB | " + string.Join(" | ", sizes.Select(s => $"{s / 1024} KiB")) + " | sample bytes / best size |");
        sb.AppendLine("|---|---|" + string.Concat(sizes.Select(_ => "---|")) + "---|");
        foreach (var group in result.Cells.Where(x => x.Level == 3).GroupBy(x => x.TrainDocuments))
        {
            var best = group.MaxBy(x => x.Ratio)!;
            string cells = string.Join(" | ", group.Select(x => x.Ratio > 0 ? string.Create(c, $"{x.Ratio:F2}{(x == best ? "*" : "")}") : "-"));
            string per = best.Ratio > 0 ? string.Create(c, $"{(double)best.TrainBytes / best.RequestedSize:F1}") : "-";
            sb.AppendLine(c, $"| {group.Key:N0} | {best.TrainBytes / 1024.0:N0} | {cells} | {per} |");
        }
        sb.AppendLine();
        sb.AppendLine("level 3 ratio (dictionary bytes) under the cap min(DictionarySize, sample bytes / 4, B x training docs)");
        sb.AppendLine();
        int[] perDocument = [.. result.Rules.Select(r => r.BytesPerDocument).Distinct()];
        sb.AppendLine("| training docs | " + string.Join(" | ", perDocument.Select(b => b == 0 ? "no B term" : $"B = {b}")) + " |");
        sb.AppendLine("|---|" + string.Concat(perDocument.Select(_ => "---|")));
        foreach (var group in result.Rules.GroupBy(r => r.TrainDocuments))
        {
            string cells = string.Join(" | ", group.Select(r => r.Ratio > 0 ? string.Create(c, $"{r.Ratio:F2} ({r.Size / 1024.0:F1} KiB)") : "-"));
            sb.AppendLine(c, $"| {group.Key:N0} | {cells} |");
        }
        return sb.ToString();
    }
}
