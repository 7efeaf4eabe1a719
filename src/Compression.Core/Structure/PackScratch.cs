using System.Runtime.CompilerServices;

namespace Compression.Structure;

/// <summary>
/// One value of a parsed document, in pre-order (a container comes before its members). What the fields hold depends
/// on <see cref="Tag"/>: a span of the document (strings, number text, raw BSON values, binary data, object ids), a
/// number (<see cref="Value"/>), or for an object the range of its keys in <see cref="PackScratch.Keys"/> and its
/// shape id once resolved.
/// </summary>
internal struct PackedNode
{
    public byte Tag;
    public byte Extra;   // BSON: the raw value's type, or a binary's subtype
    public int Start;    // span start; for an object: its first key in PackScratch.Keys
    public int Length;   // span length; for an object: its key count; for an array: its element count
    public long Value;   // integers, mantissas, double bits; for an object: its shape id (0: keys inline)
}

/// <summary>Per-thread buffers for packing, grown as needed and reused (no allocation per document once warm).</summary>
internal sealed class PackScratch
{
    public const int MaxDepth = 128;


    [ThreadStatic] private static PackScratch? t_instance;

    public PackedNode[] Nodes = new PackedNode[64];
    public int NodeCount;
    public KeySpan[] Keys = new KeySpan[64];     // every object's keys, contiguous per object
    public int KeyCount;
    public KeySpan[] Pending = new KeySpan[64];  // keys of the objects still open (a stack)
    public int PendingCount;

    public static PackScratch Rent()
    {
        PackScratch scratch = t_instance ?? new PackScratch();
        t_instance = null;
        scratch.Reset();
        return scratch;
    }

    /// <summary>Empties the node, key and pending-key lists (their arrays are kept).</summary>
    public void Reset() => NodeCount = KeyCount = PendingCount = 0;

    public static void Return(PackScratch scratch)
    {
        // Large documents leave large arrays behind: keep only modest ones for the next document.
        if (scratch.Nodes.Length > 1 << 16) scratch.Nodes = new PackedNode[64];
        if (scratch.Keys.Length > 1 << 16) scratch.Keys = new KeySpan[64];
        if (scratch.Pending.Length > 1 << 16) scratch.Pending = new KeySpan[64];
        t_instance = scratch;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int AddNode(byte tag)
    {
        if (NodeCount == Nodes.Length) Array.Resize(ref Nodes, Nodes.Length * 2);
        ref PackedNode node = ref Nodes[NodeCount];
        node = default;
        node.Tag = tag;
        return NodeCount++;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void PushKey(KeySpan key)
    {
        if (PendingCount == Pending.Length) Array.Resize(ref Pending, Pending.Length * 2);
        Pending[PendingCount++] = key;
    }

    /// <summary>Moves the keys pushed since <paramref name="pendingBase"/> to <see cref="Keys"/>; returns where they start.</summary>
    public int CommitKeys(int pendingBase)
    {
        int count = PendingCount - pendingBase;
        while (KeyCount + count > Keys.Length) Array.Resize(ref Keys, Keys.Length * 2);
        int start = KeyCount;
        Array.Copy(Pending, pendingBase, Keys, start, count);
        KeyCount += count;
        PendingCount = pendingBase;
        return start;
    }

    /// <summary>Resolves every object's shape id against <paramref name="table"/> (0 when its key list is not there).</summary>
    public void ResolveShapes(ReadOnlySpan<byte> document, ShapeTable table)
    {
        for (int i = 0; i < NodeCount; i++)
        {
            ref PackedNode node = ref Nodes[i];
            if (node.Tag != PackedTag.Object) continue;
            ReadOnlySpan<KeySpan> keys = Keys.AsSpan(node.Start, node.Length);
            node.Value = table.Find(document, keys, table.Hash(document, keys));
        }
    }
}

/// <summary>
/// Per-thread byte buffers of the packing codec, one slot per use, grown as needed and reused: the packed stream being
/// written or read (<see cref="Slot.Packed"/>), a BSON element list framed as a document (<see cref="Slot.Framed"/>),
/// and the verifying decode's output (<see cref="Slot.Verify"/>). Private to this assembly and never handed out, so
/// nothing of a document reaches other code through them (a shared pool's arrays had to be cleared on every return).
/// A slot is taken and given back: a nested use of the same slot on one thread gets an array of its own.
/// </summary>
internal static class PackBuffers
{
    public enum Slot { Packed, Framed, Verify, Residual, Joined }

    /// <summary>Arrays over this size are not kept for the next document (a packed document is at most 128 KiB + framing).</summary>
    private const int MaxKept = 256 * 1024;

    [ThreadStatic] private static byte[]?[]? t_slots;

    /// <summary>An array of at least <paramref name="length"/> bytes from <paramref name="slot"/>; give it back with <see cref="Return"/>.</summary>
    public static byte[] Rent(Slot slot, int length)
    {
        byte[]?[] slots = t_slots ??= new byte[]?[5];
        byte[]? buffer = slots[(int)slot];
        slots[(int)slot] = null;
        if (buffer is null || buffer.Length < length) buffer = new byte[Math.Max(length, Math.Min(MaxKept, Math.Max(512, (buffer?.Length ?? 0) * 2)))];
        return buffer;
    }

    public static void Return(Slot slot, byte[] buffer)
    {
        if (buffer.Length <= MaxKept) t_slots![(int)slot] = buffer;
    }
}
