using System.Text;
using Compression.Tool.Analyze;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>What counts as a document in a JSON Lines file or a JSON array, and what is reported instead.</summary>
public sealed class CorpusReaderTests
{
    [Theory]
    [InlineData("{\"a\":1}")]
    [InlineData("  {\"a\":[1,2,{\"b\":null}]}\t")]
    [InlineData("[1,2,3]")]
    [InlineData("\"just a string\"")]
    [InlineData("{\"text\":\"caf\u00e9 \u6771\u4eac\"}")]
    public void Check_OneWholeJsonValue_IsADocument(string line) => Assert.Null(CorpusReader.Check(Encoding.UTF8.GetBytes(line)));

    [Theory]
    [InlineData("{\"a\":", "not JSON at byte 6")]
    [InlineData("{\"a\":1} {\"b\":2}", "not JSON at byte 9")]
    [InlineData("{'a':1}", "not JSON at byte 2")]
    [InlineData("hello", "not JSON at byte 1")]
    [InlineData("{\"a\":1} // comment", "not JSON")]
    public void Check_NotOneWholeJsonValue_SaysWhereItBreaks(string line, string expected)
    {
        string? problem = CorpusReader.Check(Encoding.UTF8.GetBytes(line));
        Assert.NotNull(problem);
        Assert.StartsWith(expected, problem, StringComparison.Ordinal);
        Assert.DoesNotContain("LineNumber", problem, StringComparison.Ordinal);
    }

    [Fact]
    public void Check_InvalidUtf8InsideAString_IsNotADocument()
    {
        byte[] line = [.. "{\"a\":\""u8, 0xFF, 0xFE, .. "\"}"u8];
        Assert.Equal("not UTF-8 text", CorpusReader.Check(line));
    }

    [Fact]
    public void Check_DeepNesting_AsMongoDBAllows_IsADocument()
    {
        string deep = string.Concat(Enumerable.Repeat("{\"a\":", 150)) + "1" + new string('}', 150);
        Assert.Null(CorpusReader.Check(Encoding.UTF8.GetBytes(deep)));
    }

    [Fact]
    public void Read_SkipsAndCountsBadLines_NamesTheFirstTenWithFileLineNumbers()
    {
        var sb = new StringBuilder();
        var bad = new List<long>();
        long lineNumber = 0;
        for (int i = 0; i < 100; i++)
        {
            sb.Append("{\"n\":").Append(i).Append("}\n");
            lineNumber++;
            if (i % 7 == 3)
            {
                sb.Append("{\"broken\":\n");
                bad.Add(++lineNumber);
            }
            if (i % 10 == 0)
            {
                sb.Append("\r\n"); // blank lines count as lines of the file, not as documents
                lineNumber++;
            }
        }
        Corpus corpus = CorpusReader.Read(Encoding.UTF8.GetBytes(sb.ToString()), AnalyzeProgress.None);
        Assert.Equal(100, corpus.Documents.Count);
        Assert.Equal(100 + bad.Count, corpus.Lines);
        Assert.Equal(bad.Count, corpus.Skipped);
        Assert.Equal(bad.Take(CorpusReader.MaxNamedSkippedLines), corpus.FirstSkipped.Select(s => s.Line));
        Assert.All(corpus.FirstSkipped, s => Assert.StartsWith("not JSON at byte 11", s.Reason, StringComparison.Ordinal));
        Assert.Equal("{\"n\":42}"u8.ToArray(), corpus.Documents[42]);
    }

    [Fact]
    public void Read_ReportsProgressInBytesUpToTheWholeFile()
    {
        byte[] file = Encoding.UTF8.GetBytes(string.Concat(Enumerable.Range(0, 1000).Select(i => $"{{\"n\":{i}}}\n")));
        var progress = new RecordingProgress();
        CorpusReader.Read(file, progress);
        Assert.InRange(progress.Reports.Count, 10, 11);
        Assert.Equal(file.Length, progress.Reports[^1].Done);
        Assert.All(progress.Reports, r => Assert.Equal(file.Length, r.Total));
    }

    [Fact]
    public void FindBinary_NulByteGzipOrZstd_IsNotJsonLines()
    {
        Assert.Null(CorpusReader.FindBinary("{\"a\":1}\n"u8));
        Assert.Contains("NUL byte (at offset 3)", CorpusReader.FindBinary([(byte)'{', (byte)'"', (byte)'a', 0, (byte)'}']));
        Assert.Contains("gzip-compressed", CorpusReader.FindBinary([0x1F, 0x8B, 0x08, 0x00]));
        Assert.Contains("zstd-compressed", CorpusReader.FindBinary([0x28, 0xB5, 0x2F, 0xFD, 0x20]));
    }

    [Fact]
    public void Read_OneLineJsonArray_ReadsItsElementsAsDocuments()
    {
        Corpus corpus = CorpusReader.Read("[{\"a\":1},{\"b\":\"x y\"}, {\"c\" : [1, 2]}]\n"u8, AnalyzeProgress.None);
        Assert.Equal(CorpusFormat.JsonArray, corpus.Format);
        Assert.Equal(3, corpus.Lines);
        Assert.Equal(0, corpus.Skipped);
        Assert.Equal(["{\"a\":1}", "{\"b\":\"x y\"}", "{\"c\":[1,2]}"], corpus.Documents.Select(d => Encoding.UTF8.GetString(d)));
    }

    [Fact]
    public void Read_PrettyPrintedJsonArray_ReadsTheSameDocumentsAsItsJqConversion()
    {
        // jq -c '.[]' of this array, but strings (spaces, escapes, non-ASCII) and numbers byte for byte.
        string[] compact = ["{\"name\":\"caf\u00e9 \\\" \\n x\",\"n\":1.50}", "{\"tags\":[\"a b\",{\"k\":null}],\"ok\":true}"];
        string pretty = "\r\n  [\r\n  {\r\n    \"name\": \"caf\u00e9 \\\" \\n x\",\r\n    \"n\": 1.50\r\n  },\r\n  {\r\n    \"tags\": [\r\n      \"a b\",\r\n      { \"k\": null }\r\n    ],\r\n    \"ok\": true\r\n  }\r\n]\r\n";
        Corpus corpus = CorpusReader.Read(Encoding.UTF8.GetBytes(pretty), AnalyzeProgress.None);
        Assert.Equal(CorpusFormat.JsonArray, corpus.Format);
        Assert.Equal(compact, corpus.Documents.Select(d => Encoding.UTF8.GetString(d)));
        Assert.Equal(0, corpus.Skipped);
    }

    [Fact]
    public void Read_JsonArray_SkipsAndNamesElementsThatAreNotObjects()
    {
        string file = "[\n  {\"a\": 1},\n  42,\n  \"text\",\n  [1, 2],\n  null,\n  true,\n  {\"b\": 2}\n]";
        Corpus corpus = CorpusReader.Read(Encoding.UTF8.GetBytes(file), AnalyzeProgress.None);
        Assert.Equal(2, corpus.Documents.Count);
        Assert.Equal(7, corpus.Lines);
        Assert.Equal(5, corpus.Skipped);
        Assert.Equal([2L, 3L, 4L, 5L, 6L], corpus.FirstSkipped.Select(s => s.Line));
        Assert.Equal(
            ["a number, not a JSON object (line 3)", "a string, not a JSON object (line 4)", "an array, not a JSON object (line 5)", "null, not a JSON object (line 6)", "a boolean, not a JSON object (line 7)"],
            corpus.FirstSkipped.Select(s => s.Reason));
    }

    [Fact]
    public void Read_JsonArray_ObjectWithInvalidUtf8_IsSkippedAndTheNextIsRead()
    {
        byte[] file = [.. "[{\"a\":\""u8, 0xFF, 0xFE, .. "\"},\n{\"b\":1}]"u8];
        Corpus corpus = CorpusReader.Read(file, AnalyzeProgress.None);
        Assert.Equal(["{\"b\":1}"], corpus.Documents.Select(d => Encoding.UTF8.GetString(d)));
        SkippedLine skipped = Assert.Single(corpus.FirstSkipped);
        Assert.Equal(new SkippedLine(1, "not UTF-8 text (line 1)"), skipped);
    }

    [Theory]
    [InlineData("[]")]
    [InlineData("  [\n\n]\n")]
    public void Read_EmptyJsonArray_HoldsNothing(string file)
    {
        Corpus corpus = CorpusReader.Read(Encoding.UTF8.GetBytes(file), AnalyzeProgress.None);
        Assert.Equal(CorpusFormat.JsonArray, corpus.Format);
        Assert.Empty(corpus.Documents);
        Assert.Equal(0, corpus.Lines);
        Assert.Equal(0, corpus.Skipped);
    }

    [Fact]
    public void Read_TruncatedJsonArray_KeepsTheElementsBeforeTheBreakAndNamesIt()
    {
        Corpus corpus = CorpusReader.Read("[\n{\"a\":1},\n{\"b\":2},\n{\"c\":"u8, AnalyzeProgress.None);
        Assert.Equal(2, corpus.Documents.Count);
        Assert.Equal(3, corpus.Lines);
        SkippedLine broken = Assert.Single(corpus.FirstSkipped);
        Assert.Equal(3, broken.Line);
        Assert.StartsWith("not JSON at line 4, byte ", broken.Reason, StringComparison.Ordinal);
        Assert.EndsWith("; nothing after it is read", broken.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Read_JsonLines_IsReadAsBefore_EvenWhenItsLinesAreArrays()
    {
        Corpus lines = CorpusReader.Read("{\"a\": 1}\n{\"b\":  2}\n"u8, AnalyzeProgress.None);
        Assert.Equal(CorpusFormat.JsonLines, lines.Format);
        Assert.Equal(["{\"a\": 1}", "{\"b\":  2}"], lines.Documents.Select(d => Encoding.UTF8.GetString(d))); // bytes as in the file

        Corpus arrays = CorpusReader.Read("[1, 2]\n[3, 4]\n"u8, AnalyzeProgress.None);
        Assert.Equal(CorpusFormat.JsonLines, arrays.Format);
        Assert.Equal(["[1, 2]", "[3, 4]"], arrays.Documents.Select(d => Encoding.UTF8.GetString(d)));
    }

    [Fact]
    public void FindPrettyPrintedObject_ALoneBraceFirst_IsNotJsonLines()
    {
        Assert.Contains("jq -c . in.json > out.jsonl", CorpusReader.FindPrettyPrintedObject("\n{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}\n"u8));
        Assert.Null(CorpusReader.FindPrettyPrintedObject("{\"a\":1}\n{\n"u8));
        Assert.Null(CorpusReader.FindPrettyPrintedObject("[\n{\"a\":1}\n]"u8));
        Assert.Null(CorpusReader.FindPrettyPrintedObject(" \n"u8));
    }

    private sealed class RecordingProgress : AnalyzeProgress
    {
        public List<(long Done, long Total)> Reports { get; } = [];

        public override void Start(string phase, long total) { }

        public override void Report(long done, long total, string? current = null) => Reports.Add((done, total));

        public override void Stop() { }
    }
}
