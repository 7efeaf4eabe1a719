using Couchbase.Core.IO.Transcoders;

namespace Compression.Couchbase;

/// <summary>How a compressed collection writes and reads its documents (its compression settings come from the engine's namespace).</summary>
public sealed class CompressedCollectionOptions
{
    /// <summary>Whether new documents are written compressed; documents of both forms are always read.</summary>
    /// <value>Defaults to <see langword="true"/>. <see langword="false"/> writes plain JSON, for switching compression off without losing anything.</value>
    public bool Compress { get; set; } = true;

    /// <summary>The transcoder that turns values into JSON and back, before compression and after decompression.</summary>
    /// <value>Defaults to <see langword="null"/>: the cluster's own transcoder (<c>ClusterOptions.WithTranscoder</c>, else the
    /// SDK's <see cref="JsonTranscoder"/> over the serializer of <c>ClusterOptions.WithSerializer</c>), as the plain collection uses.</value>
    public ITypeTranscoder? JsonTranscoder { get; set; }
}
