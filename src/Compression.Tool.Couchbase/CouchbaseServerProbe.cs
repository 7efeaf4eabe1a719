using System.Globalization;
using System.Net.Sockets;

namespace Compression.Tool.Couchbase;

/// <summary>
/// Whether the first node of a Couchbase connection string takes a connection on its key-value port (11210; 11207 for
/// <c>couchbases://</c>; or the port given), asked once before a live command reads anything. The SDK, given a cluster
/// that is not there, says only that it "has not yet bootstrapped"; a connection to the node says why
/// (<c>Connection refused</c>, a name that does not resolve, or nothing within <see cref="Timeout"/>). A node that takes
/// the connection is left to the SDK, whose errors (authentication, a missing bucket) are answers of their own.
/// </summary>
internal static class CouchbaseServerProbe
{
    /// <summary>How long the probe waits for the node to take the connection.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    /// <summary>Null when the first node takes a connection; else one line naming the address and the cause.</summary>
    public static async Task<string?> WhyNoServerAsync(string connectionString, CancellationToken cancellationToken)
    {
        (string host, int port) = FirstNode(connectionString);
        using var client = new TcpClient();
        using var probe = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        probe.CancelAfter(Timeout);
        string cause;
        try
        {
            await client.ConnectAsync(host, port, probe.Token).ConfigureAwait(false);
            return null;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            cause = $"nothing answered within {Timeout.TotalSeconds:0} s";
        }
        catch (SocketException socket)
        {
            cause = socket.Message;
        }
        return $"no Couchbase cluster answered at {connectionString} ({host}:{port}: {cause}); check the connection string";
    }

    /// <summary>The host and key-value port of the first node a connection string names.</summary>
    internal static (string Host, int Port) FirstNode(string connectionString)
    {
        bool tls = connectionString.StartsWith("couchbases://", StringComparison.OrdinalIgnoreCase);
        int scheme = connectionString.IndexOf("://", StringComparison.Ordinal);
        string hosts = scheme >= 0 ? connectionString[(scheme + 3)..] : connectionString;
        string first = hosts.Split(',', '/', '?')[0];
        int colon = first.LastIndexOf(':');
        bool hasPort = colon > 0 && !first.EndsWith(']') && int.TryParse(first[(colon + 1)..], NumberStyles.None, CultureInfo.InvariantCulture, out _);
        string host = hasPort ? first[..colon] : first;
        int port = hasPort ? int.Parse(first[(colon + 1)..], NumberStyles.None, CultureInfo.InvariantCulture) : tls ? 11207 : 11210;
        return (host.Trim('[', ']'), port);
    }
}
