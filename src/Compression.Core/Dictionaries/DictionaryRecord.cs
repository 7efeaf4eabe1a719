namespace Compression.Dictionaries;

/// <summary>
/// One immutable dictionary version as a <see cref="DictionaryStore"/> holds it. Never changed and never deleted
/// automatically: every document that names its <see cref="Id"/> must stay readable.
/// </summary>
public sealed record DictionaryRecord
{
    /// <summary>The id written in every envelope compressed with this dictionary; unique in its store.</summary>
    public required uint Id { get; init; }

    /// <summary>The namespace it was trained for (<c>bucket.scope.collection</c> or <c>database.collection</c>).</summary>
    public required string Namespace { get; init; }

    /// <summary>
    /// The version within the namespace: 1 for the first dictionary, then one more for each published after it (a version
    /// held by a record that is not valid is skipped), at most <see cref="MaxVersion"/>.
    /// </summary>
    public required int Version { get; init; }

    /// <summary>
    /// The highest version a record may have: far below any overflow, and far above what a namespace ever publishes (one
    /// a minute for almost two years). A record above it is not valid: it is never current and never adopted.
    /// </summary>
    public const int MaxVersion = 1_000_000;

    /// <summary>The zstd dictionary bytes.</summary>
    public required ReadOnlyMemory<byte> Content { get; init; }

    /// <summary>
    /// The XxHash3 (64-bit) of <see cref="Content"/>, written by the engine when it trains the dictionary and checked by
    /// every reader before the dictionary is used: a record whose content does not match is refused.
    /// </summary>
    public required ulong ContentHash { get; init; }

    /// <summary>
    /// The shape table trained with the dictionary (docs/structure.md), or empty when it has none. When present,
    /// documents written with this dictionary may be packed (<see cref="CompressionCodec.PackedZstd"/>), and reading them
    /// needs it: stores keep it with the content, and it never changes under the same <see cref="Id"/>.
    /// </summary>
    public ReadOnlyMemory<byte> Shapes { get; init; }

    /// <summary>The XxHash3 (64-bit) of <see cref="Shapes"/> when there is a table, 0 when there is none; checked like <see cref="ContentHash"/>.</summary>
    public ulong ShapesHash { get; init; }

    /// <summary>When the dictionary was published.</summary>
    public DateTimeOffset Created { get; init; }

    /// <summary>The codec the dictionary serves (always zstd today).</summary>
    public CompressionCodec Codec { get; init; } = CompressionCodec.Zstd;

    /// <summary>The zstd level it was measured at.</summary>
    public int Level { get; init; }

    /// <summary>How many sample documents it was trained on.</summary>
    public int SampleCount { get; init; }

    /// <summary>The compression ratio (raw bytes over envelope bytes) measured on held-out samples when it was trained.</summary>
    public double Ratio { get; init; }

    /// <summary>The value <see cref="ContentHash"/> must have for <paramref name="content"/>.</summary>
    public static ulong ComputeContentHash(ReadOnlySpan<byte> content) => System.IO.Hashing.XxHash3.HashToUInt64(content);
}
