using Microsoft.Extensions.Configuration;

namespace Compression.Tool.Live;

/// <summary>The options every live command shares.</summary>
internal sealed record LiveSettings
{
    public string? Connection { get; init; }

    public string? ConfigPath { get; init; }

    public IReadOnlyList<string> Namespaces { get; init; } = [];

    public bool Json { get; init; }

    public int BatchSize { get; init; } = 1000;

    public int MaxFailures { get; init; } = 10;

    public bool Progress { get; init; }

    /// <summary><c>--loopback</c>: run on an in-process MongoDB test double that starts empty, not on a server.</summary>
    public bool Loopback { get; init; }

    /// <summary><c>--load</c>: a JSON Lines file inserted into the test double's collection before the command runs.</summary>
    public string? LoadPath { get; init; }
}

/// <summary>Bad usage: a missing or wrong option, setting or file. Exit code 2, and the message alone (no stack trace).</summary>
internal sealed class UsageException(string message) : Exception(message);

/// <summary>No server of the database answered (the run could not start). Exit code 1, and the message alone: the addresses and why.</summary>
internal sealed class NoServerException(string message) : Exception(message);

/// <summary>The application's configuration file (<c>--config</c>), read the same way for every backend.</summary>
internal static class LiveConfiguration
{
    public static IConfiguration Read(string? path)
    {
        var builder = new ConfigurationBuilder();
        if (path is not null)
        {
            string full = Path.GetFullPath(path);
            if (Directory.Exists(full)) throw new UsageException($"--config {full} is a directory; give the appsettings.json file.");
            if (!File.Exists(full)) throw new UsageException($"--config {full}: file not found.");
            builder.AddJsonFile(full, optional: false, reloadOnChange: false);
        }
        try
        {
            return builder.Build();
        }
        catch (Exception ex) when (ex is InvalidDataException or FormatException or IOException)
        {
            throw new UsageException($"--config {path}: {ex.Message}{(ex.InnerException is { } inner ? $" ({inner.Message})" : "")}");
        }
    }
}
