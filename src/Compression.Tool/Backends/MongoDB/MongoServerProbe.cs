using System.Net;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;
using MongoDB.Driver.Core.Clusters;
using MongoDB.Driver.Core.Servers;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// Whether a MongoDB deployment answers, asked once before a live command reads anything: a <c>ping</c>, given up as
/// soon as every server of the cluster has failed its heartbeat (<c>Connection refused</c>, a name that does not
/// resolve: the driver would otherwise wait out its server selection timeout, 30 s, and say why only deep in a dump of
/// its cluster state), or after <see cref="Timeout"/> (an address that never answers). The run itself keeps the
/// driver's own timeouts: a failover in the middle of a long <c>migrate</c> may take longer than this.
/// The same approach as <c>NoServerAsync</c> in samples/MongoSample/Program.cs.
/// </summary>
internal static class MongoServerProbe
{
    /// <summary>How long the probe waits for an answer when no server has said why it cannot give one.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// Null when the deployment answers a ping; else one line naming each server's address and the innermost cause the
    /// driver saw for it (<c>127.0.0.1:27017: Connection refused</c>), or that none answered within <see cref="Timeout"/>.
    /// A failure that is an answer (authentication refused, say) is thrown as the driver throws it.
    /// </summary>
    public static async Task<string?> WhyNoServerAsync(MongoClient client, CancellationToken cancellationToken)
    {
        using var probe = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        probe.CancelAfter(Timeout);
        Task ping = client.GetDatabase("admin").RunCommandAsync<BsonDocument>(new BsonDocument("ping", 1), cancellationToken: probe.Token);
        while (!ping.IsCompleted)
        {
            await Task.WhenAny(ping, Task.Delay(PollInterval, cancellationToken)).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
            if (!ping.IsCompleted && EveryServerFailed(client.Cluster.Description))
            {
                await probe.CancelAsync().ConfigureAwait(false); // every server refused: no need to wait out the selection
                return Describe(client, timedOut: false);
            }
        }
        try
        {
            await ping.ConfigureAwait(false);
            return null;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return Describe(client, timedOut: true);
        }
        catch (TimeoutException)
        {
            return Describe(client, timedOut: true); // a serverSelectionTimeoutMS shorter than the probe's
        }
    }

    private static bool EveryServerFailed(ClusterDescription cluster) =>
        cluster.Servers.Count > 0 && cluster.Servers.All(s => s.HeartbeatException is not null);

    private static string Describe(MongoClient client, bool timedOut)
    {
        IReadOnlyList<ServerDescription> servers = client.Cluster.Description.Servers;
        string where = servers.Count == 0
            ? string.Join(", ", client.Settings.Servers)
            : string.Join(", ", servers.Select(s => s.HeartbeatException is { } failure ? $"{Address(s.EndPoint)} ({Innermost(failure)})" : Address(s.EndPoint)));
        string why = timedOut ? $" within {Timeout.TotalSeconds:0} s" : "";
        return $"no MongoDB server answered at {where}{why}; check the connection string, or try docz with --loopback (an in-memory test double, no server)";
    }

    private static string Address(EndPoint endPoint) => endPoint switch
    {
        DnsEndPoint dns => $"{dns.Host}:{dns.Port}",
        _ => endPoint.ToString() ?? "?",
    };

    /// <summary>The cause, without the driver's wrappers: <c>Connection refused</c>, not "An exception occurred while opening a connection".</summary>
    private static string Innermost(Exception exception)
    {
        while (exception.InnerException is not null) exception = exception.InnerException;
        return LiveRunner.FirstLine(exception.Message);
    }
}
