using System.IO.Compression;
using Snappier;
using ZstdSharp;

namespace Compression.Testing.Mongo.Internal;

/// <summary>The OP_COMPRESSED compressors: ids and handshake names as the wire compression specification assigns
/// them (0 noop, 1 snappy, 2 zlib, 3 zstd).</summary>
internal static class WireCompressors
{
    public const byte Noop = 0;
    public const byte Snappy = 1;
    public const byte Zlib = 2;
    public const byte Zstd = 3;

    /// <summary>The level of zstd replies: 3, zstd's default, which mongod compresses with.</summary>
    public const int ZstdLevel = 3;

    public static string Name(byte id) => id switch
    {
        Noop => "noop",
        Snappy => "snappy",
        Zlib => "zlib",
        Zstd => "zstd",
        _ => $"unknown ({id})",
    };

    public static bool IsKnown(byte id) => id <= Zstd;

    public static bool TryGetId(string name, out byte id)
    {
        switch (name)
        {
            case "noop": id = Noop; return true;
            case "snappy": id = Snappy; return true;
            case "zlib": id = Zlib; return true;
            case "zstd": id = Zstd; return true;
            default: id = 0; return false;
        }
    }
}

/// <summary>One connection's compression and decompression, in the formats <c>MongoDB.Driver</c> writes and reads:
/// raw snappy blocks (Snappier), zlib streams with their 2-byte header and Adler-32 (RFC 1950), zstd frames.</summary>
internal sealed class WireCodec : IDisposable
{
    private Compressor? _zstdCompressor;
    private Decompressor? _zstdDecompressor;
    private readonly MemoryStream _zlibOutput = new();

    /// <summary>Decompresses <paramref name="source"/> into exactly <paramref name="destination"/> (the message's
    /// uncompressedSize); data that decompresses to more or fewer bytes, or is corrupt, is an <see cref="InvalidDataException"/>.</summary>
    public void Decompress(byte id, byte[] message, int offset, int count, Span<byte> destination)
    {
        ReadOnlySpan<byte> source = message.AsSpan(offset, count);
        int declared = destination.Length;
        switch (id)
        {
            case WireCompressors.Noop:
                if (source.Length != declared)
                {
                    throw Lying(id, declared, source.Length.ToString(System.Globalization.CultureInfo.InvariantCulture));
                }

                source.CopyTo(destination);
                return;
            case WireCompressors.Snappy:
                {
                    int length = Snappier.Snappy.GetUncompressedLength(source); // the block's own preamble, read before anything is written
                    if (length != declared)
                    {
                        throw Lying(id, declared, length.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    }

                    int written = Snappier.Snappy.Decompress(source, destination);
                    if (written != declared)
                    {
                        throw Lying(id, declared, written.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    }

                    return;
                }

            case WireCompressors.Zlib:
                {
                    using var input = new MemoryStream(message, offset, count, writable: false);
                    using var zlib = new ZLibStream(input, CompressionMode.Decompress);
                    int read = zlib.ReadAtLeast(destination, declared, throwOnEndOfStream: false);
                    if (read < declared)
                    {
                        throw Lying(id, declared, read.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    }

                    Span<byte> more = stackalloc byte[1];
                    if (zlib.Read(more) != 0)
                    {
                        throw Lying(id, declared, "more");
                    }

                    return;
                }
            case WireCompressors.Zstd:
                {
                    _zstdDecompressor ??= new Decompressor();
                    int written;
                    bool fits;
                    try
                    {
                        fits = _zstdDecompressor.TryUnwrap(source, destination, out written);
                    }
                    catch (ZstdException e)
                    {
                        _zstdDecompressor.Dispose();
                        _zstdDecompressor = null; // a context that failed mid-frame is not reused
                        throw new InvalidDataException($"OP_COMPRESSED zstd data is invalid: {e.Message}", e);
                    }

                    if (!fits)
                    {
                        throw Lying(id, declared, "more");
                    }

                    if (written != declared)
                    {
                        throw Lying(id, declared, written.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    }

                    return;
                }

            default:
                throw new InvalidDataException($"OP_COMPRESSED compressorId {id} is unknown (0 noop, 1 snappy, 2 zlib, 3 zstd)");
        }
    }

    /// <summary>Compresses <paramref name="source"/> into <paramref name="buffer"/> from <paramref name="offset"/> on,
    /// growing the buffer when needed; returns the compressed length.</summary>
    public int Compress(byte id, ReadOnlySpan<byte> source, ref byte[] buffer, int offset)
    {
        switch (id)
        {
            case WireCompressors.Noop:
                Ensure(ref buffer, offset + source.Length);
                source.CopyTo(buffer.AsSpan(offset));
                return source.Length;
            case WireCompressors.Snappy:
                Ensure(ref buffer, offset + Snappier.Snappy.GetMaxCompressedLength(source.Length));
                return Snappier.Snappy.Compress(source, buffer.AsSpan(offset));
            case WireCompressors.Zlib:
                {
                    // CompressionLevel.Optimal is zlib's default level (Z_DEFAULT_COMPRESSION, 6), as mongod compresses.
                    _zlibOutput.SetLength(0);
                    using (var zlib = new ZLibStream(_zlibOutput, CompressionLevel.Optimal, leaveOpen: true))
                    {
                        zlib.Write(source);
                    }

                    int length = (int)_zlibOutput.Length;
                    Ensure(ref buffer, offset + length);
                    _zlibOutput.GetBuffer().AsSpan(0, length).CopyTo(buffer.AsSpan(offset));
                    if (_zlibOutput.Capacity > 8 * 1024 * 1024)
                    {
                        _zlibOutput.Capacity = 0;
                    }

                    return length;
                }

            case WireCompressors.Zstd:
                {
                    _zstdCompressor ??= new Compressor(WireCompressors.ZstdLevel);
                    Ensure(ref buffer, offset + Compressor.GetCompressBound(source.Length));
                    return _zstdCompressor.Wrap(source, buffer.AsSpan(offset));
                }

            default:
                throw new InvalidOperationException($"compressor {id} cannot compress");
        }
    }

    public void Dispose()
    {
        _zstdCompressor?.Dispose();
        _zstdDecompressor?.Dispose();
        _zlibOutput.Dispose();
    }

    private static void Ensure(ref byte[] buffer, int size)
    {
        if (buffer.Length < size)
        {
            Array.Resize(ref buffer, Math.Max(size, 2 * buffer.Length));
        }
    }

    private static InvalidDataException Lying(byte id, int declared, string actual) =>
        new($"OP_COMPRESSED uncompressedSize {declared} does not match its {WireCompressors.Name(id)} data, which decompresses to {actual} bytes");
}
