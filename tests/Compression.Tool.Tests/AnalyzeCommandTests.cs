using System.Text;
using System.Text.Json;
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
            Assert.Equal(["codec", "level", "dictionary", "ratio", "compressMBps", "decompressMBps"], row.EnumerateObject().Select(p => p.Name).ToArray());
            Assert.True(row.GetProperty("ratio").GetDouble() > 0);
            Assert.True(row.GetProperty("compressMBps").GetDouble() > 0);
            Assert.True(row.GetProperty("decompressMBps").GetDouble() > 0);
        }
        string[] codecs = [.. rows.Select(r => r.GetProperty("codec").GetString()!).Distinct()];
        Assert.Equal(["stored", "zstd", "lz4", "snappy", "deflate", "gzip", "brotli"], codecs);

        double Ratio(string codec, bool dictionary) => rows.First(r => r.GetProperty("codec").GetString() == codec && r.GetProperty("dictionary").GetBoolean() == dictionary).GetProperty("ratio").GetDouble();
        Assert.InRange(Ratio("stored", false), 0.9, 1.0); // the envelope costs a few bytes
        Assert.True(Ratio("zstd", true) > Ratio("zstd", false) * 1.5, "a trained dictionary helps small repetitive records");
        Assert.True(limit > Ratio("zstd", false), "the whole-corpus limit beats per-document compression");

        var online = root.GetProperty("online");
        Assert.True(online.GetProperty("ratio").GetDouble() > Ratio("zstd", false));
        var versions = online.GetProperty("versions").EnumerateArray().ToList();
        Assert.NotEmpty(versions);
        Assert.Equal(1, versions[0].GetProperty("version").GetInt32());
        Assert.True(versions[0].GetProperty("afterDocuments").GetInt64() is > 0 and <= 400);
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
}
