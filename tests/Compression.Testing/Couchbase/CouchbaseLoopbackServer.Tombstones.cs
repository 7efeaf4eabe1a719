using System.Text.Json.Nodes;

namespace Compression.Testing.Couchbase;

/// <summary>
/// Tombstones, as kv_engine keeps them (docs/Document.md, docs/SubDocument.md): a DELETE leaves a deleted document with
/// no body that keeps the system xattrs (<c>_</c>…) and drops the user ones; a sub-document mutation with
/// create-as-deleted makes a tombstone with xattrs; access-deleted reaches one, revive makes it live again. Plain reads
/// (GET, GET_META aside, which reports it deleted) do not see one; ADD and mkdoc write over it. The macros
/// <c>${Mutation.CAS}</c>, <c>${Mutation.seqno}</c>, <c>${Mutation.value_crc32c}</c> and the <c>$vbucket</c> virtual
/// xattr live here too: what SDK 3.x's distributed transactions need.
/// </summary>
public sealed partial class CouchbaseLoopbackServer
{
    // Under _documentsLock. A key is in _documents (live) or _tombstones (deleted), never both.
    private readonly Dictionary<DocumentKey, KvDocument> _tombstones = [];

    /// <summary>A tombstone of the default collection (a deleted document, its system xattrs kept), or false when there is none.</summary>
    public bool TryGetTombstone(string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out KvDocument? tombstone)
        => TryGetTombstone(KvCollectionManifest.DefaultCollectionId, key, out tombstone);

    /// <summary>A tombstone of <c>scope.collection</c>, or false when there is none (a live document is not one).</summary>
    public bool TryGetTombstone(string scope, string collection, string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out KvDocument? tombstone)
        => TryGetTombstone(CollectionIdOf(scope, collection), key, out tombstone);

    /// <summary>The keys of the tombstones of <c>scope.collection</c>, in ordinal order (<see cref="KeysIn"/> lists the live documents only).</summary>
    public IReadOnlyList<string> TombstonesIn(string scope, string collection)
    {
        uint collectionId = CollectionIdOf(scope, collection);
        lock (_documentsLock)
        {
            return [.. _tombstones.Keys.Where(k => k.CollectionId == collectionId).Select(k => k.Key).Order(StringComparer.Ordinal)];
        }
    }

    private bool TryGetTombstone(uint collectionId, string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out KvDocument? tombstone)
    {
        lock (_documentsLock)
        {
            return _tombstones.TryGetValue(new DocumentKey(collectionId, key), out tombstone);
        }
    }

    /// <summary>Stores a document, live or deleted, in its place (under _documentsLock): a live one replaces a tombstone and the other way round.</summary>
    private void Store(DocumentKey key, KvDocument document)
    {
        if (document.Deleted)
        {
            _documents.Remove(key);
            _tombstones[key] = document;
        }
        else
        {
            _tombstones.Remove(key);
            _documents[key] = document;
        }
    }

    /// <summary>What a delete leaves of <paramref name="document"/>: no body, flags or expiry, the system xattrs, a new CAS.</summary>
    private static KvDocument Tombstone(KvDocument document, ulong cas) => document with
    {
        Value = ReadOnlyMemory<byte>.Empty,
        DataType = 0,
        Flags = 0,
        Expiry = 0,
        Cas = cas,
        Xattrs = SystemXattrs(document.Xattrs),
        Deleted = true,
    };

    /// <summary>
    /// The <c>$vbucket</c> virtual xattr: the vBucket's hybrid logical clock, <c>HLC.now</c> in seconds (a string, as
    /// kv_engine writes it) and <c>HLC.mode</c>. This double's CAS is a counter started from the time of the server's
    /// start, not a clock: its HLC is that counter read as nanoseconds, so that a CAS and "now" compare as they do on a
    /// server (mode <c>logical</c>, as a vBucket whose CAS ran ahead of the wall clock).
    /// </summary>
    private JsonObject VBucketVattr() => new()
    {
        ["HLC"] = new JsonObject
        {
            ["now"] = (_lastCas / 1_000_000_000UL).ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["mode"] = "logical",
        },
    };

    /// <summary>A CAS or seqno as <c>${Mutation.CAS}</c> expands it: "0x" and the 8 bytes little-endian in hex (what the SDKs parse).</summary>
    private static string MacroHex(ulong value) => $"0x{System.Buffers.Binary.BinaryPrimitives.ReverseEndianness(value):x16}";

    /// <summary>The CRC32-C of a body as kv_engine reports it (<c>$document.value_crc32c</c>, <c>${Mutation.value_crc32c}</c>): "0x" and 8 hex digits.</summary>
    private static string Crc32CHex(ReadOnlySpan<byte> body) => $"0x{Crc32C(body):x8}";

    private static readonly uint[] Crc32CTable = BuildCrc32CTable();

    private static uint[] BuildCrc32CTable()
    {
        var table = new uint[256];
        for (uint i = 0; i < 256; i++)
        {
            uint c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) != 0 ? 0x82F63B78u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }

        return table;
    }

    private static uint Crc32C(ReadOnlySpan<byte> body)
    {
        uint crc = 0xFFFFFFFFu;
        foreach (byte b in body) crc = Crc32CTable[(crc ^ b) & 0xff] ^ (crc >> 8);
        return crc ^ 0xFFFFFFFFu;
    }
}
