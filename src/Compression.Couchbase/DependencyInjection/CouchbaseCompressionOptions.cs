using Couchbase.Core.IO.Transcoders;

namespace Compression.Couchbase;

/// <summary>
/// Where <c>.AddCouchbase(...)</c> keeps the dictionaries, and how the collections it hands out write. Each collection's
/// compression settings are the engine's: <c>Compression:Namespaces:{bucket.scope.collection}</c>, else <c>Compression:Defaults</c>.
/// </summary>
public sealed class CouchbaseCompressionOptions
{
    /// <summary>The bucket the dictionary store lives in (opened through the SDK's <c>IBucketProvider</c>).</summary>
    /// <value>Required: set by <c>AddCouchbase(bucketName)</c>.</value>
    public string BucketName { get; set; } = "";

    /// <summary>The scope of the store's collection.</summary>
    /// <value>Defaults to <c>_default</c>.</value>
    public string StoreScopeName { get; set; } = "_default";

    /// <summary>The store's collection.</summary>
    /// <value>Defaults to <c>_default</c>: the dictionaries sit beside the documents, under keys starting <c>_compression::</c>.</value>
    public string StoreCollectionName { get; set; } = "_default";

    /// <summary>Whether the collections handed out write compressed documents (both forms are always read).</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Compress { get; set; } = true;

    /// <summary>The transcoder that turns values into JSON and back.</summary>
    /// <value>Defaults to <see langword="null"/>: the cluster's own transcoder (<c>ClusterOptions.WithTranscoder</c>, else the
    /// SDK's <see cref="JsonTranscoder"/> over the serializer of <c>ClusterOptions.WithSerializer</c>), as the plain collection uses.</value>
    public ITypeTranscoder? JsonTranscoder { get; set; }
}
