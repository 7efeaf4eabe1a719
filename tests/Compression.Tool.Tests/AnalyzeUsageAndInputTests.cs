using System.IO.Compression;
using System.Text;
using System.Text.Json;
using Xunit;
using static Compression.Tool.Tests.TestCorpus;

namespace Compression.Tool.Tests;

/// <summary>
/// <c>analyze</c> refuses bad usage and input clearly and never recommends making data larger (issue 17's rough
/// edges, each as a new user met it): bad arguments found before any work,
/// input that is not JSON Lines reported, a recommendation that never makes data larger, the limit's true level, the
/// name docz, progress on stderr and exit codes 0, 1 and 2.
/// </summary>
public sealed class AnalyzeUsageAndInputTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-edges-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private string Write(string name, string content)
    {
        string path = Path.Combine(_directory, name);
        File.WriteAllText(path, content);
        return path;
    }

    private string Orders(int count) => Write("orders.jsonl", TestCorpus.Orders(count));

    /// <summary>No measurement started: nothing on stdout, no progress line on stderr.</summary>
    private static void AssertNothingMeasured(string output, string error)
    {
        Assert.Equal("", output);
        Assert.DoesNotContain("measuring", error, StringComparison.Ordinal);
        Assert.DoesNotContain("reading", error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("2000000", true)]
    [InlineData("2000000", false)]
    [InlineData("2147483647", false)]
    [InlineData("1048577", true)]
    [InlineData("255", false)]
    public void DictionarySize_OutsideTheEngineRange_IsABadUsageFoundBeforeAnyWork(string size, bool online)
    {
        string path = Orders(200);
        string[] args = online ? ["analyze", path, "--quick", "--online", "--dictionary-size", size] : ["analyze", path, "--quick", "--dictionary-size", size];
        var (exit, output, error) = Run(args);
        Assert.Equal(2, exit);
        Assert.Contains($"--dictionary-size: {size} is out of range; allowed: 256 to 1048576 bytes.", error);
        Assert.DoesNotContain("Exception", error, StringComparison.Ordinal);
        AssertNothingMeasured(output, error);
    }

    [Theory]
    [InlineData("-1", true, "--train-first: -1 is negative; allowed: 0 or more documents.")]
    [InlineData("100", false, "--train-first applies to the online replay; add --online.")]
    public void TrainFirst_Misused_IsABadUsageFoundBeforeAnyWork(string count, bool online, string message)
    {
        string path = Orders(200);
        string[] args = online ? ["analyze", path, "--quick", "--online", "--train-first", count] : ["analyze", path, "--quick", "--train-first", count];
        var (exit, output, error) = Run(args);
        Assert.Equal(2, exit);
        Assert.Contains(message, error);
        AssertNothingMeasured(output, error);
    }

    [Fact]
    public void TrainFirst_TrainsBeforeTheFirstWrite_AndTheReportSaysSo()
    {
        // Without it, the replay's first dictionary comes after the write path has sampled MinSampleCount documents; with
        // it, version 1 is adopted after 0 documents and every document is written with a dictionary.
        string path = Orders(300);
        var (exit, output, error) = Run("analyze", path, "--quick", "--online", "--train-first", "200", "--format", "json");
        Assert.True(exit == 0, error);
        using var json = JsonDocument.Parse(output);
        JsonElement online = json.RootElement.GetProperty("online");
        Assert.Equal(200, online.GetProperty("trainedFirst").GetInt32());
        JsonElement first = online.GetProperty("versions")[0];
        Assert.Equal(1, first.GetProperty("version").GetInt32());
        Assert.Equal(0, first.GetProperty("afterDocuments").GetInt64());

        var (_, table, _) = Run("analyze", path, "--quick", "--online", "--train-first", "200");
        Assert.Contains("online (file order through the dictionary engine, the first 200 documents trained from before any was written): ratio", table, StringComparison.Ordinal);
    }

    [Fact]
    public void DictionarySize_AtTheTopOfTheRange_IsAccepted_WithOnline()
    {
        var (exit, output, error) = Run("analyze", Orders(200), "--quick", "--online", "--dictionary-size", "1048576", "--format", "json");
        Assert.True(exit == 0, error);
        using var json = JsonDocument.Parse(output);
        Assert.True(json.RootElement.GetProperty("online").GetProperty("ratio").GetDouble() > 1);
    }

    [Fact]
    public void DictionarySize_NotANumber_IsABadUsage()
    {
        var (exit, output, error) = Run("analyze", Orders(20), "--dictionary-size", "lots");
        Assert.Equal(2, exit);
        Assert.Contains("lots", error);
        Assert.StartsWith("Description:", output, StringComparison.Ordinal); // a parse error shows the help, and no report
        Assert.DoesNotContain("measuring", error, StringComparison.Ordinal);
    }

    [Fact]
    public void Input_IsADirectory_SaysSo_NotFileNotFound()
    {
        var (exit, output, error) = Run("analyze", _directory);
        Assert.Equal(2, exit);
        Assert.Contains($"{_directory} is a directory; give a JSON Lines file", error);
        Assert.DoesNotContain("not found", error, StringComparison.Ordinal);
        AssertNothingMeasured(output, error);
    }

    [Fact]
    public void EveryUsageErrorIsListedAtOnce()
    {
        string page = Directory.CreateDirectory(Path.Combine(_directory, "page.html")).FullName;
        var (exit, _, error) = Run("analyze", Path.Combine(_directory, "nope.jsonl"), "--dictionary-size", "9", "--html", page);
        Assert.Equal(2, exit);
        Assert.Contains("file not found", error);
        Assert.Contains("--dictionary-size: 9 is out of range", error);
        Assert.Contains($"--html: {page} is a directory", error);
    }

    [Fact]
    public void Html_PathIsADirectory_FailsBeforeTheMeasurement()
    {
        string page = Directory.CreateDirectory(Path.Combine(_directory, "taken.html")).FullName;
        var (exit, output, error) = Run("analyze", Orders(100), "--quick", "--html", page);
        Assert.Equal(2, exit);
        Assert.Contains($"--html: {page} is a directory", error);
        AssertNothingMeasured(output, error);
    }

    [Fact]
    public void Html_DirectoryMissing_FailsBeforeTheMeasurement()
    {
        string page = Path.Combine(_directory, "no-such-directory", "report.html");
        var (exit, output, error) = Run("analyze", Orders(100), "--quick", "--html", page);
        Assert.Equal(2, exit);
        Assert.Contains($"cannot write {page}: directory not found", error);
        AssertNothingMeasured(output, error);
    }

    [Fact]
    public void Html_RunThatFails_LeavesAnOldPageAsItWasAndNoTemporaryFile()
    {
        string page = Write("report.html", "old page");
        string empty = Write("empty.jsonl", "\n \n");
        var (exit, _, _) = Run("analyze", empty, "--html", page);
        Assert.Equal(2, exit);
        Assert.Equal("old page", File.ReadAllText(page));
        Assert.Equal(["empty.jsonl", "report.html"], Directory.GetFiles(_directory).Select(f => Path.GetFileName(f)).Order(StringComparer.Ordinal).ToArray());
    }

    [Fact]
    public void Html_RunThatSucceeds_ReplacesTheOldPageAndLeavesNoTemporaryFile()
    {
        string page = Write("report.html", "old page");
        var (exit, _, error) = Run("analyze", Orders(150), "--quick", "--html", page);
        Assert.True(exit == 0, error);
        Assert.StartsWith("<!DOCTYPE html>", File.ReadAllText(page), StringComparison.Ordinal);
        Assert.Equal(["orders.jsonl", "report.html"], Directory.GetFiles(_directory).Select(f => Path.GetFileName(f)).Order(StringComparer.Ordinal).ToArray());
    }

    [Fact]
    public void MalformedLines_AreSkippedCountedNamedInTheReport_AndTheExitCodeIsOne()
    {
        var sb = new StringBuilder(TestCorpus.Orders(150));
        string[] lines = sb.ToString().Split('\n');
        lines[4] = "{\"orderId\": 5, \"truncated";     // line 5
        lines[9] = "hello, not json";                    // line 10
        lines[19] = "{\"a\":1}{\"b\":2}";               // line 20
        string path = Write("mixed.jsonl", string.Join('\n', lines));

        var (exit, output, error) = Run("analyze", path, "--quick", "--format", "json");
        Assert.Equal(1, exit);
        using var json = JsonDocument.Parse(output); // stdout is still one JSON report
        var root = json.RootElement;
        Assert.Equal(147, root.GetProperty("documents").GetInt32());
        var input = root.GetProperty("input");
        Assert.Equal(150, input.GetProperty("lines").GetInt64());
        Assert.Equal(3, input.GetProperty("skippedLines").GetInt64());
        Assert.Equal([5L, 10L, 20L], input.GetProperty("firstSkipped").EnumerateArray().Select(s => s.GetProperty("line").GetInt64()).ToArray());
        Assert.All(input.GetProperty("firstSkipped").EnumerateArray(), s => Assert.StartsWith("not JSON at byte", s.GetProperty("reason").GetString(), StringComparison.Ordinal));

        Assert.Contains("3 of 150 lines are not JSON documents and were skipped", error);
        Assert.Contains("  line 5: not JSON at byte", error);
        Assert.Contains("  line 10: not JSON at byte 1", error);
        Assert.Contains("  line 20: not JSON at byte 8", error);
        Assert.Contains("exit code 1.", error);
    }

    [Fact]
    public void MalformedLines_TableSaysSoUnderTheHeader()
    {
        string path = Write("mixed.jsonl", "oops\n" + TestCorpus.Orders(60));
        var (exit, output, _) = Run("analyze", path, "--quick");
        Assert.Equal(1, exit);
        Assert.Contains("1 of 61 lines skipped, not JSON documents (first at lines 1)", output);
    }

    [Fact]
    public void NoLineIsJson_IsABadUsage()
    {
        string path = Write("prose.txt", "Dear user,\nthis is not JSON.\n");
        var (exit, output, error) = Run("analyze", path);
        Assert.Equal(2, exit);
        Assert.Equal("", output);
        Assert.Contains("holds no JSON documents", error);
        Assert.Contains("line 1: not JSON at byte 1", error);
    }

    [Fact]
    public void BinaryFile_IsRefusedBeforeReadingLines()
    {
        byte[] bytes = new byte[4096];
        new Random(3).NextBytes(bytes);
        bytes[100] = 0;
        string path = Path.Combine(_directory, "image.png");
        File.WriteAllBytes(path, bytes);
        var (exit, output, error) = Run("analyze", path);
        Assert.Equal(2, exit);
        Assert.Contains("is not a JSON Lines file: it holds a NUL byte", error);
        AssertNothingMeasured(output, error);
    }

    [Fact]
    public void GzippedJsonLines_IsRefusedWithAHint()
    {
        string path = Path.Combine(_directory, "orders.jsonl.gz");
        using (var gzip = new GZipStream(File.Create(path), CompressionLevel.Fastest))
            gzip.Write(Encoding.UTF8.GetBytes(TestCorpus.Orders(50)));
        var (exit, _, error) = Run("analyze", path);
        Assert.Equal(2, exit);
        Assert.Contains("it is gzip-compressed (decompress it first)", error);
    }

    /// <summary><paramref name="count"/> orders as one JSON array: on one line (<c>JSON.stringify</c>), or pretty-printed.</summary>
    private static string OrdersArray(int count, bool pretty)
    {
        using var orders = JsonDocument.Parse("[" + string.Join(',', TestCorpus.Orders(count).Split('\n', StringSplitOptions.RemoveEmptyEntries)) + "]");
        return JsonSerializer.Serialize(orders.RootElement, new JsonSerializerOptions { WriteIndented = pretty });
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void JsonArray_IsReadAsItsElements_MeasuredAsItsJsonLinesConversion(bool pretty)
    {
        string path = Write("orders.json", OrdersArray(150, pretty));
        var (exit, output, error) = Run("analyze", path, "--quick", "--format", "json");
        Assert.True(exit == 0, error);
        Assert.Contains("docz analyze: orders.json: read as a JSON array of 150 documents.", error);
        using var json = JsonDocument.Parse(output);
        Assert.Equal(150, json.RootElement.GetProperty("documents").GetInt32());
        Assert.Equal("jsonArray", json.RootElement.GetProperty("input").GetProperty("format").GetString());

        // The same bytes as `jq -c '.[]'` (here: the serializer's compact form, one element per line) would measure.
        string lines = string.Concat(JsonDocument.Parse(OrdersArray(150, false)).RootElement.EnumerateArray().Select(e => JsonSerializer.Serialize(e) + "\n"));
        var (_, converted, _) = Run("analyze", Write("orders.jsonl", lines), "--quick", "--format", "json");
        using var jsonLines = JsonDocument.Parse(converted);
        Assert.Equal(jsonLines.RootElement.GetProperty("rawBytes").GetInt64(), json.RootElement.GetProperty("rawBytes").GetInt64());
        Assert.Equal("jsonLines", jsonLines.RootElement.GetProperty("input").GetProperty("format").GetString());

        var (_, table, _) = Run("analyze", path, "--quick");
        Assert.Contains("read as a JSON array of 150 documents", table, StringComparison.Ordinal);
    }

    [Fact]
    public void JsonArray_ElementsThatAreNotObjects_AreSkippedNamedAndExitWithOne()
    {
        string array = OrdersArray(100, pretty: true);
        string path = Write("mixed.json", array[..array.LastIndexOf(']')] + ",\n  42,\n  \"text\"\n]");
        var (exit, output, error) = Run("analyze", path, "--quick", "--format", "json");
        Assert.Equal(1, exit);
        using var json = JsonDocument.Parse(output);
        JsonElement input = json.RootElement.GetProperty("input");
        Assert.Equal(102, input.GetProperty("lines").GetInt64());
        Assert.Equal(2, input.GetProperty("skippedLines").GetInt64());
        Assert.Equal([101L, 102L], input.GetProperty("firstSkipped").EnumerateArray().Select(s => s.GetProperty("line").GetInt64()).ToArray());
        Assert.Contains("2 of 102 elements are not JSON objects and were skipped", error);
        Assert.Contains("  element 101: a number, not a JSON object (line ", error);
        Assert.Contains("  element 102: a string, not a JSON object (line ", error);
        Assert.Contains("2 elements skipped as not JSON objects; exit code 1.", error);

        var (_, table, _) = Run("analyze", path, "--quick");
        Assert.Contains("2 of 102 elements skipped, not JSON objects (first at elements 101, 102)", table, StringComparison.Ordinal);
    }

    [Fact]
    public void JsonArray_Empty_IsABadUsage()
    {
        var (exit, output, error) = Run("analyze", Write("empty.json", "[\n]\n"));
        Assert.Equal(2, exit);
        Assert.Contains("holds no documents: it is an empty JSON array.", error);
        Assert.Equal("", output);
    }

    [Fact]
    public void PrettyPrintedObjects_AreRefusedWithTheConversion()
    {
        string path = Write("objects.json", "{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}\n");
        var (exit, output, error) = Run("analyze", path);
        Assert.Equal(2, exit);
        Assert.Contains("is not a JSON Lines file: its first line is a lone '{', so it is pretty-printed JSON", error);
        Assert.Contains("`jq -c . in.json > out.jsonl`", error);
        AssertNothingMeasured(output, error);
    }

    [Fact]
    public void OneDocument_RecommendsStoringUncompressed_NeverARatioBelowOne()
    {
        string path = Write("one.jsonl", "{\"a\":1,\"b\":\"hello\"}\n");
        var (exit, output, error) = Run("analyze", path, "--quick", "--format", "json");
        Assert.True(exit == 0, error);
        using var json = JsonDocument.Parse(output);
        var root = json.RootElement;
        Assert.All(root.GetProperty("results").EnumerateArray(), r => Assert.True(r.GetProperty("ratio").GetDouble() <= 1));
        Assert.StartsWith("store these documents uncompressed: compression does not pay", root.GetProperty("recommendation").GetString(), StringComparison.Ordinal);
        Assert.False(root.TryGetProperty("recommended", out _));
        Assert.Contains("compression does not pay", error);
    }

    [Fact]
    public void OneDocument_HtmlPage_SaysCompressionDoesNotPay_WithNoSnippetAndNoPointMarked()
    {
        string path = Write("one.jsonl", "{\"a\":1,\"b\":\"hello\"}\n");
        string page = Path.Combine(_directory, "one.html");
        var (exit, _, error) = Run("analyze", path, "--quick", "--html", page);
        Assert.True(exit == 0, error);
        string html = File.ReadAllText(page);
        Assert.Contains("store these documents uncompressed: compression does not pay", html);
        Assert.Contains("1 document, 19 bytes", html);
        Assert.DoesNotContain("id=\"appsettings\"", html, StringComparison.Ordinal);
        Assert.DoesNotContain("class=\"recommended\"", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Recommended_IsInTheJsonAndPays()
    {
        var (exit, output, error) = Run("analyze", Orders(300), "--quick", "--format", "json");
        Assert.True(exit == 0, error);
        using var json = JsonDocument.Parse(output);
        var recommended = json.RootElement.GetProperty("recommended");
        Assert.True(recommended.GetProperty("ratio").GetDouble() > 1);
        Assert.NotEqual("stored", recommended.GetProperty("codec").GetString());
        Assert.StartsWith(recommended.GetProperty("codec").GetString() + " level " + recommended.GetProperty("level").GetInt32(),
            json.RootElement.GetProperty("recommendation").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Quick_PrintsTheLevelTheLimitWasComputedAt()
    {
        var (exit, output, error) = Run("analyze", Orders(100), "--quick");
        Assert.True(exit == 0, error);
        Assert.Contains("limit (whole corpus as one zstd-3 frame)", output);
        Assert.DoesNotContain("zstd-19", output, StringComparison.Ordinal);
    }

    [Fact]
    public void Help_NamesTheToolDocz()
    {
        var (exit, output, _) = Run("--help");
        Assert.Equal(0, exit);
        Assert.Contains("Usage:\n  docz [command] [options]", output.ReplaceLineEndings("\n"));
        Assert.Contains("analyze", output);
        Assert.DoesNotContain("Compression.Tool", output, StringComparison.Ordinal);

        (exit, output, _) = Run("analyze", "--help");
        Assert.Equal(0, exit);
        Assert.Contains("docz analyze <file> [options]", output);
        Assert.Contains("256 to 1048576", output);
        Assert.DoesNotContain("Compression.Tool", output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("analyze", "--format", "xml")]
    [InlineData("analyze", "--no-such-option")]
    [InlineData("analyze")]
    [InlineData("no-such-command")]
    [InlineData]
    public void ParseErrors_ExitWithTwo(params string[] args)
    {
        var (exit, output, error) = Run(args);
        Assert.Equal(2, exit);
        Assert.DoesNotContain("measuring", output + error, StringComparison.Ordinal);
        Assert.NotEqual("", error);
    }

    [Fact]
    public void Progress_GoesToStderr_StdoutHoldsOnlyTheJsonReport_ThenASummary()
    {
        var (exit, output, error) = Run("analyze", Orders(300), "--quick", "--online", "--format", "json");
        Assert.True(exit == 0, error);
        using (JsonDocument.Parse(output)) { } // the whole of stdout is one JSON document

        string[] lines = error.ReplaceLineEndings("\n").TrimEnd('\n').Split('\n');
        Assert.All(lines, l => Assert.StartsWith("docz analyze: ", l, StringComparison.Ordinal));
        Assert.Contains("docz analyze: reading (bytes) done", lines);
        Assert.Contains(lines, l => l.StartsWith("docz analyze: measuring 1/", StringComparison.Ordinal) && l.EndsWith(": stored level 0", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.EndsWith(": training a zstd dictionary", StringComparison.Ordinal));
        Assert.Contains("docz analyze: measuring done", lines);
        Assert.Contains("docz analyze: online replay (documents) (300)", lines);
        Assert.Contains("docz analyze: online replay (documents) 300/300 (100%)", lines);
        Assert.Matches(@"^docz analyze: orders\.jsonl: 300 documents, 9 settings measured in [0-9.]+ s; recommended .+; exit code 0\.$", lines[^1]);
    }
}
