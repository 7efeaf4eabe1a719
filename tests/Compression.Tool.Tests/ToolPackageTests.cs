using System.Diagnostics;
using System.IO.Compression;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using System.Xml.Linq;
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

    private static readonly TimeSpan ProcessTimeout = TimeSpan.FromMinutes(10);

    private readonly string _directory = Directory.CreateTempSubdirectory("docz-package-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task Pack_InstallFromALocalFolderFeed_DoczRunsHelpAndAnalyze()
    {
        string repository = RepositoryRoot();
        string feed = Directory.CreateDirectory(Path.Combine(_directory, "feed")).FullName;
        string tools = Path.Combine(_directory, "tools");
        string config = Path.Combine(_directory, "nuget.config");
        File.WriteAllText(config, $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="local" value="{feed}" />
              </packageSources>
            </configuration>
            """);

        // Pack what the test run just built (same configuration), without building or restoring again.
        string configuration = typeof(ToolPackageTests).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()!.Configuration;
        var pack = await RunAsync(Dotnet(), repository,
            ["pack", Path.Combine("src", "Compression.Tool", "Compression.Tool.csproj"), "-c", configuration, "--no-build", "-o", feed, "-nodeReuse:false"]);
        Assert.True(pack.Exit == 0, pack.Describe());

        string package = Assert.Single(Directory.GetFiles(feed, "*.nupkg"));
        Assert.StartsWith($"{PackageId}.", Path.GetFileName(package), StringComparison.Ordinal);
        using (ZipArchive zip = ZipFile.OpenRead(package))
        {
            ZipArchiveEntry settings = Assert.Single(zip.Entries, e => e.FullName.EndsWith("/DotnetToolSettings.xml", StringComparison.Ordinal));
            using var stream = settings.Open();
            XElement command = XDocument.Load(stream).Descendants("Command").Single();
            Assert.Equal(Command, (string?)command.Attribute("Name"));
            Assert.Equal("Compression.Tool.dll", (string?)command.Attribute("EntryPoint"));
            Assert.Contains(zip.Entries, e => e.FullName == "README.md");
        }

        var install = await RunAsync(Dotnet(), _directory,
            ["tool", "install", PackageId, "--tool-path", tools, "--add-source", feed, "--configfile", config]);
        Assert.True(install.Exit == 0, install.Describe());
        Assert.Contains(Command, install.Output);

        string docz = Path.Combine(tools, RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? Command + ".exe" : Command);
        Assert.True(File.Exists(docz), $"{docz} was not installed; {install.Describe()}");

        var help = await RunAsync(docz, _directory, ["--help"]);
        Assert.True(help.Exit == 0, help.Describe());
        Assert.Contains("docz [command] [options]", help.Output);
        Assert.Contains("analyze", help.Output);
        Assert.DoesNotContain("Compression.Tool", help.Output, StringComparison.Ordinal);

        string corpus = Path.Combine(_directory, "orders.jsonl");
        File.WriteAllText(corpus, TestCorpus.Orders(200, seed: 9));
        var analyze = await RunAsync(docz, _directory, ["analyze", corpus, "--quick", "--format", "json"]);
        Assert.True(analyze.Exit == 0, analyze.Describe());
        using (var json = JsonDocument.Parse(analyze.Output))
        {
            Assert.Equal(200, json.RootElement.GetProperty("documents").GetInt32());
            Assert.Equal(3, json.RootElement.GetProperty("limitLevel").GetInt32());
            Assert.NotEmpty(json.RootElement.GetProperty("results").EnumerateArray());
            Assert.True(json.RootElement.GetProperty("recommended").GetProperty("ratio").GetDouble() > 1);
        }
        Assert.Contains("docz analyze: orders.jsonl: 200 documents", analyze.Error);

        var usage = await RunAsync(docz, _directory, ["analyze", _directory]);
        Assert.True(usage.Exit == 2, usage.Describe());
        Assert.Contains("is a directory", usage.Error);
    }

    private sealed record Outcome(string Command, int Exit, string Output, string Error)
    {
        public string Describe() => $"`{Command}` exited {Exit}\nstdout:\n{Output}\nstderr:\n{Error}";
    }

    /// <summary>Runs <paramref name="file"/> to its end (or <see cref="ProcessTimeout"/>, then kills it and fails) with no route to any NuGet server.</summary>
    private async Task<Outcome> RunAsync(string file, string workingDirectory, string[] arguments)
    {
        var start = new ProcessStartInfo(file)
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            StandardOutputEncoding = Encoding.UTF8,
            StandardErrorEncoding = Encoding.UTF8,
            UseShellExecute = false,
        };
        foreach (string argument in arguments) start.ArgumentList.Add(argument);

        // What the test host inherited from `dotnet test` (MSBuild's paths) must not steer a fresh `dotnet pack`.
        foreach (string key in start.Environment.Keys.Where(k => k.StartsWith("MSBUILD", StringComparison.OrdinalIgnoreCase) || k.StartsWith("VSTEST", StringComparison.OrdinalIgnoreCase)).ToList())
            start.Environment.Remove(key);
        start.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        start.Environment["DOTNET_CLI_USE_MSBUILD_SERVER"] = "0";
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1";
        start.Environment["DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE"] = "1";
        // The installed shim finds the runtime here; the package cache is this test's own, so nothing cached is reused.
        start.Environment["DOTNET_ROOT"] = Path.GetDirectoryName(Dotnet());
        start.Environment["NUGET_PACKAGES"] = Path.Combine(_directory, "packages");
        // Every HTTP(S) connection goes to a closed local port: the machine's NuGet source cannot be what serves the tool.
        foreach (string proxy in (string[])["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"])
            start.Environment[proxy] = "http://127.0.0.1:9";
        start.Environment.Remove("NO_PROXY");
        start.Environment.Remove("no_proxy");

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{file} did not start.");
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(ProcessTimeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"`{file} {string.Join(' ', arguments)}` did not end within {ProcessTimeout}.");
        }
        return new Outcome($"{Path.GetFileName(file)} {string.Join(' ', arguments)}", process.ExitCode, await output, await error);
    }

    /// <summary>The dotnet host running this test (the CLI names it in DOTNET_HOST_PATH; otherwise three levels above the runtime's directory).</summary>
    private static string Dotnet()
    {
        if (Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host))
            return new FileInfo(host).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? host; // /usr/bin/dotnet is often a link
        string root = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "..", "..", ".."));
        string dotnet = Path.Combine(root, RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "dotnet.exe" : "dotnet");
        Assert.True(File.Exists(dotnet), $"No dotnet host at {dotnet}.");
        return dotnet;
    }

    /// <summary>The repository this test was built from: the nearest directory above the test assembly holding the tool's project.</summary>
    private static string RepositoryRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "src", "Compression.Tool", "Compression.Tool.csproj"))) return directory.FullName;
        }
        throw new InvalidOperationException($"No src/Compression.Tool/Compression.Tool.csproj above {AppContext.BaseDirectory}.");
    }
}
