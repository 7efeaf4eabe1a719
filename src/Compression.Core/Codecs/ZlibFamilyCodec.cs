using System.Buffers.Binary;
using System.IO.Compression;

namespace Compression.Codecs;

/// <summary>
/// Raw deflate and gzip through System.IO.Compression streams over the caller's memory (no intermediate copies).
/// The platform offers no reusable one-shot deflater, so each call creates one zlib stream: these codecs are for
/// interoperability, zstd is the fast path.
/// </summary>
internal sealed unsafe class ZlibFamilyCodec : Codec
{
    public static readonly ZlibFamilyCodec Deflate = new(CompressionCodec.Deflate, "deflate", [1, 6, 9]);
    public static readonly ZlibFamilyCodec Gzip = new(CompressionCodec.Gzip, "gzip", [6]);

    private ZlibFamilyCodec(CompressionCodec id, string name, int[] analyzeLevels)
    {
        Id = id;
        Name = name;
        AnalyzeLevels = analyzeLevels;
    }

    public override CompressionCodec Id { get; }
    public override int MinLevel => 0;
    public override int MaxLevel => 9;
    public override int DefaultLevel => 6;
    public override string Name { get; }
    public override IReadOnlyList<int> AnalyzeLevels { get; }

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        bytesWritten = 0;
        fixed (byte* dst = destination)
        {
            // A stream that stops (and says so) at the end of the destination instead of throwing: output that does not
            // fit is the common "compression does not pay" case on small documents, and exceptions would make it slow.
            var output = new BoundedWriteStream(dst, destination.Length);
            var options = new ZLibCompressionOptions { CompressionLevel = level };
            using (Stream zip = Id == CompressionCodec.Gzip
                ? new GZipStream(output, options, leaveOpen: true)
                : new DeflateStream(output, options, leaveOpen: true))
            {
                zip.Write(source);
            }
            if (output.Overflowed) return false;
            bytesWritten = output.Length32;
            return true;
        }
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        fixed (byte* src = source)
        {
            using var input = new UnmanagedMemoryStream(src, source.Length);
            using Stream zip = OpenDecoder(input);
            int total = 0;
            while (total < destination.Length)
            {
                int n = zip.Read(destination[total..]);
                if (n == 0) ThrowLengthMismatch(total, destination.Length);
                total += n;
            }
            Span<byte> probe = stackalloc byte[1];
            if (zip.Read(probe) != 0) ThrowLongerThanDeclared(destination.Length);
        }
        CheckGzipTrailer(source, destination);
    }

    /// <summary>
    /// A deflate match costs at least 2 bits (a length code and a distance code of at least one bit each) for at most 258
    /// bytes; literals cost at least a bit a byte; stored blocks cost what they produce. So deflate never expands more
    /// than 1032:1 (zlib's documented maximum), and a gzip member, which adds a header and trailer, neither.
    /// </summary>
    public override long MaxDecodedLength(int payloadLength) => 1032L * payloadLength;

    /// <summary>Decodes chunk by chunk into a growing pooled buffer, so allocation follows the output actually produced.</summary>
    public override byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary)
    {
        var output = new GrowingBuffer(declared);
        try
        {
            fixed (byte* src = source)
            {
                using var input = new UnmanagedMemoryStream(src, source.Length);
                using Stream zip = OpenDecoder(input);
                Span<byte> probe = stackalloc byte[1];
                while (true)
                {
                    if (output.IsFull)
                    {
                        // Grow only when the stream really has more: a payload that ends here costs no larger buffer.
                        if (zip.Read(probe) == 0) break;
                        if (output.AtDeclared) ThrowLongerThanDeclared(declared);
                        output.Grow();
                        output.Free[0] = probe[0];
                        output.Length++;
                        continue;
                    }
                    int n = zip.Read(output.Free);
                    if (n == 0) break;
                    output.Length += n;
                }
            }
            if (output.Length != declared) ThrowLengthMismatch(output.Length, declared);
            CheckGzipTrailer(source, output.Array.AsSpan(0, declared));
            return output.Detach();
        }
        finally
        {
            output.Release();
        }
    }

    private Stream OpenDecoder(Stream input) => Id == CompressionCodec.Gzip
        ? new GZipStream(input, CompressionMode.Decompress)
        : new DeflateStream(input, CompressionMode.Decompress);

    /// <summary>
    /// A gzip member ends with the CRC-32 and the length of its data. The payload must end with exactly those bytes:
    /// that checks gzip's own CRC even when the stream reader stopped early, and rejects cut or trailing bytes.
    /// </summary>
    private void CheckGzipTrailer(ReadOnlySpan<byte> source, ReadOnlySpan<byte> decoded)
    {
        if (Id != CompressionCodec.Gzip) return;
        if (source.Length < 18
            || BinaryPrimitives.ReadUInt32LittleEndian(source[^8..]) != System.IO.Hashing.Crc32.HashToUInt32(decoded)
            || BinaryPrimitives.ReadUInt32LittleEndian(source[^4..]) != (uint)decoded.Length)
            Internal.ThrowHelper.ThrowCorrupt("Gzip payload does not end with the CRC-32 and length of its data (cut, extended or corrupt).");
    }

    /// <summary>A write-only stream over fixed memory that records overflow instead of throwing.</summary>
    private sealed class BoundedWriteStream(byte* buffer, int capacity) : Stream
    {
        private int _position;

        public bool Overflowed { get; private set; }

        public int Length32 => _position;

        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => _position;
        public override long Position { get => _position; set => throw new NotSupportedException(); }

        public override void Write(ReadOnlySpan<byte> data)
        {
            if (Overflowed) return;
            if (data.Length > capacity - _position)
            {
                Overflowed = true;
                return;
            }
            data.CopyTo(new Span<byte>(buffer + _position, capacity - _position));
            _position += data.Length;
        }

        public override void Write(byte[] data, int offset, int count) => Write(data.AsSpan(offset, count));
        public override void WriteByte(byte value) => Write([value]);
        public override void Flush() { }
        public override int Read(byte[] data, int offset, int count) => throw new NotSupportedException();
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
