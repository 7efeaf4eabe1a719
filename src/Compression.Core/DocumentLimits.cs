using Compression.Structure;

namespace Compression;

/// <summary>
/// Limits an adapter keeps on the documents it compresses, so that every reader can read what it stores. A compressed
/// body is opaque to the database server, so nothing else stops a peer's hostile document from reaching a reader.
/// </summary>
public static class DocumentLimits
{
    /// <summary>
    /// The most levels of objects and arrays a compressed JSON document may have (the root is level 1): twice Newtonsoft's
    /// and System.Text.Json's default <c>MaxDepth</c> (64), and what the packed form reads (docs/structure.md). Readers
    /// that recurse once per level would otherwise overflow their stack on a body a peer wrote thousands of levels deep.
    /// </summary>
    public const int MaxJsonDepth = JsonNesting.MaxDepth;

    /// <summary>
    /// Whether <paramref name="json"/> nests at most <see cref="MaxJsonDepth"/> levels: an adapter of a JSON database
    /// checks it before it compresses a document and after it decompresses one. Malformed text is not judged here (the
    /// parser after it refuses it).
    /// </summary>
    public static bool IsJsonDepthWithinLimit(ReadOnlySpan<byte> json) => JsonNesting.IsWithinLimit(json);
}
