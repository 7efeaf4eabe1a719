using System.Buffers;
using Compression.Codecs;
using ZstdSharp;

namespace Compression.Structure;

/// <summary>
/// A shape table and the zstd dictionary trained on what the writer compresses with it (packed streams, and the
/// documents the transform does not apply to): the unit that would be published and versioned together under one
/// dictionary id. <see cref="TryCompress"/> writes a lean zstd frame (as <see cref="ZstdCodec"/> writes them) of a
/// document's packed stream; <see cref="Decompress"/> reverses it.
/// </summary>
internal sealed class StructureModel
{
    public StructureModel(ShapeTransform transform, ZstdDictionary dictionary)
    {
        ArgumentNullException.ThrowIfNull(transform);
        ArgumentNullException.ThrowIfNull(dictionary);
        Transform = transform;
        Dictionary = dictionary;
    }

    public ShapeTransform Transform { get; }

    public ShapeTable Table => Transform.Table;

    /// <summary>The dictionary for both the packed streams and the documents compressed as they are.</summary>
    public ZstdDictionary Dictionary { get; }

    /// <summary>
    /// Packs <paramref name="document"/> (verified) and compresses the packed stream with <see cref="Dictionary"/>. False
    /// when the transform does not apply or the frame does not fit: the caller then compresses the document as it is
    /// (with the same dictionary).
    /// </summary>
    public bool TryCompress(ReadOnlySpan<byte> document, Span<byte> destination, int level, out int written)
    {
        written = 0;
        byte[] packed = ArrayPool<byte>.Shared.Rent(Math.Max(1, document.Length));
        try
        {
            if (!Transform.TryEncode(document, packed, out int packedLength)) return false;
            return ZstdCodec.Instance.TryCompress(packed.AsSpan(0, packedLength), destination, level, Dictionary, out written);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(packed, clearArray: true);
        }
    }

    /// <summary>Decodes a frame written by <see cref="TryCompress"/> into exactly <paramref name="destination"/>.Length bytes (the document's length).</summary>
    /// <exception cref="InvalidDataException">The frame or the packed stream in it is corrupt, or they do not give exactly that many bytes.</exception>
    public void Decompress(ReadOnlySpan<byte> frame, Span<byte> destination)
    {
        // A packed stream is always shorter than its document: a frame that decodes to as much is corrupt.
        int capacity = Math.Max(0, destination.Length - 1);
        byte[] packed = ArrayPool<byte>.Shared.Rent(Math.Max(1, capacity));
        ZstdContextPool pool = Dictionary.Contexts;
        Decompressor decompressor = pool.RentDecompressor();
        bool healthy = false;
        try
        {
            int packedLength;
            try
            {
                if (!decompressor.TryUnwrap(frame, packed.AsSpan(0, capacity), out packedLength))
                    StructureThrow.Corrupt($"Structured frame decodes to more than the {capacity} bytes a packed stream of a {destination.Length}-byte document can have.");
            }
            catch (ZstdException ex)
            {
                throw new InvalidDataException($"Structured frame is corrupt: {ex.Message}", ex);
            }
            healthy = true;
            int length = Transform.Decode(packed.AsSpan(0, packedLength), destination);
            if (length != destination.Length)
                StructureThrow.Corrupt($"Packed stream decodes to {length} bytes; {destination.Length} expected.");
        }
        finally
        {
            if (healthy) pool.ReturnDecompressor(decompressor);
            else decompressor.Dispose();
            ArrayPool<byte>.Shared.Return(packed, clearArray: true);
        }
    }
}
