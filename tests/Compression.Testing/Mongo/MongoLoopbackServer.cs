using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Compression.Testing.Mongo.Internal;
using MongoDB.Bson;

namespace Compression.Testing.Mongo;

/// <summary>
/// A MongoDB wire-protocol server for tests (a test double, not a database): OP_MSG (plain or in OP_COMPRESSED: snappy,
/// zlib, zstd) and the OP_QUERY handshake on 127.0.0.1, the commands <c>MongoDB.Driver</c> sends for CRUD, cursors, indexes and bulk writes, in memory, with
/// real error codes. Anything it does not implement fails loudly, naming it. See <c>README.md</c> beside this file.
/// </summary>
public sealed class MongoLoopbackServer : IAsyncDisposable
{
    private readonly MongoLoopbackServerOptions _options;
    private readonly Storage _storage = new();
    private readonly CursorStore _cursors = new();
    private readonly CommandProcessor _processor;
    private readonly ConcurrentDictionary<int, WireConnection> _connections = new();
    private readonly ConcurrentDictionary<string, long> _commandCounts = new(StringComparer.Ordinal);
    private readonly ConcurrentQueue<string> _failures = new();
    private readonly ConcurrentDictionary<string, long> _compressedReceived = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, long> _compressedSent = new(StringComparer.Ordinal);
    private readonly SemaphoreSlim _lifecycle = new(1, 1);
    private TcpListener? _listener;
    private CancellationTokenSource? _stopping;
    private Task? _acceptLoop;
    private ReplyStall? _stall;
    private volatile bool _refuse;
    private int _nextConnectionId;
    private long _bytesReceived;
    private long _bytesSent;
    private long _connectionsAccepted;

    private MongoLoopbackServer(MongoLoopbackServerOptions options)
    {
        _options = options;
        var offered = new List<byte>();
        foreach (string name in options.Compressors)
        {
            if (!WireCompressors.TryGetId(name, out byte id))
            {
                throw new ArgumentException($"Unknown compressor '{name}' in MongoLoopbackServerOptions.Compressors (snappy, zlib, zstd and noop are known).", nameof(options));
            }

            if (!offered.Contains(id))
            {
                offered.Add(id);
            }
        }

        OfferedCompressors = [.. offered];
        _processor = new CommandProcessor(_storage, _cursors, options);
        Port = options.Port;
    }

    /// <summary>The port on 127.0.0.1 (fixed after the first start).</summary>
    public int Port { get; private set; }

    /// <summary>A connection string for <c>MongoClient</c>: <c>mongodb://127.0.0.1:PORT/?directConnection=true</c>.</summary>
    public string ConnectionString => $"mongodb://127.0.0.1:{Port}/?directConnection=true";

    /// <summary>True between a start and <see cref="StopAsync"/>.</summary>
    public bool IsRunning => _listener is not null;

    /// <summary>Bytes of every message received (headers included) since start or <see cref="ResetCounters"/>.</summary>
    public long BytesReceived => Interlocked.Read(ref _bytesReceived);

    /// <summary>Bytes of every reply handed to a socket (headers included) since start or <see cref="ResetCounters"/>; counted before the write, so a client that has read a reply sees it counted.</summary>
    public long BytesSent => Interlocked.Read(ref _bytesSent);

    /// <summary>Connections accepted (refused ones included) since start or <see cref="ResetCounters"/>.</summary>
    public long ConnectionsAccepted => Interlocked.Read(ref _connectionsAccepted);

    /// <summary>Connections open now.</summary>
    public int OpenConnections => _connections.Count;

    /// <summary>Cursors open now.</summary>
    public int OpenCursors => _cursors.Count;

    /// <summary>Commands received by name (<c>hello</c>, <c>insert</c>, ...; handshakes over OP_QUERY included) since
    /// start or <see cref="ResetCounters"/>.</summary>
    public IReadOnlyDictionary<string, long> CommandCounts => new Dictionary<string, long>(_commandCounts, StringComparer.Ordinal);

    /// <summary>OP_COMPRESSED messages received, by compressor name (<c>snappy</c>, <c>zlib</c>, <c>zstd</c>), since start
    /// or <see cref="ResetCounters"/>.</summary>
    public IReadOnlyDictionary<string, long> CompressedMessagesReceived => new Dictionary<string, long>(_compressedReceived, StringComparer.Ordinal);

    /// <summary>OP_COMPRESSED replies sent, by compressor name, since start or <see cref="ResetCounters"/>.</summary>
    public IReadOnlyDictionary<string, long> CompressedMessagesSent => new Dictionary<string, long>(_compressedSent, StringComparer.Ordinal);

    /// <summary>Protocol violations and internal errors seen (each closed its connection or failed its command):
    /// a test can assert this stays empty.</summary>
    public IReadOnlyList<string> Failures => [.. _failures];

    /// <summary>Starts a server on 127.0.0.1.</summary>
    public static async Task<MongoLoopbackServer> StartAsync(MongoLoopbackServerOptions? options = null, CancellationToken cancellationToken = default)
    {
        var server = new MongoLoopbackServer(options ?? new MongoLoopbackServerOptions());
        await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return server;
    }

    /// <summary>Starts listening again after <see cref="StopAsync"/>, on the same port, with the same data.</summary>
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        await _lifecycle.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_listener is not null)
            {
                throw new InvalidOperationException("The server is already running.");
            }

            var listener = new TcpListener(IPAddress.Loopback, Port);
            listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Start(512);
            Port = ((IPEndPoint)listener.LocalEndpoint).Port;
            _listener = listener;
            _stopping = new CancellationTokenSource();
            _acceptLoop = AcceptLoopAsync(listener, _stopping.Token);
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <summary>Stops listening and closes every connection; the data stays (open cursors do not, as on a real
    /// restart). <see cref="StartAsync(CancellationToken)"/> brings it back on the same port.</summary>
    public async Task StopAsync()
    {
        await _lifecycle.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_listener is null)
            {
                return;
            }

            await _stopping!.CancelAsync().ConfigureAwait(false);
            _listener.Stop();
            _listener.Dispose();
            _listener = null;
            await _acceptLoop!.ConfigureAwait(false);
            var tasks = _connections.Values.Select(c => c.Abort()).ToList();
            await Task.WhenAll(tasks).ConfigureAwait(false);
            _stopping.Dispose();
            _stopping = null;
            _cursors.Clear();
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <inheritdoc cref="StopAsync"/>
    public async ValueTask DisposeAsync()
    {
        _stall?.Release();
        await StopAsync().ConfigureAwait(false);
    }

    /// <summary>Resets every connection now (TCP reset); returns how many. The driver sees a network error on each.</summary>
    public int DropAllConnections()
    {
        int n = 0;
        foreach (var connection in _connections.Values)
        {
            _ = connection.Abort();
            n++;
        }

        return n;
    }

    /// <summary>While true, every new connection is accepted and reset at once (established ones are kept).</summary>
    public void RefuseConnections(bool refuse) => _refuse = refuse;

    /// <summary>Holds back every reply until the returned stall is released. One stall at a time.</summary>
    public ReplyStall StallReplies()
    {
        var stall = new ReplyStall(this);
        if (Interlocked.CompareExchange(ref _stall, stall, null) is not null)
        {
            throw new InvalidOperationException("Replies are already stalled; release that stall first.");
        }

        return stall;
    }

    /// <summary>Holds back every reply for <paramref name="duration"/> (or until the returned stall is released).</summary>
    public ReplyStall StallReplies(TimeSpan duration)
    {
        var stall = StallReplies();
        _ = Task.Delay(duration).ContinueWith(_ => stall.Release(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        return stall;
    }

    /// <summary>Sets the byte, connection and command counters to zero.</summary>
    public void ResetCounters()
    {
        Interlocked.Exchange(ref _bytesReceived, 0);
        Interlocked.Exchange(ref _bytesSent, 0);
        Interlocked.Exchange(ref _connectionsAccepted, 0);
        _commandCounts.Clear();
        _compressedReceived.Clear();
        _compressedSent.Clear();
        _concerns.Clear();
    }

    /// <summary>Deletes every database (the data normally survives stop and start).</summary>
    public void Clear()
    {
        lock (_storage.Sync)
        {
            _storage.Databases.Clear();
        }

        _cursors.Clear();
    }

    internal CommandProcessor Processor => _processor;

    internal void EndStall(ReplyStall stall) => Interlocked.CompareExchange(ref _stall, null, stall);

    internal async ValueTask WaitWhileStalledAsync(CancellationToken cancellationToken)
    {
        var stall = Volatile.Read(ref _stall);
        if (stall is not null && !stall.IsReleased)
        {
            stall.NoteHeld();
            await stall.Released.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    internal void CountReceived(int bytes) => Interlocked.Add(ref _bytesReceived, bytes);

    internal void CountSent(int bytes) => Interlocked.Add(ref _bytesSent, bytes);

    /// <summary>The compressor ids the handshake offers, in the order of <see cref="MongoLoopbackServerOptions.Compressors"/>.</summary>
    internal byte[] OfferedCompressors { get; }

    internal void CountCompressedReceived(byte id) => _compressedReceived.AddOrUpdate(WireCompressors.Name(id), 1, (_, n) => n + 1);

    internal void CountCompressedSent(byte id) => _compressedSent.AddOrUpdate(WireCompressors.Name(id), 1, (_, n) => n + 1);

    internal void CountCommand(string name) => _commandCounts.AddOrUpdate(name, 1, (_, n) => n + 1);

    /// <summary>The most concerns <see cref="Concerns"/> keeps (later ones are not recorded).</summary>
    public const int MaxRecordedConcerns = 10_000;

    private readonly ConcurrentQueue<RecordedConcern> _concerns = new();

    /// <summary>
    /// The read and write concerns commands asked for, in arrival order: every command that carried a <c>readConcern</c>
    /// or a <c>writeConcern</c> (the first <see cref="MaxRecordedConcerns"/> since start or <see cref="ResetCounters"/>).
    /// The server accepts them and applies none (it is one node: every write is on its only member and in memory).
    /// </summary>
    public IReadOnlyList<RecordedConcern> Concerns => [.. _concerns];

    internal void RecordConcerns(BsonDocument command)
    {
        BsonDocument? read = command.TryGetValue("readConcern", out BsonValue r) && r is BsonDocument rd ? rd : null;
        BsonDocument? write = command.TryGetValue("writeConcern", out BsonValue w) && w is BsonDocument wd ? wd : null;
        if ((read is null && write is null) || _concerns.Count >= MaxRecordedConcerns) return;
        string database = command.TryGetValue("$db", out BsonValue db) && db.IsString ? db.AsString : "";
        BsonValue target = command.GetElement(0).Value;
        _concerns.Enqueue(new RecordedConcern(command.GetElement(0).Name, database, target.IsString ? target.AsString : "",
            (BsonDocument?)read?.DeepClone(), (BsonDocument?)write?.DeepClone()));
    }

    internal void RecordFailure(string failure) => _failures.Enqueue(failure);

    internal void Forget(WireConnection connection) => _connections.TryRemove(connection.Id, out _);

    private async Task AcceptLoopAsync(TcpListener listener, CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await listener.AcceptSocketAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }

            Interlocked.Increment(ref _connectionsAccepted);
            if (_refuse)
            {
                socket.LingerState = new LingerOption(true, 0);
                socket.Dispose();
                continue;
            }

            socket.NoDelay = true;
            var connection = new WireConnection(this, Interlocked.Increment(ref _nextConnectionId), socket);
            _connections[connection.Id] = connection;
            connection.Start(cancellationToken);
        }
    }
}

/// <summary>A command's read and write concerns, as the client sent them (<see cref="MongoLoopbackServer.Concerns"/>).</summary>
/// <param name="Command">The command's name (<c>insert</c>, <c>find</c>, ...).</param>
/// <param name="Database">Its <c>$db</c>.</param>
/// <param name="Collection">The collection it names, or empty.</param>
/// <param name="ReadConcern">Its <c>readConcern</c>, or null.</param>
/// <param name="WriteConcern">Its <c>writeConcern</c>, or null.</param>
public sealed record RecordedConcern(string Command, string Database, string Collection, BsonDocument? ReadConcern, BsonDocument? WriteConcern);
