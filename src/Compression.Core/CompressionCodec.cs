namespace Compression;

/// <summary>The codec that produced an envelope's payload. The numeric value is the codec id written in the envelope.</summary>
public enum CompressionCodec : byte
{
    /// <summary>No compression: the payload is the document itself. Used when compression does not pay.</summary>
    Stored = 0,

    /// <summary>Zstandard (ZstdSharp.Port), magicless frame without content size, dictionary id or checksum; optionally with a trained dictionary.</summary>
    Zstd = 1,

    /// <summary>LZ4 raw block (K4os.Compression.LZ4).</summary>
    Lz4 = 2,

    /// <summary>Snappy raw format (Snappier).</summary>
    Snappy = 3,

    /// <summary>Raw deflate (RFC 1951, System.IO.Compression).</summary>
    Deflate = 4,

    /// <summary>Brotli (RFC 7932, System.IO.Compression).</summary>
    Brotli = 5,

    /// <summary>Gzip (RFC 1952, System.IO.Compression).</summary>
    Gzip = 6,

    /// <summary>
    /// Zstandard over the document's <em>packed</em> form: keys replaced by ids into the shape table that travels with
    /// the dictionary, values packed (docs/structure.md). Written by the engine, never chosen as a setting: a namespace
    /// whose trained dictionary carries a shape table writes it (format v2 or v3, with a checksum, documents of up to
    /// 128 KiB) and falls back to <see cref="Zstd"/> with the same dictionary for any document the packing cannot
    /// reproduce byte for byte. The payload is one raw zstd block, as v2 and v3 zstd.
    /// </summary>
    PackedZstd = 7,

    /// <summary>
    /// As <see cref="PackedZstd"/>, with the namespace's <em>field model</em> (docs/field-model.md): the packed stream's
    /// values that the model's per-field tables and ranges hold are coded as symbols of a static rANS stream with the
    /// frequencies learned in training, and the rest of the stream (structure, escapes, fields without a model) is
    /// compressed as one raw zstd block with the dictionary, or stored when that is not smaller. Written by the engine,
    /// never chosen as a setting, when the dictionary's record carries a field model (formats v2 and v3, with a checksum,
    /// documents of up to 128 KiB); a document the model cannot code falls back to <see cref="Zstd"/> with the same
    /// dictionary.
    /// </summary>
    FieldZstd = 8,

    /// <summary>
    /// <see cref="FieldZstd"/> with the document's checksum inside the rANS stream instead of after the payload: the
    /// encoder starts from a state that holds the checksum's 16 bits, and the decoder hands them back at its end, so the
    /// checksum costs the stream about a bit instead of 2 bytes (docs/format.md, "Codec 9"). Format v3 only, with a
    /// checksum and a dictionary id; written by the engine in place of <see cref="FieldZstd"/> when the format is v3.
    /// Readers from before it refuse it as an unknown codec: set the format to v2 while they remain.
    /// </summary>
    FieldZstdFoldedChecksum = 9,
}
