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
    public static readonly ZlibFamilyCodec Deflate = new(CompressionCodec.Deflate);
    public static readonly ZlibFamilyCodec Gzip = new(CompressionCodec.Gzip);

    private ZlibFamilyCodec(CompressionCodec id) => Id = id;

    public override CompressionCodec Id { get; }
    public override int MinLevel => 0;
    public override int MaxLevel => 9;
    public override int DefaultLevel => 6;

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
            using Stream zip = Id == CompressionCodec.Gzip
                ? new GZipStream(input, CompressionMode.Decompress)
                : new DeflateStream(input, CompressionMode.Decompress);
            int total = 0;
            while (total < destination.Length)
            {
                int n = zip.Read(destination[total..]);
                if (n == 0) ThrowLengthMismatch(total, destination.Length);
                total += n;
            }
            Span<byte> probe = stackalloc byte[1];
            if (zip.Read(probe) != 0)
                Internal.ThrowHelper.ThrowCorrupt($"{Id} payload decodes to more than the {destination.Length} bytes the envelope declares.");
        }

        // A gzip member ends with the CRC-32 and the length of its data. The payload must end with exactly those bytes:
        // that checks gzip's own CRC even when the stream reader stopped early, and rejects cut or trailing bytes.
        if (Id == CompressionCodec.Gzip)
        {
            if (source.Length < 18
                || BinaryPrimitives.ReadUInt32LittleEndian(source[^8..]) != System.IO.Hashing.Crc32.HashToUInt32(destination)
                || BinaryPrimitives.ReadUInt32LittleEndian(source[^4..]) != (uint)destination.Length)
                Internal.ThrowHelper.ThrowCorrupt("Gzip payload does not end with the CRC-32 and length of its data (cut, extended or corrupt).");
        }
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
