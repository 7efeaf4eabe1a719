using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;

namespace Compression.Testing.Couchbase;

/// <summary>
/// A loopback Couchbase KV node: a <b>test double</b> that speaks the memcached binary protocol as Couchbase Server
/// does, for what the .NET SDK needs to bootstrap a bucket and do key-value CRUD in its collections. HELLO
/// (xattr, xerror, select-bucket, JSON, unordered execution, and alternate requests, PRESERVE_TTL, sync replication and
/// collections unless the options play a server older than 7.0: no snappy; with unordered execution, pipelined reorderable
/// requests are answered last first), the collections manifest and collection ids (GET_COLLECTIONS_MANIFEST,
/// GET_COLLECTION_ID, keys prefixed with their collection id, documents kept per collection, a collection's maximum TTL
/// applied), the error
/// map, SCRAM-SHA512/256/1 SASL (proofs checked, server signature returned), SELECT_BUCKET, cluster configs (the
/// global one before SELECT_BUCKET, as servers since 6.5 give it, and the CCCP bucket config after),
/// GET, SET, ADD, REPLACE and DELETE with CAS (framing extras: PRESERVE_TTL on SET/ADD/REPLACE only, durability on
/// them, DELETE, counters and append/prepend; any other frame, on any command, is refused), GET_META, TOUCH and GAT,
/// GET_LOCKED and UNLOCK_KEY (locks expire by the clock), GET_REPLICA (answered from the active copy when
/// <see cref="CouchbaseLoopbackServerOptions.Replicas"/> advertises replicas), INCREMENT/DECREMENT, APPEND/PREPEND, SUBDOC_MULTI_LOOKUP/MUTATION on extended attributes and
/// whole bodies (a path into a body is 0x81), with tombstones, access-deleted, create-as-deleted, revive and macros as
/// SDK 3.x's transactions need them, NOOP. A durable write is acknowledged at once (one
/// node) and remembered: <see cref="LoseUnreplicatedWrites"/> plays a failover before replication. Any other command is answered 0x81 (unknown command) and recorded
/// in <see cref="UnknownCommands"/> and the log. Expiry is stored (absolute, by <see cref="CouchbaseLoopbackServerOptions.Clock"/>) but never enforced; there is no
/// replication, query or HTTP service. Binds 127.0.0.1 on a free port; faults on demand; data survives
/// <see cref="StopAsync"/>/<see cref="StartAsync()"/>.
/// </summary>
public sealed partial class CouchbaseLoopbackServer : IAsyncDisposable
{
    private const int MaxBodyLength = 32 * 1024 * 1024;
    private const int MaxHeldReplies = 64;

    private readonly CouchbaseLoopbackServerOptions _options;
    private readonly Dictionary<DocumentKey, KvDocument> _documents = [];

    // What a failover before replication leaves of each document: its last write with durability (null: deleted with
    // durability). Documents only ever written without durability are absent: a failover loses them.
    private readonly Dictionary<DocumentKey, KvDocument?> _durable = [];

    // Documents locked by GET_LOCKED, and until when (Unix milliseconds by the options' clock); an entry past its time is no lock.
    private readonly Dictionary<DocumentKey, long> _locks = [];
    private readonly KvCollectionManifest _manifest;
    private readonly Lock _documentsLock = new();
    private readonly ConcurrentDictionary<long, Connection> _connections = new();
    private readonly ConcurrentQueue<KvCommand> _commands = new();
    private readonly ConcurrentQueue<KvUnknownCommand> _unknownCommands = new();
    private readonly ConcurrentDictionary<byte, long> _commandCounts = new();
    private readonly ConcurrentQueue<string> _protocolErrors = new();
    private readonly ConcurrentQueue<string> _authentications = new();
    private readonly KvRangeScans _rangeScans = new();
    private readonly byte[] _salt = RandomNumberGenerator.GetBytes(16);
    private readonly string _bucketUuid = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
    private readonly Lock _lifecycleLock = new();
    private ulong _lastCas = (ulong)DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() << 16;
    private long _nextConnectionId;
    private long _bytesReceived;
    private long _bytesSent;
    private long _connectionsAccepted;
    private long _connectionsRefused;
    private long _authenticationFailures;
    private long _repliesReordered;
    private int _commandsLogged;
    private TcpListener? _listener;
    private CancellationTokenSource? _running;
    private Task? _acceptLoop;
    private TaskCompletionSource _replyGate = NewOpenGate();
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _refuseConnections;
    private byte[] _clusterConfig = [];
    private byte[] _globalConfig = [];
    private int? _managementPort;
    private CouchbaseManagementServer? _management;
    private readonly ConcurrentQueue<string> _unknownManagementRequests = new();

    private CouchbaseLoopbackServer(CouchbaseLoopbackServerOptions options)
    {
        foreach (string mechanism in options.SaslMechanisms)
        {
            if (!ScramServer.Mechanisms.Contains(mechanism))
            {
                throw new ArgumentException($"SASL mechanism {mechanism} is not implemented; use {string.Join(", ", ScramServer.Mechanisms)}.", nameof(options));
            }
        }

        if (!options.PreserveTtl && options.Collections.Count > 0)
        {
            throw new ArgumentException("Collections need a 7.x server: PreserveTtl = false plays an older one, which has no collections.", nameof(options));
        }

        if (options.Replicas is < 0 or > 3)
        {
            throw new ArgumentException("A bucket has 0 to 3 replicas.", nameof(options));
        }

        if ((options.BucketType, options.EvictionPolicy) is not (("membase", "valueOnly" or "fullEviction") or ("ephemeral", "noEviction" or "nruEviction")))
        {
            throw new ArgumentException($"BucketType '{options.BucketType}' with EvictionPolicy '{options.EvictionPolicy}': allowed are membase with valueOnly or fullEviction, ephemeral with noEviction or nruEviction.", nameof(options));
        }

        if (options.BucketMaxTtl is TimeSpan bucketMaxTtl && (bucketMaxTtl <= TimeSpan.Zero || bucketMaxTtl.Ticks % TimeSpan.TicksPerSecond != 0 || bucketMaxTtl.TotalSeconds > int.MaxValue))
        {
            throw new ArgumentException($"BucketMaxTtl must be a positive whole number of seconds, at most {int.MaxValue}; it is {bucketMaxTtl}.", nameof(options));
        }

        _options = options;
        _manifest = new KvCollectionManifest(options.Collections);
        _managementPort = options.ManagementPort;
        Port = options.Port;
    }

    /// <summary>Starts a server on 127.0.0.1 (a free port unless <see cref="CouchbaseLoopbackServerOptions.Port"/> is set).</summary>
    public static async Task<CouchbaseLoopbackServer> StartAsync(CouchbaseLoopbackServerOptions? options = null, CancellationToken cancellationToken = default)
    {
        var server = new CouchbaseLoopbackServer(options ?? new CouchbaseLoopbackServerOptions());
        await server.StartAsync(cancellationToken).ConfigureAwait(false);
        return server;
    }

    /// <summary>The KV port (fixed at the first start, reused by later starts).</summary>
    public int Port { get; private set; }

    /// <summary><c>couchbase://127.0.0.1:PORT</c>: an explicit port, so the SDK does no DNS SRV lookup and goes straight to KV.</summary>
    public string ConnectionString => $"couchbase://127.0.0.1:{Port}";

    /// <summary>The user SASL accepts.</summary>
    public string Username => _options.Username;

    /// <summary>That user's password.</summary>
    public string Password => _options.Password;

    /// <summary>The bucket this server serves.</summary>
    public string BucketName => _options.BucketName;

    /// <summary>Whether the listener is up.</summary>
    public bool IsRunning
    {
        get
        {
            lock (_lifecycleLock)
            {
                return _listener is not null;
            }
        }
    }

    /// <summary>Bytes read from clients since the server was created (restarts included).</summary>
    public long BytesReceived => Interlocked.Read(ref _bytesReceived);

    /// <summary>Bytes handed to client sockets since the server was created (restarts included); counted before the write, so a client that has read a reply sees it counted.</summary>
    public long BytesSent => Interlocked.Read(ref _bytesSent);

    /// <summary>Connections accepted and served (refused ones not included).</summary>
    public long ConnectionsAccepted => Interlocked.Read(ref _connectionsAccepted);

    /// <summary>Connections reset at once because <see cref="RefuseConnections"/> was on.</summary>
    public long ConnectionsRefused => Interlocked.Read(ref _connectionsRefused);

    /// <summary>Connections open now.</summary>
    public int OpenConnections => _connections.Count;

    /// <summary>SASL exchanges that failed (wrong password, unknown user, unknown mechanism, malformed message).</summary>
    public long AuthenticationFailures => Interlocked.Read(ref _authenticationFailures);

    /// <summary>The SASL mechanism of every successful authentication, in order.</summary>
    public IReadOnlyList<string> Authentications => [.. _authentications];

    /// <summary>The first commands received (up to <see cref="CouchbaseLoopbackServerOptions.CommandLogCapacity"/>), in arrival order.</summary>
    public IReadOnlyList<KvCommand> Commands => [.. _commands];

    /// <summary>Every command answered 0x81 because this server does not implement it.</summary>
    public IReadOnlyList<KvUnknownCommand> UnknownCommands => [.. _unknownCommands];

    /// <summary>Management requests answered 404 because this server does not implement them (<c>METHOD /path</c>).</summary>
    public IReadOnlyList<string> UnknownManagementRequests => [.. _unknownManagementRequests];

    /// <summary>The management (HTTP) service's address, <c>http://127.0.0.1:PORT</c>, or null without one.</summary>
    public string? ManagementUri => _managementPort is int port ? $"http://127.0.0.1:{port}" : null;

    /// <summary>Framing errors that made the server close a connection (bad magic, oversized body).</summary>
    public IReadOnlyList<string> ProtocolErrors => [.. _protocolErrors];

    /// <summary>Replies sent ahead of the reply to an earlier request of their connection (unordered execution only).</summary>
    public long RepliesReordered => Interlocked.Read(ref _repliesReordered);

    /// <summary>The uid of the bucket's collections manifest (one per scope or collection created, by the options or the management API).</summary>
    public ulong ManifestUid => _manifest.Uid;

    /// <summary>Number of documents stored, in every collection.</summary>
    public int DocumentCount
    {
        get
        {
            lock (_documentsLock)
            {
                return _documents.Count;
            }
        }
    }

    /// <summary>When on, accepted connections are reset at once (the listener stays up).</summary>
    public bool RefuseConnections
    {
        get => _refuseConnections;
        set => _refuseConnections = value;
    }

    /// <summary>
    /// When on, requests are still read and executed but no reply is written until it is turned off again (then the
    /// held replies go out in order, unless the connection was dropped meanwhile).
    /// </summary>
    public bool StallReplies
    {
        get => !Volatile.Read(ref _replyGate).Task.IsCompleted;
        set
        {
            if (value)
            {
                TaskCompletionSource current = Volatile.Read(ref _replyGate);
                if (current.Task.IsCompleted)
                {
                    Interlocked.CompareExchange(ref _replyGate, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously), current);
                }
            }
            else
            {
                Volatile.Read(ref _replyGate).TrySetResult();
            }
        }
    }

    /// <summary>Range scans created and neither completed nor cancelled yet.</summary>
    public int OpenRangeScans => _rangeScans.Open;

    /// <summary>How many times an opcode was received.</summary>
    public long CommandCount(byte opcode) => _commandCounts.TryGetValue(opcode, out long count) ? count : 0;

    /// <summary>
    /// Completes when <paramref name="condition"/> holds; it is checked now and again after every event of the server
    /// (connection accepted, refused or closed, command answered), so tests wait on events rather than on the clock.
    /// </summary>
    public async Task WaitUntilAsync(Func<CouchbaseLoopbackServer, bool> condition, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(condition);
        while (true)
        {
            Task changed = Volatile.Read(ref _changed).Task;
            if (condition(this))
            {
                return;
            }

            await changed.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The id of a collection of the bucket; an <see cref="ArgumentException"/> naming the collections there are when it has none.</summary>
    public uint CollectionIdOf(string scope, string collection) => _manifest.IdOf(scope, collection);

    /// <summary>A stored document of the default collection, as the client last wrote it.</summary>
    public bool TryGetDocument(string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out KvDocument? document)
        => TryGetDocument(KvCollectionManifest.DefaultCollectionId, key, out document);

    /// <summary>A stored document of <c>scope.collection</c>, as the client last wrote it.</summary>
    public bool TryGetDocument(string scope, string collection, string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out KvDocument? document)
        => TryGetDocument(CollectionIdOf(scope, collection), key, out document);

    /// <summary>The keys of the documents stored in <c>scope.collection</c>, in ordinal order.</summary>
    public IReadOnlyList<string> KeysIn(string scope, string collection)
    {
        uint collectionId = CollectionIdOf(scope, collection);
        lock (_documentsLock)
        {
            return [.. _documents.Keys.Where(k => k.CollectionId == collectionId).Select(k => k.Key).Order(StringComparer.Ordinal)];
        }
    }

    /// <summary>
    /// Stores a document in the default collection directly (as if a client had written it, with <paramref name="expiry"/>
    /// as the absolute time the server keeps), for arranging legacy data; returns its CAS.
    /// </summary>
    public ulong PutDocument(string key, ReadOnlyMemory<byte> value, uint flags, byte dataType = 0, uint expiry = 0)
        => PutDocument(KvCollectionManifest.DefaultCollectionId, key, value, flags, dataType, expiry);

    /// <summary>Stores a document in <c>scope.collection</c> directly, as <see cref="PutDocument(string, ReadOnlyMemory{byte}, uint, byte, uint)"/> does; returns its CAS.</summary>
    public ulong PutDocument(string scope, string collection, string key, ReadOnlyMemory<byte> value, uint flags, byte dataType = 0, uint expiry = 0)
        => PutDocument(CollectionIdOf(scope, collection), key, value, flags, dataType, expiry);

    private bool TryGetDocument(uint collectionId, string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out KvDocument? document)
    {
        lock (_documentsLock)
        {
            return _documents.TryGetValue(new DocumentKey(collectionId, key), out document);
        }
    }

    private ulong PutDocument(uint collectionId, string key, ReadOnlyMemory<byte> value, uint flags, byte dataType, uint expiry)
    {
        lock (_documentsLock)
        {
            ulong cas = NextCas();
            var document = new KvDocument(key, value.ToArray(), flags, dataType, cas, expiry, collectionId);
            Store(new DocumentKey(collectionId, key), document);
            _durable[new DocumentKey(collectionId, key)] = document; // what a test puts in place is there after a failover
            _locks.Remove(new DocumentKey(collectionId, key));
            return cas;
        }
    }

    /// <summary>
    /// Plays a failover before replication: every document goes back to its last write made with durability, and one
    /// never written with durability disappears (a majority of nodes never had it). Returns how many documents changed.
    /// The server has one node and acknowledges a durable write at once; this is what it does instead of losing a node.
    /// </summary>
    public int LoseUnreplicatedWrites()
    {
        lock (_documentsLock)
        {
            int changed = 0;
            foreach (DocumentKey key in _documents.Keys.Union(_durable.Keys).ToList())
            {
                _documents.TryGetValue(key, out KvDocument? now);
                _durable.TryGetValue(key, out KvDocument? kept);
                if (ReferenceEquals(now, kept)) continue;
                changed++;
                if (kept is null) _documents.Remove(key); // a tombstone, if any, stays (tombstones are not replicated here)
                else Store(key, kept);
            }
            return changed;
        }
    }

    /// <summary>Removes every document, in every collection.</summary>
    public void ClearDocuments()
    {
        lock (_documentsLock)
        {
            _documents.Clear();
            _tombstones.Clear();
            _durable.Clear();
            _locks.Clear();
        }
    }

    /// <summary>Closes every open connection at once (the listener stays up; clients reconnect).</summary>
    public void DropAllConnections()
    {
        foreach (Connection connection in _connections.Values)
        {
            connection.Abort();
        }
    }

    /// <summary>Starts listening again on the same port after <see cref="StopAsync"/>; stored documents are kept.</summary>
    public Task StartAsync() => StartAsync(CancellationToken.None);

    private Task StartAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        lock (_lifecycleLock)
        {
            if (_listener is not null)
            {
                throw new InvalidOperationException("The server is already running.");
            }

            var listener = new TcpListener(IPAddress.Loopback, Port);
            listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Start(backlog: 128);
            Port = ((IPEndPoint)listener.LocalEndpoint).Port;
            if (_managementPort is int managementPort)
            {
                _management = CouchbaseManagementServer.Start(managementPort, _options, _manifest, Log, _unknownManagementRequests.Enqueue);
                _managementPort = _management.Port;
            }

            _clusterConfig = KvBucketConfig.Build(_options.BucketName, _bucketUuid, Port, _managementPort, collections: _options.PreserveTtl, _options.Replicas, _options.ReviveDocument);
            _globalConfig = KvBucketConfig.BuildGlobal(Port, _managementPort);
            _listener = listener;
            _running = new CancellationTokenSource();
            _acceptLoop = AcceptLoopAsync(listener, _running.Token);
        }

        Log($"listening on {ConnectionString} (bucket {BucketName}; KV test double{(_managementPort is int port ? $", management on http://127.0.0.1:{port}" : "")})");
        return Task.CompletedTask;
    }

    /// <summary>Stops listening and closes every connection; stored documents are kept for a later <see cref="StartAsync()"/>.</summary>
    public async Task StopAsync()
    {
        TcpListener? listener;
        CancellationTokenSource? running;
        Task? acceptLoop;
        CouchbaseManagementServer? management;
        lock (_lifecycleLock)
        {
            listener = _listener;
            running = _running;
            acceptLoop = _acceptLoop;
            management = _management;
            _management = null;
            _listener = null;
            _running = null;
            _acceptLoop = null;
        }

        if (listener is null)
        {
            return;
        }

        await running!.CancelAsync().ConfigureAwait(false);
        listener.Stop();
        if (management is not null)
        {
            await management.DisposeAsync().ConfigureAwait(false);
        }

        DropAllConnections();
        await acceptLoop!.ConfigureAwait(false);
        Task[] serving = [.. _connections.Values.Select(c => c.Completion)];
        await Task.WhenAll(serving).ConfigureAwait(false);
        running.Dispose();
        Log("stopped");
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        StallReplies = false;
        await StopAsync().ConfigureAwait(false);
    }

    private static TaskCompletionSource NewOpenGate()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        gate.SetResult();
        return gate;
    }

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

            if (_refuseConnections)
            {
                Interlocked.Increment(ref _connectionsRefused);
                socket.LingerState = new LingerOption(true, 0); // RST, as a refusing or crashed node would look
                socket.Dispose();
                Signal();
                continue;
            }

            socket.NoDelay = true;
            long id = Interlocked.Increment(ref _nextConnectionId);
            Interlocked.Increment(ref _connectionsAccepted);
            var connection = new Connection(this, id, socket);
            _connections[id] = connection;
            connection.Start(cancellationToken);
            Signal();
        }
    }

    private void Log(string message) => _options.Log?.Invoke($"[couchbase-loopback :{Port}] {message}");

    private ulong NextCas() => ++_lastCas; // under _documentsLock

    /// <summary>
    /// The expiry a written document keeps, as Couchbase Server computes it: the request's, absolute (up to 30 days it is
    /// relative to now, beyond that already a Unix time), 0 for none; in a collection with a maximum TTL (its own, else
    /// the bucket's), a document with no expiry or a later one than now plus that TTL gets now plus that TTL.
    /// </summary>
    private uint ExpiryOnWrite(uint requested, KvCollectionManifest.CollectionEntry collection)
    {
        const uint LongestRelativeExpiry = 30 * 24 * 60 * 60;
        long now = _options.Clock.GetUtcNow().ToUnixTimeSeconds();
        long expiry = requested == 0 ? 0 : requested <= LongestRelativeExpiry ? now + requested : requested;
        uint? bucketMaxTtl = _options.BucketMaxTtl is TimeSpan bucket ? (uint)bucket.TotalSeconds : null;
        if ((collection.MaxTtlSeconds ?? bucketMaxTtl) is uint maxTtl && (expiry == 0 || expiry > now + maxTtl))
        {
            expiry = now + maxTtl;
        }

        return (uint)Math.Min(expiry, uint.MaxValue);
    }

    private void Signal() => Interlocked.Exchange(ref _changed, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();

    private void Record(byte opcode, ushort status, long connectionId)
    {
        _commandCounts.AddOrUpdate(opcode, 1, static (_, count) => count + 1);
        if (Interlocked.Increment(ref _commandsLogged) <= _options.CommandLogCapacity)
        {
            _commands.Enqueue(new KvCommand(opcode, KvProtocol.OpcodeName(opcode), status, connectionId));
        }

        Signal();
    }

    /// <summary>Where a document is: its collection's id and its key (without the id).</summary>
    private readonly record struct DocumentKey(uint CollectionId, string Key);

    /// <summary>
    /// One client connection: reads and executes requests in order, and answers them in order, except with unordered
    /// execution (HELLO 0x0e): then the replies to reorderable requests (kv_engine's list: GET, SET, DELETE, ...) that
    /// came pipelined, each already buffered when the one before was executed, go out last first, as a server may send
    /// them; a barrier (framing extra 0) or any other command ends such a run.
    /// </summary>
    private sealed partial class Connection(CouchbaseLoopbackServer server, long id, Socket socket)
    {
        private readonly CancellationTokenSource _aborted = new();
        private bool _authenticated;
        private bool _alternateRequests;
        private bool _preserveTtl;
        private bool _collections;
        private bool _syncReplication;
        private bool _unorderedExecution;
        private bool _xerror;
        private bool _json;
        private string? _bucket;
        private ScramServer? _scram;

        public Task Completion { get; private set; } = Task.CompletedTask;

        public void Start(CancellationToken serverStopping)
        {
            Completion = Task.Run(() => RunAsync(serverStopping), CancellationToken.None);
        }

        public void Abort()
        {
            try
            {
                _aborted.Cancel();
                socket.Shutdown(SocketShutdown.Both);
            }
            catch (Exception e) when (e is ObjectDisposedException or SocketException)
            {
                // already closed
            }
        }

        private async Task RunAsync(CancellationToken serverStopping)
        {
            using var linked = CancellationTokenSource.CreateLinkedTokenSource(serverStopping, _aborted.Token);
            CancellationToken token = linked.Token;
            server.Log($"connection {id} opened from {socket.RemoteEndPoint}");
            var header = new byte[KvProtocol.HeaderLength];
            var heldReplies = new List<byte[]>();
            try
            {
                using var stream = new NetworkStream(socket, ownsSocket: true);
                while (!token.IsCancellationRequested)
                {
                    if (!await ReadExactlyAsync(stream, header, token).ConfigureAwait(false))
                    {
                        break;
                    }

                    if (!KvProtocol.TryReadRequestHeader(header, out KvProtocol.RequestHeader request) || request.TotalBodyLength > MaxBodyLength)
                    {
                        string error = $"connection {id}: bad request header (magic 0x{header[0]:x2}, opcode 0x{header[1]:x2}); connection closed";
                        server._protocolErrors.Enqueue(error);
                        server.Log(error);
                        await AnswerLastFirstAsync(stream, heldReplies, token).ConfigureAwait(false);
                        break;
                    }

                    var body = new byte[request.TotalBodyLength];
                    if (!await ReadExactlyAsync(stream, body, token).ConfigureAwait(false))
                    {
                        break;
                    }

                    if (request.Magic == KvProtocol.FlexibleRequestMagic && !_alternateRequests)
                    {
                        // Not negotiated (HELLO did not acknowledge 0x10): a real server rejects it too.
                        string error = $"connection {id}: flexible-framing request (magic 0x08) for {KvProtocol.OpcodeName(request.Opcode)} without HELLO alternate-request support; connection closed";
                        server._protocolErrors.Enqueue(error);
                        server.Log(error);
                        await AnswerLastFirstAsync(stream, heldReplies, token).ConfigureAwait(false);
                        break;
                    }

                    byte[] response = Handle(request, body, out bool reorderable);
                    if (!reorderable)
                    {
                        await AnswerLastFirstAsync(stream, heldReplies, token).ConfigureAwait(false);
                        await WriteReplyAsync(stream, response, token).ConfigureAwait(false);
                        continue;
                    }

                    // Unordered execution: replies to reorderable requests that came together (the next is already
                    // buffered) are held, and answered last first when the run ends, as a server may answer them.
                    heldReplies.Add(response);
                    if (!stream.DataAvailable || heldReplies.Count == MaxHeldReplies)
                    {
                        await AnswerLastFirstAsync(stream, heldReplies, token).ConfigureAwait(false);
                    }
                }
            }
            catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
            {
                // dropped, stopped or closed by the client
            }
            finally
            {
                server._connections.TryRemove(id, out _);
                _aborted.Dispose();
                server.Log($"connection {id} closed");
                server.Signal();
            }
        }

        private async Task AnswerLastFirstAsync(NetworkStream stream, List<byte[]> heldReplies, CancellationToken token)
        {
            if (heldReplies.Count > 1)
            {
                Interlocked.Add(ref server._repliesReordered, heldReplies.Count - 1); // all but the first request's overtake it
            }

            for (int i = heldReplies.Count - 1; i >= 0; i--)
            {
                await WriteReplyAsync(stream, heldReplies[i], token).ConfigureAwait(false);
            }

            heldReplies.Clear();
        }

        private async Task WriteReplyAsync(NetworkStream stream, byte[] response, CancellationToken token)
        {
            Task gate = Volatile.Read(ref server._replyGate).Task;
            if (!gate.IsCompleted)
            {
                await gate.WaitAsync(token).ConfigureAwait(false);
            }

            // Counted before the write: the client may read the reply and go on before WriteAsync returns here.
            Interlocked.Add(ref server._bytesSent, response.Length);
            await stream.WriteAsync(response, token).ConfigureAwait(false);
        }

        private async Task<bool> ReadExactlyAsync(NetworkStream stream, Memory<byte> buffer, CancellationToken token)
        {
            int read = 0;
            while (read < buffer.Length)
            {
                int n = await stream.ReadAsync(buffer[read..], token).ConfigureAwait(false);
                if (n == 0)
                {
                    return false;
                }

                read += n;
                Interlocked.Add(ref server._bytesReceived, n);
            }

            return true;
        }

        /// <summary>Executes a request; <paramref name="reorderable"/> says whether its reply may overtake earlier ones (unordered execution, no barrier).</summary>
        private byte[] Handle(KvProtocol.RequestHeader request, byte[] body, out bool reorderable)
        {
            ReadOnlySpan<byte> extras = body.AsSpan(request.FramingExtrasLength, request.ExtrasLength);
            ReadOnlySpan<byte> keyBytes = body.AsSpan(request.FramingExtrasLength + request.ExtrasLength, request.KeyLength);
            ReadOnlyMemory<byte> value = body.AsMemory(request.FramingExtrasLength + request.ExtrasLength + request.KeyLength);
            byte op = request.Opcode;

            // On a connection that negotiated collections, the key of every document command starts with the id of the
            // document's collection; on any other the document is in the default collection.
            uint collectionId = KvCollectionManifest.DefaultCollectionId;
            byte[]? collectionRefusal = null;
            if (_collections && KvProtocol.IsDocumentCommand(op))
            {
                if (!KvProtocol.TryReadCollectionId(keyBytes, out collectionId, out int idLength))
                {
                    collectionRefusal = Error(request, KvProtocol.Status.InvalidArguments, "the key does not start with a collection id (unsigned LEB128, canonical, at most 5 bytes)");
                }
                else
                {
                    keyBytes = keyBytes[idLength..];
                    if (server._manifest.Find(collectionId) is null)
                    {
                        server.Log($"connection {id}: {KvProtocol.OpcodeName(op)} for unknown collection id 0x{collectionId:x}");
                        collectionRefusal = Reply(request, KvProtocol.Status.UnknownCollection, value: server._manifest.UnknownBody, dataType: KvProtocol.JsonDataType);
                    }
                }
            }

            string key = System.Text.Encoding.UTF8.GetString(keyBytes);

            // Framing extras are read on every request, not only on mutations: a frame this server does not implement
            // (durability on a DELETE, PRESERVE_TTL on a GET) is refused, never executed without it.
            bool mutation = op is KvProtocol.Opcodes.Set or KvProtocol.Opcodes.Add or KvProtocol.Opcodes.Replace or KvProtocol.Opcodes.SubdocMultiMutation;
            byte[]? framingRefusal = null;
            bool framed = TryReadFraming(body.AsSpan(0, request.FramingExtrasLength), out bool preserveTtl, out bool barrier, out bool durable, out string? framingError);
            if (framed && preserveTtl && !mutation)
            {
                framed = false;
                framingError = $"framing extra PRESERVE_TTL (5) on {KvProtocol.OpcodeName(op)}, which keeps no expiry";
            }
            if (framed && durable && !mutation && op is not (KvProtocol.Opcodes.Delete or KvProtocol.Opcodes.Increment or KvProtocol.Opcodes.Decrement
                    or KvProtocol.Opcodes.Append or KvProtocol.Opcodes.Prepend))
            {
                framed = false;
                framingError = $"framing extra durability (1) on {KvProtocol.OpcodeName(op)}, which changes nothing";
            }

            if (!framed)
            {
                server._protocolErrors.Enqueue($"connection {id}: {framingError}");
                server.Log($"connection {id}: {framingError}");
                framingRefusal = Error(request, KvProtocol.Status.InvalidArguments, framingError!);
            }

            byte[] response = framingRefusal ?? op switch
            {
                KvProtocol.Opcodes.Hello => Hello(request, value.Span),
                KvProtocol.Opcodes.GetErrorMap => Reply(request, KvProtocol.Status.Success, value: KvErrorMap.Json),
                KvProtocol.Opcodes.SaslListMechs => Reply(request, KvProtocol.Status.Success,
                    value: System.Text.Encoding.UTF8.GetBytes(string.Join(' ', server._options.SaslMechanisms))),
                KvProtocol.Opcodes.SaslAuth => SaslAuth(request, key, value.Span),
                KvProtocol.Opcodes.SaslStep => SaslStep(request, key, value.Span),
                KvProtocol.Opcodes.Noop => Reply(request, KvProtocol.Status.Success),
                KvProtocol.Opcodes.SelectBucket => SelectBucket(request, key),
                KvProtocol.Opcodes.GetClusterConfig when !_authenticated => Error(request, KvProtocol.Status.AccessDenied, "Not authenticated"),
                KvProtocol.Opcodes.GetClusterConfig => Reply(request, KvProtocol.Status.Success, value: _bucket is null ? server._globalConfig : server._clusterConfig),
                KvProtocol.Opcodes.GetCollectionsManifest or KvProtocol.Opcodes.GetCollectionId
                    when NotReady(request) is { } refused => refused,
                _ when IsImplementedDocumentCommand(op) && NotReady(request) is { } refused => refused,
                _ when IsImplementedDocumentCommand(op) && collectionRefusal is not null => collectionRefusal,
                KvProtocol.Opcodes.Get => Get(request, new DocumentKey(collectionId, key)),
                KvProtocol.Opcodes.Touch or KvProtocol.Opcodes.GetAndTouch => Touch(request, new DocumentKey(collectionId, key), extras),
                KvProtocol.Opcodes.GetLocked => GetLocked(request, new DocumentKey(collectionId, key), extras),
                KvProtocol.Opcodes.UnlockKey => Unlock(request, new DocumentKey(collectionId, key)),
                KvProtocol.Opcodes.GetReplica => GetReplica(request, new DocumentKey(collectionId, key), extras),
                KvProtocol.Opcodes.Increment or KvProtocol.Opcodes.Decrement => Arithmetic(request, new DocumentKey(collectionId, key), durable, extras),
                KvProtocol.Opcodes.Append or KvProtocol.Opcodes.Prepend => Concatenate(request, new DocumentKey(collectionId, key), durable, extras, value.Span),
                KvProtocol.Opcodes.SubdocMultiLookup => MultiLookup(request, new DocumentKey(collectionId, key), extras, value.Span),
                KvProtocol.Opcodes.SubdocMultiMutation => MultiMutation(request, new DocumentKey(collectionId, key), preserveTtl, durable, extras, value.Span),
                KvProtocol.Opcodes.GetMeta => GetMeta(request, new DocumentKey(collectionId, key), extras),
                KvProtocol.Opcodes.Set or KvProtocol.Opcodes.Add or KvProtocol.Opcodes.Replace => Mutate(request, new DocumentKey(collectionId, key), preserveTtl, durable, extras, value),
                KvProtocol.Opcodes.Delete => Delete(request, new DocumentKey(collectionId, key), durable),
                KvProtocol.Opcodes.GetCollectionsManifest => Reply(request, KvProtocol.Status.Success, value: server._manifest.Json, dataType: KvProtocol.JsonDataType),
                KvProtocol.Opcodes.GetCollectionId => GetCollectionId(request, keyBytes, value.Span),
                KvProtocol.Opcodes.RangeScanCreate or KvProtocol.Opcodes.RangeScanContinue or KvProtocol.Opcodes.RangeScanCancel
                    when NotReady(request) is { } refused => refused,
                KvProtocol.Opcodes.RangeScanCreate => RangeScanCreate(request, value.Span),
                KvProtocol.Opcodes.RangeScanContinue => RangeScanContinue(request, extras),
                KvProtocol.Opcodes.RangeScanCancel => RangeScanCancel(request, extras),
                _ => Unknown(request, key),
            };

            server.Record(op, (ushort)((response[6] << 8) | response[7]), id);
            reorderable = _unorderedExecution && !barrier && KvProtocol.IsReorderable(op);
            return response;
        }

        private static byte[] Reply(KvProtocol.RequestHeader request, ushort status, ulong cas = 0, ReadOnlySpan<byte> extras = default, ReadOnlySpan<byte> value = default, byte dataType = 0)
            => KvProtocol.BuildResponse(request.Opcode, request.Opaque, status, cas, extras, default, value, dataType);

        private static byte[] Error(KvProtocol.RequestHeader request, ushort status, string message)
            => Reply(request, status, value: System.Text.Encoding.UTF8.GetBytes(message));

        private byte[] Hello(KvProtocol.RequestHeader request, ReadOnlySpan<byte> requested)
        {
            // Acknowledge, in the order asked, only what this server implements: XERROR, SELECT_BUCKET, JSON, unordered
            // execution unless the options say not, and alternate requests, PRESERVE_TTL and collections unless the
            // options play a server older than 7.0, and sync replication (durable writes, acknowledged at once: one node) with them.
            // Not snappy, mutation tokens or cluster-map push. (SDK 3.9.5 reads
            // every reply body of 5 bytes or more as flags and expiry extras, so a HELLO reply of one or two features
            // fails there with "buffer must be at least 4 bytes"; a real node always acknowledges more than that.)
            var acknowledged = new List<ushort>();
            for (int i = 0; i + 1 < requested.Length; i += 2)
            {
                ushort feature = (ushort)((requested[i] << 8) | requested[i + 1]);
                bool offered = KvProtocol.Features.Supported.Contains(feature)
                    && (server._options.PreserveTtl || feature is not (KvProtocol.Features.AlternateRequests or KvProtocol.Features.PreserveTtl or KvProtocol.Features.Collections or KvProtocol.Features.SyncReplication))
                    && (server._options.UnorderedExecution || feature != KvProtocol.Features.UnorderedExecution);
                if (offered && !acknowledged.Contains(feature))
                {
                    acknowledged.Add(feature);
                }
            }

            _alternateRequests = acknowledged.Contains(KvProtocol.Features.AlternateRequests);
            _preserveTtl = acknowledged.Contains(KvProtocol.Features.PreserveTtl);
            _collections = acknowledged.Contains(KvProtocol.Features.Collections);
            _syncReplication = acknowledged.Contains(KvProtocol.Features.SyncReplication);
            _unorderedExecution = acknowledged.Contains(KvProtocol.Features.UnorderedExecution);
            _xerror = acknowledged.Contains(KvProtocol.Features.XError);
            _json = acknowledged.Contains(KvProtocol.Features.Json);

            var reply = new byte[acknowledged.Count * 2];
            for (int i = 0; i < acknowledged.Count; i++)
            {
                reply[2 * i] = (byte)(acknowledged[i] >> 8);
                reply[(2 * i) + 1] = (byte)acknowledged[i];
            }

            return Reply(request, KvProtocol.Status.Success, value: reply);
        }

        private byte[] SaslAuth(KvProtocol.RequestHeader request, string mechanism, ReadOnlySpan<byte> clientFirst)
        {
            _authenticated = false;
            _scram = null;
            if (!server._options.SaslMechanisms.Contains(mechanism)
                || !ScramServer.TryCreate(mechanism, server._options.Username, server._options.Password, server._salt, server._options.ScramIterations, out ScramServer? scram))
            {
                return AuthFailed(request, $"mechanism {mechanism} not offered");
            }

            string? serverFirst = scram.Start(System.Text.Encoding.UTF8.GetString(clientFirst), out string? error);
            if (serverFirst is null)
            {
                return AuthFailed(request, error!);
            }

            _scram = scram;
            return Reply(request, KvProtocol.Status.AuthContinue, value: System.Text.Encoding.UTF8.GetBytes(serverFirst));
        }

        private byte[] SaslStep(KvProtocol.RequestHeader request, string mechanism, ReadOnlySpan<byte> clientFinal)
        {
            ScramServer? scram = _scram;
            _scram = null;
            if (scram is null || scram.Mechanism != mechanism)
            {
                return AuthFailed(request, "SASL_STEP without a matching SASL_AUTH");
            }

            string? serverFinal = scram.Finish(System.Text.Encoding.UTF8.GetString(clientFinal), out string? error);
            if (serverFinal is null)
            {
                return AuthFailed(request, error!);
            }

            _authenticated = true;
            server._authentications.Enqueue(mechanism);
            server.Log($"connection {id} authenticated with {mechanism}");
            return Reply(request, KvProtocol.Status.Success, value: System.Text.Encoding.UTF8.GetBytes(serverFinal));
        }

        private byte[] AuthFailed(KvProtocol.RequestHeader request, string reason)
        {
            Interlocked.Increment(ref server._authenticationFailures);
            server.Log($"connection {id}: authentication failed: {reason}");
            return Error(request, KvProtocol.Status.AuthError, "Auth failure");
        }

        private byte[] SelectBucket(KvProtocol.RequestHeader request, string bucket)
        {
            if (!_authenticated)
            {
                return Error(request, KvProtocol.Status.AccessDenied, "Not authenticated");
            }

            if (!string.Equals(bucket, server._options.BucketName, StringComparison.Ordinal))
            {
                // Couchbase Server answers EACCESS for a bucket that does not exist or that the user cannot see.
                server.Log($"connection {id}: SELECT_BUCKET {bucket}: no such bucket (serving {server._options.BucketName})");
                return Error(request, KvProtocol.Status.AccessDenied, "No access");
            }

            _bucket = bucket;
            return Reply(request, KvProtocol.Status.Success);
        }

        private byte[]? NotReady(KvProtocol.RequestHeader request)
        {
            if (!_authenticated)
            {
                return Error(request, KvProtocol.Status.AccessDenied, "Not authenticated");
            }

            // Before SELECT_BUCKET a real node answers "no bucket" (0x08) to key-value commands.
            return _bucket is null ? Reply(request, KvProtocol.Status.NoBucket) : null;
        }

        private byte[] Get(KvProtocol.RequestHeader request, DocumentKey key)
        {
            if (!server.TryGetDocument(key.CollectionId, key.Key, out KvDocument? document))
            {
                return Reply(request, KvProtocol.Status.KeyNotFound);
            }

            // A locked document's CAS is hidden from plain reads (kv_engine answers -1), so only the lock holder can write it.
            return Document(request, document, server.IsLocked(key) ? ulong.MaxValue : document.Cas);
        }

        /// <summary>
        /// GET_META (what the SDK's <c>ExistsAsync</c> sends): no body; extras of the deleted flag (4 bytes), flags (4),
        /// expiry (4) and sequence number (8), and the datatype (1) when the request's one byte of extras asks for
        /// version 2. A tombstone is answered with "deleted" 1 (as kv_engine answers, and the SDK's <c>ExistsAsync</c> then
        /// says false), a document never written (or cleared) 0x01; the sequence number is the document's CAS (monotonic
        /// here, as a vBucket's seqno is).
        /// </summary>
        private byte[] GetMeta(KvProtocol.RequestHeader request, DocumentKey key, ReadOnlySpan<byte> extras)
        {
            if (extras.Length > 1 || (extras.Length == 1 && extras[0] is not (1 or 2)))
            {
                return Error(request, KvProtocol.Status.InvalidArguments, "GET_META takes no extras, or one byte: the version (1 or 2)");
            }

            if (!server.TryGetDocument(key.CollectionId, key.Key, out KvDocument? document)
                && !server.TryGetTombstone(key.CollectionId, key.Key, out document))
            {
                return Reply(request, KvProtocol.Status.KeyNotFound);
            }

            bool version2 = extras.Length == 1 && extras[0] == 2;
            Span<byte> meta = stackalloc byte[version2 ? 21 : 20];
            System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(meta, document.Deleted ? 1u : 0u);
            System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(meta[4..], document.Flags);
            System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(meta[8..], document.Expiry);
            System.Buffers.Binary.BinaryPrimitives.WriteUInt64BigEndian(meta[12..], document.Cas);
            if (version2) meta[20] = document.DataType;
            return Reply(request, KvProtocol.Status.Success, document.Cas, meta);
        }

        private byte[] Mutate(KvProtocol.RequestHeader request, DocumentKey key, bool preserveTtl, bool durable, ReadOnlySpan<byte> extras, ReadOnlyMemory<byte> value)
        {
            if (extras.Length != 8)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, $"{KvProtocol.OpcodeName(request.Opcode)} needs 8 bytes of extras (flags, expiry)");
            }

            uint flags = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(extras);
            uint expiry = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(extras[4..]);
            lock (server._documentsLock)
            {
                bool exists = server._documents.TryGetValue(key, out KvDocument? current);
                switch (request.Opcode)
                {
                    case KvProtocol.Opcodes.Add when exists:
                        return Reply(request, KvProtocol.Status.KeyExists);
                    case KvProtocol.Opcodes.Replace when !exists:
                        return Reply(request, KvProtocol.Status.KeyNotFound);
                    case KvProtocol.Opcodes.Set when request.Cas != 0 && !exists:
                        return Reply(request, KvProtocol.Status.KeyNotFound);
                    default:
                        break;
                }

                if (current is not null && server.IsLocked(key))
                {
                    if (request.Cas != current.Cas) return Locked(request);
                    server._locks.Remove(key); // the holder's write releases the lock
                }

                if (request.Cas != 0 && current is not null && current.Cas != request.Cas)
                {
                    return Reply(request, KvProtocol.Status.KeyExists);
                }

                // A new document takes the request's expiry, as on a real server; an existing one keeps its own on request.
                expiry = preserveTtl && current is not null && request.Opcode != KvProtocol.Opcodes.Add
                    ? current.Expiry
                    : server.ExpiryOnWrite(expiry, server._manifest.Find(key.CollectionId)!);
                ulong cas = server.NextCas();
                var document = new KvDocument(key.Key, value.ToArray(), flags, request.DataType, cas, expiry, key.CollectionId, SystemXattrs(current?.Xattrs));
                server.Store(key, document); // over a tombstone too (ADD, SET): a new document
                if (durable) server._durable[key] = document;
                return Reply(request, KvProtocol.Status.Success, cas);
            }
        }

        /// <summary>
        /// Reads a request's framing extras: each frame is an id and a length in one byte (a nibble of 15 is escaped into
        /// the next byte), then its data. Only PRESERVE_TTL (id 5) and the barrier (id 0), no data, once negotiated, are
        /// understood; any other frame is refused with its id, loudly, rather than ignored (durability, impersonation: not
        /// implemented here).
        /// </summary>
        private bool TryReadFraming(ReadOnlySpan<byte> framing, out bool preserveTtl, out bool barrier, out bool durable, out string? error)
        {
            preserveTtl = false;
            barrier = false;
            durable = false;
            error = null;
            int i = 0;
            while (i < framing.Length)
            {
                int frameId = framing[i] >> 4;
                int length = framing[i] & 0x0f;
                i++;
                if (frameId == 15 && i < framing.Length) frameId = 15 + framing[i++];
                if (length == 15 && i < framing.Length) length = 15 + framing[i++];
                if (i + length > framing.Length)
                {
                    error = "framing extras end inside a frame";
                    return false;
                }

                if (frameId == KvProtocol.FramingExtras.Barrier && length == 0 && _unorderedExecution)
                {
                    barrier = true;
                    continue;
                }

                if (frameId == KvProtocol.FramingExtras.Durability && _syncReplication && length is 1 or 3 && framing[i] is >= 1 and <= 3)
                {
                    durable = true;
                    i += length;
                    continue;
                }

                if (frameId != KvProtocol.FramingExtras.PreserveTtl || length != 0 || !_preserveTtl)
                {
                    error = frameId == KvProtocol.FramingExtras.PreserveTtl && !_preserveTtl
                        ? "framing extra PRESERVE_TTL (5) without HELLO PRESERVE_TTL"
                        : frameId == KvProtocol.FramingExtras.Barrier && !_unorderedExecution
                            ? "framing extra barrier (0) without HELLO unordered execution"
                            : frameId == KvProtocol.FramingExtras.Durability && !_syncReplication
                                ? "framing extra durability (1) without HELLO sync replication"
                            : $"framing extra {frameId} (length {length}) is not implemented by this test server";
                    return false;
                }

                preserveTtl = true;
                i += length;
            }

            return true;
        }

        private byte[] Delete(KvProtocol.RequestHeader request, DocumentKey key, bool durable)
        {
            lock (server._documentsLock)
            {
                if (!server._documents.TryGetValue(key, out KvDocument? current))
                {
                    return Reply(request, KvProtocol.Status.KeyNotFound);
                }

                if (server.IsLocked(key))
                {
                    if (request.Cas != current.Cas) return Locked(request);
                    server._locks.Remove(key);
                }

                if (request.Cas != 0 && current.Cas != request.Cas)
                {
                    return Reply(request, KvProtocol.Status.KeyExists);
                }

                // A tombstone stays, with the system xattrs (kv_engine keeps them for transactions and XDCR).
                KvDocument tombstone = Tombstone(current, server.NextCas());
                server.Store(key, tombstone);
                if (durable) server._durable[key] = null;
                return Reply(request, KvProtocol.Status.Success, tombstone.Cas);
            }
        }

        /// <summary>
        /// GET_COLLECTION_ID: the value is a path <c>scope.collection</c> (an empty name is <c>_default</c>); the reply's
        /// extras are the manifest uid (8 bytes) and the collection id (4). A key is refused, as 7.x servers refuse it.
        /// </summary>
        private byte[] GetCollectionId(KvProtocol.RequestHeader request, ReadOnlySpan<byte> key, ReadOnlySpan<byte> path)
        {
            if (!key.IsEmpty || request.ExtrasLength != 0)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, "GET_COLLECTION_ID takes the path scope.collection as its value, with no key or extras");
            }

            string name = System.Text.Encoding.UTF8.GetString(path);
            ushort status = server._manifest.Resolve(name, out uint collectionId);
            switch (status)
            {
                case KvProtocol.Status.Success:
                    Span<byte> extras = stackalloc byte[12];
                    System.Buffers.Binary.BinaryPrimitives.WriteUInt64BigEndian(extras, server._manifest.Uid);
                    System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(extras[8..], collectionId);
                    return Reply(request, status, extras: extras);
                case KvProtocol.Status.InvalidArguments:
                    return Error(request, status, $"'{name}' is not a path scope.collection of valid names");
                default:
                    server.Log($"connection {id}: GET_COLLECTION_ID {name}: {(status == KvProtocol.Status.UnknownScope ? "unknown scope" : "unknown collection")}");
                    return Reply(request, status, value: server._manifest.UnknownBody, dataType: KvProtocol.JsonDataType);
            }
        }

        private byte[] RangeScanCreate(KvProtocol.RequestHeader request, ReadOnlySpan<byte> value)
        {
            if ((request.DataType & 0x01) == 0)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, "range scan create: the value must have the JSON datatype");
            }

            if (request.VBucket >= KvBucketConfig.VBucketCount)
            {
                return Reply(request, KvProtocol.Status.NotMyVBucket);
            }

            KvRangeScans.ScanRequest? scan = KvRangeScans.Parse(value, out string? error);
            if (scan is null)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, error!);
            }

            if (server._manifest.Find(scan.CollectionId) is null || (!_collections && scan.CollectionId != KvCollectionManifest.DefaultCollectionId))
            {
                return Reply(request, KvProtocol.Status.UnknownCollection, value: server._manifest.UnknownBody, dataType: KvProtocol.JsonDataType);
            }

            KvDocument[] snapshot;
            lock (server._documentsLock)
            {
                snapshot = [.. server._documents.Values.Where(d => d.CollectionId == scan.CollectionId)];
            }

            if (!server._rangeScans.TryCreate(scan, request.VBucket, snapshot, out UInt128 uuid))
            {
                return Reply(request, KvProtocol.Status.KeyNotFound); // no key of this vBucket in the range
            }

            Span<byte> id = stackalloc byte[16];
            System.Buffers.Binary.BinaryPrimitives.WriteUInt128BigEndian(id, uuid);
            return Reply(request, KvProtocol.Status.Success, value: id);
        }

        private byte[] RangeScanContinue(KvProtocol.RequestHeader request, ReadOnlySpan<byte> extras)
        {
            if (extras.Length != 28)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, "range scan continue needs 28 bytes of extras (uuid, item, time and byte limits)");
            }

            UInt128 uuid = System.Buffers.Binary.BinaryPrimitives.ReadUInt128BigEndian(extras);
            uint itemLimit = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(extras[16..]);
            uint timeLimit = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(extras[20..]);
            uint byteLimit = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(extras[24..]);
            if (!server._rangeScans.TryGet(uuid, out KvRangeScans.Scan? scan) || scan!.VBucket != request.VBucket)
            {
                return Reply(request, KvProtocol.Status.KeyNotFound);
            }

            if (!scan.TryEnter())
            {
                return Reply(request, KvProtocol.Status.Busy);
            }

            try
            {
                // Items go out in responses of about ResponseValueTarget bytes with status success; the last response says
                // whether the scan is complete (0xA7, and it is gone) or stopped at a limit (0xA6).
                Span<byte> flags = stackalloc byte[4];
                System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(flags, scan.KeyOnly ? 0u : 1u);
                long deadline = timeLimit == 0 ? long.MaxValue : Environment.TickCount64 + timeLimit;
                using var responses = new MemoryStream();
                using var value = new MemoryStream();
                long items = 0, bytes = 0;
                while (scan.Next < scan.Items.Count)
                {
                    bool limited = (itemLimit != 0 && items >= itemLimit) || (byteLimit != 0 && bytes >= byteLimit)
                        || (items > 0 && Environment.TickCount64 >= deadline);
                    if (limited)
                    {
                        break;
                    }

                    (byte[] key, KvDocument document) = scan.Items[scan.Next++];
                    long before = value.Length;
                    KvRangeScans.WriteItem(value, scan.KeyOnly, key, document);
                    bytes += value.Length - before;
                    items++;
                    if (value.Length >= KvRangeScans.ResponseValueTarget && scan.Next < scan.Items.Count)
                    {
                        responses.Write(KvProtocol.BuildResponse(request.Opcode, request.Opaque, KvProtocol.Status.Success, 0, flags, default, value.ToArray()));
                        value.SetLength(0);
                    }
                }

                bool complete = scan.Next == scan.Items.Count;
                if (complete)
                {
                    server._rangeScans.Complete(uuid);
                }

                ushort status = complete ? KvProtocol.Status.RangeScanComplete : KvProtocol.Status.RangeScanMore;
                responses.Write(KvProtocol.BuildResponse(request.Opcode, request.Opaque, status, 0, flags, default, value.ToArray()));
                return responses.ToArray();
            }
            finally
            {
                scan.Exit();
            }
        }

        private byte[] RangeScanCancel(KvProtocol.RequestHeader request, ReadOnlySpan<byte> extras)
        {
            if (extras.Length != 16)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, "range scan cancel needs 16 bytes of extras (the scan's uuid)");
            }

            return server._rangeScans.Cancel(System.Buffers.Binary.BinaryPrimitives.ReadUInt128BigEndian(extras))
                ? Reply(request, KvProtocol.Status.Success)
                : Reply(request, KvProtocol.Status.KeyNotFound);
        }

        private byte[] Unknown(KvProtocol.RequestHeader request, string key)
        {
            string name = KvProtocol.OpcodeName(request.Opcode);
            server._unknownCommands.Enqueue(new KvUnknownCommand(request.Opcode, name, key, id));
            server.Log($"UNKNOWN COMMAND {name} (opcode 0x{request.Opcode:x2}) on connection {id}, key \"{key}\": answered 0x81; this test double does not implement it");
            return Error(request, KvProtocol.Status.UnknownCommand, $"Unknown command {name}: not implemented by the Couchbase loopback test server");
        }
    }
}
