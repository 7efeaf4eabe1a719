using System.Buffers.Binary;

namespace Compression.Testing.Couchbase;

/// <summary>
/// The document commands beyond GET/SET/ADD/REPLACE/DELETE/GET_META: touch, get-and-touch, locks, replica reads,
/// counters and append/prepend, answered as Couchbase Server 7.x answers them (statuses as kv_engine sends them to a
/// client that negotiated XERROR: LOCKED 0x09 and NOT_LOCKED 0x0e; to one that did not, temporary failure 0x86 as
/// kv_engine remaps them).
/// </summary>
public sealed partial class CouchbaseLoopbackServer
{
    /// <summary>A lock's duration when GET_LOCKED asks for none, or for more than <see cref="MaxLockSeconds"/> (kv_engine's defaults).</summary>
    public const int DefaultLockSeconds = 15;

    /// <summary>The longest lock GET_LOCKED grants as asked.</summary>
    public const int MaxLockSeconds = 30;

    /// <summary>Whether a document of the default collection is locked now (by <see cref="CouchbaseLoopbackServerOptions.Clock"/>).</summary>
    public bool IsLocked(string key) => IsLocked(KvCollectionManifest.DefaultCollectionId, key);

    /// <summary>Whether a document of <c>scope.collection</c> is locked now.</summary>
    public bool IsLocked(string scope, string collection, string key) => IsLocked(CollectionIdOf(scope, collection), key);

    private bool IsLocked(uint collectionId, string key)
    {
        lock (_documentsLock)
        {
            return IsLocked(new DocumentKey(collectionId, key));
        }
    }

    // Under _documentsLock. A lock past its time is gone (as on the server, which checks the lock's expiry on access).
    private bool IsLocked(DocumentKey key)
    {
        if (!_locks.TryGetValue(key, out long until)) return false;
        if (_options.Clock.GetUtcNow().ToUnixTimeMilliseconds() < until) return true;
        _locks.Remove(key);
        return false;
    }

    private static bool TryParseCounter(ReadOnlySpan<byte> body, out ulong value)
    {
        value = 0;
        if (body.IsEmpty || body.Length > 20) return false;
        foreach (byte b in body)
        {
            if (b is < (byte)'0' or > (byte)'9') return false;
        }

        return ulong.TryParse(body, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out value);
    }

    private static bool IsJson(ReadOnlySpan<byte> body)
    {
        try
        {
            var reader = new System.Text.Json.Utf8JsonReader(body);
            while (reader.Read())
            {
            }

            return reader.BytesConsumed == body.Length && body.Length > 0;
        }
        catch (System.Text.Json.JsonException)
        {
            return false;
        }
    }

    private sealed partial class Connection
    {
        private static bool IsImplementedDocumentCommand(byte opcode) => opcode is KvProtocol.Opcodes.Get or KvProtocol.Opcodes.Set
            or KvProtocol.Opcodes.Add or KvProtocol.Opcodes.Replace or KvProtocol.Opcodes.Delete or KvProtocol.Opcodes.GetMeta
            or KvProtocol.Opcodes.Touch or KvProtocol.Opcodes.GetAndTouch or KvProtocol.Opcodes.GetLocked or KvProtocol.Opcodes.UnlockKey
            or KvProtocol.Opcodes.GetReplica or KvProtocol.Opcodes.Increment or KvProtocol.Opcodes.Decrement
            or KvProtocol.Opcodes.Append or KvProtocol.Opcodes.Prepend or KvProtocol.Opcodes.SubdocMultiLookup or KvProtocol.Opcodes.SubdocMultiMutation;

        /// <summary>LOCKED (0x09) to a client that negotiated XERROR; kv_engine remaps it to temporary failure (0x86) for one that did not.</summary>
        private byte[] Locked(KvProtocol.RequestHeader request) =>
            Reply(request, _xerror ? KvProtocol.Status.Locked : KvProtocol.Status.TemporaryFailure);

        /// <summary>A document as GET answers it: flags (4 bytes of extras), the body and its datatype, and <paramref name="cas"/>.</summary>
        private static byte[] Document(KvProtocol.RequestHeader request, KvDocument document, ulong cas)
        {
            Span<byte> flags = stackalloc byte[4];
            BinaryPrimitives.WriteUInt32BigEndian(flags, document.Flags);
            return Reply(request, KvProtocol.Status.Success, cas, flags, document.Value.Span, document.DataType);
        }

        /// <summary>
        /// TOUCH (0x1c) and GAT (0x1d): 4 bytes of extras, the new expiry (relative up to 30 days, else absolute; 0 none;
        /// a collection's maximum TTL applies as on a write); the document gets a new CAS. TOUCH answers the CAS only, GAT
        /// the document as GET does. A locked document is refused (LOCKED), a missing one 0x01.
        /// </summary>
        private byte[] Touch(KvProtocol.RequestHeader request, DocumentKey key, ReadOnlySpan<byte> extras)
        {
            string name = KvProtocol.OpcodeName(request.Opcode);
            if (extras.Length != 4) return Error(request, KvProtocol.Status.InvalidArguments, $"{name} needs 4 bytes of extras (the expiry)");
            if (request.Cas != 0) return Error(request, KvProtocol.Status.InvalidArguments, $"{name} takes no CAS");
            uint expiry = BinaryPrimitives.ReadUInt32BigEndian(extras);
            lock (server._documentsLock)
            {
                if (!server._documents.TryGetValue(key, out KvDocument? current)) return Reply(request, KvProtocol.Status.KeyNotFound);
                if (server.IsLocked(key)) return Locked(request);
                KvDocument touched = current with
                {
                    Cas = server.NextCas(),
                    Expiry = server.ExpiryOnWrite(expiry, server._manifest.Find(key.CollectionId)!),
                };
                server._documents[key] = touched;
                return request.Opcode == KvProtocol.Opcodes.GetAndTouch
                    ? Document(request, touched, touched.Cas)
                    : Reply(request, KvProtocol.Status.Success, touched.Cas);
            }
        }

        /// <summary>
        /// GET_LOCKED (0x94): no extras, or 4 bytes, the lock's time in seconds (0, or more than 30: 15, as kv_engine's
        /// defaults); answers the document as GET does, with a new CAS that only the lock holder knows: until it
        /// expires (by the options' clock) or is unlocked, mutations without that CAS are LOCKED, plain reads see CAS -1,
        /// and another GET_LOCKED is LOCKED. A write with the CAS releases the lock.
        /// </summary>
        private byte[] GetLocked(KvProtocol.RequestHeader request, DocumentKey key, ReadOnlySpan<byte> extras)
        {
            if (extras.Length is not (0 or 4)) return Error(request, KvProtocol.Status.InvalidArguments, "GET_LOCKED takes no extras, or 4 bytes: the lock time in seconds");
            uint seconds = extras.Length == 4 ? BinaryPrimitives.ReadUInt32BigEndian(extras) : 0;
            if (seconds is 0 or > MaxLockSeconds) seconds = DefaultLockSeconds;
            lock (server._documentsLock)
            {
                if (!server._documents.TryGetValue(key, out KvDocument? current)) return Reply(request, KvProtocol.Status.KeyNotFound);
                if (server.IsLocked(key)) return Locked(request);
                KvDocument locked = current with { Cas = server.NextCas() };
                server._documents[key] = locked;
                server._locks[key] = server._options.Clock.GetUtcNow().ToUnixTimeMilliseconds() + (seconds * 1000L);
                return Document(request, locked, locked.Cas);
            }
        }

        /// <summary>
        /// UNLOCK_KEY (0x95): the header's CAS must be the lock's: 0 is 0x04 (there is no wildcard), another LOCKED; a
        /// document that is not locked is NOT_LOCKED (0x0e, as 7.6 answers), a missing one 0x01.
        /// </summary>
        private byte[] Unlock(KvProtocol.RequestHeader request, DocumentKey key)
        {
            lock (server._documentsLock)
            {
                if (!server._documents.TryGetValue(key, out KvDocument? current)) return Reply(request, KvProtocol.Status.KeyNotFound);
                if (request.Cas == 0) return Error(request, KvProtocol.Status.InvalidArguments, "UNLOCK_KEY needs the lock's CAS");
                if (!server.IsLocked(key)) return Reply(request, _xerror ? KvProtocol.Status.NotLocked : KvProtocol.Status.TemporaryFailure);
                if (request.Cas != current.Cas) return Locked(request);
                server._locks.Remove(key);
                return Reply(request, KvProtocol.Status.Success, current.Cas);
            }
        }

        /// <summary>
        /// GET_REPLICA (0x83): answered from the active copy, as GET answers it but with the document's own CAS (a
        /// replica knows no locks), when <see cref="CouchbaseLoopbackServerOptions.Replicas"/> advertises replicas on
        /// this node; with none, NOT_MY_VBUCKET, as a node holding no replica of the vBucket answers.
        /// </summary>
        private byte[] GetReplica(KvProtocol.RequestHeader request, DocumentKey key, ReadOnlySpan<byte> extras)
        {
            if (!extras.IsEmpty) return Error(request, KvProtocol.Status.InvalidArguments, "GET_REPLICA takes no extras");
            if (server._options.Replicas == 0) return Reply(request, KvProtocol.Status.NotMyVBucket);
            return server.TryGetDocument(key.CollectionId, key.Key, out KvDocument? document)
                ? Document(request, document, document.Cas)
                : Reply(request, KvProtocol.Status.KeyNotFound);
        }

        /// <summary>
        /// INCREMENT (0x05) and DECREMENT (0x06): 20 bytes of extras (delta, initial value, expiry). A missing document is
        /// created with the initial value (flags 0, JSON datatype when negotiated, the expiry) unless the expiry is
        /// 0xffffffff (then 0x01); an existing one must be ASCII decimal digits fitting 64 bits, else DELTA_BADVAL (0x06);
        /// increment wraps at 2^64, decrement stops at 0; flags and expiry are kept. The reply's value is the new count, 8
        /// bytes big-endian. A locked document is LOCKED.
        /// </summary>
        private byte[] Arithmetic(KvProtocol.RequestHeader request, DocumentKey key, bool durable, ReadOnlySpan<byte> extras)
        {
            string name = KvProtocol.OpcodeName(request.Opcode);
            if (extras.Length != 20) return Error(request, KvProtocol.Status.InvalidArguments, $"{name} needs 20 bytes of extras (delta, initial, expiry)");
            ulong delta = BinaryPrimitives.ReadUInt64BigEndian(extras);
            ulong initial = BinaryPrimitives.ReadUInt64BigEndian(extras[8..]);
            uint expiry = BinaryPrimitives.ReadUInt32BigEndian(extras[16..]);
            lock (server._documentsLock)
            {
                ulong count;
                KvDocument? current = server._documents.GetValueOrDefault(key);
                if (current is null)
                {
                    if (expiry == uint.MaxValue) return Reply(request, KvProtocol.Status.KeyNotFound);
                    count = initial;
                    current = new KvDocument(key.Key, default, 0, 0, 0, server.ExpiryOnWrite(expiry, server._manifest.Find(key.CollectionId)!), key.CollectionId);
                }
                else
                {
                    if (server.IsLocked(key)) return Locked(request);
                    if (request.Cas != 0 && request.Cas != current.Cas) return Reply(request, KvProtocol.Status.KeyExists);
                    if (!TryParseCounter(current.Value.Span, out ulong value))
                    {
                        return Error(request, KvProtocol.Status.DeltaBadValue, $"{name}: the document is not a number (ASCII decimal digits, at most 2^64-1)");
                    }

                    count = request.Opcode == KvProtocol.Opcodes.Increment ? unchecked(value + delta) : value > delta ? value - delta : 0;
                }

                byte[] body = System.Text.Encoding.ASCII.GetBytes(count.ToString(System.Globalization.CultureInfo.InvariantCulture));
                var document = current with { Value = body, DataType = _json ? KvProtocol.JsonDataType : (byte)0, Cas = server.NextCas() };
                server.Store(key, document);
                if (durable) server._durable[key] = document;
                Span<byte> reply = stackalloc byte[8];
                BinaryPrimitives.WriteUInt64BigEndian(reply, count);
                return Reply(request, KvProtocol.Status.Success, document.Cas, value: reply);
            }
        }

        /// <summary>
        /// APPEND (0x0e) and PREPEND (0x0f): no extras; the value is joined after (before) the stored body, flags and
        /// expiry kept; the datatype is JSON only when the result is JSON (and the client negotiated JSON), as kv_engine
        /// checks it. A missing document is NOT_STORED (0x05); a CAS mismatch 0x02; a locked document LOCKED unless the
        /// lock's CAS is given, which releases it.
        /// </summary>
        private byte[] Concatenate(KvProtocol.RequestHeader request, DocumentKey key, bool durable, ReadOnlySpan<byte> extras, ReadOnlySpan<byte> value)
        {
            string name = KvProtocol.OpcodeName(request.Opcode);
            if (!extras.IsEmpty) return Error(request, KvProtocol.Status.InvalidArguments, $"{name} takes no extras");
            lock (server._documentsLock)
            {
                if (!server._documents.TryGetValue(key, out KvDocument? current)) return Reply(request, KvProtocol.Status.NotStored);
                if (server.IsLocked(key))
                {
                    if (request.Cas != current.Cas) return Locked(request);
                    server._locks.Remove(key);
                }

                if (request.Cas != 0 && request.Cas != current.Cas) return Reply(request, KvProtocol.Status.KeyExists);
                byte[] body = request.Opcode == KvProtocol.Opcodes.Append
                    ? [.. current.Value.Span, .. value]
                    : [.. value, .. current.Value.Span];
                byte dataType = _json && IsJson(body) ? KvProtocol.JsonDataType : (byte)0;
                var document = current with { Value = body, DataType = dataType, Cas = server.NextCas() };
                server._documents[key] = document;
                if (durable) server._durable[key] = document;
                return Reply(request, KvProtocol.Status.Success, document.Cas);
            }
        }
    }
}
