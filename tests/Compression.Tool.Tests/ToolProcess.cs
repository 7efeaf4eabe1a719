using System.Diagnostics;
using System.IO.Compression;
using System.Runtime.InteropServices;
using System.Text;
using System.Xml.Linq;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>
/// Runs the tool and the .NET CLI as child processes for the tests of docz's packages (this file is also compiled into
/// tests/Compression.Tool.Couchbase.Tests). Processes get minutes, not seconds: the machine may be busy; nothing here is timed.
/// </summary>
internal static class ToolProcess
{
    public static readonly TimeSpan Timeout = TimeSpan.FromMinutes(10);

    public sealed record Outcome(string Command, int Exit, string Output, string Error)
    {
        public string Describe() => $"`{Command}` exited {Exit}\nstdout:\n{Output}\nstderr:\n{Error}";
    }

    /// <summary>
    /// Packs <paramref name="project"/> (what the test run just built, in <paramref name="configuration"/>, without
    /// building or restoring again) into a folder feed under <paramref name="directory"/>, checks that the package is
    /// the tool <paramref name="packageId"/> with the command <paramref name="command"/> entering at
    /// <paramref name="entryPoint"/>, and installs it from that folder alone (a nuget.config that clears every other
    /// source, an empty package cache, and HTTP proxies that refuse every connection, so nothing comes from the
    /// machine's NuGet source). Returns the installed command's path.
    /// </summary>
    public static async Task<string> PackAndInstallAsync(string project, string packageId, string command, string entryPoint, string configuration, string directory)
    {
        string feed = Directory.CreateDirectory(Path.Combine(directory, "feed")).FullName;
        string tools = Path.Combine(directory, "tools");
        string config = Path.Combine(directory, "nuget.config");
        File.WriteAllText(config, $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="local" value="{feed}" />
              </packageSources>
            </configuration>
            """);

        var pack = await RunAsync(Dotnet(), RepositoryRoot(), directory, ["pack", project, "-c", configuration, "--no-build", "-o", feed, "-nodeReuse:false"]);
        Assert.True(pack.Exit == 0, pack.Describe());

        string package = Assert.Single(Directory.GetFiles(feed, "*.nupkg"));
        Assert.StartsWith($"{packageId}.", Path.GetFileName(package), StringComparison.Ordinal);
        using (ZipArchive zip = ZipFile.OpenRead(package))
        {
            ZipArchiveEntry settings = Assert.Single(zip.Entries, e => e.FullName.EndsWith("/DotnetToolSettings.xml", StringComparison.Ordinal));
            using var stream = settings.Open();
            XElement entry = XDocument.Load(stream).Descendants("Command").Single();
            Assert.Equal(command, (string?)entry.Attribute("Name"));
            Assert.Equal(entryPoint, (string?)entry.Attribute("EntryPoint"));
            Assert.Contains(zip.Entries, e => e.FullName == "README.md");
        }

        var install = await RunAsync(Dotnet(), directory, directory, ["tool", "install", packageId, "--tool-path", tools, "--add-source", feed, "--configfile", config]);
        Assert.True(install.Exit == 0, install.Describe());
        Assert.Contains(command, install.Output);

        string installed = Path.Combine(tools, RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? command + ".exe" : command);
        Assert.True(File.Exists(installed), $"{installed} was not installed; {install.Describe()}");
        return installed;
    }

    /// <summary>
    /// Runs <paramref name="file"/> to its end (or <see cref="Timeout"/>, then kills it and fails) with no route to any
    /// NuGet server and its package cache in <paramref name="isolation"/>.
    /// </summary>
    public static async Task<Outcome> RunAsync(string file, string workingDirectory, string isolation, string[] arguments)
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
        start.Environment["NUGET_PACKAGES"] = Path.Combine(isolation, "packages");
        // Every HTTP(S) connection goes to a closed local port: the machine's NuGet source cannot be what serves the tool.
        // Loopback is reached directly: a test double's HTTP service (the Couchbase double's management API) is there.
        foreach (string proxy in (string[])["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"])
            start.Environment[proxy] = "http://127.0.0.1:9";
        start.Environment["NO_PROXY"] = start.Environment["no_proxy"] = "127.0.0.1,localhost";

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{file} did not start.");
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(Timeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"`{file} {string.Join(' ', arguments)}` did not end within {Timeout}.");
        }
        return new Outcome($"{Path.GetFileName(file)} {string.Join(' ', arguments)}", process.ExitCode, await output, await error);
    }

    /// <summary>The dotnet host running this test (the CLI names it in DOTNET_HOST_PATH; otherwise three levels above the runtime's directory).</summary>
    public static string Dotnet()
    {
        if (Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host))
            return new FileInfo(host).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? host; // /usr/bin/dotnet is often a link
        string root = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "..", "..", ".."));
        string dotnet = Path.Combine(root, RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "dotnet.exe" : "dotnet");
        Assert.True(File.Exists(dotnet), $"No dotnet host at {dotnet}.");
        return dotnet;
    }

    /// <summary>The repository this test was built from: the nearest directory above the test assembly holding the tool's project.</summary>
    public static string RepositoryRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "src", "Compression.Tool", "Compression.Tool.csproj"))) return directory.FullName;
        }
        throw new InvalidOperationException($"No src/Compression.Tool/Compression.Tool.csproj above {AppContext.BaseDirectory}.");
    }
}
