using System.Runtime.InteropServices;

namespace Compression.Benchmarks;

/// <summary>The system's native libzstd (Debian's libzstd1), for the managed/native comparison.</summary>
internal static unsafe partial class NativeZstd
{
    private const string Library = "libzstd.so.1";

    // Parameter ids from zstd.h (stable or, for the format, experimental but fixed since 1.4).
    public const int CompressionLevel = 100, ContentSizeFlag = 200, ChecksumFlag = 201, DictIdFlag = 202, Format = 10;
    public const int DecompressFormat = 1000, Magicless = 1;

    [LibraryImport(Library, EntryPoint = "ZSTD_createCCtx")] public static partial nint CreateCCtx();
    [LibraryImport(Library, EntryPoint = "ZSTD_freeCCtx")] public static partial nuint FreeCCtx(nint cctx);
    [LibraryImport(Library, EntryPoint = "ZSTD_CCtx_setParameter")] public static partial nuint CCtxSetParameter(nint cctx, int param, int value);
    [LibraryImport(Library, EntryPoint = "ZSTD_CCtx_loadDictionary")] public static partial nuint CCtxLoadDictionary(nint cctx, byte* dict, nuint size);
    [LibraryImport(Library, EntryPoint = "ZSTD_compress2")] public static partial nuint Compress2(nint cctx, byte* dst, nuint dstCapacity, byte* src, nuint srcSize);
    [LibraryImport(Library, EntryPoint = "ZSTD_createDCtx")] public static partial nint CreateDCtx();
    [LibraryImport(Library, EntryPoint = "ZSTD_freeDCtx")] public static partial nuint FreeDCtx(nint dctx);
    [LibraryImport(Library, EntryPoint = "ZSTD_DCtx_setParameter")] public static partial nuint DCtxSetParameter(nint dctx, int param, int value);
    [LibraryImport(Library, EntryPoint = "ZSTD_DCtx_loadDictionary")] public static partial nuint DCtxLoadDictionary(nint dctx, byte* dict, nuint size);
    [LibraryImport(Library, EntryPoint = "ZSTD_decompressDCtx")] public static partial nuint DecompressDCtx(nint dctx, byte* dst, nuint dstCapacity, byte* src, nuint srcSize);
    [LibraryImport(Library, EntryPoint = "ZSTD_isError")] public static partial uint IsError(nuint code);
    [LibraryImport(Library, EntryPoint = "ZSTD_versionNumber")] public static partial uint VersionNumber();

    public static nuint Check(nuint code) => IsError(code) != 0 ? throw new InvalidOperationException($"libzstd error {(long)code}") : code;

    /// <summary>A compression context configured like the library's: lean magicless frames, optional dictionary.</summary>
    public static nint CreateCompressor(int level, ReadOnlySpan<byte> dictionary)
    {
        nint cctx = CreateCCtx();
        Check(CCtxSetParameter(cctx, CompressionLevel, level));
        Check(CCtxSetParameter(cctx, ContentSizeFlag, 0));
        Check(CCtxSetParameter(cctx, ChecksumFlag, 0));
        Check(CCtxSetParameter(cctx, DictIdFlag, 0));
        Check(CCtxSetParameter(cctx, Format, Magicless));
        if (!dictionary.IsEmpty)
        {
            fixed (byte* d = dictionary) Check(CCtxLoadDictionary(cctx, d, (nuint)dictionary.Length));
        }
        return cctx;
    }

    public static nint CreateDecompressor(ReadOnlySpan<byte> dictionary)
    {
        nint dctx = CreateDCtx();
        Check(DCtxSetParameter(dctx, DecompressFormat, Magicless));
        if (!dictionary.IsEmpty)
        {
            fixed (byte* d = dictionary) Check(DCtxLoadDictionary(dctx, d, (nuint)dictionary.Length));
        }
        return dctx;
    }
}
