using Compression.Dictionaries;
using Microsoft.Extensions.Hosting;

namespace Compression.Configuration;

/// <summary>Owns the engine's background work in a host: loads the configured namespaces and polls from start to stop.</summary>
internal sealed class CompressionEngineHostedService(CompressionEngine engine) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken) => engine.StartAsync(cancellationToken);

    public Task StopAsync(CancellationToken cancellationToken) => engine.StopAsync(cancellationToken);
}
