using System.Buffers.Binary;
using System.Text;

namespace Compression.Testing.Mongo;

/// <summary>BSON nested deeper than any reader should recurse, built without recursion (hostile-input tests).</summary>
public static class DeepBson
{
    /// <summary>
    /// The elements of a compressed part: <c>payload</c>, a document at level 1 holding <paramref name="childName"/> at
    /// level 2, and so on down to an empty document at level <paramref name="levels"/>. Built without recursion. With an
    /// empty <paramref name="childName"/> each level takes 7 bytes, the least BSON allows.
    /// </summary>
    public static byte[] PayloadElement(int levels, byte type = 0x03, string childName = "a")
    {
        byte[] name = Encoding.ASCII.GetBytes("payload");
        byte[] child = Encoding.ASCII.GetBytes(childName);
        int step = 7 + child.Length;
        int documentLength = 5 + step * (levels - 1);
        byte[] element = new byte[1 + name.Length + 1 + documentLength];
        element[0] = 0x03;
        name.CopyTo(element, 1);
        int at = 1 + name.Length + 1;
        for (int level = 1; level < levels; level++)
        {
            int length = documentLength - step * (level - 1);
            BinaryPrimitives.WriteInt32LittleEndian(element.AsSpan(at), length);
            element[at + 4] = level == 1 ? (byte)0x03 : type; // documents, or arrays below the first level
            child.CopyTo(element, at + 5);
            element[at + 5 + child.Length] = 0;
            element[at + length - 1] = 0;
            at += 6 + child.Length;
        }
        BinaryPrimitives.WriteInt32LittleEndian(element.AsSpan(at), 5);
        return element;
    }
}
