using System.Buffers.Binary;

namespace Compression.Structure;

/// <summary>The input side of an unpacker: a cursor over a packed stream that throws <see cref="InvalidDataException"/> on anything malformed.</summary>
internal ref struct PackedReader
{
    private readonly ReadOnlySpan<byte> _packed;
    private int _at;

    public PackedReader(ReadOnlySpan<byte> packed) => _packed = packed;

    public readonly int Position => _at;

    public readonly int Remaining => _packed.Length - _at;

    public byte Byte()
    {
        if (_at >= _packed.Length) Truncated();
        return _packed[_at++];
    }

    public ulong Varint()
    {
        // Most varints of a packed stream (shape ids, lengths, small numbers) are one byte.
        if ((uint)_at < (uint)_packed.Length && _packed[_at] < 0x80) return _packed[_at++];
        if (!Varint64.TryRead(_packed[_at..], out ulong value, out int read))
            StructureThrow.Corrupt($"Packed stream: truncated, over-long or non-minimal varint at offset {_at}.");
        _at += read;
        return value;
    }

    public long ZigZag() => Varint64.UnZigZag(Varint());

    /// <summary>A count (of members, elements or bytes): it can never exceed what remains, since every item takes at least a byte.</summary>
    public int Count(string what)
    {
        int at = _at;
        ulong value = Varint();
        if (value > (ulong)Remaining) StructureThrow.Corrupt($"Packed stream: {what} {value} at offset {at} exceeds the {Remaining} bytes that remain.");
        return (int)value;
    }

    public ReadOnlySpan<byte> Bytes(int length)
    {
        if (length > Remaining) Truncated();
        ReadOnlySpan<byte> bytes = _packed.Slice(_at, length);
        _at += length;
        return bytes;
    }

    /// <summary>What remains, from the cursor on, without moving it.</summary>
    public readonly ReadOnlySpan<byte> Ahead => _packed[_at..];

    /// <summary>Moves the cursor over <paramref name="length"/> bytes the caller has read through <see cref="Ahead"/> (at most <see cref="Remaining"/>).</summary>
    public void Skip(int length)
    {
        if (length > Remaining) Truncated();
        _at += length;
    }

    public long Int64LittleEndian() => BinaryPrimitives.ReadInt64LittleEndian(Bytes(8));

    public readonly void End()
    {
        if (_at != _packed.Length) StructureThrow.Corrupt($"Packed stream: {_packed.Length - _at} bytes after the end of the document (offset {_at}).");
    }

    private readonly void Truncated() => StructureThrow.Corrupt($"Packed stream: truncated at offset {_at} (of {_packed.Length}).");
}

/// <summary>The output side of an unpacker: never writes past the destination (the declared length of the document).</summary>
internal ref struct UnpackedWriter
{
    private readonly Span<byte> _destination;
    private int _at;

    public UnpackedWriter(Span<byte> destination) => _destination = destination;

    public readonly int Position => _at;

    public void Byte(byte value)
    {
        if (_at >= _destination.Length) TooLong();
        _destination[_at++] = value;
    }

    public void Bytes(scoped ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length > _destination.Length - _at) TooLong();
        ShortCopy.To(bytes, _destination[_at..]);
        _at += bytes.Length;
    }

    /// <summary>Room for <paramref name="length"/> bytes, written by the caller.</summary>
    public Span<byte> Reserve(int length)
    {
        if (length > _destination.Length - _at) TooLong();
        Span<byte> span = _destination.Slice(_at, length);
        _at += length;
        return span;
    }

    /// <summary>The room left, for a caller that formats into it and then calls <see cref="Advance"/>.</summary>
    public readonly Span<byte> Free => _destination[_at..];

    public void Advance(int count) => _at += count;

    /// <summary>Throws: the document would be longer than the destination.</summary>
    public readonly void Full() => TooLong();

    /// <summary>The bytes written since <paramref name="start"/>, to patch a length in.</summary>
    public readonly Span<byte> From(int start) => _destination[start.._at];

    private readonly void TooLong() => StructureThrow.Corrupt($"Packed stream decodes to more than the {_destination.Length} bytes expected.");
}
