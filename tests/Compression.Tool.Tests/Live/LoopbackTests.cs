using System.Text.Json;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>--loopback</c>: the live commands on the in-process test double, empty or filled by <c>--load</c>, the first line
/// saying it is a test double (docs/docz.md, "Trying docz without a server").
/// </summary>
public sealed class LoopbackTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-loopback-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Theory]
    [InlineData("verify")]
    [InlineData("stats")]
    [InlineData("migrate")]
    [InlineData("migrate", "--decompress")]
    [InlineData("recompress")]
    public void LiveCommand_LoopbackEmpty_FirstLineSaysTestDouble_ReportsNoDocuments_Exit0(params string[] command)
    {
        var (exit, output, error) = Docz.Run([.. command, "--loopback", "--namespace", "demo.movies"]);

        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        AssertFirstLineSaysTestDouble(output);
        Assert.Equal("", error);
    }

    [Fact]
    public void Train_LoopbackEmpty_TooFewSamples_Exit1AsOnAnEmptyCollection()
    {
        var (exit, output, error) = Docz.Run("train", "--loopback", "--namespace", "demo.movies");

        Assert.True(exit == 1, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        AssertFirstLineSaysTestDouble(output);
        Assert.Contains("demo.movies: 0 documents read from collection, 0 sampled", output, StringComparison.Ordinal);
        Assert.Contains("outcome: TooFewSamples", output, StringComparison.Ordinal);
    }

    [Fact]
    public void Stats_LoopbackEmptyJson_StdoutHoldsTheJsonAlone_TheNoticeIsOnStderr()
    {
        var (exit, output, error) = Docz.Run("stats", "--loopback", "--namespace", "demo.movies", "--format", "json");

        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        AssertFirstLineSaysTestDouble(error);
        using var json = JsonDocument.Parse(output);
        JsonElement stats = Assert.Single(json.RootElement.GetProperty("namespaces").EnumerateArray());
        Assert.Equal(0, stats.GetProperty("documents").GetInt64());
        Assert.Equal(0, stats.GetProperty("storedBytes").GetInt64());
    }

    [Fact]
    public void Migrate_LoopbackLoad_TrainsAndCompressesEveryLoadedDocument_WithTheConfigurationsSettings()
    {
        string corpus = Path.Combine(_directory, "orders.jsonl");
        File.WriteAllText(corpus, TestCorpus.Orders(300, seed: 4));
        // Its MongoDB connection string points nowhere: --loopback replaces it, and keeps the compression settings.
        string config = Docz.WriteConfig(_directory, "mongodb://127.0.0.1:1/", "shop.orders", clearField: "status");

        var (exit, output, error) = Docz.Run("migrate", "--loopback", "--load", corpus, "--config", config, "--format", "json");

        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        string[] notices = error.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        AssertFirstLineSaysTestDouble(notices[0]);
        Assert.Equal($"--load: 300 documents from {corpus} inserted plain into shop.orders.", notices[1].TrimEnd());
        using var json = JsonDocument.Parse(output);
        JsonElement trained = Assert.Single(json.RootElement.GetProperty("trained").EnumerateArray());
        Assert.Equal("adopted", trained.GetProperty("outcome").GetString());
        JsonElement migrated = Assert.Single(json.RootElement.GetProperty("namespaces").EnumerateArray());
        Assert.Equal(300, migrated.GetProperty("written").GetInt64());
        Assert.Equal(0, migrated.GetProperty("failed").GetInt64());
    }

    [Fact]
    public void Verify_LoopbackLoad_ReadsEveryLoadedDocumentAsPlain()
    {
        string corpus = Path.Combine(_directory, "orders.jsonl");
        File.WriteAllText(corpus, TestCorpus.Orders(50, seed: 5));

        var (exit, output, error) = Docz.Run("verify", "--loopback", "--load", corpus, "--namespace", "shop.orders", "--format", "json");

        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        using var json = JsonDocument.Parse(output);
        JsonElement verified = Assert.Single(json.RootElement.GetProperty("namespaces").EnumerateArray());
        Assert.Equal(50, verified.GetProperty("documents").GetInt64());
        Assert.Equal(50, verified.GetProperty("plain").GetInt64());
    }

    [Theory]
    [InlineData("--loopback and --connection", "--loopback", "--connection", "mongodb://127.0.0.1:1/")]
    [InlineData("--load without --loopback", "--load", "{corpus}", "--connection", "mongodb://127.0.0.1:1/")]
    [InlineData("--load of a missing file", "--loopback", "--load", "{missing}")]
    [InlineData("--load of a line that is not a document", "--loopback", "--load", "{array}")]
    [InlineData("--load into two namespaces", "--loopback", "--load", "{corpus}", "--namespace", "shop.returns")]
    public void Verify_LoopbackOrLoadMisused_Exit2WithAMessage(string why, params string[] options)
    {
        File.WriteAllText(Path.Combine(_directory, "orders.jsonl"), TestCorpus.Orders(5));
        File.WriteAllText(Path.Combine(_directory, "array.jsonl"), "{\"a\": 1}\n[1, 2]\n");
        string[] args = [.. options.Select(o => o
            .Replace("{corpus}", Path.Combine(_directory, "orders.jsonl"), StringComparison.Ordinal)
            .Replace("{missing}", Path.Combine(_directory, "missing.jsonl"), StringComparison.Ordinal)
            .Replace("{array}", Path.Combine(_directory, "array.jsonl"), StringComparison.Ordinal))];

        var (exit, output, error) = Docz.Run(["verify", "--namespace", "shop.orders", .. args]);

        Assert.True(exit == 2, $"{why}: exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        Assert.StartsWith("verify: ", error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
    }

    private static void AssertFirstLineSaysTestDouble(string text)
    {
        string first = text.Split('\n', 2)[0];
        Assert.StartsWith("--loopback: an in-memory test double at mongodb://127.0.0.1:", first, StringComparison.Ordinal);
        Assert.Contains("NOT MongoDB", first, StringComparison.Ordinal);
    }
}
