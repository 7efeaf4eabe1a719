namespace Compression;

/// <summary>The parsed fixed part of an envelope (format v1, v2 or v3). See <c>docs/format.md</c>.</summary>
public readonly record struct EnvelopeHeader
{
    /// <summary>The codec that produced the payload.</summary>
    public required CompressionCodec Codec { get; init; }

    /// <summary>The format version as encoded: 0 for v1, 1 for v2, 2 for v3 (<see cref="EnvelopeFormat"/>).</summary>
    public int FormatVersion { get; init; }

    /// <summary>The format: <see cref="EnvelopeFormat.V1"/>, <see cref="EnvelopeFormat.V2"/> or <see cref="EnvelopeFormat.V3"/>.</summary>
    public EnvelopeFormat Format => (EnvelopeFormat)FormatVersion;

    /// <summary>
    /// The length of the document once decompressed, as the header declares it: within the reader's limit and within
    /// what the payload could decode to, but proven only by decoding. Do not allocate it up front for untrusted data.
    /// </summary>
    public required int UncompressedLength { get; init; }

    /// <summary>The zstd dictionary id the payload needs, or <see langword="null"/> when none.</summary>
    public uint? DictionaryId { get; init; }

    /// <summary>Whether the envelope ends with a checksum of the uncompressed bytes (v1: XxHash32; v2: its low 16 bits; v3: the low 16 bits of the XxHash3).</summary>
    public bool HasChecksum { get; init; }

    /// <summary>The checksum's length in bytes: 4 in v1, 2 in v2 and v3, 0 without a checksum.</summary>
    public int ChecksumLength { get; init; }

    /// <summary>Bytes before the payload: magic, header byte, length and dictionary id varints.</summary>
    public required int HeaderLength { get; init; }

    /// <summary>Bytes of codec payload (the envelope less header and checksum).</summary>
    public required int PayloadLength { get; init; }
}
