using System.Buffers.Binary;
using System.Runtime.Intrinsics.X86;

namespace Compression.Testing.Mongo.Internal;

/// <summary>CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the OP_MSG checksum. System.IO.Hashing has only
/// the IEEE CRC-32, so it is computed here: SSE4.2 when the CPU has it, a table otherwise.</summary>
internal static class Crc32C
{
    private const uint Polynomial = 0x82F63B78u;
    private static readonly uint[] Table = CreateTable();

    public static uint Compute(ReadOnlySpan<byte> data)
    {
        uint crc = 0xFFFFFFFFu;
        if (Sse42.X64.IsSupported)
        {
            ulong crc64 = crc;
            while (data.Length >= 8)
            {
                crc64 = Sse42.X64.Crc32(crc64, BinaryPrimitives.ReadUInt64LittleEndian(data));
                data = data[8..];
            }

            crc = (uint)crc64;
            foreach (byte b in data)
            {
                crc = Sse42.Crc32(crc, b);
            }
        }
        else
        {
            foreach (byte b in data)
            {
                crc = Table[(crc ^ b) & 0xFF] ^ (crc >> 8);
            }
        }

        return ~crc;
    }

    internal static uint ComputeWithTable(ReadOnlySpan<byte> data)
    {
        uint crc = 0xFFFFFFFFu;
        foreach (byte b in data)
        {
            crc = Table[(crc ^ b) & 0xFF] ^ (crc >> 8);
        }

        return ~crc;
    }

    private static uint[] CreateTable()
    {
        var table = new uint[256];
        for (uint i = 0; i < 256; i++)
        {
            uint c = i;
            for (int k = 0; k < 8; k++)
            {
                c = (c & 1) != 0 ? (c >> 1) ^ Polynomial : c >> 1;
            }

            table[i] = c;
        }

        return table;
    }
}
