using Xunit;

namespace Compression.Testing.Mongo;

/// <summary>
/// One server per test class: the real one when COMPRESSION_TEST_MONGODB_URI is set, else the loopback one started
/// in-process. Each test takes its own database (<see cref="MongoTestServer.CreateDatabase"/>). The loopback server must
/// have seen no protocol failure when the class ends. Linked into every test project that talks to MongoDB.
/// </summary>
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
