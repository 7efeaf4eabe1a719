using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Dictionaries;

namespace Compression.Tool.Analyze;

/// <summary>
/// Renders an <see cref="AnalyzeResult"/> as one self-contained HTML page (<c>analyze --html FILE</c>): header, the
/// results table, an inline SVG chart of ratio against compress speed, the recommendation and its <c>appsettings.json</c>
/// snippet. No external scripts, fonts or styles; the markup is also well-formed XML, so tests can parse it.
/// </summary>
internal static class AnalyzeHtmlReport
{
    /// <summary>The configuration section the snippet is rooted at (the prefix the options' <c>Validate</c> messages name).</summary>
    internal const string SectionName = "Compression";

    private const int Width = 760, Height = 440, Left = 64, Right = 24, Top = 20, Bottom = 56;

    private static readonly CultureInfo C = CultureInfo.InvariantCulture;

    private static readonly Dictionary<string, string> Colors = new(StringComparer.Ordinal)
    {
        ["stored"] = "#7f7f7f", ["zstd"] = "#1f77b4", ["lz4"] = "#2ca02c", ["snappy"] = "#9467bd",
        ["deflate"] = "#8c564b", ["gzip"] = "#e377c2", ["brotli"] = "#ff7f0e",
    };

    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true };

    /// <summary>The page for <paramref name="result"/>, measured on the file <paramref name="name"/> and generated at <paramref name="generated"/>.</summary>
    public static string ToHtml(AnalyzeResult result, string name, DateTimeOffset generated)
    {
        var sb = new StringBuilder();
        sb.AppendLine("<!DOCTYPE html>");
        sb.AppendLine("<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">");
        sb.AppendLine("<head>");
        sb.AppendLine("<meta charset=\"utf-8\" />");
        sb.AppendLine("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />");
        sb.AppendLine(C, $"<title>docz analyze: {E(name)}</title>");
        sb.AppendLine("<style>");
        sb.AppendLine("body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 860px; padding: 0 1em; color: #222; }");
        sb.AppendLine("h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; }");
        sb.AppendLine(".meta { color: #555; margin: 0.2em 0; }");
        sb.AppendLine("table { border-collapse: collapse; font-variant-numeric: tabular-nums; }");
        sb.AppendLine("th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; } th { text-align: left; } td.n { text-align: right; }");
        sb.AppendLine("tr.recommended td { background: #fff3cd; font-weight: bold; }");
        sb.AppendLine("svg { max-width: 100%; height: auto; font-family: inherit; }");
        sb.AppendLine(".swatch { display: inline-block; width: 0.8em; height: 0.8em; vertical-align: middle; }");
        sb.AppendLine("pre { background: #f6f8fa; padding: 0.8em 1em; overflow-x: auto; }");
        sb.AppendLine("</style>");
        sb.AppendLine("</head>");
        sb.AppendLine("<body>");

        // Header: the same two lines as the table output, plus the date.
        sb.AppendLine("<header>");
        sb.AppendLine(C, $"<h1>{E(name)}</h1>");
        sb.AppendLine(C, $"<p class=\"meta\">{E(string.Create(C, $"{result.Documents:N0} document{(result.Documents == 1 ? "" : "s")}, {result.RawBytes:N0} bytes (average {result.RawBytes / Math.Max(1, result.Documents):N0} B)"))}</p>");
        if (result.Input is { Format: CorpusFormat.JsonArray })
            sb.AppendLine(C, $"<p class=\"meta\">{E(string.Create(C, $"read as a JSON array of {result.Documents:N0} document{(result.Documents == 1 ? "" : "s")}"))}</p>");
        if (result.Input is { SkippedLines: > 0 } input)
            sb.AppendLine(C, $"<p class=\"meta\">{E(input.SkippedSummary())}</p>");
        string dictionary = result.DictionarySize > 0
            ? string.Create(C, $"dictionary of {result.DictionarySize:N0} B trained on the other {result.TrainDocuments:N0}")
            : string.Create(C, $"no dictionary: the other {result.TrainDocuments:N0} documents are too few to train one");
        sb.AppendLine(C, $"<p class=\"meta\">{E(string.Create(C, $"every row measured on the same {result.TestDocuments:N0} documents (seeded 80%); {dictionary}{AnalyzeReport.Shapes(result)}; checksum {(result.Checksum ? "on" : "off")}; seed {result.Seed}"))}</p>");
        if (result.ShapesNote is { } note) sb.AppendLine(C, $"<p class=\"meta\">{E(note)}</p>");
        sb.AppendLine(C, $"<p class=\"meta\">{E(string.Create(C, $"measured {generated.ToUniversalTime():yyyy-MM-dd HH:mm} UTC by docz analyze; ratio = raw bytes / envelope bytes (envelope included), speeds in MB/s of raw bytes (10^6 B/s), one thread"))}</p>");
        sb.AppendLine("</header>");

        // The table: every row the table output has.
        sb.AppendLine("<h2>Results</h2>");
        sb.AppendLine("<table>");
        sb.AppendLine("<thead><tr><th>codec</th><th>level</th><th>dictionary</th><th>ratio</th><th>compress MB/s</th><th>decompress MB/s</th></tr></thead>");
        sb.AppendLine("<tbody>");
        foreach (var r in result.Results)
        {
            string row = r == result.Recommended ? " class=\"recommended\"" : "";
            sb.AppendLine(C, $"<tr{row}><td>{E(r.Codec)}</td><td class=\"n\">{r.Level}</td><td>{AnalyzeReport.DictionaryCell(r)}</td><td class=\"n\">{r.Ratio:F2}</td><td class=\"n\">{r.CompressMBps:F1}</td><td class=\"n\">{r.DecompressMBps:F1}</td></tr>");
        }
        sb.AppendLine("</tbody>");
        sb.AppendLine("</table>");
        sb.AppendLine(C, $"<p>{E(string.Create(C, $"limit (whole corpus as one zstd-{result.LimitLevel} frame): {result.LimitRatio:F2}"))}</p>");
        if (result.Online is { } online)
        {
            sb.AppendLine(C, $"<p>{E(string.Create(C, $"online (file order through the dictionary engine, {AnalyzeReport.Bootstrap(online)}): ratio {online.Ratio:F2}{AnalyzeReport.OfTheLimit(result, online)}{AnalyzeReport.Packed(online)}"))}</p>");
            if (online.Versions.Count > 0)
            {
                sb.AppendLine("<ul>");
                foreach (var v in online.Versions)
                    sb.AppendLine(C, $"<li>{E(AnalyzeReport.Version(v))}</li>");
                sb.AppendLine("</ul>");
            }
        }

        sb.AppendLine("<h2>Ratio against compress speed</h2>");
        AppendChart(sb, result);

        sb.AppendLine("<h2>Recommendation</h2>");
        sb.AppendLine(C, $"<p id=\"recommendation\">{E(result.Recommendation)}</p>");
        if (result.Recommended is { } recommended)
        {
            sb.AppendLine(C, $"<p>{E(SnippetNote(recommended))}</p>");
            sb.AppendLine(C, $"<pre id=\"appsettings\"><code>{E(ToAppSettings(result))}</code></pre>");
        }
        sb.AppendLine("</body>");
        sb.AppendLine("</html>");
        return sb.ToString();
    }

    /// <summary>
    /// The recommended setting as an <c>appsettings.json</c> object: <see cref="CompressionEngineOptions.Defaults"/> under
    /// the <see cref="SectionName"/> section, with the property names of <see cref="NamespaceOptions"/> and
    /// <see cref="DictionaryOptions"/>: exactly what <c>AddDocumentCompression(configuration)</c> binds.
    /// </summary>
    public static string ToAppSettings(AnalyzeResult result)
    {
        CodecResult best = result.Recommended ?? throw new ArgumentException("The result holds no recommended setting.", nameof(result));
        var dictionary = new JsonObject { [nameof(DictionaryOptions.Enabled)] = best.Dictionary };
        if (best.Dictionary)
        {
            dictionary[nameof(DictionaryOptions.DictionarySize)] = result.MaxDictionarySize;
            // Packing is on by default: said either way, so the engine does what was measured.
            dictionary[nameof(DictionaryOptions.PackDocuments)] = best.Shapes;
        }
        var root = new JsonObject
        {
            [SectionName] = new JsonObject
            {
                [nameof(CompressionEngineOptions.Defaults)] = new JsonObject
                {
                    [nameof(NamespaceOptions.Codec)] = Enum.Parse<CompressionCodec>(best.Codec, ignoreCase: true).ToString(),
                    [nameof(NamespaceOptions.Level)] = best.Level,
                    [nameof(NamespaceOptions.Checksum)] = result.Checksum,
                    [nameof(NamespaceOptions.Dictionary)] = dictionary,
                },
            },
        };
        return root.ToJsonString(Indented);
    }

    private static string SnippetNote(CodecResult best) =>
        (best.Shapes
            ? "As configuration: every namespace without its own settings (Defaults; per namespace under Namespaces) compresses with this codec and level, and the engine trains, shares and adopts zstd dictionaries up to this size with shape tables (PackDocuments; a table is kept when it measures at least 5% smaller on held-out documents, and documents are packed only with format v2 or v3 and the checksum). "
            : best.Dictionary
            ? "As configuration: every namespace without its own settings (Defaults; per namespace under Namespaces) compresses with this codec and level, and the engine trains, shares and adopts zstd dictionaries up to this size, without shape tables (PackDocuments off: the measured setting). "
            : "As configuration: every namespace without its own settings (Defaults; per namespace under Namespaces) compresses with this codec and level, without dictionaries (the measured setting; the engine uses dictionaries with zstd only). ") +
        "Put it in appsettings.json; services.AddDocumentCompression(configuration) binds and validates it at start-up (docs/configuration.md).";

    /// <summary>Scatter chart: x = compress MB/s (log scale), y = ratio; one circle per row, the recommended one larger and ringed.</summary>
    private static void AppendChart(StringBuilder sb, AnalyzeResult result)
    {
        IReadOnlyList<CodecResult> rows = result.Results;
        double minSpeed = rows.Select(r => r.CompressMBps).Where(s => s > 0).DefaultIfEmpty(1).Min();
        double maxSpeed = rows.Select(r => r.CompressMBps).DefaultIfEmpty(1).Max();
        double xLo = Math.Pow(10, Math.Floor(Math.Log10(minSpeed)));
        double xHi = Math.Pow(10, Math.Ceiling(Math.Log10(Math.Max(maxSpeed, minSpeed))));
        if (xHi <= xLo) xHi = xLo * 10;
        double yStep = NiceStep(rows.Select(r => r.Ratio).DefaultIfEmpty(1).Max() * 1.08 / 5);
        double yHi = Math.Ceiling(rows.Select(r => r.Ratio).DefaultIfEmpty(1).Max() * 1.08 / yStep) * yStep;

        const int plotWidth = Width - Left - Right, plotHeight = Height - Top - Bottom;
        double X(double speed) => Left + ((Math.Log10(Math.Max(speed, xLo)) - Math.Log10(xLo)) / (Math.Log10(xHi) - Math.Log10(xLo)) * plotWidth);
        double Y(double ratio) => Top + plotHeight - (ratio / yHi * plotHeight);

        sb.AppendLine(C, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{Height}\" viewBox=\"0 0 {Width} {Height}\" role=\"img\" aria-labelledby=\"chart-title\">");
        sb.AppendLine("<title id=\"chart-title\">Compression ratio against compress speed, one point per measured setting</title>");
        sb.AppendLine(C, $"<rect x=\"{Left}\" y=\"{Top}\" width=\"{plotWidth}\" height=\"{plotHeight}\" fill=\"#fff\" stroke=\"#999\" />");

        // x axis: decades labelled; 2 and 5 of each decade as light grid lines.
        for (double decade = xLo; decade <= xHi * 1.0001; decade *= 10)
        {
            foreach (double m in (double[])[1, 2, 5])
            {
                double v = decade * m;
                if (v > xHi * 1.0001) break;
                double x = X(v);
                bool major = m == 1;
                sb.AppendLine(C, $"<line x1=\"{x:F1}\" y1=\"{Top}\" x2=\"{x:F1}\" y2=\"{Top + plotHeight}\" stroke=\"{(major ? "#ccc" : "#eee")}\" />");
                sb.AppendLine(C, $"<line x1=\"{x:F1}\" y1=\"{Top + plotHeight}\" x2=\"{x:F1}\" y2=\"{Top + plotHeight + (major ? 6 : 3)}\" stroke=\"#666\" />");
                if (major || m == 5 && Math.Log10(xHi / xLo) <= 3)
                    sb.AppendLine(C, $"<text x=\"{x:F1}\" y=\"{Top + plotHeight + 19}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">{v.ToString("0.###", C)}</text>");
            }
        }
        sb.AppendLine(C, $"<text x=\"{Left + (plotWidth / 2)}\" y=\"{Height - 12}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">compress speed, MB/s (log scale)</text>");

        // y axis: from 0 in nice steps.
        for (double v = 0; v <= yHi + (yStep / 2); v += yStep)
        {
            double y = Y(v);
            sb.AppendLine(C, $"<line x1=\"{Left}\" y1=\"{y:F1}\" x2=\"{Left + plotWidth}\" y2=\"{y:F1}\" stroke=\"#eee\" />");
            sb.AppendLine(C, $"<line x1=\"{Left - 6}\" y1=\"{y:F1}\" x2=\"{Left}\" y2=\"{y:F1}\" stroke=\"#666\" />");
            sb.AppendLine(C, $"<text x=\"{Left - 9}\" y=\"{y + 4:F1}\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">{v.ToString("0.##", C)}</text>");
        }
        sb.AppendLine(C, $"<text x=\"16\" y=\"{Top + (plotHeight / 2)}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\" transform=\"rotate(-90 16 {Top + (plotHeight / 2)})\">compression ratio (raw / envelope)</text>");

        // The recommendation rule's speed threshold.
        double threshold = SettingRecommender.LineMBps;
        if (threshold > xLo && threshold < xHi)
        {
            double x = X(threshold);
            sb.AppendLine(C, $"<line x1=\"{x:F1}\" y1=\"{Top}\" x2=\"{x:F1}\" y2=\"{Top + plotHeight}\" stroke=\"#d62728\" stroke-dasharray=\"4 4\" />");
            sb.AppendLine(C, $"<text x=\"{x + 4:F1}\" y=\"{Top + 12}\" font-size=\"10\" fill=\"#d62728\">{E(string.Create(C, $"{threshold:0} MB/s"))}</text>");
        }

        // Points, then labels placed where they cover no point and no earlier label (greedy, recommended first).
        var placed = rows.Select(r => (X(r.CompressMBps) - 6, Y(r.Ratio) - 6, X(r.CompressMBps) + 6, Y(r.Ratio) + 6)).ToList();
        var order = rows.OrderByDescending(r => r == result.Recommended).ThenByDescending(r => r.Ratio).ToList();
        foreach (var r in rows)
        {
            string color = Colors.GetValueOrDefault(r.Codec, "#333");
            bool isBest = r == result.Recommended;
            // Filled: no dictionary; hollow: the dictionary; pale: the dictionary and shapes.
            string fill = r.Dictionary && !r.Shapes ? "#fff" : color;
            string opacity = r.Shapes ? " fill-opacity=\"0.35\"" : "";
            string extra = isBest ? " class=\"recommended\"" : "";
            sb.AppendLine(C, $"<circle{extra} cx=\"{X(r.CompressMBps):F1}\" cy=\"{Y(r.Ratio):F1}\" r=\"{(isBest ? 7 : 4.5)}\" fill=\"{fill}\"{opacity} stroke=\"{(isBest ? "#d62728" : color)}\" stroke-width=\"{(isBest ? 3 : 2)}\"><title>{E(string.Create(C, $"{Label(r)}: ratio {r.Ratio:F2}, compress {r.CompressMBps:F1} MB/s, decompress {r.DecompressMBps:F1} MB/s"))}</title></circle>");
        }
        foreach (var r in order)
        {
            string text = Label(r) + (r == result.Recommended ? " (recommended)" : "");
            double width = text.Length * 6.2, height = 11;
            double cx = X(r.CompressMBps), cy = Y(r.Ratio);
            var choice = LabelOffsets[0];
            foreach (var candidate in LabelOffsets)
            {
                var box = Box(cx, cy, candidate, width, height);
                if (box.X1 >= Left && box.X2 <= Left + plotWidth && box.Y1 >= Top && box.Y2 <= Top + plotHeight && !placed.Any(p => Overlaps(p, box)))
                {
                    choice = candidate;
                    break;
                }
            }
            var chosen = Box(cx, cy, choice, width, height);
            placed.Add(chosen);
            if (Math.Abs(choice.Dy) > 12 || Math.Abs(choice.Dx) > 8)
            {
                // A label moved away from a crowd: a leader line to the nearest corner of the label.
                double lx = choice.End ? chosen.X2 : chosen.X1, ly = choice.Dy < 0 ? chosen.Y2 - 2 : chosen.Y1;
                sb.AppendLine(C, $"<line x1=\"{cx:F1}\" y1=\"{cy:F1}\" x2=\"{lx:F1}\" y2=\"{ly:F1}\" stroke=\"#aaa\" stroke-width=\"0.8\" />");
            }
            string weight = r == result.Recommended ? " font-weight=\"bold\" fill=\"#d62728\"" : " fill=\"#333\"";
            sb.AppendLine(C, $"<text x=\"{cx + choice.Dx:F1}\" y=\"{cy + choice.Dy:F1}\" font-size=\"11\" text-anchor=\"{(choice.End ? "end" : "start")}\"{weight}>{E(text)}</text>");
        }

        sb.AppendLine("</svg>");

        // Legend: one swatch per codec present (HTML, so that the page holds exactly one svg).
        sb.Append("<p class=\"meta\">");
        foreach (string codec in rows.Select(r => r.Codec).Distinct())
            sb.Append(C, $"<span class=\"swatch\" style=\"background: {Colors.GetValueOrDefault(codec, "#333")}\"></span> {E(codec)} &#160; ");
        sb.AppendLine("</p>");
        string shapes = rows.Any(r => r.Shapes) ? "; pale: zstd with the dictionary and shapes (documents packed first)" : "";
        sb.AppendLine(C, $"<p class=\"meta\">Filled: without a dictionary; hollow: zstd with the trained dictionary{shapes}. The ringed point is the recommended setting; the dashed line is the speed the recommendation requires.</p>");
    }

    /// <summary>Where a label may go relative to its point (baseline offset; End = text ends there), nearest first.</summary>
    private static readonly (double Dx, double Dy, bool End)[] LabelOffsets =
    [
        .. from dy in (double[])[-6, 12, -18, 24, -30, 36, -42, 48, -54, 60, -66, 72]
           from dx in (double[])[8, -8, 40, -40, 80, -80]
           orderby Math.Abs(dx) + (Math.Abs(dy) * 1.5)
           select (dx, dy, dx < 0),
    ];

    private static (double X1, double Y1, double X2, double Y2) Box(double cx, double cy, (double Dx, double Dy, bool End) at, double width, double height)
    {
        double x = cx + at.Dx, baseline = cy + at.Dy;
        return at.End ? (x - width, baseline - height, x, baseline + 2) : (x, baseline - height, x + width, baseline + 2);
    }

    private static bool Overlaps((double X1, double Y1, double X2, double Y2) a, (double X1, double Y1, double X2, double Y2) b) =>
        a.X1 < b.X2 && b.X1 < a.X2 && a.Y1 < b.Y2 && b.Y1 < a.Y2;

    /// <summary>The row's name on the chart: the codec, with the level unless the codec has only one (stored, snappy).</summary>
    private static string Label(CodecResult r) =>
        (CorpusAnalyzer.HasOneLevel(r.Codec) ? r.Codec : string.Create(C, $"{r.Codec}-{r.Level}")) + (r.Shapes ? " +dict+shapes" : r.Dictionary ? " +dict" : "");

    /// <summary>1, 2, 2.5 or 5 times a power of ten, at least <paramref name="raw"/>.</summary>
    private static double NiceStep(double raw)
    {
        if (raw <= 0 || double.IsNaN(raw)) return 1;
        double power = Math.Pow(10, Math.Floor(Math.Log10(raw)));
        foreach (double m in (double[])[1, 2, 2.5, 5, 10])
        {
            if (m * power >= raw) return m * power;
        }
        return 10 * power;
    }

    private static string E(string text) => WebUtility.HtmlEncode(text);
}
