using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using System.Xml;
using System.Xml.Linq;
using Compression.Tool.Analyze;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>The <c>analyze</c> command, run in process on a generated JSON Lines file (no corpus from outside the repository).</summary>
public sealed class AnalyzeCommandTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-tests-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private string WriteCorpus(int count, int seed = 1)
    {
        var random = new Random(seed);
        string[] cities = ["Lisbon", "Oslo", "Nairobi", "Lima", "Osaka", "Perth"];
        var sb = new StringBuilder();
        for (int i = 0; i < count; i++)
        {
            sb.Append("{\"orderId\":").Append(100000 + i)
              .Append(",\"customer\":{\"name\":\"Customer ").Append(random.Next(500)).Append("\",\"city\":\"").Append(cities[random.Next(cities.Length)])
              .Append("\",\"vip\":").Append(random.Next(2) == 0 ? "true" : "false").Append("},\"status\":\"")
              .Append(random.Next(3) switch { 0 => "shipped", 1 => "pending", _ => "delivered" })
              .Append("\",\"items\":[{\"sku\":\"SKU-").Append(random.Next(100)).Append("\",\"quantity\":").Append(random.Next(1, 5))
              .Append(",\"unitPrice\":").Append(random.Next(100, 9999) / 100.0).Append("}],\"notes\":null}\n");
            if (i % 50 == 0) sb.Append('\n'); // blank lines are skipped
        }
        string path = Path.Combine(_directory, "orders.jsonl");
        File.WriteAllText(path, sb.ToString());
        return path;
    }

    private static (int Exit, string Output, string Error) Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run(args, output, error);
        return (exit, output.ToString(), error.ToString());
    }

    [Fact]
    public void Analyze_FormatJson_PrintsOneObjectWithTheDocumentedFields()
    {
        string path = WriteCorpus(400);
        var (exit, output, error) = Run("analyze", path, "--format", "json", "--quick", "--online");
        Assert.True(exit == 0, error);

        using var json = JsonDocument.Parse(output);
        var root = json.RootElement;
        Assert.Equal(400, root.GetProperty("documents").GetInt32());
        Assert.Equal(new FileInfo(path).Length - 400 - 8, root.GetProperty("rawBytes").GetInt64()); // minus newlines and blank lines
        double limit = root.GetProperty("limitRatio").GetDouble();

        var rows = root.GetProperty("results").EnumerateArray().ToList();
        foreach (var row in rows)
        {
            Assert.Equal(["codec", "level", "dictionary", "ratio", "compressMBps", "decompressMBps", "shapes"], row.EnumerateObject().Select(p => p.Name).ToArray());
            Assert.True(row.GetProperty("ratio").GetDouble() > 0);
            Assert.True(row.GetProperty("compressMBps").GetDouble() > 0);
            Assert.True(row.GetProperty("decompressMBps").GetDouble() > 0);
        }
        string[] codecs = [.. rows.Select(r => r.GetProperty("codec").GetString()!).Distinct()];
        Assert.Equal(["stored", "zstd", "lz4", "snappy", "deflate", "gzip", "brotli"], codecs);

        double Ratio(string codec, bool dictionary, bool shapes = false) => rows.Single(r => r.GetProperty("codec").GetString() == codec
            && r.GetProperty("dictionary").GetBoolean() == dictionary && r.GetProperty("shapes").GetBoolean() == shapes).GetProperty("ratio").GetDouble();
        Assert.InRange(Ratio("stored", false), 0.9, 1.0); // the envelope costs a few bytes
        Assert.True(Ratio("zstd", true) > Ratio("zstd", false) * 1.5, "a trained dictionary helps small repetitive records");

        // Records of one shape: the row with shapes is there, beside the plain dictionary's and smaller.
        var shaped = Assert.Single(rows, r => r.GetProperty("shapes").GetBoolean());
        Assert.Equal("zstd", shaped.GetProperty("codec").GetString());
        Assert.Equal(3, shaped.GetProperty("level").GetInt32());
        Assert.True(shaped.GetProperty("dictionary").GetBoolean());
        Assert.True(Ratio("zstd", true, shapes: true) > Ratio("zstd", true), "packing records of one shape beats the plain dictionary");
        Assert.True(root.GetProperty("shapeCount").GetInt32() >= 1);
        Assert.False(root.TryGetProperty("shapesNote", out _));
        Assert.True(limit > Ratio("zstd", false), "the whole-corpus limit beats per-document compression");

        var online = root.GetProperty("online");
        Assert.True(online.GetProperty("ratio").GetDouble() > Ratio("zstd", false));
        var versions = online.GetProperty("versions").EnumerateArray().ToList();
        Assert.NotEmpty(versions);
        Assert.Equal(1, versions[0].GetProperty("version").GetInt32());
        Assert.True(versions[0].GetProperty("afterDocuments").GetInt64() is > 0 and <= 400);
        // Records of one shape: the engine adopts a version with a shape table, and the documents written after it are
        // packed; none is counted packed before the first version with a table.
        Assert.Equal(400, online.GetProperty("documents").GetInt64());
        long packed = online.GetProperty("packedDocuments").GetInt64();
        var firstWithShapes = versions.FirstOrDefault(v => v.GetProperty("shapes").GetBoolean());
        Assert.True(firstWithShapes.ValueKind == JsonValueKind.Object, "no version adopted with a shape table");
        Assert.InRange(packed, 1, 400 - firstWithShapes.GetProperty("afterDocuments").GetInt64() + 1);
    }

    [Fact]
    public void Analyze_Table_PrintsEveryCodecTheLimitAndARecommendation()
    {
        string path = WriteCorpus(300, seed: 2);
        var (exit, output, error) = Run("analyze", path, "--quick");
        Assert.True(exit == 0, error);
        foreach (string codec in new[] { "stored", "zstd", "lz4", "snappy", "deflate", "gzip", "brotli" }) Assert.Contains($"| {codec} |", output);
        Assert.Contains("limit (whole corpus", output);
        Assert.Contains("recommended:", output);
        Assert.Contains("| zstd | 3 | yes | ", output);
        Assert.Contains("| zstd | 3 | yes + shapes | ", output);
        Assert.Matches(@"; rows with shapes: a shape table of \d+ shapes?(, a field model of \d+ fields? \(codec 8\))? and its own dictionary, trained on the same documents; checksum on;", output);
    }

    [Fact]
    public void Analyze_Table_Online_SaysTheOnlineRatioAsAShareOfTheLimit()
    {
        string path = WriteCorpus(300, seed: 5);
        var (exit, output, error) = Run("analyze", path, "--quick", "--online");
        Assert.True(exit == 0, error);
        Match limit = Regex.Match(output, @"limit \(whole corpus as one zstd-3 frame\): ([0-9.]+)");
        Match online = Regex.Match(output, @"online \(file order through the dictionary engine, bootstrap included\): ratio ([0-9.]+), ([0-9.]+) of the limit");
        Assert.True(limit.Success && online.Success, output);
        double share = double.Parse(online.Groups[2].Value, CultureInfo.InvariantCulture);
        double expected = double.Parse(online.Groups[1].Value, CultureInfo.InvariantCulture) / double.Parse(limit.Groups[1].Value, CultureInfo.InvariantCulture);
        Assert.Equal(expected, share, 0.01); // from the printed (rounded) ratios
        Assert.Matches(@"of the limit; [0-9,]+ of 300 documents written packed \(shapes\)", output);
    }

    [Fact]
    public void Analyze_Table_NoChecksum_SaysOnceWhyThereAreNoRowsWithShapes()
    {
        string path = WriteCorpus(300, seed: 6);
        var (exit, output, error) = Run("analyze", path, "--quick", "--no-checksum");
        Assert.True(exit == 0, error);
        Assert.Single(Regex.Matches(output, "rows with shapes not measured: packing documents needs the checksum"));
        Assert.Contains("| zstd | 3 | yes | ", output);
        Assert.DoesNotContain("shapes |", output, StringComparison.Ordinal);
    }

    [Fact]
    public void Analyze_MissingFile_ExitsNonZeroNamingTheFile()
    {
        string path = Path.Combine(_directory, "nope.jsonl");
        var (exit, _, error) = Run("analyze", path);
        Assert.Equal(2, exit);
        Assert.Contains("nope.jsonl", error);
    }

    [Fact]
    public void Analyze_EmptyFile_ExitsNonZero()
    {
        string path = Path.Combine(_directory, "empty.jsonl");
        File.WriteAllText(path, "\n\n");
        var (exit, _, error) = Run("analyze", path);
        Assert.Equal(2, exit);
        Assert.Contains("no documents", error);
    }

    [Fact]
    public void Analyze_UnknownFormat_IsAUsageError()
    {
        string path = WriteCorpus(20);
        var (exit, _, error) = Run("analyze", path, "--format", "xml");
        Assert.NotEqual(0, exit);
        Assert.Contains("xml", error);
    }

    [Fact]
    public void Analyze_Html_WritesOnePageWithChartTableAndSnippet_AndStdoutKeepsTheReport()
    {
        string path = WriteCorpus(400, seed: 3);
        string page = Path.Combine(_directory, "report.html");
        var (exit, output, error) = Run("analyze", path, "--quick", "--format", "json", "--html", page);
        Assert.True(exit == 0, error);

        // stdout still holds the JSON report: the page must show the same rows.
        using var json = JsonDocument.Parse(output);
        var rows = json.RootElement.GetProperty("results").EnumerateArray().ToList();
        string recommendation = json.RootElement.GetProperty("recommendation").GetString()!;
        string recommendedCodec = recommendation.Split(' ')[0];

        string html = File.ReadAllText(page);
        Assert.StartsWith("<!DOCTYPE html>", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<script", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("<link", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("http://", html.Replace("http://www.w3.org/", "", StringComparison.Ordinal), StringComparison.Ordinal);
        Assert.DoesNotContain("https://", html, StringComparison.Ordinal);

        // Well-formed: the page parses as XML.
        XDocument document;
        using (var reader = XmlReader.Create(new StringReader(html), new XmlReaderSettings { DtdProcessing = DtdProcessing.Ignore }))
            document = XDocument.Load(reader);
        XElement[] Named(string name) => [.. document.Descendants().Where(e => e.Name.LocalName == name)];

        Assert.Contains("orders.jsonl", Named("h1").Single().Value);
        Assert.Contains("400 documents", html);
        Assert.Contains("seed 42", html);

        // The table: one body row per result, in the same order, same figures as the text output.
        var tableRows = Named("tbody").Single().Elements().ToList();
        Assert.Equal(rows.Count, tableRows.Count);
        for (int i = 0; i < rows.Count; i++)
        {
            string[] cells = [.. tableRows[i].Elements().Select(e => e.Value)];
            Assert.Equal(rows[i].GetProperty("codec").GetString(), cells[0]);
            Assert.Equal(rows[i].GetProperty("ratio").GetDouble().ToString("F2", CultureInfo.InvariantCulture), cells[3]);
        }

        // The chart: exactly one svg, one circle per result row, exactly one highlighted, axes labelled.
        var svg = Assert.Single(Named("svg"));
        Assert.Equal(1, html.Split("<svg", StringSplitOptions.None).Length - 1);
        var circles = svg.Descendants().Where(e => e.Name.LocalName == "circle").ToList();
        Assert.Equal(rows.Count, circles.Count);
        Assert.Single(circles, c => (string?)c.Attribute("class") == "recommended");
        string svgText = string.Concat(svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value + "|"));
        Assert.Contains("compress speed, MB/s", svgText);
        Assert.Contains("compression ratio", svgText);
        Assert.Contains("(recommended)", svgText);
        Assert.Contains("zstd-3 +dict+shapes: ratio ", html); // the points' titles
        Assert.Contains("zstd-3 +dict: ratio ", html);
        Assert.Single(tableRows, r => r.Elements().ElementAt(2).Value == "yes + shapes");

        // The recommendation and its snippet, which is JSON naming the recommended codec.
        Assert.Equal(recommendation, document.Descendants().Single(e => (string?)e.Attribute("id") == "recommendation").Value);
        string snippet = document.Descendants().Single(e => (string?)e.Attribute("id") == "appsettings").Value;
        using var settings = JsonDocument.Parse(snippet);
        var compressor = settings.RootElement.GetProperty("Compression").GetProperty("Defaults");
        Assert.Equal(recommendedCodec, compressor.GetProperty("Codec").GetString(), ignoreCase: true);
        Assert.True(compressor.GetProperty("Level").GetInt32() >= 0);
        Assert.True(compressor.GetProperty("Checksum").GetBoolean());
        bool dictionary = recommendation.Contains("with a trained dictionary", StringComparison.Ordinal);
        var dictionarySettings = settings.RootElement.GetProperty("Compression").GetProperty("Defaults").GetProperty("Dictionary");
        Assert.Equal(dictionary, dictionarySettings.GetProperty("Enabled").GetBoolean());
        if (dictionary) // packing is on by default: the snippet says whether the recommended row packed
            Assert.Equal(recommendation.Contains("with a trained dictionary and shapes", StringComparison.Ordinal), dictionarySettings.GetProperty("PackDocuments").GetBoolean());
    }

    [Fact]
    public void HtmlReport_RecommendedRowWithShapes_SnippetPacksDocuments()
    {
        CodecResult plain = new("zstd", 3, true, 4.5, 140, 500), best = new("zstd", 3, true, 5.4, 90, 350, Shapes: true);
        var result = new AnalyzeResult
        {
            Documents = 1000, RawBytes = 400_000, LimitRatio = 7, TrainDocuments = 200, TestDocuments = 800, DictionarySize = 16384, ShapeCount = 2,
            Checksum = true, Seed = 42, Recommendation = "zstd level 3 with a trained dictionary and shapes", Recommended = best, MaxDictionarySize = 65536,
            Results = [new CodecResult("zstd", 3, false, 1.3, 60, 200), plain, best],
        };
        using var snippet = JsonDocument.Parse(AnalyzeHtmlReport.ToAppSettings(result));
        var dictionary = snippet.RootElement.GetProperty("Compression").GetProperty("Defaults").GetProperty("Dictionary");
        Assert.True(dictionary.GetProperty("Enabled").GetBoolean());
        Assert.True(dictionary.GetProperty("PackDocuments").GetBoolean());
        Assert.Equal(65536, dictionary.GetProperty("DictionarySize").GetInt32());

        string html = AnalyzeHtmlReport.ToHtml(result, "x.jsonl", DateTimeOffset.UnixEpoch);
        Assert.Contains("<td>yes + shapes</td>", html);
        Assert.Contains("rows with shapes: a shape table of 2 shapes", html);
        Assert.Contains("pale: zstd with the dictionary and shapes", html);
        Assert.Contains("with shape tables (PackDocuments;", html);
    }

    [Fact]
    public void Analyze_Html_WithTableFormat_PrintsTheTableToo()
    {
        string path = WriteCorpus(200, seed: 4);
        string page = Path.Combine(_directory, "table.html");
        var (exit, output, error) = Run("analyze", path, "--quick", "--html", page);
        Assert.True(exit == 0, error);
        Assert.Contains("| zstd |", output);
        Assert.Contains("recommended:", output);
        Assert.True(File.Exists(page));
    }

    [Fact]
    public void Analyze_Html_MissingDirectory_ExitsNonZeroNamingThePath()
    {
        string path = WriteCorpus(50);
        string page = Path.Combine(_directory, "no-such-directory", "report.html");
        var (exit, _, error) = Run("analyze", path, "--quick", "--html", page);
        Assert.Equal(2, exit);
        Assert.Contains(page, error);
        Assert.False(File.Exists(page));
    }

    [Fact]
    public void HtmlReport_EncodesTextAndFormatsNumbersInvariantly()
    {
        var previous = CultureInfo.CurrentCulture;
        CultureInfo.CurrentCulture = new CultureInfo("de-DE");
        try
        {
            CodecResult best = new("zstd", 3, true, 4.5, 1234.5, 2000);
            var result = new AnalyzeResult
            {
                Documents = 1000, RawBytes = 1_234_567, LimitRatio = 9.5, TrainDocuments = 200, TestDocuments = 800, DictionarySize = 16384,
                Checksum = false, Seed = 7, Recommendation = "zstd level 3 <with> a \"dictionary\" & more", Recommended = best, MaxDictionarySize = 16384,
                Results = [new CodecResult("stored", 0, false, 0.98, 3000, 3000), new CodecResult("zstd", 3, false, 1.3, 60.34, 200), best],
            };
            string html = AnalyzeHtmlReport.ToHtml(result, "a<b>&c.jsonl", new DateTimeOffset(2026, 11, 23, 10, 0, 0, TimeSpan.Zero));
            Assert.Contains("a&lt;b&gt;&amp;c.jsonl", html);
            Assert.DoesNotContain("<with>", html);
            Assert.Contains("zstd level 3 &lt;with&gt; a &quot;dictionary&quot; &amp; more", html);
            Assert.Contains("1,000 documents, 1,234,567 bytes", html);
            Assert.Contains("<td class=\"n\">60.3</td>", html);
            Assert.Contains("2026-11-23 10:00 UTC", html);
            Assert.Equal(3, html.Split("<circle", StringSplitOptions.None).Length - 1);

            using var snippet = JsonDocument.Parse(AnalyzeHtmlReport.ToAppSettings(result));
            var defaults = snippet.RootElement.GetProperty("Compression").GetProperty("Defaults");
            Assert.Equal("Zstd", defaults.GetProperty("Codec").GetString());
            Assert.False(defaults.GetProperty("Checksum").GetBoolean());
            Assert.Equal(16384, defaults.GetProperty("Dictionary").GetProperty("DictionarySize").GetInt32());
            Assert.False(defaults.GetProperty("Dictionary").GetProperty("PackDocuments").GetBoolean()); // the plain dictionary was measured
        }
        finally
        {
            CultureInfo.CurrentCulture = previous;
        }
    }
}
