using Compression.Internal;
using ThrowHelper = Compression.Internal.ThrowHelper;
using ZstdSharp;
using ZstdSharp.Unsafe;

namespace Compression.Codecs;

/// <summary>
/// Zstandard through ZstdSharp.Port. Frames are lean: magicless, no content size, no dictionary id and no checksum,
/// since the envelope carries all of these. Contexts are pooled per level and per dictionary.
/// </summary>
internal sealed class ZstdCodec : Codec
{
    public static readonly ZstdCodec Instance = new();

    public const int MinimumLevel = 1;
    public const int MaximumLevel = 22;

    private static readonly ZstdContextPool s_plain = new(dictionary: null);

    public override CompressionCodec Id => CompressionCodec.Zstd;
    public override int MinLevel => MinimumLevel;
    public override int MaxLevel => MaximumLevel;
    public override int DefaultLevel => 3;
    public override string Name => "zstd";
    public override bool TakesDictionary => true;
    public override IReadOnlyList<int> AnalyzeLevels { get; } = [1, 3, 9, 19];

    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        ZstdContextPool pool = dictionary?.Contexts ?? s_plain;
        Compressor compressor = pool.RentCompressor(level);
        try
        {
            return compressor.TryWrap(source, destination, out bytesWritten);
        }
        finally
        {
            pool.ReturnCompressor(level, compressor);
        }
    }

    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        ZstdContextPool pool = dictionary?.Contexts ?? s_plain;
        Decompressor decompressor = pool.RentDecompressor();
        bool healthy = false;
        try
        {
            if (!decompressor.TryUnwrap(source, destination, out int written)) ThrowLongerThanDeclared(destination.Length);
            if (written != destination.Length) ThrowLengthMismatch(written, destination.Length);
            healthy = true;
        }
        finally
        {
            // A context that failed mid-frame is discarded rather than returned, so no state leaks into the next call.
            if (healthy) pool.ReturnDecompressor(decompressor);
            else decompressor.Dispose();
        }
    }

    /// <summary>
    /// A block regenerates at most 128 KiB (Block_Maximum_Size), and the cheapest block that does, an RLE block, costs
    /// 4 bytes (3 of header, 1 repeated); frame headers only add cost. So a zstd payload never expands more than 32768:1.
    /// </summary>
    public override long MaxDecodedLength(int payloadLength) => (long)payloadLength * MaxBlockLength / 4;

    private const int MaxBlockLength = 128 * 1024;

    /// <summary>
    /// Decodes into a pooled buffer that starts small and doubles (up to the declared length) each time the frame does
    /// not fit, decoding again from the start: allocation follows the output actually produced, and the work is at most
    /// twice that of one decode. One-shot decoding keeps using the pooled context and no window buffer of its own
    /// (a streaming context would allocate the window the frame header asks for, whatever the payload holds).
    /// </summary>
    public override byte[]? DecompressUnproven(ReadOnlySpan<byte> source, int declared, ZstdDictionary? dictionary)
    {
        ZstdContextPool pool = dictionary?.Contexts ?? s_plain;
        Decompressor decompressor = pool.RentDecompressor();
        bool healthy = false;
        var output = new GrowingBuffer(declared);
        try
        {
            int written;
            while (!decompressor.TryUnwrap(source, output.Free, out written))
            {
                if (output.AtDeclared) ThrowLongerThanDeclared(declared);
                output.Grow();
            }
            if (written != declared) ThrowLengthMismatch(written, declared);
            output.Length = written;
            healthy = true;
            return output.Detach();
        }
        finally
        {
            output.Release();
            if (healthy) pool.ReturnDecompressor(decompressor);
            else decompressor.Dispose();
        }
    }
}

/// <summary>Pools of zstd compressors (one pool per level) and decompressors, all bound to one dictionary or none.</summary>
internal sealed class ZstdContextPool
{
    private readonly ZstdDictionary? _dictionary;
    private readonly BoundedPool<Compressor>?[] _compressors = new BoundedPool<Compressor>?[ZstdCodec.MaximumLevel + 1];
    private readonly BoundedPool<Decompressor> _decompressors;

    public ZstdContextPool(ZstdDictionary? dictionary)
    {
        _dictionary = dictionary;
        _decompressors = new BoundedPool<Decompressor>(CreateDecompressor);
    }

    public Compressor RentCompressor(int level)
    {
        BoundedPool<Compressor> pool = Volatile.Read(ref _compressors[level]) ?? CreatePool(level);
        return pool.Rent();
    }

    public void ReturnCompressor(int level, Compressor compressor) => _compressors[level]!.Return(compressor);

    // One decompressor per thread is kept aside for the pool that thread used last: the read path of a namespace rents
    // and returns a context per document, and the shared pool's two interlocked operations were a visible part of the
    // engine's cost over a bare ZstdSharp call on small documents. A thread that switches pools hands the kept context
    // back to its own pool. A context is in the slot or rented, never both.
    [ThreadStatic] private static ZstdContextPool? t_owner;
    [ThreadStatic] private static Decompressor? t_decompressor;

    public Decompressor RentDecompressor()
    {
        Decompressor? kept = t_decompressor;
        if (kept is not null && ReferenceEquals(t_owner, this))
        {
            t_decompressor = null;
            return kept;
        }
        return _decompressors.Rent();
    }

    public void ReturnDecompressor(Decompressor decompressor)
    {
        Decompressor? kept = t_decompressor;
        if (kept is not null)
        {
            if (ReferenceEquals(t_owner, this))
            {
                _decompressors.Return(decompressor);
                return;
            }
            t_owner!._decompressors.Return(kept);
        }
        t_owner = this;
        t_decompressor = decompressor;
    }

    private BoundedPool<Compressor> CreatePool(int level)
    {
        var pool = new BoundedPool<Compressor>(() => CreateCompressor(level));
        return Interlocked.CompareExchange(ref _compressors[level], pool, null) ?? pool;
    }

    private Compressor CreateCompressor(int level)
    {
        var compressor = new Compressor(level);
        compressor.SetParameter(ZSTD_cParameter.ZSTD_c_contentSizeFlag, 0);
        compressor.SetParameter(ZSTD_cParameter.ZSTD_c_checksumFlag, 0);
        compressor.SetParameter(ZSTD_cParameter.ZSTD_c_dictIDFlag, 0);
        compressor.SetParameter(ZSTD_cParameter.ZSTD_c_experimentalParam2, (int)ZSTD_format_e.ZSTD_f_zstd1_magicless);
        if (_dictionary is not null) compressor.LoadDictionary(_dictionary.Content.Span);
        return compressor;
    }

    private Decompressor CreateDecompressor()
    {
        var decompressor = new Decompressor();
        decompressor.SetParameter(ZSTD_dParameter.ZSTD_d_experimentalParam1, (int)ZSTD_format_e.ZSTD_f_zstd1_magicless);
        if (_dictionary is not null) decompressor.LoadDictionary(_dictionary.Content.Span);
        return decompressor;
    }
}
