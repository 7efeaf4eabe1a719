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
}
