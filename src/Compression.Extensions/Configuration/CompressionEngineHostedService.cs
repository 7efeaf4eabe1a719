using Compression.Dictionaries;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Compression.Configuration;

/// <summary>Owns the engine's background work in a host: loads the configured namespaces and polls from start to stop.</summary>
internal sealed class CompressionEngineHostedService(CompressionEngine engine, ILogger<CompressionEngineHostedService>? logger = null) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken) => engine.StartAsync(cancellationToken);

    /// <summary>
    /// Stops the engine's polling and background work and waits for what is running. When the host's shutdown timeout
    /// ends the wait (a training run on a busy machine can outlast it), the stop returns, as a hosted service should once
    /// the stop is no longer graceful: the work was told to stop, and disposing the engine (with the host) waits for it.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        try
        {
            await engine.StopAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            (logger ?? NullLogger<CompressionEngineHostedService>.Instance).LogWarning(
                "The host's shutdown timeout ended the wait for the compression engine's background work (a training run or a dictionary load); it was told to stop, and disposing the engine waits for it to end.");
        }
    }
}
