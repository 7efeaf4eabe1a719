using System.Diagnostics;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// Runs a built tool as a child process through <c>dotnet</c>, to be killed: Compression.Tool.dll beside the tests, or
/// another entry assembly (docz with its Couchbase plugin; this file is also compiled into tests/Compression.Tool.Couchbase.Tests).
/// </summary>
internal sealed class ChildDocz : IDisposable
{
    private readonly Process _process;
    private readonly Task<string> _output;
    private readonly Task<string> _error;

    private ChildDocz(Process process)
    {
        _process = process;
        _output = process.StandardOutput.ReadToEndAsync();
        _error = process.StandardError.ReadToEndAsync();
    }

    public static string ToolPath => typeof(Program).Assembly.Location;

    public static ChildDocz Start(params string[] args) => StartTool(ToolPath, args);

    public static ChildDocz StartTool(string toolPath, params string[] args)
    {
        var start = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(toolPath);
        foreach (string arg in args) start.ArgumentList.Add(arg);
        return new ChildDocz(Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start"));
    }

    /// <summary>Kills the process now (idempotent; a process that has already exited is left alone).</summary>
    public void Kill()
    {
        try
        {
            _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
        }
    }

    /// <summary>Waits for the exit (the token only guards against a hang) and returns the exit code and output.</summary>
    public async Task<(int Exit, string Output, string Error)> WaitAsync(CancellationToken cancellationToken)
    {
        await _process.WaitForExitAsync(cancellationToken);
        return (_process.ExitCode, await _output, await _error);
    }

    public void Dispose()
    {
        Kill();
        _process.Dispose();
    }
}
