using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

/// <summary>Makes a Couchbase collection compress its documents.</summary>
public static class CouchbaseCollectionCompressionExtensions
{
    /// <summary>
    /// Returns <paramref name="collection"/> with its documents compressed by <paramref name="engine"/>'s namespace
    /// <c>bucket.scope.collection</c>: writes (upsert, insert, replace) store envelopes with binary flags, reads decode
    /// envelopes and plain JSON alike, loading an unknown dictionary asynchronously before decoding. Operations that work
    /// inside a body (sub-document, append/prepend, scans) throw <see cref="NotSupportedException"/>; remove, exists,
    /// touch, unlock and counters pass through. Every operation's options get the collection's transcoder (it replaces
    /// any transcoder given there). Keep the returned collection: it is cheap, but creating one per operation is waste.
    /// </summary>
    /// <param name="collection">The SDK's collection.</param>
    /// <param name="engine">The compression engine (one per application and dictionary store).</param>
    /// <param name="options">Compression on or off, and the JSON transcoder; the defaults when null.</param>
    public static ICouchbaseCollection WithCompression(this ICouchbaseCollection collection, CompressionEngine engine, CompressedCollectionOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(collection);
        ArgumentNullException.ThrowIfNull(engine);
        if (collection is CompressedCollection compressed) collection = compressed.Inner;
        string name = NamespaceName(collection);
        CompressionNamespace @namespace = engine.GetNamespace(name);
        // Without one in the options, the cluster's own (ClusterOptions.WithTranscoder, or the SDK's JsonTranscoder over the
        // serializer of ClusterOptions.WithSerializer): what the plain collection reads and writes with. A Newtonsoft
        // default here read a System.Text.Json application's documents without their [JsonPropertyName] fields.
        ITypeTranscoder? inner = options?.JsonTranscoder
            ?? collection.Scope?.Bucket?.Cluster?.ClusterServices?.GetService(typeof(ITypeTranscoder)) as ITypeTranscoder;
        var transcoder = new CompressingTranscoder(@namespace, inner, options?.Compress ?? true);
        return new CompressedCollection(collection, transcoder);
    }

    /// <summary>
    /// For a bulk load: trains the compressed collection's namespace from <paramref name="documents"/> before they are
    /// written, so they (and what follows) are compressed with a dictionary instead of alone while the write path gathers
    /// samples. Each is encoded as the collection would write it (its JSON through the collection's JSON transcoder), then
    /// <see cref="CompressionNamespace.TrainAsync(IEnumerable{ReadOnlyMemory{byte}}, CancellationToken)"/> trains, adopts
    /// and publishes by the usual rule. Give it the first batch (a few hundred documents or more); docs/dictionary-engine.md,
    /// "Bulk loads", has the measurements.
    /// </summary>
    /// <param name="collection">A collection returned by <see cref="WithCompression"/> (or the provider's).</param>
    /// <param name="documents">The documents about to be written.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <exception cref="ArgumentException"><paramref name="collection"/> is not a compressed collection.</exception>
    public static Task<TrainingResult> TrainCompressionAsync<T>(this ICouchbaseCollection collection, IEnumerable<T> documents, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(collection);
        ArgumentNullException.ThrowIfNull(documents);
        CompressingTranscoder transcoder = collection.GetCompressingTranscoder()
            ?? throw new ArgumentException($"Collection '{collection.Name}' is not compressed: train the collection WithCompression returned.", nameof(collection));
        return transcoder.Namespace.TrainAsync(Parts(transcoder, documents), cancellationToken);

        static IEnumerable<ReadOnlyMemory<byte>> Parts(CompressingTranscoder transcoder, IEnumerable<T> documents)
        {
            foreach (T document in documents)
            {
                if (transcoder.CompressedPart(document) is { } part) yield return part;
            }
        }
    }

    /// <summary>The transcoder of a collection returned by <see cref="WithCompression"/>, or <see langword="null"/> for any other collection.</summary>
    public static CompressingTranscoder? GetCompressingTranscoder(this ICouchbaseCollection collection) =>
        (collection as CompressedCollection)?.Transcoder;

    /// <summary>The compression namespace of a collection: <c>bucket.scope.collection</c>.</summary>
    internal static string NamespaceName(ICouchbaseCollection collection)
    {
        ArgumentNullException.ThrowIfNull(collection);
        IScope scope = collection.Scope;
        return $"{scope.Bucket.Name}.{scope.Name}.{collection.Name}";
    }
}
