using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Compression.Internal;

namespace Compression;

/// <summary>
/// The envelope, formats v1, v2 and v3: the self-describing binary form of every compressed value.
/// <code>
/// offset  size    field
/// 0       1       magic 0xC5
/// 1       1       bits 0-3 codec id (0-7), bits 4-5 format version (0 = v1, 1 = v2, 2 = v3), bit 6 checksum present, bit 7 dictionary id present
/// 2       varint  uncompressed length (unsigned LEB128)
/// .       varint  dictionary id (unsigned LEB128), only when bit 7 is set
/// .       n       codec payload (v2 and v3 zstd of at most 128 KiB: one raw zstd block, no frame or block header)
/// end-c   c       checksum, only when bit 6 is set: v1 the XxHash32 of the uncompressed bytes (c = 4), v2 its low 16 bits (c = 2),
///                 v3 the low 16 bits of their XxHash3 (c = 2), little-endian
/// </code>
/// </summary>
public static class DocumentEnvelope
{
    /// <summary>The first byte of every envelope. It is never the first byte of UTF-8 JSON text.</summary>
    public const byte Magic = 0xC5;

    /// <summary>
    /// The newest format version this library reads: v3, encoded as 2 (<see cref="EnvelopeFormat.V3"/>); it reads every
    /// older one too. What a writer writes is its own setting, not a constant: <see cref="DocumentCompressorOptions.Format"/>
    /// (<see cref="DocumentCompressor.Format"/> once built), <see cref="EnvelopeFormat.V3"/> unless set.
    /// </summary>
    public static readonly int LatestFormatVersion = (int)EnvelopeFormat.V3;

    /// <summary>The v1 checksum: XxHash32, 4 bytes.</summary>
    internal const int ChecksumLength = 4;

    /// <summary>The v2 and v3 checksum: the low 16 bits of the XxHash32 (v2) or of the XxHash3 (v3), 2 bytes.</summary>
    internal const int ShortChecksumLength = 2;
    internal const byte CodecMask = 0x0F;
    internal const byte VersionMask = 0x30;
    internal const int VersionShift = 4;
    internal const byte ChecksumFlag = 0x40;
    internal const byte DictionaryFlag = 0x80;
    internal static readonly int MaxCodecId = Codecs.CodecRegistry.MaxId;

    /// <summary>Whether <paramref name="data"/> starts like an envelope (its first byte is <see cref="Magic"/>).</summary>
    public static bool IsEnvelope(ReadOnlySpan<byte> data) => !data.IsEmpty && data[0] == Magic;

    /// <summary>
    /// Reads the header of an envelope.
    /// </summary>
    /// <param name="data">The whole stored value.</param>
    /// <param name="header">The header, when this returns <see langword="true"/>.</param>
    /// <param name="maxUncompressedLength">Declared lengths above this are rejected (decompression bombs).</param>
    /// <returns><see langword="false"/> when <paramref name="data"/> is not an envelope (legacy, uncompressed data).</returns>
    /// <remarks>
    /// The declared length is checked against <paramref name="maxUncompressedLength"/> and against the most the payload
    /// could decode to (the codec's worst-case expansion: 1:1 stored, 64:3 snappy, 255:1 lz4, 1032:1 deflate and gzip,
    /// 32768:1 zstd, 16 MiB per 4 bytes brotli), but it is only a claim until the payload is decoded: do not allocate
    /// <see cref="EnvelopeHeader.UncompressedLength"/> bytes for an untrusted envelope up front. The
    /// <see cref="DocumentCompressor"/> decode methods that allocate do it for you, as the output is proven.
    /// </remarks>
    /// <exception cref="InvalidDataException">The value starts like an envelope but its header is corrupt, truncated,
    /// of an unknown codec or version, declares a length over <paramref name="maxUncompressedLength"/>, or declares more
    /// than its payload could decode to.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxUncompressedLength"/> is negative.</exception>
    public static bool TryReadHeader(ReadOnlySpan<byte> data, out EnvelopeHeader header, int maxUncompressedLength = DocumentCompressorOptions.DefaultMaxUncompressedLength)
    {
        // Every failure is thrown from a helper: formatted messages inline made this method zero a 320-byte frame on
        // every call (the string handlers' slots), half of its cost on an 88-byte document.
        ArgumentOutOfRangeException.ThrowIfNegative(maxUncompressedLength);
        header = default;
        if (!IsEnvelope(data)) return false;
        if (data.Length < 3) ThrowHeaderTruncated(data.Length);

        byte flags = data[1];
        int codecId = flags & CodecMask;
        int version = (flags & VersionMask) >> VersionShift;
        bool hasChecksum = (flags & ChecksumFlag) != 0;
        bool hasDictionary = (flags & DictionaryFlag) != 0;

        if (version > LatestFormatVersion || codecId > MaxCodecId) ThrowUnknownVersionOrCodec(version, codecId);
        Codecs.Codec codec = Codecs.CodecRegistry.For((CompressionCodec)codecId);
        if (codec.IsStructured && (version < (int)codec.FirstFormat || !hasChecksum || !hasDictionary))
            ThrowBadPackedZstd(codec, version, hasChecksum);

        int offset = 2;
        if (!Varint.TryRead(data[offset..], out uint length, out int read))
            ThrowHelper.ThrowCorrupt("Envelope truncated or corrupt: bad uncompressed-length varint.");
        offset += read;
        if (length > (uint)maxUncompressedLength) ThrowOverLimit(length, maxUncompressedLength);

        uint? dictionaryId = null;
        if (hasDictionary)
        {
            if (!codec.TakesDictionary) ThrowDictionaryOnCodec(codecId);
            if (!Varint.TryRead(data[offset..], out uint id, out read))
                ThrowHelper.ThrowCorrupt("Envelope truncated or corrupt: bad dictionary-id varint.");
            offset += read;
            dictionaryId = id;
        }

        // A codec whose payload holds the checksum (codec 9: its rANS stream's initial state) has no trailer.
        int checksumLength = hasChecksum && !codec.ChecksumInPayload ? GetChecksumLength((EnvelopeFormat)version) : 0;
        int payloadLength = data.Length - offset - checksumLength;
        if (payloadLength < 0)
            ThrowHelper.ThrowCorrupt("Envelope truncated: no room for the checksum.");
        if (codecId == (int)CompressionCodec.Stored && payloadLength != length) ThrowStoredLength(length, payloadLength);
        if (length > 0 && payloadLength == 0) ThrowNoPayload(length);
        long most = codec.MaxDecodedLength(payloadLength);
        if (length > most) ThrowOverPayload(length, codecId, payloadLength, most);

        header = new EnvelopeHeader((CompressionCodec)codecId, (EnvelopeFormat)version, (int)length, dictionaryId, hasChecksum,
            checksumLength, headerLength: offset, payloadLength);
        return true;
    }

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowHeaderTruncated(int length) =>
        ThrowHelper.ThrowCorrupt($"Envelope truncated: {length} bytes, the header alone needs at least 3.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowUnknownVersionOrCodec(int version, int codecId) => ThrowHelper.ThrowCorrupt(version > LatestFormatVersion
        ? $"Unknown envelope format version {version} (v{version + 1}); this reader knows versions 0 (v1), 1 (v2) and 2 (v3)."
        : $"Unknown codec id {codecId}; known ids are 0-{MaxCodecId} ({Codecs.CodecRegistry.KnownNames}).");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowBadPackedZstd(Codecs.Codec codec, int version, bool hasChecksum) =>
        ThrowHelper.ThrowCorrupt($"Envelope of codec {(int)codec.Id} ({codec.Name.Replace('_', ' ')}) is {(version < (int)codec.FirstFormat ? $"format v{version + 1}" : !hasChecksum ? "without a checksum" : "without a dictionary id")}; that codec exists only in {(codec.FirstFormat == EnvelopeFormat.V2 ? "formats v2 and v3" : "format v3")}, with a checksum and a dictionary id.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowOverLimit(uint length, int maxUncompressedLength) =>
        ThrowHelper.ThrowCorrupt($"Envelope declares {length} uncompressed bytes, over the limit of {maxUncompressedLength} (MaxUncompressedLength).");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowDictionaryOnCodec(int codecId) =>
        ThrowHelper.ThrowCorrupt($"Envelope of codec {(CompressionCodec)codecId} carries a dictionary id; only zstd, packed zstd and field zstd use dictionaries.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowStoredLength(uint length, int payloadLength) =>
        ThrowHelper.ThrowCorrupt($"Stored envelope declares {length} bytes but holds {payloadLength}.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowNoPayload(uint length) =>
        ThrowHelper.ThrowCorrupt($"Envelope truncated: it declares {length} bytes but has no payload.");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowOverPayload(uint length, int codecId, int payloadLength, long most) =>
        ThrowHelper.ThrowCorrupt($"Envelope declares {length} bytes, but a {(CompressionCodec)codecId} payload of {payloadLength} bytes decodes to at most {most}.");

    /// <summary>The header length for the given values; the payload starts at this offset.</summary>
    internal static int GetHeaderLength(int uncompressedLength, uint? dictionaryId) =>
        2 + Varint.GetLength((uint)uncompressedLength) + (dictionaryId is uint id ? Varint.GetLength(id) : 0);

    /// <summary>The checksum length of a format: 4 bytes in v1, 2 in v2 and v3.</summary>
    internal static int GetChecksumLength(EnvelopeFormat format) => format == EnvelopeFormat.V1 ? ChecksumLength : ShortChecksumLength;

    internal static int WriteHeader(Span<byte> destination, CompressionCodec codec, int uncompressedLength, uint? dictionaryId, bool checksum, EnvelopeFormat format = EnvelopeFormat.V1)
    {
        destination[0] = Magic;
        destination[1] = (byte)((byte)codec | ((int)format << VersionShift) | (checksum ? ChecksumFlag : 0) | (dictionaryId.HasValue ? DictionaryFlag : 0));
        int offset = 2 + Varint.Write(destination[2..], (uint)uncompressedLength);
        if (dictionaryId is uint id) offset += Varint.Write(destination[offset..], id);
        return offset;
    }

    /// <summary>Writes the checksum of <paramref name="uncompressed"/> in the format's length (v1 4 bytes, v2 and v3 the low 2 of their hashes).</summary>
    internal static void WriteChecksum(Span<byte> destination, ReadOnlySpan<byte> uncompressed, EnvelopeFormat format = EnvelopeFormat.V1)
    {
        if (format == EnvelopeFormat.V1) BinaryPrimitives.WriteUInt32LittleEndian(destination, System.IO.Hashing.XxHash32.HashToUInt32(uncompressed));
        else BinaryPrimitives.WriteUInt16LittleEndian(destination, ShortChecksum(uncompressed, format));
    }

    /// <summary>Whether <paramref name="stored"/> (the envelope's last <see cref="EnvelopeHeader.ChecksumLength"/> bytes) matches, for an envelope of <paramref name="format"/>.</summary>
    internal static bool ChecksumMatches(ReadOnlySpan<byte> stored, ReadOnlySpan<byte> uncompressed, EnvelopeFormat format) => format == EnvelopeFormat.V1
        ? stored.Length == ChecksumLength && BinaryPrimitives.ReadUInt32LittleEndian(stored) == System.IO.Hashing.XxHash32.HashToUInt32(uncompressed)
        : stored.Length == ShortChecksumLength && BinaryPrimitives.ReadUInt16LittleEndian(stored) == ShortChecksum(uncompressed, format);

    /// <summary>The 2-byte checksum: the low 16 bits of the XxHash32 (v2) or of the XxHash3 (v3).</summary>
    internal static ushort ShortChecksum(ReadOnlySpan<byte> uncompressed, EnvelopeFormat format) => format == EnvelopeFormat.V2
        ? (ushort)System.IO.Hashing.XxHash32.HashToUInt32(uncompressed)
        : (ushort)System.IO.Hashing.XxHash3.HashToUInt64(uncompressed);
}
