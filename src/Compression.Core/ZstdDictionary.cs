using System.Buffers.Binary;
using Compression.Codecs;

namespace Compression;

/// <summary>
/// An immutable zstd dictionary with its id, and the pooled compression and decompression contexts bound to it.
/// Create one per dictionary version and keep it: the contexts are what make dictionary compression fast.
/// </summary>
public sealed class ZstdDictionary
{
    /// <summary>The first four bytes of every dictionary zstd trains (little-endian 0xEC30A437).</summary>
    public const uint DictionaryMagic = 0xEC30A437;

    /// <summary>The smallest dictionary accepted (zstd's own training minimum).</summary>
    public const int MinimumSize = 256;

    /// <summary>The default upper bound on a dictionary's size: dictionaries read from a database are untrusted.</summary>
    public const int DefaultMaximumSize = 1024 * 1024;

    private ZstdDictionary(uint id, byte[] content)
    {
        Id = id;
        Content = content;
        Contexts = new ZstdContextPool(this);
        BlockContexts = new ZstdBlockContexts(content);
    }

    /// <summary>The dictionary id written in every envelope compressed with it. Unique per dictionary store.</summary>
    public uint Id { get; }

    /// <summary>The dictionary bytes, as zstd trained them.</summary>
    public ReadOnlyMemory<byte> Content { get; }

    internal ZstdContextPool Contexts { get; }

    /// <summary>The block API's contexts (format v2 zstd payloads); the dictionary is digested for decompression on creation.</summary>
    internal ZstdBlockContexts BlockContexts { get; }

    /// <summary>
    /// Validates <paramref name="content"/> (size bounds, zstd dictionary magic, loadable by zstd) and creates the dictionary.
    /// The bytes are copied.
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not a usable zstd dictionary.</exception>
    public static ZstdDictionary Create(uint id, ReadOnlySpan<byte> content, int maximumSize = DefaultMaximumSize)
    {
        if (content.Length < MinimumSize || content.Length > maximumSize)
            throw new InvalidDataException($"Zstd dictionary {id} has {content.Length} bytes; allowed are {MinimumSize} to {maximumSize}.");
        if (BinaryPrimitives.ReadUInt32LittleEndian(content) != DictionaryMagic)
            throw new InvalidDataException($"Zstd dictionary {id} does not start with the zstd dictionary magic 0xEC30A437.");
        ZstdDictionary dictionary;
        try
        {
            dictionary = new ZstdDictionary(id, content.ToArray());
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
    public override string ToString() => $"ZstdDictionary {Id} ({Content.Length} bytes)";
}
