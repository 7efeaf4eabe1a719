using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace Compression.Structure;

/// <summary>
/// Writes the packed stream of a parsed document (<see cref="PackScratch"/> nodes with their shapes resolved): the root
/// object's shape reference and members, every other value as its tag and payload, in document order
/// (docs/structure.md, "Packed stream"). Stops with false as soon as the destination is full: a packed form no smaller
/// than the document is not wanted.
/// </summary>
internal ref struct PackedEmitter
{
    private readonly ReadOnlySpan<byte> _document;
    private readonly PackScratch _scratch;
    private readonly Span<byte> _destination;
    private int _at;
    private int _node;
    private bool _full;

    private PackedEmitter(ReadOnlySpan<byte> document, PackScratch scratch, Span<byte> destination)
    {
        _document = document;
        _scratch = scratch;
        _destination = destination;
    }

    public static bool TryEmit(ReadOnlySpan<byte> document, PackScratch scratch, Span<byte> destination, out int written)
    {
        var emitter = new PackedEmitter(document, scratch, destination);
        emitter.ObjectBody(emitter._node++);
        written = emitter._full ? 0 : emitter._at;
        return !emitter._full;
    }

    private void ObjectBody(int index)
    {
        PackedNode node = _scratch.Nodes[index];
        ulong id = (ulong)node.Value;
        Varint(id);
        if (id == 0)
        {
            Varint((ulong)node.Length);
            for (int m = 0; m < node.Length && !_full; m++)
            {
                KeySpan key = _scratch.Keys[node.Start + m];
                Varint((ulong)key.Length);
                Bytes(_document.Slice(key.Start, key.Length));
                Value();
            }
        }
        else
        {
            for (int m = 0; m < node.Length && !_full; m++) Value();
        }
    }

    private void Value()
    {
        int index = _node++;
        PackedNode node = _scratch.Nodes[index];
        if (node.Tag == PackedTag.String && node.Length <= PackedTag.MaxShortString)
        {
            Byte((byte)(PackedTag.ShortString + node.Length));
            Bytes(_document.Slice(node.Start, node.Length));
            return;
        }
        Byte(node.Tag);
        switch (node.Tag)
        {
            case PackedTag.Null or PackedTag.False or PackedTag.True:
                break;
            case PackedTag.Object:
                ObjectBody(index);
                break;
            case PackedTag.Array:
                Varint((ulong)node.Length);
                for (int i = 0; i < node.Length && !_full; i++) Value();
                break;
            case PackedTag.String or PackedTag.NumberText:
                Varint((ulong)node.Length);
                Bytes(_document.Slice(node.Start, node.Length));
                break;
            case PackedTag.Integer or PackedTag.Int64 or PackedTag.DateTime:
                Varint(Varint64.ZigZag(node.Value));
                break;
            case PackedTag.Double:
                if (Room(8)) BinaryPrimitives.WriteInt64LittleEndian(_destination[_at..], node.Value);
                _at += 8;
                break;
            case PackedTag.ObjectId:
                Bytes(_document.Slice(node.Start, 12));
                break;
            case PackedTag.Binary:
                Varint((ulong)node.Length);
                Byte(node.Extra);
                Bytes(_document.Slice(node.Start, node.Length));
                break;
            case PackedTag.BsonRaw:
                Byte(node.Extra);
                Varint((ulong)node.Length);
                Bytes(_document.Slice(node.Start, node.Length));
                break;
            default: // decimals
                Varint(Varint64.ZigZag(node.Value));
                break;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool Room(int bytes)
    {
        if (!_full && _destination.Length - _at >= bytes) return true;
        _full = true;
        return false;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Byte(byte value)
    {
        if (Room(1)) _destination[_at++] = value;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Varint(ulong value)
    {
        if (value < 0x80)
        {
            Byte((byte)value);
            return;
        }
        if (_full) return;
        if (Varint64.TryWrite(_destination[_at..], value, out int written)) _at += written;
        else _full = true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Bytes(ReadOnlySpan<byte> bytes)
    {
        if (!Room(bytes.Length)) return;
        ShortCopy.To(bytes, _destination[_at..]);
        _at += bytes.Length;
    }
}
