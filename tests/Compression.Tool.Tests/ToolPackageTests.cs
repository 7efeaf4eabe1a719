using System.Reflection;
using System.Text.Json;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>
/// The .NET tool package: packed from this repository into a temporary folder, installed from that folder alone (a
/// nuget.config that clears every other source, an empty package cache, and HTTP proxies that refuse every connection,
/// so nothing comes from the machine's NuGet source), and run as <c>docz</c> on a generated file. Processes get minutes,
/// not seconds: the machine may be busy; nothing here is timed.
/// </summary>
public sealed class ToolPackageTests : IDisposable
{
    /// <summary>The package id (documented in the README), and the command it installs.</summary>
    private const string PackageId = "Compression.Tool", Command = "docz";

    private readonly string _directory = Directory.CreateTempSubdirectory("docz-package-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task Pack_InstallFromALocalFolderFeed_DoczRunsHelpAnalyzeAndALoopbackStats()
    {
        string configuration = typeof(ToolPackageTests).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()!.Configuration;
        string docz = await ToolProcess.PackAndInstallAsync(Path.Combine("src", "Compression.Tool", "Compression.Tool.csproj"), PackageId, Command,
            "Compression.Tool.dll", configuration, _directory);

        var help = await ToolProcess.RunAsync(docz, _directory, _directory, ["--help"]);
        Assert.True(help.Exit == 0, help.Describe());
        Assert.Contains("docz [command] [options]", help.Output);
        Assert.Contains("analyze", help.Output);
        Assert.DoesNotContain("Compression.Tool", help.Output, StringComparison.Ordinal);

        string corpus = Path.Combine(_directory, "orders.jsonl");
        File.WriteAllText(corpus, TestCorpus.Orders(200, seed: 9));
        var analyze = await ToolProcess.RunAsync(docz, _directory, _directory, ["analyze", corpus, "--quick", "--format", "json"]);
        Assert.True(analyze.Exit == 0, analyze.Describe());
        using (var json = JsonDocument.Parse(analyze.Output))
        {
            Assert.Equal(200, json.RootElement.GetProperty("documents").GetInt32());
            Assert.Equal(3, json.RootElement.GetProperty("limitLevel").GetInt32());
            Assert.NotEmpty(json.RootElement.GetProperty("results").EnumerateArray());
            Assert.True(json.RootElement.GetProperty("recommended").GetProperty("ratio").GetDouble() > 1);
        }
        Assert.Contains("docz analyze: orders.jsonl: 200 documents", analyze.Error);

        // The test double --loopback runs on ships inside the package: a live command needs no server.
        var loopback = await ToolProcess.RunAsync(docz, _directory, _directory, ["stats", "--loopback", "--load", corpus, "--namespace", "demo.orders"]);
        Assert.True(loopback.Exit == 0, loopback.Describe());
        Assert.StartsWith("--loopback: an in-memory test double at mongodb://127.0.0.1:", loopback.Output, StringComparison.Ordinal);
        Assert.Contains("(0 compressed, 200 plain)", loopback.Output, StringComparison.Ordinal);

        var usage = await ToolProcess.RunAsync(docz, _directory, _directory, ["analyze", _directory]);
        Assert.True(usage.Exit == 2, usage.Describe());
        Assert.Contains("is a directory", usage.Error);
    }
}
