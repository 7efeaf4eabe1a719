using System.Runtime.CompilerServices;
using Compression.Codecs;
using Xunit;
using ZstdSharp.Unsafe;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// A block starts with parameters that depend only on the level, the dictionary and the source length, never on what an
/// earlier call left on the stack. ZstdSharp 0.8.8's public block begin functions read two switches (row match finder,
/// block splitter) from an uninitialised stack local before clearing it, so the same document compressed to different
/// bytes from call to call (the three compress APIs disagreed at level 9 in CI). Each case fills the stack below the
/// call with one byte value, then starts a block and checks the switches zstd applied against zstd's own rules for them.
/// </summary>
public sealed unsafe class ZstdBeginParameterTests
{
    private static readonly byte[] s_fillings = [0x00, 0x01, 0x02, 0x03, 0x55, 0xFF];

    public static TheoryData<bool> WithDictionary() => new() { false, true };

    [Theory]
    [MemberData(nameof(WithDictionary))]
    public void Begin_WhateverTheStackHeld_AppliesZstdsOwnSwitches(bool withDictionary)
    {
        ZstdDictionary? dictionary = withDictionary ? Corpus.Dictionary : null;
        ZSTD_CCtx_s* context = Methods.ZSTD_createCCtx();
        try
        {
            for (int level = ZstdCodec.MinimumLevel; level <= ZstdCodec.MaximumLevel; level++)
            {
                foreach (ulong length in new ulong[] { 100, 4_000, 65_536, 131_072 })
                {
                    foreach (byte filling in s_fillings)
                    {
                        nuint result = BeginOnFilledStack(context, dictionary, level, length, filling);
                        Assert.False(Methods.ZSTD_isError(result), Methods.ZSTD_getErrorName(result));
                        ZSTD_CCtx_params_s* applied = &context->appliedParams;
                        string because = $"level {level}, {length} B, dictionary {withDictionary}, stack filled with 0x{filling:X2}";
                        Assert.True(ExpectedRowMatchFinder(applied->cParams) == applied->useRowMatchFinder,
                            $"{because}: row match finder {applied->useRowMatchFinder}, zstd's rule gives {ExpectedRowMatchFinder(applied->cParams)}");
                        Assert.True(ExpectedBlockSplitter(applied->cParams) == applied->postBlockSplitter,
                            $"{because}: block splitter {applied->postBlockSplitter}, zstd's rule gives {ExpectedBlockSplitter(applied->cParams)}");
                    }
                }
            }
        }
        finally
        {
            Methods.ZSTD_freeCCtx(context);
        }
    }

    /// <summary>zstd's ZSTD_resolveRowMatchFinderMode for "auto": greedy to lazy2 with a window over 16 KiB.</summary>
    private static ZSTD_paramSwitch_e ExpectedRowMatchFinder(ZSTD_compressionParameters p) =>
        p.strategy is >= ZSTD_strategy.ZSTD_greedy and <= ZSTD_strategy.ZSTD_lazy2 && p.windowLog > 14
            ? ZSTD_paramSwitch_e.ZSTD_ps_enable : ZSTD_paramSwitch_e.ZSTD_ps_disable;

    /// <summary>zstd's ZSTD_resolveBlockSplitterMode for "auto": btopt and stronger with a window of 128 KiB or more.</summary>
    private static ZSTD_paramSwitch_e ExpectedBlockSplitter(ZSTD_compressionParameters p) =>
        p.strategy >= ZSTD_strategy.ZSTD_btopt && p.windowLog >= 17 ? ZSTD_paramSwitch_e.ZSTD_ps_enable : ZSTD_paramSwitch_e.ZSTD_ps_disable;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static nuint BeginOnFilledStack(ZSTD_CCtx_s* context, ZstdDictionary? dictionary, int level, ulong length, byte filling)
    {
        FillStack(filling);
        return ZstdBlockCodec.Begin(context, dictionary is null ? null : dictionary.BlockContexts.GetCompressionDictionary(level), level, length);
    }

    /// <summary>Writes <paramref name="filling"/> over the stack the next calls from the caller's frame will use.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int FillStack(byte filling)
    {
        Span<byte> stack = stackalloc byte[64 * 1024];
        stack.Fill(filling);
        return stack[stack.Length / 2];
    }
}
