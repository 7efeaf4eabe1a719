using System.Runtime.CompilerServices;

namespace Compression.Structure;

/// <summary>
/// Packs compact JSON text in one pass, straight into the packed stream: no node list and no second walk. The stream is
/// the one <see cref="JsonText"/>, <see cref="PackScratch.ResolveShapes"/> and <see cref="PackedEmitter"/> write together,
/// byte for byte. What it does not know before an object's or array's end (the shape id, the element count) gets a
/// slot of <see cref="Slot"/> bytes in front of the members; once known it is written at the slot's start and the
/// members move back over the bytes it did not need. It gives up (false) on whatever that path would write otherwise:
/// an object whose keys are not a shape of the table (written with its keys inline there), an array of
/// <see cref="MaxSlotValue"/> elements or more, and any input <see cref="JsonText"/> refuses; the caller then takes the
/// two-pass path, which decides.
/// </summary>
internal ref struct JsonPacker
{
    /// <summary>The bytes reserved for a shape id or an element count: a varint of up to 21 bits.</summary>
    private const int Slot = 3;

    /// <summary>The first value a slot cannot hold.</summary>
    private const ulong MaxSlotValue = 1UL << 21;

    private readonly ReadOnlySpan<byte> _source;
    private readonly Span<byte> _destination;
    private readonly ShapeTable _table;
    private readonly PackScratch _scratch;
    private int _in;
    private int _out;

    private JsonPacker(ReadOnlySpan<byte> source, Span<byte> destination, ShapeTable table, PackScratch scratch)
    {
        _source = source;
        _destination = destination;
        _table = table;
        _scratch = scratch;
    }

    /// <summary>
    /// Packs <paramref name="source"/> into <paramref name="destination"/> with <paramref name="table"/>'s shapes; false
    /// when this path does not apply (see the type) or the stream does not fit. <paramref name="scratch"/> holds the keys
    /// of the objects still open.
    /// </summary>
    public static bool TryPack(ReadOnlySpan<byte> source, Span<byte> destination, ShapeTable table, PackScratch scratch, out int written)
    {
        written = 0;
        if (source.IsEmpty || source[0] != (byte)'{') return false;
        var packer = new JsonPacker(source, destination, table, scratch);
        if (!packer.TryObjectBody(1) || packer._in != source.Length) return false;
        written = packer._out;
        return true;
    }

    /// <summary>At a '{': the shape id, then each member's value.</summary>
    private bool TryObjectBody(int depth)
    {
        if (depth > PackScratch.MaxDepth || !Room(Slot)) return false;
        int slot = _out;
        _out += Slot;
        int keyBase = _scratch.PendingCount;
        ulong hash = _table.HashStart;
        ReadOnlySpan<byte> source = _source;
        _in++; // '{'
        if (_in < source.Length && source[_in] == (byte)'}')
        {
            _in++;
        }
        else
        {
            while (true)
            {
                if (_in >= source.Length || source[_in] != (byte)'"' || !JsonText.TryScanString(source, _in, out KeySpan key, out _in)) return false;
                _scratch.PushKey(key);
                hash = _table.HashKey(hash, source.Slice(key.Start, key.Length));
                if (_in >= source.Length || source[_in] != (byte)':') return false;
                _in++;
                if (!TryValue(depth)) return false;
                if (_in >= source.Length) return false;
                byte next = source[_in++];
                if (next == (byte)'}') break;
                if (next != (byte)',') return false;
            }
        }
        int id = _table.Find(source, _scratch.Pending.AsSpan(keyBase, _scratch.PendingCount - keyBase), hash);
        _scratch.PendingCount = keyBase;
        return id != 0 && CloseSlot(slot, (ulong)id);
    }

    /// <summary>At a '[': the element count, then the elements.</summary>
    private bool TryArray(int depth)
    {
        if (depth > PackScratch.MaxDepth || !Room(1 + Slot)) return false;
        _destination[_out++] = PackedTag.Array;
        int slot = _out;
        _out += Slot;
        ReadOnlySpan<byte> source = _source;
        _in++; // '['
        ulong count = 0;
        if (_in < source.Length && source[_in] == (byte)']')
        {
            _in++;
        }
        else
        {
            while (true)
            {
                if (!TryValue(depth)) return false;
                count++;
                if (_in >= source.Length) return false;
                byte next = source[_in++];
                if (next == (byte)']') break;
                if (next != (byte)',') return false;
            }
        }
        return count < MaxSlotValue && CloseSlot(slot, count);
    }

    /// <summary>Writes <paramref name="value"/> as a varint at <paramref name="slot"/> and moves what follows the slot back over its unused bytes.</summary>
    private bool CloseSlot(int slot, ulong value)
    {
        if (value >= MaxSlotValue) return false;
        int length = Varint64.GetLength(value);
        if (length < Slot)
        {
            int members = slot + Slot;
            _destination[members.._out].CopyTo(_destination[(slot + length)..]);
            _out -= Slot - length;
        }
        Varint64.TryWrite(_destination[slot..], value, out _);
        return true;
    }

    private bool TryValue(int depth)
    {
        ReadOnlySpan<byte> source = _source;
        if (_in >= source.Length) return false;
        switch (source[_in])
        {
            case (byte)'{':
                if (!Room(1)) return false;
                _destination[_out++] = PackedTag.Object;
                return TryObjectBody(depth + 1);
            case (byte)'[':
                return TryArray(depth + 1);
            case (byte)'"':
                return JsonText.TryScanString(source, _in, out KeySpan text, out _in) && TryString(source.Slice(text.Start, text.Length));
            case (byte)'t':
                return TryLiteral("true"u8, PackedTag.True);
            case (byte)'f':
                return TryLiteral("false"u8, PackedTag.False);
            case (byte)'n':
                return TryLiteral("null"u8, PackedTag.Null);
            default:
                return TryNumber();
        }
    }

    private bool TryString(ReadOnlySpan<byte> text)
    {
        if (text.Length <= PackedTag.MaxShortString)
        {
            if (!Room(1 + text.Length)) return false;
            _destination[_out++] = (byte)(PackedTag.ShortString + text.Length);
        }
        else
        {
            if (!Room(1 + Varint64.GetLength((ulong)text.Length) + text.Length)) return false;
            _destination[_out++] = PackedTag.String;
            Varint64.TryWrite(_destination[_out..], (ulong)text.Length, out int n);
            _out += n;
        }
        ShortCopy.To(text, _destination[_out..]);
        _out += text.Length;
        return true;
    }

    private bool TryLiteral(ReadOnlySpan<byte> literal, byte tag)
    {
        if (!_source[_in..].StartsWith(literal) || !Room(1)) return false;
        _in += literal.Length;
        _destination[_out++] = tag;
        return true;
    }

    private bool TryNumber()
    {
        int start = _in;
        byte tag = JsonText.ScanNumber(_source, start, out int end, out long value);
        if (end == start) return false;
        _in = end;
        if (tag == PackedTag.NumberText)
        {
            int length = end - start;
            if (!Room(1 + Varint64.GetLength((ulong)length) + length)) return false;
            _destination[_out++] = tag;
            Varint64.TryWrite(_destination[_out..], (ulong)length, out int n);
            _out += n;
            ShortCopy.To(_source[start..end], _destination[_out..]);
            _out += length;
            return true;
        }
        ulong zigzag = Varint64.ZigZag(value);
        if (zigzag < 0x80)
        {
            if (!Room(2)) return false;
            _destination[_out++] = tag;
            _destination[_out++] = (byte)zigzag;
            return true;
        }
        if (!Room(1 + Varint64.GetLength(zigzag))) return false;
        _destination[_out++] = tag;
        Varint64.TryWrite(_destination[_out..], zigzag, out int written);
        _out += written;
        return true;
    }

    /// <summary>Whether <paramref name="bytes"/> more fit (a packed stream longer than the destination is not wanted).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private readonly bool Room(int bytes) => _destination.Length - _out >= bytes;
}
