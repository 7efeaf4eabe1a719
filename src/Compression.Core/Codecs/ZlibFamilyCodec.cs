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
            using var output = new UnmanagedMemoryStream(dst, 0, destination.Length, FileAccess.Write);
            try
            {
                var options = new ZLibCompressionOptions { CompressionLevel = level };
                using (Stream zip = Id == CompressionCodec.Gzip
                    ? new GZipStream(output, options, leaveOpen: true)
                    : new DeflateStream(output, options, leaveOpen: true))
                {
                    zip.Write(source);
                }
            }
            catch (NotSupportedException)
            {
                return false; // the output outgrew the destination: compression does not pay
            }
            catch (IOException)
            {
                return false;
            }
            bytesWritten = (int)output.Position;
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
    }
}
