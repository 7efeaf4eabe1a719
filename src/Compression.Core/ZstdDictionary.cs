using System.Buffers.Binary;
using Compression.Codecs;
using Compression.Structure;

namespace Compression;

/// <summary>
/// An immutable zstd dictionary with its id, and the pooled compression and decompression contexts bound to it.
/// Create one per dictionary version and keep it: the contexts are what make dictionary compression fast.
/// </summary>
public sealed class ZstdDictionary
{
    /// <summary>The first four bytes of every dictionary zstd trains (little-endian 0xEC30A437).</summary>
    internal const uint DictionaryMagic = 0xEC30A437;

    /// <summary>The smallest dictionary accepted (zstd's own training minimum).</summary>
    public const int MinimumSize = 256;

    /// <summary>The default upper bound on a dictionary's size: dictionaries read from a database are untrusted.</summary>
    public const int DefaultMaximumSize = 1024 * 1024;

    private ZstdDictionary(uint id, byte[] content, ShapeTransform? shapes = null)
    {
        Id = id;
        Content = content;
        Shapes = shapes;
        Contexts = new ZstdContextPool(this);
        BlockContexts = new ZstdBlockContexts(content);
    }

    /// <summary>The dictionary id written in every envelope compressed with it. Unique per dictionary store.</summary>
    public uint Id { get; }

    /// <summary>The dictionary bytes, as zstd trained them.</summary>
    public ReadOnlyMemory<byte> Content { get; }

    internal ZstdContextPool Contexts { get; }

    /// <summary>
    /// The shape table trained with this dictionary, when it has one (docs/structure.md): a writer given this dictionary
    /// packs documents with it (<see cref="CompressionCodec.PackedZstd"/>), and envelopes of that codec need it to be read.
    /// </summary>
    internal ShapeTransform? Shapes { get; }

    /// <summary>Whether a shape table was trained with this dictionary, so that documents written with it may be packed (<see cref="CompressionCodec.PackedZstd"/>).</summary>
    public bool HasShapeTable => Shapes is not null;

    /// <summary>The block API's contexts (format v2 and v3 zstd payloads); the dictionary is digested for decompression on creation.</summary>
    internal ZstdBlockContexts BlockContexts { get; }

    /// <summary>
    /// Validates <paramref name="content"/> (size bounds, zstd dictionary magic, loadable by zstd) and creates the dictionary.
    /// The bytes are copied.
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not a usable zstd dictionary.</exception>
    public static ZstdDictionary Create(uint id, ReadOnlySpan<byte> content, int maximumSize = DefaultMaximumSize) =>
        Create(id, content, maximumSize, shapes: null);

    /// <summary>The same dictionary and shape table under another id (a publication that met an id already taken).</summary>
    internal ZstdDictionary WithId(uint id) => Create(id, Content.Span, Content.Length, Shapes);

    /// <summary>As <see cref="Create(uint, ReadOnlySpan{byte}, int)"/>, with the shape table trained with the dictionary.</summary>
    /// <param name="id">The dictionary id.</param>
    /// <param name="content">The dictionary bytes (copied).</param>
    /// <param name="maximumSize">The largest size accepted.</param>
    /// <param name="shapes">The shape table trained with the dictionary, or <see langword="null"/>.</param>
    internal static ZstdDictionary Create(uint id, ReadOnlySpan<byte> content, int maximumSize, ShapeTransform? shapes)
    {
        if (content.Length < MinimumSize || content.Length > maximumSize)
            throw new InvalidDataException($"Zstd dictionary {id} has {content.Length} bytes; allowed are {MinimumSize} to {maximumSize}.");
        if (BinaryPrimitives.ReadUInt32LittleEndian(content) != DictionaryMagic)
            throw new InvalidDataException($"Zstd dictionary {id} does not start with the zstd dictionary magic 0xEC30A437.");
        ZstdDictionary dictionary;
        try
        {
            dictionary = new ZstdDictionary(id, content.ToArray(), shapes);
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"Zstd dictionary {id} could not be loaded: {ex.Message}", ex);
        }
        try
        {
            // Load it once into a decompressor now, so a malformed dictionary fails here, not on a read path.
            var decompressor = dictionary.Contexts.RentDecompressor();
            dictionary.Contexts.ReturnDecompressor(decompressor);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            throw new InvalidDataException($"Zstd dictionary {id} could not be loaded: {ex.Message}", ex);
        }
        return dictionary;
    }

    /// <inheritdoc/>
    public override string ToString() => Shapes is null
        ? $"ZstdDictionary {Id} ({Content.Length} bytes)"
        : $"ZstdDictionary {Id} ({Content.Length} bytes, {Shapes.Table.Count} shapes)";
}
