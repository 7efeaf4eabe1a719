namespace Compression.MongoDB;

/// <summary>Per-collection settings of a <see cref="CompressedDocumentSerializer{T}"/>.</summary>
public sealed class CompressedDocumentOptions
{
    /// <summary>Members (by member or element name) stored uncompressed so that filters, sorts and indexes can use them. <c>_id</c> always is.</summary>
    public IList<string> ClearFields { get; init; } = [];

    /// <summary>Whether new documents are compressed. Switch it off to write plain documents; compressed ones stay readable.</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Compress { get; init; } = true;
}
