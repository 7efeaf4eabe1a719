using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;
using MongoDB.Bson;


namespace Compression.Testing.Mongo.Internal;

/// <summary>One client connection: reads messages (16-byte header, then OP_MSG or OP_QUERY, either possibly wrapped
/// in OP_COMPRESSED), runs them, writes the replies (compressed with the request's compressor when it was compressed,
/// except handshake and authentication replies). A protocol violation is recorded in <see cref="MongoLoopbackServer.Failures"/> and closes the connection,
/// as mongod does.</summary>
internal sealed class WireConnection(MongoLoopbackServer server, int id, Socket socket)
{
    private const int OpReply = 1;
    private const int OpQuery = 2004;
    private const int OpMsg = 2013;
    private const int OpCompressed = 2012;
    private const int CompressedHeader = 25; // 16-byte header, originalOpcode, uncompressedSize, compressorId
    private const uint ChecksumPresent = 1u << 0;
    private const uint MoreToCome = 1u << 1;
    private const uint ExhaustAllowed = 1u << 16;
    private const int MaxIncomingMessage = CommandProcessor.MaxMessageSizeBytes + 16 * 1024;

    private static int s_nextRequestId;

    /// <summary>Buffers kept at their largest size below this and reused for the next message.</summary>
    private const int MaxKeptBuffer = 8 * 1024 * 1024;

    private readonly CancellationTokenSource _aborted = new();

    // One message is read and answered at a time on a connection, so its incoming and reply buffers are reused from one
    // message to the next: a batch of 1,000 documents is a message over the large-object threshold, and allocating one
    // per message (and per reply, several times over while a MemoryStream grew) made the test double's collections part
    // of a benchmark's times, more for the larger plain documents than for compressed ones.
    private byte[] _incoming = new byte[16 * 1024];
    private MemoryStream _reply = new();
    private Task _run = Task.CompletedTask;

    // OP_COMPRESSED: the compressors negotiated by this connection's handshake (ids, in the client's order), the
    // decompressed request (its header rebuilt) and the compressed reply, both reused like the buffers above.
    private readonly WireCodec _codec = new();
    private byte[] _negotiated = [];
    private byte[] _decompressed = new byte[16 * 1024];
    private byte[] _compressedReply = new byte[16 * 1024];
    private int _abortRequested;

    public int Id { get; } = id;

    public void Start(CancellationToken serverStopping)
    {
        var linked = CancellationTokenSource.CreateLinkedTokenSource(serverStopping, _aborted.Token);
        _run = Task.Run(async () =>
        {
            try
            {
                await RunAsync(linked.Token).ConfigureAwait(false);
            }
            finally
            {
                linked.Dispose();
                _codec.Dispose();
                server.Forget(this);
                socket.Dispose();
            }
        });
    }

    /// <summary>Resets the connection (RST) and returns when its loop has ended.</summary>
    public Task Abort()
    {
        if (Interlocked.Exchange(ref _abortRequested, 1) == 0)
        {
            try
            {
                socket.LingerState = new LingerOption(true, 0);
                _aborted.Cancel();
                socket.Close();
            }
            catch (ObjectDisposedException)
            {
                // already closed by its own loop
            }
        }

        return _run;
    }

    private async Task RunAsync(CancellationToken cancellationToken)
    {
        await using var stream = new NetworkStream(socket, ownsSocket: false);
        var header = new byte[16];
        while (!cancellationToken.IsCancellationRequested)
        {
            try
            {
                await stream.ReadExactlyAsync(header, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (IsDisconnect(e))
            {
                return;
            }

            int length = BinaryPrimitives.ReadInt32LittleEndian(header);
            int requestId = BinaryPrimitives.ReadInt32LittleEndian(header.AsSpan(4));
            int opCode = BinaryPrimitives.ReadInt32LittleEndian(header.AsSpan(12));
            if (length < 21 || length > MaxIncomingMessage)
            {
                server.RecordFailure($"connection {Id}: message length {length} out of range (opCode {opCode})");
                return;
            }

            if (_incoming.Length < length || _incoming.Length > MaxKeptBuffer)
            {
                _incoming = new byte[Math.Max(length, Math.Min(2 * _incoming.Length, MaxKeptBuffer))];
            }

            byte[] message = _incoming;
            header.CopyTo(message, 0);
            try
            {
                await stream.ReadExactlyAsync(message.AsMemory(16, length - 16), cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (IsDisconnect(e))
            {
                return;
            }

            server.CountReceived(length);
            ReadOnlyMemory<byte>? reply;
            try
            {
                reply = opCode switch
                {
                    OpMsg => HandleMessage(message, length, requestId, compressor: null),
                    OpQuery => HandleQuery(message, length, requestId),
                    OpCompressed => HandleCompressed(message, length, requestId),
                    _ => throw new InvalidDataException($"opCode {opCode} is not implemented (OP_MSG 2013, OP_COMPRESSED 2012 and the OP_QUERY 2004 handshake are)"),
                };
            }
            catch (Exception e) when (e is InvalidDataException or FormatException or EndOfStreamException or ArgumentOutOfRangeException)
            {
                server.RecordFailure($"connection {Id}: {e.Message}");
                return;
            }

            if (reply is not ReadOnlyMemory<byte> replyBytes)
            {
                continue;
            }

            try
            {
                await server.WaitWhileStalledAsync(cancellationToken).ConfigureAwait(false);
                // Counted before the write: the client may read the reply and go on before WriteAsync returns here.
                server.CountSent(replyBytes.Length);
                await stream.WriteAsync(replyBytes, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (IsDisconnect(e))
            {
                return;
            }
        }
    }

    private static bool IsDisconnect(Exception e) =>
        e is IOException or SocketException or OperationCanceledException or ObjectDisposedException or EndOfStreamException;

    /// <summary>Commands whose messages are never compressed (the wire compression specification's list; compared
    /// ignoring case, as some drivers spell them in lower case): their replies go back uncompressed even to a
    /// compressed request.</summary>
    private static readonly HashSet<string> NeverCompressed = new(StringComparer.OrdinalIgnoreCase)
    {
        "hello", "isMaster", "saslStart", "saslContinue", "getnonce", "authenticate", "createUser",
        "updateUser", "copydbSaslStart", "copydbgetnonce", "copydb",
    };

    /// <summary>Unwraps an OP_COMPRESSED message: checks its compressor (known and negotiated on this connection) and
    /// its uncompressedSize (bounded by maxMessageSizeBytes before anything is allocated, then equal to what the data
    /// decompresses to), rebuilds the original message with its header and runs it.</summary>
    private ReadOnlyMemory<byte>? HandleCompressed(byte[] message, int length, int requestId)
    {
        if (length <= CompressedHeader)
        {
            throw new InvalidDataException($"OP_COMPRESSED of {length} bytes has no compressed data after its {CompressedHeader}-byte header");
        }

        int originalOpcode = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(16));
        int uncompressedSize = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(20));
        byte id = message[24];
        if (originalOpcode is not (OpMsg or OpQuery))
        {
            throw new InvalidDataException($"OP_COMPRESSED wraps opCode {originalOpcode}; only OP_MSG 2013 and OP_QUERY 2004 are implemented");
        }

        if (uncompressedSize < 5 || uncompressedSize > CommandProcessor.MaxMessageSizeBytes - 16)
        {
            throw new InvalidDataException($"OP_COMPRESSED uncompressedSize {uncompressedSize} out of range (5 to {CommandProcessor.MaxMessageSizeBytes - 16}: maxMessageSizeBytes less the header)");
        }

        if (!WireCompressors.IsKnown(id))
        {
            throw new InvalidDataException($"OP_COMPRESSED compressorId {id} is unknown (0 noop, 1 snappy, 2 zlib, 3 zstd)");
        }

        if (Array.IndexOf(_negotiated, id) < 0)
        {
            string negotiated = _negotiated.Length == 0 ? "none" : string.Join(", ", _negotiated.Select(WireCompressors.Name));
            throw new InvalidDataException($"OP_COMPRESSED with compressor {WireCompressors.Name(id)} ({id}), which this connection's handshake did not negotiate (negotiated: {negotiated})");
        }

        int total = 16 + uncompressedSize;
        if (_decompressed.Length < total || _decompressed.Length > MaxKeptBuffer)
        {
            _decompressed = new byte[Math.Max(total, Math.Min(2 * _decompressed.Length, MaxKeptBuffer))];
        }

        byte[] original = _decompressed;
        message.AsSpan(0, 16).CopyTo(original);
        BinaryPrimitives.WriteInt32LittleEndian(original, total);
        BinaryPrimitives.WriteInt32LittleEndian(original.AsSpan(12), originalOpcode);
        try
        {
            _codec.Decompress(id, message, CompressedHeader, length - CompressedHeader, original.AsSpan(16, uncompressedSize));
        }
        catch (Exception e) when (e is not InvalidDataException)
        {
            // whatever a codec throws on corrupt input is a protocol violation, recorded like the others
            throw new InvalidDataException($"OP_COMPRESSED {WireCompressors.Name(id)} data is invalid: {e.GetType().Name}: {e.Message}", e);
        }
        server.CountCompressedReceived(id);
        return originalOpcode == OpMsg
            ? HandleMessage(original, total, requestId, id)
            : HandleQuery(original, total, requestId); // the handshake: its reply is never compressed
    }

    /// <summary>Wraps the reply in <paramref name="plain"/> (a whole message) in OP_COMPRESSED with compressor
    /// <paramref name="id"/>; valid until the next reply.</summary>
    private ReadOnlyMemory<byte> Compress(ReadOnlyMemory<byte> plain, byte id)
    {
        if (_compressedReply.Length > MaxKeptBuffer)
        {
            _compressedReply = new byte[16 * 1024];
        }

        ReadOnlySpan<byte> message = plain.Span;
        int compressedLength = _codec.Compress(id, message[16..], ref _compressedReply, CompressedHeader);
        Span<byte> bytes = _compressedReply.AsSpan(0, CompressedHeader + compressedLength);
        BinaryPrimitives.WriteInt32LittleEndian(bytes, bytes.Length);
        message.Slice(4, 8).CopyTo(bytes[4..]); // requestID, responseTo
        BinaryPrimitives.WriteInt32LittleEndian(bytes[12..], OpCompressed);
        message.Slice(12, 4).CopyTo(bytes[16..]); // originalOpcode
        BinaryPrimitives.WriteInt32LittleEndian(bytes[20..], message.Length - 16);
        bytes[24] = id;
        server.CountCompressedSent(id);
        return _compressedReply.AsMemory(0, bytes.Length);
    }

    /// <summary>The handshake's compression negotiation: a <c>compression</c> list in a hello is answered with the
    /// compressors this server offers that the list names, in the client's order, and those are the ones this
    /// connection may then use. The first hello that negotiates any sets them for the connection's life; later hellos
    /// are answered with the same list. No common compressor: no <c>compression</c> field.</summary>
    private BsonDocument Negotiate(BsonDocument hello, BsonDocument reply)
    {
        if (!hello.TryGetValue("compression", out BsonValue value) || reply.GetValue("ok", 0).ToDouble() != 1.0)
        {
            return reply;
        }

        if (value is not BsonArray list || list.Any(v => !v.IsString))
        {
            return CommandProcessor.ErrorReply(MongoServerException.TypeMismatch($"hello's compression must be an array of strings, not {value}"));
        }

        if (_negotiated.Length == 0)
        {
            var ids = new List<byte>();
            foreach (BsonValue name in list)
            {
                if (WireCompressors.TryGetId(name.AsString, out byte id) && Array.IndexOf(server.OfferedCompressors, id) >= 0 && !ids.Contains(id))
                {
                    ids.Add(id);
                }
            }

            _negotiated = [.. ids];
        }

        if (_negotiated.Length > 0)
        {
            int ok = reply.IndexOfName("ok");
            reply.InsertAt(ok < 0 ? reply.ElementCount : ok, new BsonElement("compression", new BsonArray(_negotiated.Select(WireCompressors.Name))));
        }

        return reply;
    }

    /// <summary>Runs an OP_MSG held in the first <paramref name="length"/> bytes of <paramref name="message"/>; the reply
    /// (null when the client asked for none) is valid until the next message of this connection. A request that came
    /// in OP_COMPRESSED with <paramref name="compressor"/> is answered with it (handshake and authentication commands
    /// excepted).</summary>
    private ReadOnlyMemory<byte>? HandleMessage(byte[] message, int length, int requestId, byte? compressor)
    {
        uint flags = BinaryPrimitives.ReadUInt32LittleEndian(message.AsSpan(16));
        if ((flags & 0xFFFF & ~(ChecksumPresent | MoreToCome)) != 0)
        {
            throw new InvalidDataException($"OP_MSG flagBits 0x{flags:X8} has unknown required bits set");
        }

        int end = length;
        bool checksum = (flags & ChecksumPresent) != 0;
        if (checksum)
        {
            end -= 4;
            uint expected = BinaryPrimitives.ReadUInt32LittleEndian(message.AsSpan(end));
            uint actual = Crc32C.Compute(message.AsSpan(0, end));
            if (expected != actual)
            {
                throw new InvalidDataException($"OP_MSG checksum mismatch: message says 0x{expected:X8}, CRC-32C of its bytes is 0x{actual:X8}");
            }
        }

        byte[]? body = null;
        var sequences = new Dictionary<string, List<byte[]>>(StringComparer.Ordinal);
        int position = 20;
        while (position < end)
        {
            byte kind = message[position++];
            switch (kind)
            {
                case 0:
                    if (body is not null)
                    {
                        throw new InvalidDataException("OP_MSG has more than one kind 0 section");
                    }

                    body = ReadDocument(message, ref position, end);
                    break;
                case 1:
                    {
                        int sectionStart = position;
                        int size = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(position));
                        int sectionEnd = sectionStart + size;
                        if (size < 5 || sectionEnd > end)
                        {
                            throw new InvalidDataException($"OP_MSG kind 1 section size {size} overruns the message");
                        }

                        position += 4;
                        string identifier = ReadCString(message, ref position, sectionEnd);
                        var documents = new List<byte[]>();
                        while (position < sectionEnd)
                        {
                            documents.Add(ReadDocument(message, ref position, sectionEnd));
                        }

                        if (!sequences.TryAdd(identifier, documents))
                        {
                            throw new InvalidDataException($"OP_MSG has two kind 1 sections named '{identifier}'");
                        }

                        break;
                    }

                default:
                    throw new InvalidDataException($"OP_MSG section kind {kind} is unknown");
            }
        }

        if (body is null)
        {
            throw new InvalidDataException("OP_MSG has no kind 0 section");
        }

        var command = Bson.Parse(body);
        BsonDocument reply;
        string name = "";
        if (command.ElementCount == 0)
        {
            reply = CommandProcessor.ErrorReply(MongoServerException.FailedToParse("empty command document"));
        }
        else
        {
            name = command.GetElement(0).Name;
            server.CountCommand(name);
            server.RecordConcerns(command);
            reply = Execute(new CommandArguments(command, sequences));
            if (name is "hello" or "isMaster" or "ismaster")
            {
                reply = Negotiate(command, reply);
            }
        }

        if ((flags & MoreToCome) != 0)
        {
            return null; // unacknowledged: no reply, errors dropped (as the OP_MSG spec says)
        }

        var plain = BuildMessage(requestId, OpMsg, checksum, w =>
        {
            w.Write((uint)(checksum ? ChecksumPresent : 0));
            w.Write((byte)0);
        }, reply);
        return compressor is byte id && !NeverCompressed.Contains(name) ? Compress(plain, id) : plain;
    }

    private BsonDocument Execute(CommandArguments args)
    {
        try
        {
            return server.Processor.Execute(args, Id);
        }
        catch (Exception e) when (e is not InvalidDataException)
        {
            // A bug in the double or a document it cannot handle: fail the command loudly, and record it.
            server.RecordFailure($"connection {Id}: {args.CommandName} failed inside MongoLoopbackServer: {e}");
            return CommandProcessor.ErrorReply(new MongoServerException(1, "InternalError",
                $"MongoLoopbackServer internal error in {args.CommandName}: {e.GetType().Name}: {e.Message}"));
        }
    }

    private ReadOnlyMemory<byte> HandleQuery(byte[] message, int length, int requestId)
    {
        int position = 20;
        string collection = ReadCString(message, ref position, length);
        position += 8; // numberToSkip, numberToReturn
        var query = Bson.Parse(ReadDocument(message, ref position, length));
        if (query.TryGetValue("$query", out var wrapped) && wrapped is BsonDocument inner)
        {
            query = inner;
        }

        string name = query.ElementCount > 0 ? query.GetElement(0).Name : "";
        server.CountCommand(name);
        BsonDocument reply;
        try
        {
            reply = collection.EndsWith(".$cmd", StringComparison.Ordinal) && name is "hello" or "isMaster" or "ismaster"
                ? Negotiate(query, server.Processor.Hello(query, Id))
                : throw new MongoServerException(352, "UnsupportedOpQueryCommand",
                    $"Unsupported OP_QUERY command: {name} on {collection}. MongoLoopbackServer answers OP_QUERY only for the hello/isMaster handshake; use OP_MSG");
        }
        catch (MongoServerException e)
        {
            reply = CommandProcessor.ErrorReply(e);
        }

        return BuildMessage(requestId, OpReply, checksum: false, w =>
        {
            w.Write(0); // responseFlags
            w.Write(0L); // cursorID
            w.Write(0); // startingFrom
            w.Write(1); // numberReturned
        }, reply);
    }

    /// <summary>Writes a reply message into this connection's reply buffer: the header, what <paramref name="writeFields"/>
    /// writes, the reply document, and the checksum when asked. Valid until the next reply.</summary>
    private ReadOnlyMemory<byte> BuildMessage(int responseTo, int opCode, bool checksum, Action<BinaryWriter> writeFields, BsonDocument document)
    {
        if (_reply.Capacity > MaxKeptBuffer)
        {
            _reply = new MemoryStream();
        }

        MemoryStream buffer = _reply;
        buffer.SetLength(0);
        using (var writer = new BinaryWriter(buffer, Encoding.UTF8, leaveOpen: true))
        {
            writer.Write(0); // length, patched below
            writer.Write(Interlocked.Increment(ref s_nextRequestId));
            writer.Write(responseTo);
            writer.Write(opCode);
            writeFields(writer);
        }

        Bson.WriteTo(buffer, document);
        if (checksum)
        {
            buffer.Write([0, 0, 0, 0]);
        }

        int length = (int)buffer.Length;
        Span<byte> bytes = buffer.GetBuffer().AsSpan(0, length);
        BinaryPrimitives.WriteInt32LittleEndian(bytes, length);
        if (checksum)
        {
            BinaryPrimitives.WriteUInt32LittleEndian(bytes[^4..], Crc32C.Compute(bytes[..^4]));
        }

        return buffer.GetBuffer().AsMemory(0, length);
    }

    private static byte[] ReadDocument(byte[] message, ref int position, int end)
    {
        if (end - position < 5)
        {
            throw new InvalidDataException("BSON document truncated");
        }

        int size = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(position));
        if (size < 5 || size > end - position || message[position + size - 1] != 0)
        {
            throw new InvalidDataException($"BSON document size {size} is invalid at offset {position}");
        }

        var document = message.AsSpan(position, size).ToArray();
        position += size;
        return document;
    }

    private static string ReadCString(byte[] message, ref int position, int end)
    {
        int zero = Array.IndexOf(message, (byte)0, position, end - position);
        if (zero < 0)
        {
            throw new InvalidDataException("unterminated cstring");
        }

        string value = Encoding.UTF8.GetString(message, position, zero - position);
        position = zero + 1;
        return value;
    }
}
