using Compression.Tool.Couchbase;
using Compression.Tool.Live;
using Xunit;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>
/// A Couchbase connection string nobody answers at: one line naming the address and the cause, before the SDK's "has
/// not yet bootstrapped" (issue #40 item 1, the plugin's side of what docz does for MongoDB).
/// </summary>
public sealed class CouchbaseNoServerTests
{
    [Fact]
    public async Task Verify_against_a_refused_port_stops_with_the_address_and_the_cause()
    {
        var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        int port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        string connection = $"couchbase://127.0.0.1:{port}";
        var settings = new LiveSettings { Connection = connection, Namespaces = ["travel._default._default"] };
        var output = new StringWriter();

        var refused = await Assert.ThrowsAsync<NoServerException>(() =>
            new CouchbaseBackend().VerifyAsync(settings, new LiveOutput(output, new StringWriter(), settings), CancellationToken.None));

        Assert.Equal($"no Couchbase cluster answered at {connection} (127.0.0.1:{port}: Connection refused); check the connection string", refused.Message);
        Assert.Empty(output.ToString());
    }

    [Theory]
    [InlineData("couchbase://db1", "db1", 11210)]
    [InlineData("couchbases://db1.example.com", "db1.example.com", 11207)]
    [InlineData("couchbase://db1:12000,db2", "db1", 12000)]
    [InlineData("couchbase://[::1]:11210?network=default", "::1", 11210)]
    [InlineData("couchbase://[::1]", "::1", 11210)]
    public void The_first_node_and_its_key_value_port_are_read_from_the_connection_string(string connection, string host, int port) =>
        Assert.Equal((host, port), CouchbaseServerProbe.FirstNode(connection));
}
