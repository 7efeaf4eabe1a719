using System.Buffers.Binary;
using System.Text;
using Compression.Testing.Couchbase;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>Sub-document request bodies and lookup replies, framed as SDK 3.9.5 frames them (MultiLookup, MultiMutation).</summary>
internal static class SubdocFrames
{
    public static byte[] Key(string key) => [.. KvProtocol.EncodeCollectionId(0), .. Encoding.UTF8.GetBytes(key)];

    public static byte[] Lookups(params (byte Opcode, byte Flags, string Path)[] specs)
    {
        using var body = new MemoryStream();
        foreach ((byte opcode, byte flags, string path) in specs)
        {
            byte[] p = Encoding.UTF8.GetBytes(path);
            body.Write([opcode, flags, (byte)(p.Length >> 8), (byte)p.Length]);
            body.Write(p);
        }

        return body.ToArray();
    }

    public static byte[] Mutations(params (byte Opcode, byte Flags, string Path, string Value)[] specs)
    {
        using var body = new MemoryStream();
        foreach ((byte opcode, byte flags, string path, string value) in specs)
        {
            byte[] p = Encoding.UTF8.GetBytes(path);
            byte[] v = Encoding.UTF8.GetBytes(value);
            var head = new byte[8];
            head[0] = opcode;
            head[1] = flags;
            BinaryPrimitives.WriteUInt16BigEndian(head.AsSpan(2), (ushort)p.Length);
            BinaryPrimitives.WriteUInt32BigEndian(head.AsSpan(4), (uint)v.Length);
            body.Write(head);
            body.Write(p);
            body.Write(v);
        }

        return body.ToArray();
    }

    public static List<(ushort Status, string Value)> LookupResults(byte[] value)
    {
        var results = new List<(ushort, string)>();
        for (int i = 0; i < value.Length;)
        {
            ushort status = BinaryPrimitives.ReadUInt16BigEndian(value.AsSpan(i));
            int length = (int)BinaryPrimitives.ReadUInt32BigEndian(value.AsSpan(i + 2));
            results.Add((status, Encoding.UTF8.GetString(value, i + 6, length)));
            i += 6 + length;
        }

        return results;
    }
}
