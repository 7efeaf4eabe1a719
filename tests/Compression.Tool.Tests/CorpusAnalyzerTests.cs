using System.Text;
using Compression.Tool.Analyze;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>The measurement itself (<see cref="CorpusAnalyzer"/>) and the JSON Lines reader, without the command line.</summary>
public sealed class CorpusAnalyzerTests
{
    private static List<byte[]> Products(int count)
    {
        var random = new Random(7);
        string[] categories = ["kitchen", "garden", "toys", "books", "sports"];
        string[] colors = ["red", "blue", "green", "black", "white"];
        var documents = new List<byte[]>(count);
        for (int i = 0; i < count; i++)
        {
            string json = "{\"_id\":\"prod-" + (5000 + i) + "\",\"type\":\"product\",\"name\":\"Item " + random.Next(10_000) +
                          "\",\"category\":\"" + categories[random.Next(categories.Length)] + "\",\"price\":{\"amount\":" + random.Next(100, 50_000) +
                          ",\"currency\":\"EUR\"},\"attributes\":{\"color\":\"" + colors[random.Next(colors.Length)] + "\",\"weightGrams\":" + random.Next(50, 5000) +
                          "},\"inStock\":" + (random.Next(4) > 0 ? "true" : "false") + ",\"tags\":[\"new\",\"sale\"],\"updatedAt\":\"2026-11-" +
                          (10 + random.Next(20)) + "T10:" + random.Next(10, 60) + ":00Z\"}";
            documents.Add(Encoding.UTF8.GetBytes(json));
        }
        return documents;
    }

    [Fact]
    public void Analyze_RepetitiveRecords_EveryCodecMeasuredDictionaryHelpsLimitIsHighest()
    {
        List<byte[]> documents = Products(300);
        AnalyzeResult result = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings { Quick = true });

        Assert.Equal(300, result.Documents);
        Assert.Equal(documents.Sum(d => (long)d.Length), result.RawBytes);
        Assert.Equal(60, result.TrainDocuments);
        Assert.Equal(240, result.TestDocuments);
        Assert.Equal(["stored", "zstd", "lz4", "snappy", "deflate", "gzip", "brotli"], result.Results.Select(r => r.Codec).Distinct().ToArray());
        Assert.All(result.Results, r => Assert.True(r.Ratio > 0 && r.CompressMBps > 0 && r.DecompressMBps > 0, $"{r.Codec} {r.Level}"));

        CodecResult stored = Assert.Single(result.Results, r => r.Codec == "stored");
        Assert.InRange(stored.Ratio, 0.95, 0.9999); // header, length varint and checksum: a few bytes a document
        CodecResult plain = Assert.Single(result.Results, r => r.Codec == "zstd" && !r.Dictionary);
        CodecResult trained = Assert.Single(result.Results, r => r.Codec == "zstd" && r.Dictionary && !r.Shapes);
        Assert.True(trained.Ratio > plain.Ratio * 1.5, $"dictionary {trained.Ratio:F2} against plain {plain.Ratio:F2}");
        Assert.True(result.LimitRatio > trained.Ratio, $"limit {result.LimitRatio:F2} against dictionary {trained.Ratio:F2}");
    }

    [Fact]
    public void Analyze_NoChecksum_EveryEnvelopeIsSmaller()
    {
        List<byte[]> documents = Products(100);
        IReadOnlyList<CodecResult> with = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings { Quick = true }).Results;
        IReadOnlyList<CodecResult> without = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings { Quick = true, Checksum = false }).Results;
        // The same rows, less those with shapes (packing needs the checksum).
        Assert.Equal(with.Where(r => !r.Shapes).Select(r => (r.Codec, r.Level, r.Dictionary)), without.Select(r => (r.Codec, r.Level, r.Dictionary)));
        for (int i = 0; i < without.Count; i++) Assert.True(without[i].Ratio > with[i].Ratio, $"{with[i].Codec} {with[i].Level} {with[i].Dictionary}");
    }

    /// <summary>Runs every pass once (the envelopes are needed) and says it took a microsecond: ratios without waiting for timings, every speed far above the line.</summary>
    private sealed class OnePassTimer : PassTimer
    {
        public List<string> Labels { get; } = [];

        public override double SecondsPerPass(string label, Action pass, TimeSpan budget, bool warmedUp = false)
        {
            pass();
            Labels.Add(label);
            return 1e-6;
        }
    }

    [Fact]
    public void Analyze_SameShapeRecords_RowsWithShapesAtEveryDictionaryLevel_SmallerThanThePlainDictionary()
    {
        List<byte[]> documents = Products(300);
        var timer = new OnePassTimer();
        AnalyzeResult result = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings(), AnalyzeProgress.None, timer);

        Assert.Null(result.ShapesNote);
        Assert.True(result.ShapeCount >= 1, $"shape count {result.ShapeCount}");
        Assert.NotNull(result.ModelledFields); // the engine's default: the table with a field model where fields pay (0: none did)
        CodecResult[] shaped = [.. result.Results.Where(r => r.Shapes)];
        Assert.Equal([1, 3, 9, 19], shaped.Select(r => r.Level).ToArray());
        foreach (CodecResult row in shaped)
        {
            Assert.Equal("zstd", row.Codec);
            Assert.True(row.Dictionary); // a row with shapes uses its model's dictionary
            // Above the plain dictionary: the model's dictionary is trained on packed documents, so documents that were not
            // packed would compress worse with it, not better.
            CodecResult plain = Assert.Single(result.Results, r => r.Codec == "zstd" && r.Level == row.Level && r.Dictionary && !r.Shapes);
            Assert.True(row.Ratio > plain.Ratio, $"level {row.Level}: shapes {row.Ratio:F3} against the plain dictionary {plain.Ratio:F3}");
        }
        // Timed under their own labels, so a scripted or re-timed speed never goes to the wrong row.
        Assert.Contains("zstd 3 dictionary shapes compress", timer.Labels);
        Assert.Contains("zstd 3 dictionary shapes decompress", timer.Labels);
        Assert.Contains("zstd 3 dictionary compress", timer.Labels);
    }

    [Fact]
    public void Analyze_NoChecksum_NoRowsWithShapes_AndTheReportSaysWhyOnce()
    {
        AnalyzeResult result = CorpusAnalyzer.Analyze(Products(200), new AnalyzeSettings { Quick = true, Checksum = false }, AnalyzeProgress.None, new OnePassTimer());
        Assert.DoesNotContain(result.Results, r => r.Shapes);
        Assert.Contains(result.Results, r => r.Dictionary); // the plain dictionary rows are still there
        Assert.Null(result.ShapeCount);
        Assert.Equal("rows with shapes not measured: packing documents needs the checksum (--no-checksum turns it off)", result.ShapesNote);

        string table = AnalyzeReport.ToTable(result, "p.jsonl");
        Assert.Single(table.Split(result.ShapesNote, StringSplitOptions.None).Skip(1));
        Assert.DoesNotContain("yes + shapes", table, StringComparison.Ordinal);
        string json = AnalyzeReport.ToJson(result);
        Assert.Contains("\"shapesNote\": \"rows with shapes not measured: packing documents needs the checksum", json);
        Assert.DoesNotContain("\"shapes\": true", json, StringComparison.Ordinal);
        Assert.DoesNotContain("\"shapeCount\"", json, StringComparison.Ordinal);
        string html = AnalyzeHtmlReport.ToHtml(result, "p.jsonl", DateTimeOffset.UnixEpoch);
        Assert.Single(html.Split("packing documents needs the checksum", StringSplitOptions.None).Skip(1));
    }

    [Fact]
    public void Analyze_DocumentsPackingDoesNotTake_NoRowsWithShapes_AndTheNoteSaysSo()
    {
        // JSON arrays, not objects: a dictionary trains, a shape table does not.
        var random = new Random(3);
        List<byte[]> documents = [.. Enumerable.Range(0, 200).Select(i => Encoding.UTF8.GetBytes(
            "[\"reading\"," + (1000 + i) + ",\"sensor-" + random.Next(20) + "\"," + random.Next(100) + ",\"ok\",\"celsius\"]"))];
        AnalyzeResult result = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings { Quick = true }, AnalyzeProgress.None, new OnePassTimer());
        Assert.Contains(result.Results, r => r.Dictionary);
        Assert.DoesNotContain(result.Results, r => r.Shapes);
        Assert.Null(result.ShapeCount);
        Assert.StartsWith("no rows with shapes: no shape table trained", result.ShapesNote, StringComparison.Ordinal);
    }

    [Fact]
    public void Analyze_Progress_NamesTheStepsWithShapes_AndEndsAtItsTotal()
    {
        var error = new StringWriter();
        CorpusAnalyzer.Analyze(Products(200), new AnalyzeSettings { Quick = true }, new LineAnalyzeProgress(error), new OnePassTimer());
        string[] lines = error.ToString().ReplaceLineEndings("\n").TrimEnd('\n').Split('\n');
        Assert.Contains(lines, l => l.EndsWith(": learning shapes and training a dictionary on the packed documents", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.EndsWith(": zstd level 3 with the dictionary and shapes", StringComparison.Ordinal));
        // 7 settings, the training, 1 dictionary level, the shapes training, 1 level with shapes, the limit; then the two
        // later timing rounds of the 9 rows, all of them short (the timer says a microsecond), added once known.
        Assert.Equal("docz analyze: measuring (12)", lines[0]);
        Assert.Contains(lines, l => l.EndsWith(": zstd level 3 with the dictionary and shapes, timing 3 of 3", StringComparison.Ordinal));
        Assert.Equal("docz analyze: measuring 30/30 (100%)", lines[^2]);
    }

    [Fact]
    public void Split_LinesAreOpaqueBytes_LineEndingsAndBlankLinesRemoved()
    {
        byte[] file = [.. "{\"a\":1}\r\n\n  \t\r\n"u8, 0xFF, 0xFE, .. "x\n{\"b\":2}"u8];
        List<byte[]> documents = CorpusReader.Split(file);
        Assert.Equal(3, documents.Count);
        Assert.Equal("{\"a\":1}"u8.ToArray(), documents[0]);
        Assert.Equal(new byte[] { 0xFF, 0xFE, (byte)'x' }, documents[1]); // not decoded, not replaced
        Assert.Equal("{\"b\":2}"u8.ToArray(), documents[2]); // no final newline needed
    }
}
