using Compression.Testing.Mongo;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

/// <summary>One server per test class: the real one when COMPRESSION_TEST_MONGODB_URI is set, else the loopback one.</summary>
public sealed class MongoFixture : IAsyncLifetime
{
    private MongoTestServer? _server;

    public MongoTestServer Server => _server ?? throw new InvalidOperationException("not started");

    public async Task InitializeAsync() => _server = await MongoTestServer.StartAsync();

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            var failures = _server.Loopback?.Failures ?? [];
            await _server.DisposeAsync();
            Assert.Empty(failures);
        }
    }
}
