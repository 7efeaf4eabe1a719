namespace Compression;

/// <summary>
/// The parsed fixed part of an envelope (format v1, v2 or v3). See <c>docs/format.md</c>.
/// </summary>
/// <remarks>
/// Only <see cref="DocumentEnvelope.TryReadHeader"/> makes one, from the envelope's bytes, so its fields always agree
/// with each other and with the envelope it was read from. <see langword="default"/> (what
/// <see cref="DocumentEnvelope.TryReadHeader"/> returns with <see langword="false"/>) describes no envelope.
/// </remarks>
public readonly record struct EnvelopeHeader
{
    internal EnvelopeHeader(CompressionCodec codec, EnvelopeFormat format, int uncompressedLength, uint? dictionaryId, bool hasChecksum,
        int checksumLength, int headerLength, int payloadLength)
    {
        Codec = codec;
        Format = format;
        UncompressedLength = uncompressedLength;
        DictionaryId = dictionaryId;
        HasChecksum = hasChecksum;
        ChecksumLength = checksumLength;
        HeaderLength = headerLength;
        PayloadLength = payloadLength;
    }

    /// <summary>The codec that produced the payload.</summary>
    public CompressionCodec Codec { get; }

    /// <summary>The format version as encoded: 0 for v1, 1 for v2, 2 for v3 (<see cref="EnvelopeFormat"/>).</summary>
    public int FormatVersion => (int)Format;

    /// <summary>The format: <see cref="EnvelopeFormat.V1"/>, <see cref="EnvelopeFormat.V2"/> or <see cref="EnvelopeFormat.V3"/>.</summary>
    public EnvelopeFormat Format { get; }

    /// <summary>
    /// The length of the document once decompressed, as the header declares it: within the reader's limit and within
    /// what the payload could decode to, but proven only by decoding. Do not allocate it up front for untrusted data.
    /// </summary>
    public int UncompressedLength { get; }

    /// <summary>The zstd dictionary id the payload needs, or <see langword="null"/> when none.</summary>
    public uint? DictionaryId { get; }

    /// <summary>Whether the envelope ends with a checksum of the uncompressed bytes (v1: XxHash32; v2: its low 16 bits; v3: the low 16 bits of the XxHash3).</summary>
    public bool HasChecksum { get; }

    /// <summary>The checksum's length in bytes: 4 in v1, 2 in v2 and v3, 0 without a checksum.</summary>
    public int ChecksumLength { get; }

    /// <summary>Bytes before the payload: magic, header byte, length and dictionary id varints.</summary>
    public int HeaderLength { get; }

    /// <summary>Bytes of codec payload (the envelope less header and checksum).</summary>
    public int PayloadLength { get; }
}
