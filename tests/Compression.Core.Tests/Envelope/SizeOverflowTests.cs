using System.Buffers;
using Compression.Internal;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>Size arithmetic that must not overflow (GetMaxEnvelopeLength, the header reader's limit).</summary>
public sealed class SizeOverflowTests
{
    [Fact]
    public void GetMaxEnvelopeLength_NearIntMaxValue_ThrowsInsteadOfGoingNegative()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentCompressor.GetMaxEnvelopeLength(int.MaxValue - 10));
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentCompressor.GetMaxEnvelopeLength(int.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentCompressor.GetMaxEnvelopeLength(int.MaxValue - 15));
    }

    [Fact]
    public void GetMaxEnvelopeLength_AtTheLargestSourceLength_IsIntMaxValue()
    {
        Assert.Equal(int.MaxValue, DocumentCompressor.GetMaxEnvelopeLength(int.MaxValue - 16));
        // Where the length varint grows from 4 to 5 bytes.
        Assert.Equal(2 + 4 + 5 + ((1 << 28) - 1) + 4, DocumentCompressor.GetMaxEnvelopeLength((1 << 28) - 1));
        Assert.Equal(2 + 5 + 5 + (1 << 28) + 4, DocumentCompressor.GetMaxEnvelopeLength(1 << 28));
    }

    [Fact]
    public void MaxSourceLength_IsIntMaxValueLessTheLargestEnvelopeOverhead()
    {
        Assert.Equal(int.MaxValue - 16, DocumentCompressor.MaxSourceLength);
        Assert.Equal(int.MaxValue, DocumentCompressor.GetMaxEnvelopeLength(DocumentCompressor.MaxSourceLength));
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentCompressor.GetMaxEnvelopeLength(DocumentCompressor.MaxSourceLength + 1));
    }

    [Fact]
    public void TryReadHeader_NegativeLimit_ThrowsArgumentOutOfRange()
    {
        // A negative limit used to become 4 GiB once cast to uint: a declared 3,000,000,000 bytes then passed as a negative int.
        byte[] envelope = [DocumentEnvelope.Magic, (byte)CompressionCodec.Zstd, 0x80, 0xBC, 0xC1, 0x96, 0x0B, 1, 2, 3];
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentEnvelope.TryReadHeader(envelope, out _, maxUncompressedLength: -1));
        Assert.Throws<InvalidDataException>(() => DocumentEnvelope.TryReadHeader(envelope, out _, maxUncompressedLength: int.MaxValue));
    }

    [Fact]
    public void Decompress_SnappyLiteralLengthNear4GiB_ThrowsInvalidData()
    {
        // A literal whose 4-byte length is 0xFFFFFFFF, under an envelope declaring 300,000 bytes: walking the elements
        // must not overflow into an index out of range.
        const int declared = 300_000;
        var payload = new List<byte>();
        var varint = new byte[5];
        payload.AddRange(varint[..Varint.Write(varint, declared)]);
        payload.AddRange([0xFC, 0xFF, 0xFF, 0xFF, 0xFF]); // literal, length in the next 4 bytes
        payload.AddRange(new byte[20_000]);
        byte[] envelope = Forge(payload.ToArray());
        Assert.Throws<InvalidDataException>(() => new DocumentCompressor().Decompress(envelope));
        Assert.Throws<InvalidDataException>(() => new DocumentCompressor().Decompress(envelope, new ArrayBufferWriter<byte>()));
    }

    private static byte[] Forge(byte[] snappyPayload)
    {
        var envelope = new List<byte> { DocumentEnvelope.Magic, (byte)CompressionCodec.Snappy };
        var varint = new byte[Varint.MaxLength32];
        envelope.AddRange(varint[..Varint.Write(varint, 300_000)]);
        envelope.AddRange(snappyPayload);
        return [.. envelope];
    }
}
