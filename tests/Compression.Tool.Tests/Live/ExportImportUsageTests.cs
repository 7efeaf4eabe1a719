using System.Text.Json;
using Compression.Testing;
using MongoDB.Bson;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>cat</c>, <c>export</c> and <c>import</c> with <c>--loopback</c> (the in-process test double, filled by <c>--load</c>),
/// bad usage (exit 2), and a server that does not answer (one line, exit 1).
/// </summary>
public sealed class ExportImportUsageTests : IDisposable
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromMinutes(5);

    private readonly string _directory = Directory.CreateTempSubdirectory("docz-export-usage-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void CatAndExport_LoopbackLoad_PrintTheLoadedDocuments_StdoutHoldsTheDocumentsAlone()
    {
        string corpus = Path.Combine(_directory, "orders.jsonl");
        File.WriteAllText(corpus, TestCorpus.Orders(40, seed: 5));
        string[] loaded = File.ReadAllLines(corpus);

        var (exit, output, error) = Docz.Run("cat", "--loopback", "--load", corpus, "--namespace", "demo.orders", "--limit", "3");
        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        Assert.StartsWith("--loopback: an in-memory test double", error, StringComparison.Ordinal); // not on stdout: it holds the documents alone
        string[] lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(3, lines.Length);
        foreach (string line in lines)
        {
            BsonDocument document = BsonDocument.Parse(line);
            Assert.True(document.Contains("_id"));
            document.Remove("_id"); // --load added one where the line has none
            Assert.Contains(loaded, l => WithoutId(BsonDocument.Parse(l)).Equals(document));
        }

        string file = Path.Combine(_directory, "export.jsonl");
        (exit, output, error) = Docz.Run("export", "--loopback", "--load", corpus, "--namespace", "demo.orders", "--to", file, "--format", "json");
        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        using JsonDocument report = JsonDocument.Parse(output);
        Assert.Equal(40, report.RootElement.GetProperty("documents").GetInt64());
        Assert.Equal(40, File.ReadAllLines(file).Length);

        (exit, output, error) = Docz.Run("import", "--loopback", "--namespace", "demo.orders", "--from", file, "--format", "json");
        Assert.True(exit == 0, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        using JsonDocument imported = JsonDocument.Parse(output);
        Assert.Equal(40, imported.RootElement.GetProperty("documents").GetInt64());
    }

    private static BsonDocument WithoutId(BsonDocument document)
    {
        document.Remove("_id");
        return document;
    }

    [Theory]
    [InlineData("export --loopback --namespace demo.a")] // --to is required
    [InlineData("import --loopback --namespace demo.a")] // --from is required
    [InlineData("cat --loopback --namespace demo.a --limit 0")]
    [InlineData("cat --loopback --namespace demo.a --id a --prefix b")]
    [InlineData("cat --loopback --namespace demo.a --namespace demo.b")]
    [InlineData("import --loopback --namespace demo.a --from /nonexistent/file.jsonl")]
    public void Usage_Wrong_Exit2(string command)
    {
        var (exit, output, error) = Docz.Run(command.Split(' '));

        Assert.True(exit == 2, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        Assert.NotEqual("", error);
    }

    [Theory]
    [InlineData("cat")]
    [InlineData("export")]
    [InlineData("import")]
    public async Task ConnectionRefused_OneLineNamingTheAddressAndTheCause_Exit1(string command)
    {
        int port = UnusedPort.Take();
        string file = Path.Combine(_directory, "file.jsonl");
        File.WriteAllText(file, "{\"_id\": 1}\n");
        string[] args = command switch
        {
            "export" => ["--to", Path.Combine(_directory, "out.jsonl")],
            "import" => ["--from", file],
            _ => [],
        };
        using var docz = ChildDocz.Start([command, "--connection", $"mongodb://127.0.0.1:{port}/", "--namespace", "shop.orders", .. args]);
        using var guard = new CancellationTokenSource(HangGuard);

        var (exit, output, error) = await docz.WaitAsync(guard.Token);

        Assert.True(exit == 1, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        Assert.Equal("", output);
        Assert.Equal(
            $"{command}: no MongoDB server answered at 127.0.0.1:{port} (Connection refused); check the connection string, or try docz with --loopback (an in-memory test double, no server)",
            error.TrimEnd());
        Assert.False(File.Exists(Path.Combine(_directory, "out.jsonl"))); // nothing written before the server answers
    }
}
