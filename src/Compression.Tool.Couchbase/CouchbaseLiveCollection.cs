using System.Text.Json;
using Compression.Dictionaries;
using Compression.Tool.Backends;
using Compression.Tool.Live;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

/// <summary>
/// A Couchbase collection opened for a live command: scanned by a KV range scan (ids only), in byte order of the keys'
/// UTF-8 form, and read by key; its documents are bodies with their flags as the compressed collection stores them
/// (<see cref="StoredBody"/>: JSON, or an envelope with binary flags).
/// </summary>
internal sealed partial class CouchbaseLiveCollection(CouchbaseSession session, CouchbaseNamespace ns, CompressionNamespace handle)
    : LiveCollection<StoredBody>(ns.Name, handle)
{
    /// <summary>The progress bar expects the keys the scan found (the first <paramref name="limit"/>); a document removed since is left out.</summary>
    public override async Task<BatchScan<StoredBody>> ScanAsync(long limit, int batchSize, CancellationToken cancellationToken)
    {
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        List<string> keys = await BodyAccess.KeysAsync(collection, null, cancellationToken).ConfigureAwait(false);
        if (keys.Count > limit) keys.RemoveRange((int)limit, keys.Count - (int)limit);
        return new BatchScan<StoredBody>(keys.Count, BodyAccess.BatchesAsync(collection, keys, batchSize, cancellationToken));
    }

    public override string Describe(StoredBody document) => document.Key;

    public override long StoredLength(StoredBody document) => document.Body.Length;

    /// <summary>The JSON of the document; null for one that is not JSON (the compressed collection would not compress it either).</summary>
    public override async Task<byte[]?> SampleAsync(StoredBody document, CancellationToken cancellationToken) =>
        document.Kind == BodyKind.Other ? null : await StoredJson.DecodeAsync(Handle, document, cancellationToken).ConfigureAwait(false) ?? document.Body;

    public override byte[] SampleOf(string line)
    {
        byte[] json = System.Text.Encoding.UTF8.GetBytes(line.Trim());
        StoredJson.WellFormed(json);
        return json;
    }

    public override async Task<bool> VerifyAsync(StoredBody document, CancellationToken cancellationToken) =>
        await StoredJson.DecodeAsync(Handle, document, cancellationToken).ConfigureAwait(false) is not null;

    public override Task<byte[]?> DecodeAsync(StoredBody document, CancellationToken cancellationToken) => StoredJson.DecodeAsync(Handle, document, cancellationToken);

    public override uint? DictionaryOf(StoredBody document) => BodyAccess.DictionaryOf(document.Body);

    public override async Task<RewriteResult> RewriteAsync(RewriteOptions options, DateTimeOffset? olderThan, LiveSettings settings, LiveOutput console,
        CancellationToken cancellationToken)
    {
        ICouchbaseCollection collection = await session.CollectionAsync(ns).ConfigureAwait(false);
        ICouchbaseCollection store = await session.StoreCollectionAsync(ns).ConfigureAwait(false);
        var checkpoints = new CouchbaseCheckpointStore(store, ns, options.ModeName);
        return await new CouchbaseRewrite(collection, checkpoints, Handle, Name, options, settings).RunAsync(console, cancellationToken).ConfigureAwait(false);
    }
}

/// <summary>The JSON of stored bodies, as the compressed collection reads them.</summary>
internal static class StoredJson
{
    /// <summary>The JSON of a compressed document (checked), or null for one that is read as it is (plain or other).</summary>
    /// <exception cref="InvalidDataException">It cannot be read.</exception>
    /// <exception cref="DictionaryNotFoundException">Its dictionary cannot be found.</exception>
    public static async Task<byte[]?> DecodeAsync(CompressionNamespace handle, StoredBody body, CancellationToken cancellationToken)
    {
        switch (body.Kind)
        {
            case BodyKind.Plain:
            case BodyKind.Other:
                return null;
            case BodyKind.Foreign:
                throw new InvalidDataException(StoredBody.ForeignMessage);
        }
        _ = await handle.PreloadDictionaryAsync(body.Body, cancellationToken).ConfigureAwait(false);
        byte[] json = handle.Decompress(body.Body);
        WellFormed(json);
        return json;
    }

    /// <summary>
    /// The check <c>verify</c> and <c>--decompress</c> make on a decompressed document, and <c>migrate</c> on a plain one
    /// before compressing it, so that nothing is compressed that could not be decompressed again. Deep nesting is allowed
    /// (4096 levels: System.Text.Json's default of 64 refused documents that the compressed collection stores).
    /// </summary>
    /// <exception cref="InvalidDataException">It is not well-formed JSON.</exception>
    public static void WellFormed(ReadOnlyMemory<byte> json, string what = "the decompressed document")
    {
        try
        {
            using var _ = JsonDocument.Parse(json, new JsonDocumentOptions { MaxDepth = 4096 });
        }
        catch (JsonException ex)
        {
            throw new InvalidDataException($"{what} is not well-formed JSON: {ex.Message}", ex);
        }
    }
}
