using System.Buffers.Binary;
using Compression.Internal;

namespace Compression.Structure;

/// <summary>The three streams of a packed document: what each part of a value is written to (docs/structure.md).</summary>
internal static class PackedStream
{
    /// <summary>Tags, shape ids, array lengths, inline key counts, binary subtypes and raw BSON types: the structure.</summary>
    public const int Structure = 0;

    /// <summary>Integers, mantissas, doubles, and the lengths of strings, keys, number texts, binaries and raw values.</summary>
    public const int Numbers = 1;

    /// <summary>The bytes of strings, inline keys, number texts, object ids, binaries and raw values.</summary>
    public const int Data = 2;
}

/// <summary>
/// Writes the packed stream of a parsed document (<see cref="PackScratch"/> nodes with their shapes resolved): the root
/// object's shape reference and members, every other value as its tag and payload (docs/structure.md, "Packed stream").
/// Interleaved, everything goes to one stream in document order; with <see cref="ShapeTableFlags.SeparateStreams"/>, to
/// three (<see cref="PackedStream"/>), written one after the other behind their lengths. Stops with false as soon as the
/// destination is full: a packed form no smaller than the document is not wanted.
/// </summary>
internal ref struct PackedEmitter
{
    private readonly ReadOnlySpan<byte> _document;
    private readonly PackScratch _scratch;
    private readonly bool _separate;
    private readonly Span<byte> _s0, _s1, _s2;
    private int _at0, _at1, _at2;
    private int _node;
    private bool _full;

    private PackedEmitter(ReadOnlySpan<byte> document, PackScratch scratch, Span<byte> destination, Span<byte> numbers, Span<byte> data, bool separate)
    {
        _document = document;
        _scratch = scratch;
        _separate = separate;
        _s0 = destination;
        _s1 = numbers;
        _s2 = data;
    }

    /// <summary>
    /// Emits into <paramref name="destination"/>. With separate streams, <paramref name="scratch2"/> must hold three
    /// regions as long as the destination, where the three streams are written before they are assembled.
    /// </summary>
    public static bool TryEmit(ReadOnlySpan<byte> document, PackScratch scratch, Span<byte> destination, Span<byte> scratch2, bool separate, out int written)
    {
        written = 0;
        if (!separate)
        {
            var interleaved = new PackedEmitter(document, scratch, destination, default, default, separate: false);
            interleaved.ObjectBody(interleaved._node++);
            if (interleaved._full) return false;
            written = interleaved._at0;
            return true;
        }

        int region = destination.Length;
        Span<byte> structure = scratch2.Slice(0, region);
        var emitter = new PackedEmitter(document, scratch, structure, scratch2.Slice(region, region), scratch2.Slice(2 * region, region), separate: true);
        emitter.ObjectBody(emitter._node++);
        if (emitter._full) return false;
        int header = Internal.Varint.GetLength((uint)emitter._at0) + Internal.Varint.GetLength((uint)emitter._at1);
        int total = header + emitter._at0 + emitter._at1 + emitter._at2;
        if (total > destination.Length) return false;
        int at = Internal.Varint.Write(destination, (uint)emitter._at0);
        at += Internal.Varint.Write(destination[at..], (uint)emitter._at1);
        structure[..emitter._at0].CopyTo(destination[at..]);
        at += emitter._at0;
        emitter._s1[..emitter._at1].CopyTo(destination[at..]);
        at += emitter._at1;
        emitter._s2[..emitter._at2].CopyTo(destination[at..]);
        written = total;
        return true;
    }

    private void ObjectBody(int index)
    {
        ref PackedNode node = ref _scratch.Nodes[index];
        ulong id = (ulong)node.Value;
        int count = node.Length;
        int firstKey = node.Start;
        Varint(PackedStream.Structure, id);
        if (id == 0)
        {
            Varint(PackedStream.Structure, (ulong)count);
            for (int m = 0; m < count && !_full; m++)
            {
                KeySpan key = _scratch.Keys[firstKey + m];
                Varint(PackedStream.Numbers, (ulong)key.Length);
                Bytes(PackedStream.Data, _document.Slice(key.Start, key.Length));
                Value();
            }
        }
        else
        {
            for (int m = 0; m < count && !_full; m++) Value();
        }
    }

    private void Value()
    {
        int index = _node++;
        PackedNode node = _scratch.Nodes[index];
        Byte(PackedStream.Structure, node.Tag);
        switch (node.Tag)
        {
            case PackedTag.Null or PackedTag.False or PackedTag.True:
                break;
            case PackedTag.Object:
                ObjectBody(index);
                break;
            case PackedTag.Array:
                Varint(PackedStream.Structure, (ulong)node.Length);
                for (int i = 0; i < node.Length && !_full; i++) Value();
                break;
            case PackedTag.String or PackedTag.NumberText:
                Varint(PackedStream.Numbers, (ulong)node.Length);
                Bytes(PackedStream.Data, _document.Slice(node.Start, node.Length));
                break;
            case PackedTag.Integer or PackedTag.Int64 or PackedTag.DateTime:
                Varint(PackedStream.Numbers, Varint64.ZigZag(node.Value));
                break;
            case PackedTag.Double:
                Span<byte> bits = stackalloc byte[8];
                BinaryPrimitives.WriteInt64LittleEndian(bits, node.Value);
                Bytes(PackedStream.Numbers, bits);
                break;
            case PackedTag.ObjectId:
                Bytes(PackedStream.Data, _document.Slice(node.Start, 12));
                break;
            case PackedTag.Binary:
                Byte(PackedStream.Structure, node.Extra);
                Varint(PackedStream.Numbers, (ulong)node.Length);
                Bytes(PackedStream.Data, _document.Slice(node.Start, node.Length));
                break;
            case PackedTag.BsonRaw:
                Byte(PackedStream.Structure, node.Extra);
                Varint(PackedStream.Numbers, (ulong)node.Length);
                Bytes(PackedStream.Data, _document.Slice(node.Start, node.Length));
                break;
            default: // decimals
                Varint(PackedStream.Numbers, Varint64.ZigZag(node.Value));
                break;
        }
    }

    private Span<byte> Free(int stream)
    {
        if (!_separate) return _s0[_at0..];
        return stream switch
        {
            PackedStream.Structure => _s0[_at0..],
            PackedStream.Numbers => _s1[_at1..],
            _ => _s2[_at2..],
        };
    }

    private void Advance(int stream, int count)
    {
        if (!_separate || stream == PackedStream.Structure) _at0 += count;
        else if (stream == PackedStream.Numbers) _at1 += count;
        else _at2 += count;
    }

    private void Byte(int stream, byte value)
    {
        if (_full) return;
        Span<byte> free = Free(stream);
        if (free.IsEmpty) { _full = true; return; }
        free[0] = value;
        Advance(stream, 1);
    }

    private void Varint(int stream, ulong value)
    {
        if (_full) return;
        if (Varint64.TryWrite(Free(stream), value, out int written)) Advance(stream, written);
        else _full = true;
    }

    private void Bytes(int stream, scoped ReadOnlySpan<byte> bytes)
    {
        if (_full) return;
        Span<byte> free = Free(stream);
        if (free.Length < bytes.Length) { _full = true; return; }
        bytes.CopyTo(free);
        Advance(stream, bytes.Length);
    }
}
