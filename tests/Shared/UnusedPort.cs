namespace Compression.Testing;

/// <summary>A loopback port nothing listens on: taken from the system, then released (for "no server there" tests).</summary>
internal static class UnusedPort
{
    public static int Take()
    {
        var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        int port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }
}
