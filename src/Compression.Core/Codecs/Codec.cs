using System.Buffers;

namespace Compression.Codecs;

/// <summary>One codec's raw payload work. Implementations are stateless singletons and thread-safe.</summary>
internal abstract class Codec
{
    /// <summary>The first capacity of the growing buffer a large, unproven payload is decoded into (<see cref="DecompressUnproven"/>).</summary>
    internal const int InitialUnprovenCapacity = 256 * 1024;

    public abstract CompressionCodec Id { get; }

    public abstract int MinLevel { get; }

    public abstract int MaxLevel { get; }

    public abstract int DefaultLevel { get; }

    /// <summary>
    /// The codec's name in lower case, words joined by '_': the <c>codec</c> tag of the engine's metrics, the codec
    /// column of <c>docz analyze</c>, and (with spaces for '_') the names the envelope reader's messages list.
    /// </summary>
    public abstract string Name { get; }

    /// <summary>
    /// Whether the codec is written only by the engine, with a dictionary's shape table (codecs 7 to 9): never a
    /// setting, only from <see cref="FirstFormat"/> on (v2; codec 9 v3), with a checksum and a dictionary id. The others
    /// are application codecs.
    /// </summary>
    public virtual bool IsStructured => false;

    /// <summary>Whether an envelope of this codec may carry a dictionary id.</summary>
    public virtual bool TakesDictionary => IsStructured;

    /// <summary>The first envelope format the codec exists in: v1 for the application codecs, v2 for 7 and 8, v3 for 9.</summary>
    public virtual EnvelopeFormat FirstFormat => IsStructured ? EnvelopeFormat.V2 : EnvelopeFormat.V1;

    /// <summary>
    /// Whether the codec's payload holds the document's checksum itself (codec 9, in its rANS stream), so that the
    /// envelope has no checksum trailer although its checksum bit is set; the codec checks it while decoding.
    /// </summary>
    public virtual bool ChecksumInPayload => false;

    /// <summary>
    /// The levels <c>docz analyze</c> measures the codec at without a dictionary (with <c>--quick</c>: <see cref="DefaultLevel"/>
    /// alone); empty for a codec the tool does not measure as a setting (<see cref="IsStructured"/>).
    /// </summary>
    public abstract IReadOnlyList<int> AnalyzeLevels { get; }

    /// <summary>Compresses into <paramref name="destination"/>; returns false when it does not fit.</summary>
    public abstract bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten);

    /// <summary>
    /// Decompresses <paramref name="source"/> into exactly <paramref name="destination"/>.Length bytes.
    /// Throws <see cref="InvalidDataException"/> (or lets the library's own exception escape, which the caller
    /// wraps) when the payload is corrupt or does not decode to exactly that length.
    /// </summary>
    public abstract void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary);

    /// <summary>
    /// Decompresses <paramref name="source"/> into the first <paramref name="length"/> bytes of <paramref name="output"/>,
    /// which may be longer: the bytes past <paramref name="length"/> are scratch the codec may overwrite (an
    /// <see cref="System.Buffers.IBufferWriter{T}"/>'s span past what is advanced). Throws as <see cref="Decompress"/>.
    /// </summary>
    public virtual void DecompressWithRoom(ReadOnlySpan<byte> source, Span<byte> output, int length, ZstdDictionary? dictionary) =>
        Decompress(source, output[..length], dictionary);

    /// <summary>
    /// The most bytes a payload of <paramref name="payloadLength"/> bytes can decode to: the format's worst-case expansion
    /// (docs/format.md, "Reader obligations"). An envelope that declares more is corrupt, and is rejected before anything
    /// is allocated for it.
    /// </summary>
    public abstract long MaxDecodedLength(int payloadLength);

    /// <summary>
    /// Decodes a payload whose declared length (<paramref name="declared"/>) is large and not yet proven, allocating only
    /// as output is actually produced. Returns <see langword="null"/> when the codec proved, without decoding, that the
    /// payload produces exactly <paramref name="declared"/> bytes (the caller then decodes straight into its destination
    /// with <see cref="Decompress"/>); otherwise an array rented from <see cref="ArrayPool{T}.Shared"/> whose first
    /// <paramref name="declared"/> bytes are the decoded document, which the caller returns with <c>clearArray: true</c>.
    /// Throws as <see cref="Decompress"/> does when the payload is corrupt or does not decode to exactly that length.
    /// </summary>
    public virtual byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary) => null;

    /// <summary>The codec of id <paramref name="codec"/> (<see cref="CodecRegistry.For"/>).</summary>
    public static Codec For(CompressionCodec codec) => CodecRegistry.For(codec);

    /// <summary>The codec that writes a document of <paramref name="length"/> bytes in <paramref name="format"/>: v2 zstd up to 128 KiB is a raw block.</summary>
    public static Codec ForWriting(Codec codec, EnvelopeFormat format, int length) =>
        format != EnvelopeFormat.V1 && codec.Id == CompressionCodec.Zstd && length <= ZstdBlockCodec.MaxBlockLength ? ZstdBlockCodec.Instance : codec;

    /// <summary>The codec that reads an envelope's payload: v2 zstd declaring up to 128 KiB is a raw block, everything else as in v1.</summary>
    public static Codec ForReading(in EnvelopeHeader header) =>
        header.Format != EnvelopeFormat.V1 && header.Codec == CompressionCodec.Zstd && header.UncompressedLength <= ZstdBlockCodec.MaxBlockLength
            ? ZstdBlockCodec.Instance : For(header.Codec);

    protected static void ThrowLengthMismatch(int produced, int declared) =>
        Internal.ThrowHelper.ThrowCorrupt($"Payload decodes to {produced} bytes, the envelope declares {declared}.");

    protected void ThrowLongerThanDeclared(int declared) =>
        Internal.ThrowHelper.ThrowCorrupt($"{Id} payload decodes to more than the {declared} bytes the envelope declares.");

    /// <summary>
    /// A buffer rented from the shared pool that grows as decoded output arrives: it never holds much more than twice
    /// what was produced, and never more than the declared length. Returned cleared, since it held document bytes.
    /// </summary>
    protected struct GrowingBuffer(int declared)
    {
        private byte[] _array = ArrayPool<byte>.Shared.Rent(Math.Min(declared, InitialUnprovenCapacity));
        private int _capacity = Math.Min(declared, InitialUnprovenCapacity);

        /// <summary>The rented array; its first <see cref="Length"/> bytes are the output so far.</summary>
        public readonly byte[] Array => _array;

        /// <summary>Bytes written so far.</summary>
        public int Length { get; set; }

        /// <summary>Room left before the next <see cref="Grow"/>; empty once <c>declared</c> bytes were written.</summary>
        public readonly Span<byte> Free => _array.AsSpan(Length, _capacity - Length);

        /// <summary>Whether the room is used up.</summary>
        public readonly bool IsFull => Length == _capacity;

        /// <summary>Whether the declared length is reached: no more room may be added.</summary>
        public readonly bool AtDeclared => _capacity == declared;

        /// <summary>Doubles the room (at most to the declared length), keeping what was written.</summary>
        public void Grow()
        {
            int capacity = (int)Math.Min(declared, 2L * _capacity);
            byte[] larger = ArrayPool<byte>.Shared.Rent(capacity);
            _array.AsSpan(0, Length).CopyTo(larger);
            ArrayPool<byte>.Shared.Return(_array, clearArray: true);
            _array = larger;
            _capacity = capacity;
        }

        /// <summary>Hands the array over (the caller returns it to the pool).</summary>
        public byte[] Detach()
        {
            byte[] array = _array;
            _array = [];
            return array;
        }

        /// <summary>Returns the array to the pool, cleared; does nothing once detached.</summary>
        public void Release()
        {
            if (_array.Length > 0) ArrayPool<byte>.Shared.Return(_array, clearArray: true);
            _array = [];
        }
    }
}

internal sealed class StoredCodec : Codec
{
    public static readonly StoredCodec Instance = new();
    public override CompressionCodec Id => CompressionCodec.Stored;
    public override int MinLevel => 0;
    public override int MaxLevel => 0;
    public override int DefaultLevel => 0;
    public override string Name => "stored";
    public override IReadOnlyList<int> AnalyzeLevels { get; } = [0];

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        bytesWritten = 0;
        if (!source.TryCopyTo(destination)) return false;
        bytesWritten = source.Length;
        return true;
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        if (source.Length != destination.Length) ThrowLengthMismatch(source.Length, destination.Length);
        source.CopyTo(destination);
    }

    /// <summary>The payload is the document.</summary>
    public override long MaxDecodedLength(int payloadLength) => payloadLength;

    public override byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary)
    {
        if (source.Length != declared) ThrowLengthMismatch(source.Length, declared);
        return null;
    }
}
