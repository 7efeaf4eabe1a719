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
        sb.AppendLine(c, $"{name}: {result.Documents:N0} documents, {result.RawBytes:N0} bytes (average {result.RawBytes / Math.Max(1, result.Documents):N0} B)");
        sb.AppendLine(c, $"measured on {result.TestDocuments:N0} documents (seeded 80%); dictionary of {result.DictionarySize:N0} B trained on the other {result.TrainDocuments:N0}; checksum {(result.Checksum ? "on" : "off")}; seed {result.Seed}");
        sb.AppendLine();
        sb.AppendLine("| codec | level | dictionary | ratio | compress MB/s | decompress MB/s |");
        sb.AppendLine("|---|---:|---|---:|---:|---:|");
        foreach (var r in result.Results)
            sb.AppendLine(c, $"| {r.Codec} | {r.Level} | {(r.Dictionary ? "yes" : "no")} | {r.Ratio:F2} | {r.CompressMBps:F1} | {r.DecompressMBps:F1} |");
        sb.AppendLine();
        sb.AppendLine(c, $"limit (whole corpus as one zstd-19 frame): {result.LimitRatio:F2}");
        if (result.Online is { } online)
        {
            sb.AppendLine(c, $"online (file order through the dictionary engine, bootstrap included): ratio {online.Ratio:F2}");
            foreach (var v in online.Versions)
                sb.AppendLine(c, $"  version {v.Version} (id {v.Id}) adopted after {v.AfterDocuments:N0} documents, held-out ratio {v.Ratio:F2}");
        }
        sb.AppendLine(c, $"recommended: {result.Recommendation}");
        return sb.ToString();
    }
}
