using MongoDB.Bson;
using MongoDB.Driver.Core.Events;

namespace MongoSample;

/// <summary>
/// Bytes of the commands a client sends and of the replies it gets, from the driver's command monitoring events, so it
/// works against any server. These are BSON sizes of the commands and replies (the OP_MSG framing, about 21 bytes per
/// message, is not counted); heartbeats on monitoring connections are not commands and are not counted either.
/// </summary>
internal sealed class WireCounter
{
    private long _sent;
    private long _received;
    private long _commands;

    public long Sent => Interlocked.Read(ref _sent);

    public long Received => Interlocked.Read(ref _received);

    public long Commands => Interlocked.Read(ref _commands);

    public void Subscribe(MongoDB.Driver.Core.Configuration.ClusterBuilder cluster)
    {
        cluster.Subscribe<CommandStartedEvent>(e =>
        {
            Interlocked.Increment(ref _commands);
            Interlocked.Add(ref _sent, e.Command.ToBson().Length);
        });
        cluster.Subscribe<CommandSucceededEvent>(e => Interlocked.Add(ref _received, e.Reply.ToBson().Length));
    }

    public (long Sent, long Received) Snapshot() => (Sent, Received);
}
