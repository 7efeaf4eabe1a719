using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Runtime.CompilerServices;
using ZstdSharp.Unsafe;
using ThrowHelper = Compression.Internal.ThrowHelper;

namespace Compression.Codecs;

/// <summary>
/// Format v2's zstd payload for documents of up to 128 KiB: the content of one zstd compressed block, without the
/// frame header (2 bytes in v1) or the block header (3 bytes), through zstd's block-level API. The envelope already
/// holds what those headers say (the length and the end of the payload). Any zstd library decodes it by putting a frame
/// header and a block header in front (docs/format.md), as the independent reader of the format tests does.
/// </summary>
internal sealed unsafe class ZstdBlockCodec : Codec
{
    public static readonly ZstdBlockCodec Instance = new();

    /// <summary>The largest document a block holds (zstd's <c>ZSTD_BLOCKSIZE_MAX</c>); larger ones are frames (<see cref="ZstdCodec"/>).</summary>
    public const int MaxBlockLength = 128 * 1024;

    private static readonly ZstdBlockContexts s_plain = new(null);

    // A block context is not bound to a dictionary or level (the digested dictionary is referenced anew by each call's
    // begin), so each thread keeps one of each kind for every namespace: no pool, no interlocked operation per document.
    [ThreadStatic] private static BlockCompressionContext? t_compressor;
    [ThreadStatic] private static BlockDecompressionContext? t_decompressor;

    public override CompressionCodec Id => CompressionCodec.Zstd;
    public override int MinLevel => ZstdCodec.MinimumLevel;
    public override int MaxLevel => ZstdCodec.MaximumLevel;
    public override int DefaultLevel => 3;
    public override string Name => ZstdCodec.Instance.Name;
    public override bool TakesDictionary => true;
    public override IReadOnlyList<int> AnalyzeLevels => ZstdCodec.Instance.AnalyzeLevels;

    /// <summary>Compresses one block; <see langword="false"/> when it does not fit or zstd finds it incompressible (then it is stored).</summary>
    public override bool TryCompress(ReadOnlySpan<byte> source, Span<byte> destination, int level, ZstdDictionary? dictionary, out int bytesWritten)
    {
        bytesWritten = 0;
        if (source.Length is 0 or > MaxBlockLength || destination.IsEmpty) return false;
        ZstdBlockContexts contexts = dictionary?.BlockContexts ?? s_plain;
        BlockCompressionContext context = t_compressor ??= new BlockCompressionContext();
        bool healthy = false;
        try
        {
            nuint result;
            fixed (byte* src = source)
            fixed (byte* dst = destination)
            {
                result = Begin(context.Pointer, dictionary is null ? null : contexts.GetCompressionDictionary(level), level, (ulong)source.Length);
                if (Methods.ZSTD_isError(result))
                    throw new InvalidOperationException($"zstd could not start a block: {Methods.ZSTD_getErrorName(result)}");
                result = Methods.ZSTD_compressBlock(context.Pointer, dst, (nuint)destination.Length, src, (nuint)source.Length);
            }
            // The digested dictionary is reached through a raw pointer: its owner must outlive the block, or a collection
            // during it could finalize the dictionary and free the tables zstd reads (found by review).
            GC.KeepAlive(contexts);
            healthy = true;
            // An error here is "destination too small"; 0 is "not compressible": both mean the document is stored.
            if (Methods.ZSTD_isError(result) || result == 0) return false;
            bytesWritten = (int)result;
            return true;
        }
        finally
        {
            if (!healthy)
            {
                t_compressor = null;
                context.Dispose();
            }
        }
    }

    /// <summary>
    /// Starts a block at <paramref name="level"/>, or with <paramref name="dictionary"/> digested at its level, for a
    /// source of <paramref name="sourceLength"/> bytes: what <c>ZSTD_compressBegin_advanced</c> and
    /// <c>ZSTD_compressBegin_usingCDict_advanced</c> do, with the parameter block initialised first. ZstdSharp 0.8.8 ports
    /// zstd's <c>ZSTD_CCtxParams_init_internal</c> as an object initialiser that reads the block's match-finder and
    /// block-splitter switches before it clears them; both public begin functions pass an uninitialised stack local
    /// (the module skips locals init), so the row match finder was on or off depending on what an earlier call had left
    /// on the stack, and levels 5-15 gave different bytes for the same document (found when the three compress APIs
    /// disagreed at level 9 in CI). Here the block starts zeroed, so both switches are zstd's "auto", resolved by its
    /// rules; the tests' <c>ZstdBeginParameterTests</c> hold every level to them.
    /// </summary>
    internal static nuint Begin(ZSTD_CCtx_s* context, ZSTD_CDict_s* dictionary, int level, ulong sourceLength)
    {
        ZSTD_CCtx_params_s parameters = default;
        ZSTD_parameters chosen;
        int parameterLevel = 0;
        if (dictionary is null)
        {
            chosen = Methods.ZSTD_getParams(level, sourceLength, 0);
        }
        else
        {
            // As ZSTD_compressBegin_usingCDict_internal: the dictionary's own parameters for small sources, else the
            // level's for this source and dictionary; the window never smaller than the source (up to 512 KiB).
            chosen = default;
            chosen.cParams = sourceLength < 128 * 1024 || sourceLength < dictionary->dictContentSize * 6UL || dictionary->compressionLevel == 0
                ? dictionary->matchState.cParams
                : Methods.ZSTD_getCParams(dictionary->compressionLevel, sourceLength, dictionary->dictContentSize);
            parameterLevel = dictionary->compressionLevel;
        }
        nuint result = Methods.ZSTD_CCtxParams_init_advanced(&parameters, chosen);
        if (Methods.ZSTD_isError(result)) return result;
        if (dictionary is not null)
        {
            parameters.compressionLevel = parameterLevel;
            uint limited = (uint)Math.Min(sourceLength, 1UL << 19);
            uint limitedLog = limited > 1 ? (uint)BitOperations.Log2(limited - 1) + 1 : 1;
            parameters.cParams.windowLog = Math.Max(parameters.cParams.windowLog, limitedLog);
        }
        return CompressBeginAdvancedInternal(null, context, null, 0, ZSTD_dictContentType_e.ZSTD_dct_auto,
            ZSTD_dictTableLoadMethod_e.ZSTD_dtlm_fast, dictionary, &parameters, sourceLength);
    }

    /// <summary>zstd's <c>ZSTD_compressBegin_advanced_internal</c>, which ZstdSharp keeps private: the begin that takes a parameter block.</summary>
    [UnsafeAccessor(UnsafeAccessorKind.StaticMethod, Name = "ZSTD_compressBegin_advanced_internal")]
    private static extern nuint CompressBeginAdvancedInternal([UnsafeAccessorType("ZstdSharp.Unsafe.Methods, ZstdSharp")] object? methods,
        ZSTD_CCtx_s* cctx, void* dict, nuint dictSize, ZSTD_dictContentType_e dictContentType, ZSTD_dictTableLoadMethod_e dtlm,
        ZSTD_CDict_s* cdict, ZSTD_CCtx_params_s* parameters, ulong pledgedSrcSize);

    /// <summary>
    /// Decodes a document of exactly <paramref name="destination"/>'s length. One of up to <see cref="SlackDecodeLimit"/>
    /// bytes is decoded into a stack buffer with <see cref="OutputSlack"/> bytes of room past its end, then copied:
    /// zstd copies the last sequences of a block byte by byte when fewer than 32 bytes of output space follow them
    /// (<c>ZSTD_execSequenceEnd</c>), and in a small document most sequences are that near the end. Measured: a flights
    /// document (88 B) decoded in 224-230 ns with room after it against 286-326 ns into its exact length; the copy
    /// costs a few nanoseconds. The caller's destination is never written past the document.
    /// </summary>
    [SkipLocalsInit]
    public override void Decompress(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        if (destination.Length > MaxBlockLength) ThrowBlockTooLong(destination.Length);
        int produced;
        if (destination.Length <= SlackDecodeLimit)
        {
            Span<byte> scratch = stackalloc byte[SlackDecodeLimit + OutputSlack];
            produced = DecompressBlock(source, scratch[..(destination.Length + OutputSlack)], dictionary);
            if (produced == destination.Length) scratch[..produced].CopyTo(destination);
        }
        else
        {
            produced = DecompressBlock(source, destination, dictionary);
        }
        if (produced != destination.Length) ThrowLengthMismatch(produced, destination.Length);
    }

    /// <summary>
    /// With <see cref="OutputSlack"/> bytes of room in <paramref name="output"/> past the document, decodes straight into
    /// it (no stack buffer, no copy); otherwise as <see cref="Decompress"/>.
    /// </summary>
    public override void DecompressWithRoom(ReadOnlySpan<byte> source, Span<byte> output, int length, ZstdDictionary? dictionary)
    {
        if (length <= MaxBlockLength && output.Length - OutputSlack >= length)
        {
            int produced = DecompressBlock(source, output[..(length + OutputSlack)], dictionary);
            if (produced != length) ThrowLengthMismatch(produced, length);
        }
        else
        {
            Decompress(source, output[..length], dictionary);
        }
    }

    /// <summary>Room past the output that lets zstd finish a block with its fast copies (its <c>WILDCOPY_OVERLENGTH</c>).</summary>
    internal const int OutputSlack = 32;

    /// <summary>Documents up to this length are decoded with <see cref="OutputSlack"/> on the stack, then copied.</summary>
    internal const int SlackDecodeLimit = 2048;

    /// <summary>
    /// Decodes one block into <paramref name="destination"/> and returns how many bytes it produced: at most the
    /// destination's length (a block that would produce more is corrupt). For payloads whose decoded length is not the
    /// envelope's (<see cref="PackedZstdCodec"/>).
    /// </summary>
    internal static int DecompressBlock(ReadOnlySpan<byte> source, Span<byte> destination, ZstdDictionary? dictionary)
    {
        ZstdBlockContexts contexts = dictionary?.BlockContexts ?? s_plain;
        BlockDecompressionContext context = t_decompressor ??= new BlockDecompressionContext();
        // zstd reports errors as return codes (ZstdSharp's port throws nothing here), so no try region is needed to
        // discard a failed context: it is discarded before the error is thrown. A protected region in this method, which
        // the JIT inlines into the read path, kept its locals on the stack (measured as part of the read path's cost).
        nuint result = dictionary is null
            ? Methods.ZSTD_decompressBegin(context.Pointer)
            : Methods.ZSTD_decompressBegin_usingDDict(context.Pointer, contexts.DecompressionDictionary);
        if (Methods.ZSTD_isError(result)) DiscardAndThrow(context, "zstd could not start a block", result);
        byte none = 0;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            result = Methods.ZSTD_decompressBlock(context.Pointer, dst is null ? &none : dst, (nuint)destination.Length, src is null ? &none : src, (nuint)source.Length);
        }
        // As in TryCompress: the dictionary's owner outlives the block that reads its tables through a raw pointer.
        GC.KeepAlive(contexts);
        if (Methods.ZSTD_isError(result)) DiscardAndThrow(context, "zstd block", result);
        return (int)result;
    }

    /// <summary>A context that failed mid-block is discarded rather than kept, so no state leaks into the next call.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void DiscardAndThrow(BlockDecompressionContext context, string what, nuint code)
    {
        t_decompressor = null;
        string name = Methods.ZSTD_getErrorName(code);
        context.Dispose();
        ThrowHelper.ThrowCorrupt($"{what}: {name}");
    }

    // Throw paths with formatted messages stay out of the read path's methods, so their code does not crowd it.
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowBlockTooLong(int declared) =>
        ThrowHelper.ThrowCorrupt($"A zstd block declares {declared} bytes; a block holds at most {MaxBlockLength}.");

    /// <summary>As a frame's: a block regenerates at most 128 KiB, and declared lengths over that are refused anyway.</summary>
    public override long MaxDecodedLength(int payloadLength) => ZstdCodec.Instance.MaxDecodedLength(payloadLength);
}

/// <summary>The block API's digested forms of one dictionary (or none): for decompression, and for compression per level, shared by every thread's context.</summary>
internal sealed unsafe class ZstdBlockContexts
{
    private readonly byte[]? _content;
    private readonly CompressionDictionaryHandle?[] _compressionDictionaries = new CompressionDictionaryHandle?[ZstdCodec.MaximumLevel + 1];
    private readonly DecompressionDictionaryHandle? _decompressionDictionary;

    /// <exception cref="InvalidDataException">zstd cannot digest <paramref name="content"/>.</exception>
    public ZstdBlockContexts(byte[]? content)
    {
        _content = content;
        if (content is not null) _decompressionDictionary = new DecompressionDictionaryHandle(content);
    }

    public ZSTD_DDict_s* DecompressionDictionary => _decompressionDictionary!.Pointer;

    /// <summary>The dictionary digested for <paramref name="level"/>, created on first use and shared by every context.</summary>
    public ZSTD_CDict_s* GetCompressionDictionary(int level)
    {
        CompressionDictionaryHandle? handle = Volatile.Read(ref _compressionDictionaries[level]);
        if (handle is null)
        {
            var created = new CompressionDictionaryHandle(_content!, level);
            handle = Interlocked.CompareExchange(ref _compressionDictionaries[level], created, null);
            if (handle is null) handle = created;
            else created.Dispose();
        }
        return handle.Pointer;
    }

}

/// <summary>A native zstd compression context, freed on dispose or finalization.</summary>
internal sealed unsafe class BlockCompressionContext : IDisposable
{
    public ZSTD_CCtx_s* Pointer { get; private set; } = Methods.ZSTD_createCCtx();

    ~BlockCompressionContext() => Free();

    public void Dispose()
    {
        Free();
        GC.SuppressFinalize(this);
    }

    private void Free()
    {
        if (Pointer is not null) Methods.ZSTD_freeCCtx(Pointer);
        Pointer = null;
    }
}

/// <summary>A native zstd decompression context, freed on dispose or finalization.</summary>
internal sealed unsafe class BlockDecompressionContext : IDisposable
{
    public ZSTD_DCtx_s* Pointer { get; private set; } = Methods.ZSTD_createDCtx();

    ~BlockDecompressionContext() => Free();

    public void Dispose()
    {
        Free();
        GC.SuppressFinalize(this);
    }

    private void Free()
    {
        if (Pointer is not null) Methods.ZSTD_freeDCtx(Pointer);
        Pointer = null;
    }
}

/// <summary>A digested dictionary for compression at one level, freed on dispose or finalization.</summary>
internal sealed unsafe class CompressionDictionaryHandle : IDisposable
{
    public CompressionDictionaryHandle(byte[] content, int level)
    {
        fixed (byte* dict = content) Pointer = Methods.ZSTD_createCDict(dict, (nuint)content.Length, level);
        if (Pointer is null) throw new InvalidDataException("zstd could not digest the dictionary for compression.");
    }

    public ZSTD_CDict_s* Pointer { get; private set; }

    ~CompressionDictionaryHandle() => Free();

    public void Dispose()
    {
        Free();
        GC.SuppressFinalize(this);
    }

    private void Free()
    {
        if (Pointer is not null) Methods.ZSTD_freeCDict(Pointer);
        Pointer = null;
    }
}

/// <summary>A digested dictionary for decompression, freed on finalization (it lives as long as its <see cref="ZstdDictionary"/>).</summary>
internal sealed unsafe class DecompressionDictionaryHandle
{
    public DecompressionDictionaryHandle(byte[] content)
    {
        fixed (byte* dict = content) Pointer = Methods.ZSTD_createDDict(dict, (nuint)content.Length);
        if (Pointer is null) throw new InvalidDataException("zstd could not digest the dictionary for decompression.");
    }

    public ZSTD_DDict_s* Pointer { get; private set; }

    ~DecompressionDictionaryHandle()
    {
        if (Pointer is not null) Methods.ZSTD_freeDDict(Pointer);
        Pointer = null;
    }
}
