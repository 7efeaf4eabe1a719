using System.Buffers.Binary;

namespace Compression.Testing.Couchbase;

/// <summary>Memcached binary protocol constants (the subset a Couchbase KV node speaks) and header codecs.</summary>
public static class KvProtocol
{
    /// <summary>Length of every request and response header.</summary>
    public const int HeaderLength = 24;

    /// <summary>Classic request magic.</summary>
    public const byte RequestMagic = 0x80;

    /// <summary>Classic response magic.</summary>
    public const byte ResponseMagic = 0x81;

    /// <summary>Request magic with flexible framing extras ("alternate request"); only legal once HELLO acknowledged 0x10.</summary>
    public const byte FlexibleRequestMagic = 0x08;

    /// <summary>The datatype bit of a JSON value.</summary>
    public const byte JsonDataType = 0x01;

    /// <summary>Opcodes this server implements, plus names for the ones it reports as unknown.</summary>
    public static class Opcodes
    {
        public const byte Get = 0x00;
        public const byte Set = 0x01;
        public const byte Add = 0x02;
        public const byte Replace = 0x03;
        public const byte Delete = 0x04;
        public const byte Increment = 0x05;
        public const byte Decrement = 0x06;
        public const byte Noop = 0x0a;
        public const byte Append = 0x0e;
        public const byte Prepend = 0x0f;
        public const byte Touch = 0x1c;
        public const byte GetAndTouch = 0x1d;
        public const byte Hello = 0x1f;
        public const byte SaslListMechs = 0x20;
        public const byte SaslAuth = 0x21;
        public const byte SaslStep = 0x22;
        public const byte GetReplica = 0x83;
        public const byte SelectBucket = 0x89;
        public const byte GetLocked = 0x94;
        public const byte UnlockKey = 0x95;
        public const byte GetMeta = 0xa0;
        public const byte SubdocMultiLookup = 0xd0;
        public const byte SubdocMultiMutation = 0xd1;
        public const byte GetClusterConfig = 0xb5;
        public const byte GetCollectionsManifest = 0xba;
        public const byte GetCollectionId = 0xbb;
        public const byte RangeScanCreate = 0xda;
        public const byte RangeScanContinue = 0xdb;
        public const byte RangeScanCancel = 0xdc;
        public const byte GetErrorMap = 0xfe;
    }

    /// <summary>Response statuses this server answers with.</summary>
    public static class Status
    {
        public const ushort Success = 0x0000;
        public const ushort KeyNotFound = 0x0001;
        public const ushort KeyExists = 0x0002;
        public const ushort InvalidArguments = 0x0004;
        public const ushort NotStored = 0x0005;
        public const ushort DeltaBadValue = 0x0006;
        public const ushort Locked = 0x0009;
        public const ushort NotLocked = 0x000e;
        public const ushort NoBucket = 0x0008;
        public const ushort AuthError = 0x0020;
        public const ushort AuthContinue = 0x0021;
        public const ushort NotMyVBucket = 0x0007;
        public const ushort AccessDenied = 0x0024;
        public const ushort UnknownCommand = 0x0081;
        public const ushort Busy = 0x0085;
        public const ushort TemporaryFailure = 0x0086;
        public const ushort UnknownCollection = 0x0088;
        public const ushort UnknownScope = 0x008c;
        public const ushort SubdocPathNotFound = 0x00c0;
        public const ushort SubdocPathMismatch = 0x00c1;
        public const ushort SubdocPathInvalid = 0x00c2;
        public const ushort SubdocCannotInsert = 0x00c5;
        public const ushort SubdocDeltaInvalid = 0x00c8;
        public const ushort SubdocPathExists = 0x00c9;
        public const ushort SubdocMultiPathFailure = 0x00cc;
        public const ushort SubdocXattrInvalidKeyCombo = 0x00cf;
        public const ushort SubdocXattrUnknownVattr = 0x00d1;
        public const ushort SubdocXattrCantModifyVattr = 0x00d2;
        public const ushort SubdocSuccessDeleted = 0x00cd;
        public const ushort SubdocMultiPathFailureDeleted = 0x00d3;
        public const ushort SubdocCanOnlyReviveDeletedDocuments = 0x00d6;
        public const ushort SubdocInvalidCombo = 0x00cb;
        public const ushort SubdocXattrUnknownMacro = 0x00d0;
        public const ushort SubdocInvalidXattrOrder = 0x00d4;
        public const ushort RangeScanCancelled = 0x00a5;
        public const ushort RangeScanMore = 0x00a6;
        public const ushort RangeScanComplete = 0x00a7;
    }

    /// <summary>HELLO feature codes this server can acknowledge.</summary>
    public static class Features
    {
        /// <summary>XATTR: extended attributes, reached by sub-document commands on xattr paths.</summary>
        public const ushort Xattr = 0x06;

        /// <summary>XERROR: the server may answer statuses described by its error map (GET_ERROR_MAP).</summary>
        public const ushort XError = 0x07;

        /// <summary>SELECT_BUCKET.</summary>
        public const ushort SelectBucket = 0x08;

        /// <summary>JSON datatype: the client may set datatype bit 0x01; the server stores and returns it (not validated here).</summary>
        public const ushort Json = 0x0b;

        /// <summary>Unordered execution: the server may execute and answer reorderable requests out of order (kv_engine docs/UnorderedExecution.md).</summary>
        public const ushort UnorderedExecution = 0x0e;

        /// <summary>Alternate requests: the client may send flexible-framing requests (magic 0x08) with framing extras.</summary>
        public const ushort AlternateRequests = 0x10;

        /// <summary>Sync replication: mutations may carry framing extra 1, a durability requirement.</summary>
        public const ushort SyncReplication = 0x11;

        /// <summary>Collections: every key of a document command starts with its collection id, unsigned LEB128.</summary>
        public const ushort Collections = 0x12;

        /// <summary>PRESERVE_TTL: a mutation may carry framing extra 5, which keeps the document's expiry.</summary>
        public const ushort PreserveTtl = 0x14;

        /// <summary>The features this server acknowledges when asked, in no particular order (unordered execution unless its options say not; the last three only when they play a 7.x server).</summary>
        public static IReadOnlyList<ushort> Supported { get; } = [Xattr, XError, SelectBucket, Json, UnorderedExecution, AlternateRequests, SyncReplication, Collections, PreserveTtl];
    }

    /// <summary>Request framing extras this server reads (the frame's id, in its first byte's high nibble).</summary>
    public static class FramingExtras
    {
        /// <summary>Barrier (no data): with unordered execution, the request is executed and answered after every earlier one, before every later one.</summary>
        public const int Barrier = 0;

        /// <summary>Durability requirement: a level (1 majority, 2 majority and persist on the active, 3 persist to majority), optionally a 2-byte timeout.</summary>
        public const int Durability = 1;

        /// <summary>Keep the document's expiry (no data).</summary>
        public const int PreserveTtl = 5;
    }

    /// <summary>The memcached/KV engine name of an opcode, or its hex value when it has none here.</summary>
    public static string OpcodeName(byte opcode) => opcode switch
    {
        0x00 => "GET",
        0x01 => "SET",
        0x02 => "ADD",
        0x03 => "REPLACE",
        0x04 => "DELETE",
        0x05 => "INCREMENT",
        0x06 => "DECREMENT",
        0x07 => "QUIT",
        0x08 => "FLUSH",
        0x0a => "NOOP",
        0x0b => "VERSION",
        0x0e => "APPEND",
        0x0f => "PREPEND",
        0x10 => "STAT",
        0x1c => "TOUCH",
        0x1d => "GAT",
        0x1f => "HELLO",
        0x20 => "SASL_LIST_MECHS",
        0x21 => "SASL_AUTH",
        0x22 => "SASL_STEP",
        0x83 => "GET_REPLICA",
        0x89 => "SELECT_BUCKET",
        0x91 => "OBSERVE_SEQNO",
        0x92 => "OBSERVE",
        0x94 => "GET_LOCKED",
        0x95 => "UNLOCK_KEY",
        0xa0 => "GET_META",
        0xb5 => "GET_CLUSTER_CONFIG",
        0xba => "GET_COLLECTIONS_MANIFEST",
        0xbb => "COLLECTIONS_GET_ID",
        0xbc => "COLLECTIONS_GET_SCOPE_ID",
        0xc5 => "SUBDOC_GET",
        0xc6 => "SUBDOC_EXISTS",
        0xc7 => "SUBDOC_DICT_ADD",
        0xc8 => "SUBDOC_DICT_UPSERT",
        0xc9 => "SUBDOC_DELETE",
        0xca => "SUBDOC_REPLACE",
        0xcb => "SUBDOC_ARRAY_PUSH_LAST",
        0xcc => "SUBDOC_ARRAY_PUSH_FIRST",
        0xcd => "SUBDOC_ARRAY_INSERT",
        0xce => "SUBDOC_ARRAY_ADD_UNIQUE",
        0xcf => "SUBDOC_COUNTER",
        0xd0 => "SUBDOC_MULTI_LOOKUP",
        0xd1 => "SUBDOC_MULTI_MUTATION",
        0xd2 => "SUBDOC_GET_COUNT",
        0xda => "RANGE_SCAN_CREATE",
        0xdb => "RANGE_SCAN_CONTINUE",
        0xdc => "RANGE_SCAN_CANCEL",
        0xfe => "GET_ERROR_MAP",
        _ => $"0x{opcode:x2}",
    };

    /// <summary>
    /// Whether an opcode references a document, so that its key starts with the collection id on a connection that
    /// negotiated collections (kv_engine docs/Collections.md: "every command that can reference a document").
    /// </summary>
    public static bool IsDocumentCommand(byte opcode) => opcode switch
    {
        <= 0x06 or 0x0e or 0x0f or 0x1c or 0x1d or 0x83 or 0x94 or 0x95 or 0xa0 => true,
        >= 0xc5 and <= 0xd2 => true,
        _ => false,
    };

    /// <summary>
    /// Whether a server in unordered execution may answer an opcode out of order (kv_engine's
    /// <c>cb::mcbp::is_reorder_supported()</c>, as docs/UnorderedExecution.md lists it).
    /// </summary>
    public static bool IsReorderable(byte opcode) => opcode switch
    {
        <= 0x06 or 0x0c or 0x0e or 0x0f or 0x1c or 0x1d or 0x48 or 0x83 or 0x93 or 0x94 or 0x95 => true,
        >= 0xc5 and <= 0xd3 => true,
        _ => false,
    };

    /// <summary>
    /// Reads the collection id a key starts with (unsigned LEB128, as kv_engine expects it: at most 5 bytes, canonical,
    /// no more than 32 bits); false when the key has none or it is encoded otherwise.
    /// </summary>
    public static bool TryReadCollectionId(ReadOnlySpan<byte> key, out uint collectionId, out int length)
    {
        collectionId = 0;
        length = 0;
        ulong value = 0;
        for (int i = 0; i < Math.Min(key.Length, 5); i++)
        {
            value |= (ulong)(key[i] & 0x7f) << (7 * i);
            if ((key[i] & 0x80) == 0)
            {
                bool canonical = i == 0 || key[i] != 0;
                if (!canonical || value > uint.MaxValue)
                {
                    return false;
                }

                collectionId = (uint)value;
                length = i + 1;
                return true;
            }
        }

        return false;
    }

    /// <summary>Writes a collection id as unsigned LEB128 (the prefix of keys on a collections connection).</summary>
    public static byte[] EncodeCollectionId(uint collectionId)
    {
        var bytes = new List<byte>(5);
        do
        {
            byte low = (byte)(collectionId & 0x7f);
            collectionId >>= 7;
            bytes.Add(collectionId == 0 ? low : (byte)(low | 0x80));
        }
        while (collectionId != 0);
        return [.. bytes];
    }

    /// <summary>A decoded request header (classic or flexible framing).</summary>
    public readonly record struct RequestHeader(
        byte Magic,
        byte Opcode,
        int FramingExtrasLength,
        int KeyLength,
        int ExtrasLength,
        byte DataType,
        ushort VBucket,
        int TotalBodyLength,
        uint Opaque,
        ulong Cas)
    {
        /// <summary>Length of the value: the body less framing extras, extras and key.</summary>
        public int ValueLength => TotalBodyLength - FramingExtrasLength - ExtrasLength - KeyLength;
    }

    /// <summary>Reads a request header; false for a magic this server does not accept or inconsistent lengths.</summary>
    public static bool TryReadRequestHeader(ReadOnlySpan<byte> header, out RequestHeader result)
    {
        result = default;
        if (header.Length < HeaderLength)
        {
            return false;
        }

        byte magic = header[0];
        int framingExtras;
        int keyLength;
        switch (magic)
        {
            case RequestMagic:
                framingExtras = 0;
                keyLength = BinaryPrimitives.ReadUInt16BigEndian(header[2..]);
                break;
            case FlexibleRequestMagic:
                framingExtras = header[2];
                keyLength = header[3];
                break;
            default:
                return false;
        }

        uint totalBody = BinaryPrimitives.ReadUInt32BigEndian(header[8..]);
        if (totalBody > int.MaxValue)
        {
            return false;
        }

        result = new RequestHeader(
            magic,
            header[1],
            framingExtras,
            keyLength,
            header[4],
            header[5],
            BinaryPrimitives.ReadUInt16BigEndian(header[6..]),
            (int)totalBody,
            BinaryPrimitives.ReadUInt32BigEndian(header[12..]),
            BinaryPrimitives.ReadUInt64BigEndian(header[16..]));
        return result.ValueLength >= 0;
    }

    /// <summary>Builds a classic response (magic 0x81) with the request's opcode and opaque.</summary>
    public static byte[] BuildResponse(
        byte opcode,
        uint opaque,
        ushort status,
        ulong cas = 0,
        ReadOnlySpan<byte> extras = default,
        ReadOnlySpan<byte> key = default,
        ReadOnlySpan<byte> value = default,
        byte dataType = 0)
    {
        int body = extras.Length + key.Length + value.Length;
        var response = new byte[HeaderLength + body];
        Span<byte> span = response;
        span[0] = ResponseMagic;
        span[1] = opcode;
        BinaryPrimitives.WriteUInt16BigEndian(span[2..], checked((ushort)key.Length));
        span[4] = checked((byte)extras.Length);
        span[5] = dataType;
        BinaryPrimitives.WriteUInt16BigEndian(span[6..], status);
        BinaryPrimitives.WriteUInt32BigEndian(span[8..], (uint)body);
        BinaryPrimitives.WriteUInt32BigEndian(span[12..], opaque);
        BinaryPrimitives.WriteUInt64BigEndian(span[16..], cas);
        extras.CopyTo(span[HeaderLength..]);
        key.CopyTo(span[(HeaderLength + extras.Length)..]);
        value.CopyTo(span[(HeaderLength + extras.Length + key.Length)..]);
        return response;
    }
}
