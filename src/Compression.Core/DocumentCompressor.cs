using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Compression.Codecs;
using Compression.Internal;

namespace Compression;

/// <summary>
/// Compresses documents into envelopes (format v3 by default, or v2 or v1) and decompresses every format back. Thread-safe; create one per
/// setting and share it. Codec contexts are pooled, never created per call.
/// </summary>
/// <remarks>
/// The API comes in steps: span in, span out (<see cref="TryCompress"/>, <see cref="TryDecompress"/>);
/// <see cref="IBufferWriter{T}"/> out; and allocating <see cref="byte"/>[] convenience methods last.
/// </remarks>
public sealed class DocumentCompressor
{
    private readonly Codecs.Codec _codec;
    private readonly int _level;
    private readonly int _largeLevel; // zstd, documents of LargeDocumentSize bytes or more
    private readonly bool _checksum;
    private readonly int _minimumSize;
    private readonly int _maxLength;
    private readonly bool _requireChecksum;
    private readonly EnvelopeFormat _format;

    /// <summary>
    /// Whether a dictionary's shape table is used to pack documents (<see cref="CompressionCodec.PackedZstd"/>). A
    /// namespace with <c>PackDocuments = false</c> (for readers that do not know codec 7 yet) writes plain zstd even with
    /// a dictionary another client trained with a table.
    /// </summary>
    internal bool Pack { get; init; } = true;

    /// <summary>
    /// Whether a dictionary's field model is used to code documents (<see cref="CompressionCodec.FieldZstd"/>). A
    /// namespace with <c>ModelFields = false</c> (for readers that do not know codec 8 yet) writes codec 7 with the
    /// dictionary's table even when another client trained the dictionary with a field model.
    /// </summary>
    internal bool CodeFields { get; init; } = true;

    /// <summary>
    /// Whether field-coded documents of format v3 are written as codec 9, the checksum inside the rANS stream
    /// (<see cref="CompressionCodec.FieldZstdFoldedChecksum"/>), rather than as codec 8 with the checksum after the
    /// payload. Tests and the format vectors set it to write codec 8 in v3; a deployment whose readers know codec 8 but
    /// not 9 sets the format to v2, which has no codec 9.
    /// </summary>
    internal bool FoldChecksum { get; init; } = true;

    /// <summary>Creates a compressor; the options are validated and copied.</summary>
    /// <exception cref="ArgumentException">The options are invalid; the message lists every problem.</exception>
    public DocumentCompressor(DocumentCompressorOptions? options = null)
    {
        options = (options ?? new DocumentCompressorOptions()).ValidCompressorCopy();
        _codec = Codecs.Codec.For(options.Codec);
        _level = options.EffectiveLevel;
        _largeLevel = options.Codec == CompressionCodec.Zstd && options.LargeDocumentLevel is int large ? Math.Max(_level, large) : _level;
        _checksum = options.Checksum;
        _minimumSize = options.MinimumSize;
        _maxLength = options.MaxUncompressedLength;
        _requireChecksum = options.RequireChecksum;
        _format = options.Format;
    }

    /// <summary>The codec new values are compressed with.</summary>
    public CompressionCodec Codec => _codec.Id;

    /// <summary>The effective codec level.</summary>
    public int Level => _level;

    /// <summary>Whether new envelopes carry a checksum.</summary>
    public bool Checksum => _checksum;

    /// <summary>The envelope format new values are written in (both are read).</summary>
    public EnvelopeFormat Format => _format;

    /// <summary>
    /// The largest document length <see cref="GetMaxEnvelopeLength"/> accepts: 2,147,483,631 bytes
    /// (<see cref="int.MaxValue"/> less the 16 bytes an envelope can add), so that the envelope length is still an
    /// <see cref="int"/>.
    /// </summary>
    public static readonly int MaxSourceLength = int.MaxValue - MaxEnvelopeOverhead;

    /// <summary>Magic, header byte, two 5-byte varints (length and dictionary id), checksum.</summary>
    private const int MaxEnvelopeOverhead = 2 + Varint.MaxLength32 + Varint.MaxLength32 + DocumentEnvelope.ChecksumLength;

    /// <summary>
    /// Below this declared length a document is decoded straight into its destination: the common case, a few hundred
    /// bytes to a few KiB, costs one decode and no extra allocation. Above it, the allocating decode methods first prove
    /// the length (<see cref="Codecs.Codec.DecompressUnproven"/>), so a header that lies costs what its payload produces.
    /// </summary>
    internal const int DirectDecodeLimit = 256 * 1024;

    /// <summary>The largest envelope <see cref="TryCompress"/> can produce for a document of <paramref name="sourceLength"/> bytes.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="sourceLength"/> is negative or over <see cref="MaxSourceLength"/>.</exception>
    public static int GetMaxEnvelopeLength(int sourceLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sourceLength);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sourceLength, MaxSourceLength);
        // Compression is kept only when it is smaller than the source, so the stored form is the worst case.
        return 2 + Varint.GetLength((uint)sourceLength) + Varint.MaxLength32 + sourceLength + DocumentEnvelope.ChecksumLength;
    }

    /// <summary>
    /// Compresses <paramref name="source"/> into an envelope in <paramref name="destination"/>. When compression does not
    /// pay (the source is under <see cref="DocumentCompressorOptions.MinimumSize"/> or the payload is not smaller), the
    /// document is stored (codec 0).
    /// </summary>
    /// <param name="source">The serialized document.</param>
    /// <param name="destination">Where the envelope goes; <see cref="GetMaxEnvelopeLength"/> bytes always suffice.</param>
    /// <param name="bytesWritten">The envelope length.</param>
    /// <param name="dictionary">A zstd dictionary to compress with; ignored by other codecs.</param>
    /// <returns><see langword="false"/> when <paramref name="destination"/> is too small.</returns>
    public bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, out int bytesWritten, ZstdDictionary? dictionary = null)
    {
        if (source.Length > _maxLength)
            throw new ArgumentException($"The document has {source.Length} bytes, over MaxUncompressedLength ({_maxLength}).", nameof(source));

        int checksumLength = _checksum ? DocumentEnvelope.GetChecksumLength(_format) : 0;
        if (_codec.Id != CompressionCodec.Stored && source.Length >= _minimumSize && source.Length > 0)
        {
            Codecs.Codec codec = Codecs.Codec.ForWriting(_codec, _format, source.Length);
            uint? dictionaryId = _codec.Id == CompressionCodec.Zstd ? dictionary?.Id : null;
            int headerLength = DocumentEnvelope.GetHeaderLength(source.Length, dictionaryId);
            // The envelope must be smaller than the stored one, or the document is stored: give the codec exactly that room.
            int storedHeaderLength = DocumentEnvelope.GetHeaderLength(source.Length, null);
            // (storedHeaderLength - headerLength is 0 or negative, so the sum cannot overflow.)
            int room = Math.Min(destination.Length - headerLength - checksumLength, source.Length - 1 + (storedHeaderLength - headerLength));
            // A dictionary with a shape table packs the document first (verified byte for byte); a document the packing
            // does not apply to is written as zstd with the same dictionary. Packed needs format v2 or v3 and the checksum.
            CompressionCodec written = _codec.Id;
            int level = source.Length >= DocumentCompressorOptions.LargeDocumentSize ? _largeLevel : _level;
            int payloadLength = 0;
            bool compressed = false;
            if (room > 0 && dictionaryId is not null && Pack && dictionary!.Shapes is { } shapes && _checksum && _format != EnvelopeFormat.V1)
            {
                // A dictionary with a field model codes the values it knows too (codec 8; in v3 codec 9, which keeps the
                // checksum inside its stream); without one, codec 7.
                Codecs.Codec structured = shapes.Fields is null || !CodeFields ? PackedZstdCodec.Instance
                    : _format == EnvelopeFormat.V3 && FoldChecksum ? FieldZstdCodec.FoldedChecksum : FieldZstdCodec.Instance;
                compressed = structured.TryCompress(source, destination.Slice(headerLength, room), level, dictionary, out payloadLength)
                    && payloadLength <= room;
                if (compressed) written = structured.Id;
            }
            if (!compressed) compressed = room > 0 && codec.TryCompress(source, destination.Slice(headerLength, room), level,
                    dictionaryId is null ? null : dictionary, out payloadLength) && payloadLength <= room;
            if (compressed)
            {
                DocumentEnvelope.WriteHeader(destination, written, source.Length, dictionaryId, _checksum, _format);
                int end = headerLength + payloadLength;
                if (Codecs.Codec.For(written).ChecksumInPayload) checksumLength = 0; // the payload holds it (codec 9)
                else if (_checksum) DocumentEnvelope.WriteChecksum(destination[end..], source, _format);
                bytesWritten = end + checksumLength;
                return true;
            }
        }

        return TryWriteStored(source, destination, _checksum, _format, out bytesWritten);
    }

    /// <summary>Compresses <paramref name="source"/> into an envelope appended to <paramref name="destination"/>.</summary>
    public void Compress(ReadOnlySpan<byte> source, IBufferWriter<byte> destination, ZstdDictionary? dictionary = null)
    {
        ArgumentNullException.ThrowIfNull(destination);
        Span<byte> span = destination.GetSpan(GetMaxEnvelopeLength(source.Length));
        if (!TryCompress(source, span, out int written, dictionary)) ThrowHelper.ThrowDestinationTooSmall(nameof(destination));
        destination.Advance(written);
    }

    /// <summary>Compresses <paramref name="source"/> into a new array. Allocates; prefer the span or buffer-writer overloads on hot paths.</summary>
    public byte[] Compress(ReadOnlySpan<byte> source, ZstdDictionary? dictionary = null)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(GetMaxEnvelopeLength(source.Length));
        try
        {
            TryCompress(source, rented, out int written, dictionary);
            return rented.AsSpan(0, written).ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented, clearArray: true);
        }
    }

    /// <summary>
    /// Decompresses an envelope into <paramref name="destination"/>.
    /// </summary>
    /// <param name="envelope">The whole stored value; it must be an envelope (see <see cref="DocumentEnvelope.TryReadHeader"/>).</param>
    /// <param name="destination">Receives exactly the header's <see cref="EnvelopeHeader.UncompressedLength"/> bytes.</param>
    /// <param name="bytesWritten">The document length.</param>
    /// <param name="dictionary">The dictionary the envelope names, when it names one.</param>
    /// <returns><see langword="false"/> when <paramref name="destination"/> is too small.</returns>
    /// <exception cref="InvalidDataException">The envelope is not an envelope, is corrupt or truncated, fails its checksum,
    /// names an unknown codec or version, declares more than <see cref="DocumentCompressorOptions.MaxUncompressedLength"/>,
    /// or declares more than its payload could decode to (the header is checked before the destination's size).</exception>
    /// <exception cref="DictionaryNotFoundException">The envelope names a dictionary and <paramref name="dictionary"/> is not it.</exception>
    public bool TryDecompress(ReadOnlySpan<byte> envelope, Span<byte> destination, out int bytesWritten, ZstdDictionary? dictionary = null) =>
        TryDecompressWithHeader(envelope, ReadHeader(envelope), destination, out bytesWritten, dictionary);

    /// <summary><see cref="TryDecompress(ReadOnlySpan{byte}, Span{byte}, out int, ZstdDictionary?)"/> with the header <see cref="ReadHeader"/> returned.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static bool TryDecompressWithHeader(ReadOnlySpan<byte> envelope, in EnvelopeHeader header, Span<byte> destination, out int bytesWritten, ZstdDictionary? dictionary)
    {
        bytesWritten = 0;
        if (destination.Length < header.UncompressedLength) return false;
        DecompressCore(envelope, header, destination[..header.UncompressedLength], dictionary);
        bytesWritten = header.UncompressedLength;
        return true;
    }

    /// <summary>Decompresses an envelope and appends the document to <paramref name="destination"/>.</summary>
    /// <remarks>
    /// <paramref name="destination"/> is asked for room only once the length is proven: a document of up to 256 KiB is
    /// decoded straight into it; a larger one is first decoded into a pooled buffer that grows with the output (or, for
    /// stored, lz4 and snappy, its length is proven from the payload's structure), so an envelope whose header claims
    /// more than its payload produces is rejected having allocated about what the payload produced, not what it claimed.
    /// Nothing is advanced when decoding fails.
    /// </remarks>
    /// <inheritdoc cref="TryDecompress" path="/exception"/>
    public void Decompress(ReadOnlySpan<byte> envelope, IBufferWriter<byte> destination, ZstdDictionary? dictionary = null)
    {
        ArgumentNullException.ThrowIfNull(destination);
        DecompressWithHeader(envelope, ReadHeader(envelope), destination, dictionary);
    }

    /// <summary><see cref="Decompress(ReadOnlySpan{byte}, IBufferWriter{byte}, ZstdDictionary?)"/> with the header <see cref="ReadHeader"/> returned.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void DecompressWithHeader(ReadOnlySpan<byte> envelope, in EnvelopeHeader header, IBufferWriter<byte> destination, ZstdDictionary? dictionary)
    {
        int length = header.UncompressedLength;
        if (length <= DirectDecodeLimit)
        {
            // The writer's span past the document is scratch: a codec may use it as room (ZstdBlockCodec, to skip a copy).
            DecompressCore(envelope, header, destination.GetSpan(length), length, dictionary);
            destination.Advance(length);
            return;
        }

        byte[]? decoded = DecompressUnproven(envelope, header, dictionary);
        try
        {
            Span<byte> span = destination.GetSpan(length)[..length];
            if (decoded is null) DecompressCore(envelope, header, span, dictionary);
            else decoded.AsSpan(0, length).CopyTo(span);
        }
        finally
        {
            if (decoded is not null) ArrayPool<byte>.Shared.Return(decoded, clearArray: true);
        }
        destination.Advance(length);
    }

    /// <summary>Decompresses an envelope into a new array. Allocates; prefer the span or buffer-writer overloads on hot paths.</summary>
    /// <remarks>The array is allocated only once the length is proven, as for the <see cref="IBufferWriter{T}"/> overload.</remarks>
    /// <inheritdoc cref="TryDecompress" path="/exception"/>
    public byte[] Decompress(ReadOnlySpan<byte> envelope, ZstdDictionary? dictionary = null) => DecompressWithHeader(envelope, ReadHeader(envelope), dictionary);

    /// <summary><see cref="Decompress(ReadOnlySpan{byte}, ZstdDictionary?)"/> with the header <see cref="ReadHeader"/> returned.</summary>
    internal static byte[] DecompressWithHeader(ReadOnlySpan<byte> envelope, in EnvelopeHeader header, ZstdDictionary? dictionary)
    {
        int length = header.UncompressedLength;
        if (length <= DirectDecodeLimit)
        {
            byte[] result = GC.AllocateUninitializedArray<byte>(length);
            DecompressCore(envelope, header, result, dictionary);
            return result;
        }

        byte[]? decoded = DecompressUnproven(envelope, header, dictionary);
        try
        {
            byte[] result = GC.AllocateUninitializedArray<byte>(length);
            if (decoded is null) DecompressCore(envelope, header, result, dictionary);
            else decoded.AsSpan(0, length).CopyTo(result);
            return result;
        }
        finally
        {
            if (decoded is not null) ArrayPool<byte>.Shared.Return(decoded, clearArray: true);
        }
    }

    /// <summary>Reads and checks the header of an envelope against this compressor's limits.</summary>
    /// <exception cref="InvalidDataException">Not an envelope, or a corrupt header.</exception>
    internal EnvelopeHeader ReadHeader(ReadOnlySpan<byte> envelope)
    {
        if (!DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header, _maxLength))
            ThrowNotAnEnvelope(envelope);
        if (_requireChecksum && !header.HasChecksum)
            ThrowHelper.ThrowCorrupt("The envelope carries no checksum, and this reader requires one (RequireChecksum).");
        return header;
    }

    // Throw paths with formatted messages stay out of the methods on the read path, so their code does not crowd it.
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowNotAnEnvelope(ReadOnlySpan<byte> value) =>
        ThrowHelper.ThrowCorrupt(value.IsEmpty ? "The value is empty, not an envelope." : $"The value is not an envelope (first byte 0x{value[0]:X2}, expected 0x{DocumentEnvelope.Magic:X2}).");

    internal static void DecompressCore(ReadOnlySpan<byte> envelope, in EnvelopeHeader header, Span<byte> destination, ZstdDictionary? dictionary) =>
        DecompressCore(envelope, header, destination, destination.Length, dictionary);

    /// <summary>
    /// Decodes into the first <paramref name="length"/> (the declared length) bytes of <paramref name="output"/>; the
    /// bytes past them are scratch a codec may overwrite. On failure everything that may have been written is cleared.
    /// </summary>
    internal static void DecompressCore(ReadOnlySpan<byte> envelope, in EnvelopeHeader header, Span<byte> output, int length, ZstdDictionary? dictionary)
    {
        CheckDictionary(header, dictionary);
        ReadOnlySpan<byte> payload = envelope.Slice(header.HeaderLength, header.PayloadLength);
        try
        {
            Codecs.Codec.ForReading(header).DecompressWithRoom(payload, output, length, header.DictionaryId is null ? null : dictionary);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException and not DictionaryNotFoundException)
        {
            ClearWritten(output, length); // never leave wrong bytes behind
            ThrowCorrupt(header, ex);
        }

        // A checksum without a trailer (codec 9) was checked by the codec, inside its payload.
        if (header.ChecksumLength > 0 && !DocumentEnvelope.ChecksumMatches(envelope[^header.ChecksumLength..], output[..length], header.Format))
        {
            ClearWritten(output, length); // never leave wrong bytes behind
            ThrowChecksumMismatch();
        }
    }

    private static void ClearWritten(Span<byte> output, int length) =>
        output[..Math.Min(output.Length, length + Codecs.ZstdBlockCodec.OutputSlack)].Clear();

    /// <summary>
    /// Decodes a payload whose (large) declared length is not yet proven, allocating as the output is produced
    /// (<see cref="Codecs.Codec.DecompressUnproven"/>). Returns <see langword="null"/> when the length was proven without
    /// decoding: the caller then calls <see cref="DecompressCore(ReadOnlySpan{byte}, in EnvelopeHeader, Span{byte}, ZstdDictionary?)"/> on its destination. Otherwise a pooled array holding
    /// the document, checksum verified, which the caller returns cleared.
    /// </summary>
    internal static byte[]? DecompressUnproven(ReadOnlySpan<byte> envelope, in EnvelopeHeader header, ZstdDictionary? dictionary)
    {
        CheckDictionary(header, dictionary);
        ReadOnlySpan<byte> payload = envelope.Slice(header.HeaderLength, header.PayloadLength);
        byte[]? decoded = null;
        try
        {
            decoded = Codecs.Codec.ForReading(header).DecompressUnproven(payload, header.UncompressedLength, header.DictionaryId is null ? null : dictionary);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException and not DictionaryNotFoundException)
        {
            ThrowCorrupt(header, ex);
        }

        if (decoded is not null && header.ChecksumLength > 0
            && !DocumentEnvelope.ChecksumMatches(envelope[^header.ChecksumLength..], decoded.AsSpan(0, header.UncompressedLength), header.Format))
        {
            ArrayPool<byte>.Shared.Return(decoded, clearArray: true);
            ThrowChecksumMismatch();
        }
        return decoded;
    }

    private static void CheckDictionary(in EnvelopeHeader header, ZstdDictionary? dictionary)
    {
        if (header.DictionaryId is uint id && (dictionary is null || dictionary.Id != id))
            throw new DictionaryNotFoundException(id, null, dictionary is null ? "the reader was given no dictionary" : $"the reader was given dictionary {dictionary.Id}");
    }

    // Codec libraries' own messages ("Incomplete Snappy block.") do not say what was being read: add it.
    private static void ThrowCorrupt(in EnvelopeHeader header, Exception ex) =>
        ThrowHelper.ThrowCorrupt($"The {header.Codec} payload of the envelope is corrupt: {ex.Message}", ex);

    private static void ThrowChecksumMismatch() =>
        ThrowHelper.ThrowCorrupt("Checksum mismatch: the decompressed document does not match the checksum the envelope stores (v1: its XxHash32; v2: the low 16 bits of that; v3: the low 16 bits of its XxHash3).");

    private static bool TryWriteStored(ReadOnlySpan<byte> source, Span<byte> destination, bool checksum, EnvelopeFormat format, out int bytesWritten)
    {
        int headerLength = DocumentEnvelope.GetHeaderLength(source.Length, null);
        long total = (long)headerLength + source.Length + (checksum ? DocumentEnvelope.GetChecksumLength(format) : 0); // no overflow near int.MaxValue
        bytesWritten = 0;
        if (destination.Length < total) return false;
        DocumentEnvelope.WriteHeader(destination, CompressionCodec.Stored, source.Length, null, checksum, format);
        source.CopyTo(destination[headerLength..]);
        if (checksum) DocumentEnvelope.WriteChecksum(destination[(headerLength + source.Length)..], source, format);
        bytesWritten = (int)total;
        return true;
    }
}
