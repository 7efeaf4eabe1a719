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
        CodecResult trained = Assert.Single(result.Results, r => r.Codec == "zstd" && r.Dictionary);
        Assert.True(trained.Ratio > plain.Ratio * 1.5, $"dictionary {trained.Ratio:F2} against plain {plain.Ratio:F2}");
        Assert.True(result.LimitRatio > trained.Ratio, $"limit {result.LimitRatio:F2} against dictionary {trained.Ratio:F2}");
    }

    [Fact]
    public void Analyze_NoChecksum_EveryEnvelopeIsSmaller()
    {
        List<byte[]> documents = Products(100);
        IReadOnlyList<CodecResult> with = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings { Quick = true }).Results;
        IReadOnlyList<CodecResult> without = CorpusAnalyzer.Analyze(documents, new AnalyzeSettings { Quick = true, Checksum = false }).Results;
        Assert.Equal(with.Count, without.Count);
        for (int i = 0; i < with.Count; i++) Assert.True(without[i].Ratio > with[i].Ratio, $"{with[i].Codec} {with[i].Level} {with[i].Dictionary}");
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
