using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Globalization;
using System.IO.Hashing;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;

namespace Compression.Testing.Couchbase;

/// <summary>
/// KV range scans as kv_engine documents them (docs/range_scans: RANGE_SCAN_CREATE 0xDA, RANGE_SCAN_CONTINUE 0xDB,
/// RANGE_SCAN_CANCEL 0xDC), for one collection of the one bucket (<c>collection</c>: its id in hex; the default
/// collection when absent). A scan covers one vBucket: the keys whose
/// vBucket (CRC32 of the key, <c>(crc &gt;&gt; 16) &amp; 0x7fff</c>, modulo the vBucket count, as clients map them) is
/// the request's, within the range, in byte order of their UTF-8 form. The create takes a snapshot of those documents;
/// continues hand them out under the item, byte and time limits, in one or more responses (status success) ended by
/// 0xA6 (range-scan-more) or 0xA7 (range-scan-complete, and the scan is gone). Random sampling and snapshot requirements
/// are refused with EINVAL and a message saying so (this test double does not implement them).
/// </summary>
internal sealed class KvRangeScans
{
    /// <summary>Largest value of one continue response before the server starts another (kv_engine also splits).</summary>
    internal const int ResponseValueTarget = 16 * 1024;

    private readonly ConcurrentDictionary<UInt128, Scan> _scans = new();

    /// <summary>Scans created and not yet completed or cancelled.</summary>
    public int Open => _scans.Count;

    public static int VBucketOf(string key) => VBucketOf(Encoding.UTF8.GetBytes(key));

    public static int VBucketOf(ReadOnlySpan<byte> key)
    {
        uint crc = Crc32.HashToUInt32(key);
        return (int)((crc >> 16) & 0x7fff) % KvBucketConfig.VBucketCount;
    }

    /// <summary>Parses a create request. Null and <paramref name="error"/> set when it is not valid.</summary>
    public static ScanRequest? Parse(ReadOnlySpan<byte> json, out string? error)
    {
        error = null;
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            JsonElement root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                error = "range scan create: the value must be a JSON object";
                return null;
            }

            uint collectionId = 0;
            if (root.TryGetProperty("collection", out JsonElement collection)
                && (collection.ValueKind != JsonValueKind.String
                    || !(collection.GetString() is "" || uint.TryParse(collection.GetString(), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out collectionId))))
            {
                error = $"range scan create: collection {collection} is not a collection id (a hex string)";
                return null;
            }

            bool keyOnly = root.TryGetProperty("key_only", out JsonElement keyOnlyElement) && keyOnlyElement.ValueKind == JsonValueKind.True;
            if (root.TryGetProperty("sampling", out _))
            {
                error = "range scan create: random sampling is not implemented by the Couchbase loopback test server";
                return null;
            }

            if (root.TryGetProperty("snapshot_requirements", out _))
            {
                error = "range scan create: snapshot_requirements are not implemented by the Couchbase loopback test server";
                return null;
            }

            if (!root.TryGetProperty("range", out JsonElement range) || range.ValueKind != JsonValueKind.Object)
            {
                error = "range scan create: neither \"range\" nor \"sampling\" is given";
                return null;
            }

            (byte[]? start, bool startExclusive) = Bound(range, "start", "excl_start");
            (byte[]? end, bool endExclusive) = Bound(range, "end", "excl_end");
            if (start is null || end is null)
            {
                error = "range scan create: the range needs a start (\"start\" or \"excl_start\") and an end (\"end\" or \"excl_end\"), base64";
                return null;
            }

            return new ScanRequest(collectionId, keyOnly, start, startExclusive, end, endExclusive);
        }
        catch (Exception e) when (e is JsonException or FormatException or InvalidOperationException)
        {
            error = $"range scan create: {e.Message}";
            return null;
        }
    }

    /// <summary>Creates a scan over the snapshot (the documents of the request's collection); false when no key of the vBucket is in the range (KEY_ENOENT).</summary>
    public bool TryCreate(ScanRequest request, int vbucket, IEnumerable<KvDocument> documents, out UInt128 uuid)
    {
        var items = new List<(byte[] Key, KvDocument Document)>();
        foreach (KvDocument document in documents)
        {
            byte[] key = Encoding.UTF8.GetBytes(document.Key);
            if (VBucketOf(key) != vbucket || !request.Contains(key))
            {
                continue;
            }

            items.Add((key, document));
        }

        uuid = default;
        if (items.Count == 0)
        {
            return false;
        }

        items.Sort(static (a, b) => a.Key.AsSpan().SequenceCompareTo(b.Key));
        uuid = BinaryPrimitives.ReadUInt128BigEndian(RandomNumberGenerator.GetBytes(16));
        _scans[uuid] = new Scan(vbucket, request.KeyOnly, items);
        return true;
    }

    public bool TryGet(UInt128 uuid, out Scan? scan) => _scans.TryGetValue(uuid, out scan);

    public bool Cancel(UInt128 uuid) => _scans.TryRemove(uuid, out _);

    public void Complete(UInt128 uuid) => _scans.TryRemove(uuid, out _);

    private static (byte[]? Key, bool Exclusive) Bound(JsonElement range, string inclusive, string exclusive)
    {
        if (range.TryGetProperty(inclusive, out JsonElement value))
        {
            return (value.GetBytesFromBase64(), false);
        }

        return range.TryGetProperty(exclusive, out value) ? (value.GetBytesFromBase64(), true) : (null, false);
    }

    /// <summary>What a create asked for.</summary>
    internal sealed record ScanRequest(uint CollectionId, bool KeyOnly, byte[] Start, bool StartExclusive, byte[] End, bool EndExclusive)
    {
        public bool Contains(ReadOnlySpan<byte> key)
        {
            int start = key.SequenceCompareTo(Start);
            int end = key.SequenceCompareTo(End);
            return (StartExclusive ? start > 0 : start >= 0) && (EndExclusive ? end < 0 : end <= 0);
        }
    }

    /// <summary>One open scan: its snapshot and how far continues have gone. Only one continue may run at a time.</summary>
    internal sealed class Scan(int vbucket, bool keyOnly, List<(byte[] Key, KvDocument Document)> items)
    {
        private int _busy;

        public int VBucket { get; } = vbucket;

        public bool KeyOnly { get; } = keyOnly;

        public List<(byte[] Key, KvDocument Document)> Items { get; } = items;

        public int Next { get; set; }

        public bool TryEnter() => Interlocked.CompareExchange(ref _busy, 1, 0) == 0;

        public void Exit() => Volatile.Write(ref _busy, 0);
    }

    /// <summary>Appends one item in the continue value encoding (keys: leb128 length, key; documents: 25 bytes of meta, then leb128-prefixed key and value).</summary>
    public static void WriteItem(MemoryStream value, bool keyOnly, byte[] key, KvDocument document)
    {
        if (!keyOnly)
        {
            Span<byte> meta = stackalloc byte[25];
            BinaryPrimitives.WriteUInt32BigEndian(meta, document.Flags);
            BinaryPrimitives.WriteUInt32BigEndian(meta[4..], document.Expiry);
            BinaryPrimitives.WriteUInt64BigEndian(meta[8..], document.Cas); // the seqno: this server's CAS is as monotonic
            BinaryPrimitives.WriteUInt64BigEndian(meta[16..], document.Cas);
            meta[24] = document.DataType;
            value.Write(meta);
        }

        WriteLeb128(value, (uint)key.Length);
        value.Write(key);
        if (!keyOnly)
        {
            WriteLeb128(value, (uint)document.Value.Length);
            value.Write(document.Value.Span);
        }
    }

    private static void WriteLeb128(MemoryStream stream, uint value)
    {
        do
        {
            byte b = (byte)(value & 0x7f);
            value >>= 7;
            stream.WriteByte(value == 0 ? b : (byte)(b | 0x80));
        }
        while (value != 0);
    }
}
