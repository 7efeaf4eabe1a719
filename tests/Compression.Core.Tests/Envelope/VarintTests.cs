using Compression.Internal;
using Xunit;

namespace Compression.Core.Tests.Envelope;

public sealed class VarintTests
{
    [Theory]
    [InlineData(0u, new byte[] { 0x00 })]
    [InlineData(1u, new byte[] { 0x01 })]
    [InlineData(127u, new byte[] { 0x7F })]
    [InlineData(128u, new byte[] { 0x80, 0x01 })]
    [InlineData(300u, new byte[] { 0xAC, 0x02 })]
    [InlineData(16_383u, new byte[] { 0xFF, 0x7F })]
    [InlineData(16_384u, new byte[] { 0x80, 0x80, 0x01 })]
    [InlineData(2_097_151u, new byte[] { 0xFF, 0xFF, 0x7F })]
    [InlineData(2_097_152u, new byte[] { 0x80, 0x80, 0x80, 0x01 })]
    [InlineData(268_435_455u, new byte[] { 0xFF, 0xFF, 0xFF, 0x7F })]
    [InlineData(268_435_456u, new byte[] { 0x80, 0x80, 0x80, 0x80, 0x01 })]
    [InlineData(67_108_864u, new byte[] { 0x80, 0x80, 0x80, 0x20 })]
    [InlineData(int.MaxValue, new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x07 })]
    [InlineData(uint.MaxValue, new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x0F })]
    public void Write_KnownValues_ProduceTheLeb128Bytes(uint value, byte[] expected)
    {
        var buffer = new byte[Varint.MaxLength32];
        int written = Varint.Write(buffer, value);
        Assert.Equal(expected, buffer[..written]);
        Assert.Equal(expected.Length, Varint.GetLength(value));
        Assert.True(Varint.TryRead([.. expected, 0xAA, 0xBB], out uint read, out int consumed)); // bytes after it are not read
        Assert.Equal(value, read);
        Assert.Equal(expected.Length, consumed);
    }

    [Fact]
    public void TryRead_RandomAndBoundaryValues_RoundTrip()
    {
        var random = new Random(42);
        var values = new List<uint>();
        for (int shift = 0; shift < 32; shift++)
        {
            uint p = 1u << shift;
            values.AddRange([p - 1, p, p + 1]);
        }
        for (int i = 0; i < 100_000; i++) values.Add((uint)random.NextInt64(0, 1L << 32) >> random.Next(32));
        var buffer = new byte[Varint.MaxLength32];
        foreach (uint value in values)
        {
            int written = Varint.Write(buffer, value);
            Assert.Equal(Varint.GetLength(value), written);
            Assert.True(Varint.TryRead(buffer.AsSpan(0, written), out uint read, out int consumed));
            Assert.Equal(value, read);
            Assert.Equal(written, consumed);
            for (int cut = 0; cut < written; cut++) Assert.False(Varint.TryRead(buffer.AsSpan(0, cut), out _, out _));
        }
    }

    [Theory]
    [InlineData(new byte[] { })]                                    // empty
    [InlineData(new byte[] { 0x80 })]                               // truncated
    [InlineData(new byte[] { 0xFF, 0xFF })]                         // truncated
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80 })]             // truncated at 4 bytes
    public void TryRead_Truncated_ReturnsFalse(byte[] encoded) => Assert.False(Varint.TryRead(encoded, out _, out _));

    [Theory]
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x10 })]       // 2^32: overflows 32 bits
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x1F })]       // overflows 32 bits
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80, 0x70 })]       // high bits of the fifth byte
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 })] // longer than 5 bytes
    [InlineData(new byte[] { 0x81, 0x80, 0x80, 0x80, 0x80, 0x00 })] // longer than 5 bytes, ending in zero
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x8F, 0x00 })] // continuation bit on the fifth byte
    public void TryRead_OverlongOrOverflowing_ReturnsFalse(byte[] encoded) => Assert.False(Varint.TryRead(encoded, out _, out _));

    [Theory]
    [InlineData(new byte[] { 0x80, 0x00 })]                         // 0 in two bytes
    [InlineData(new byte[] { 0x81, 0x00 })]                         // 1 in two bytes
    [InlineData(new byte[] { 0xFF, 0x80, 0x00 })]                   // 127 in three bytes
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80, 0x00 })]       // 0 in five bytes
    public void TryRead_NonMinimal_ReturnsFalse(byte[] encoded) => Assert.False(Varint.TryRead(encoded, out _, out _));

    [Fact]
    public void TryRead_EveryTwoByteEncoding_AcceptsExactlyTheMinimalOnes()
    {
        for (int b0 = 0x80; b0 < 0x100; b0++)
        {
            for (int b1 = 0; b1 < 0x80; b1++)
            {
                bool ok = Varint.TryRead([(byte)b0, (byte)b1], out uint value, out int consumed);
                Assert.Equal(b1 != 0, ok);
                if (ok)
                {
                    Assert.Equal((uint)((b0 & 0x7F) | (b1 << 7)), value);
                    Assert.Equal(2, consumed);
                }
            }
        }
    }
}
