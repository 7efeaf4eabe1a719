using System.Buffers.Binary;

namespace Compression.Structure;

/// <summary>
/// The input side of an unpacker: cursors over the packed stream (one when interleaved, one per
/// <see cref="PackedStream"/> with separate streams) that throw <see cref="InvalidDataException"/> on anything malformed.
/// </summary>
internal ref struct PackedReader
{
    private readonly ReadOnlySpan<byte> _s0, _s1, _s2;
    private readonly bool _separate;
    private readonly int _base0, _base1, _base2; // offsets of the numbers and data streams in the packed stream, for messages
    private int _at0, _at1, _at2;

    public PackedReader(ReadOnlySpan<byte> packed, bool separate)
    {
        _separate = separate;
        if (!separate)
        {
            _s0 = packed;
            return;
        }
        uint structure = 0, numbers = 0;
        int a = 0, b = 0;
        if (!Compression.Internal.Varint.TryRead(packed, out structure, out a) ||
            !Compression.Internal.Varint.TryRead(packed[a..], out numbers, out b))
        {
            StructureThrow.Corrupt("Packed stream: the stream lengths are truncated or not minimal varints.");
        }
        int header = a + b;
        if (structure > (uint)(packed.Length - header) || numbers > (uint)(packed.Length - header - (int)structure))
            StructureThrow.Corrupt($"Packed stream: stream lengths {structure} and {numbers} exceed the {packed.Length - header} bytes that follow them.");
        _base0 = header;
        _s0 = packed.Slice(header, (int)structure);
        _base1 = header + (int)structure;
        _s1 = packed.Slice(_base1, (int)numbers);
        _base2 = _base1 + (int)numbers;
        _s2 = packed[_base2..];
    }

    /// <summary>Where the structure cursor is, for messages.</summary>
    public readonly int Position => _base0 + _at0;

    public byte Byte(int stream)
    {
        ReadOnlySpan<byte> rest = Rest(stream);
        if (rest.IsEmpty) Truncated(stream);
        Advance(stream, 1);
        return rest[0];
    }

    public ulong Varint(int stream)
    {
        if (!Varint64.TryRead(Rest(stream), out ulong value, out int read))
            StructureThrow.Corrupt($"Packed stream: truncated, over-long or non-minimal varint at offset {Offset(stream)}.");
        Advance(stream, read);
        return value;
    }

    public long ZigZag(int stream) => Varint64.UnZigZag(Varint(stream));

    /// <summary>
    /// A count (of members, elements or bytes) read from <paramref name="stream"/>, of items found in
    /// <paramref name="itemStream"/>: it can never exceed what remains there, since every item takes at least a byte.
    /// </summary>
    public int Count(int stream, int itemStream, string what)
    {
        int at = Offset(stream);
        ulong value = Varint(stream);
        int remaining = Rest(itemStream).Length;
        if (value > (ulong)remaining) StructureThrow.Corrupt($"Packed stream: {what} {value} at offset {at} exceeds the {remaining} bytes that remain.");
        return (int)value;
    }

    public ReadOnlySpan<byte> Bytes(int stream, int length)
    {
        ReadOnlySpan<byte> rest = Rest(stream);
        if (length > rest.Length) Truncated(stream);
        Advance(stream, length);
        return rest[..length];
    }

    public long Int64LittleEndian(int stream) => BinaryPrimitives.ReadInt64LittleEndian(Bytes(stream, 8));

    public readonly void End()
    {
        int left = _s0.Length - _at0 + (_separate ? _s1.Length - _at1 + _s2.Length - _at2 : 0);
        if (left != 0) StructureThrow.Corrupt($"Packed stream: {left} bytes left after the end of the document.");
    }

    private readonly ReadOnlySpan<byte> Rest(int stream)
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

    private readonly int Offset(int stream) => !_separate || stream == PackedStream.Structure ? _base0 + _at0 : stream == PackedStream.Numbers ? _base1 + _at1 : _base2 + _at2;

    private readonly void Truncated(int stream) => StructureThrow.Corrupt($"Packed stream: truncated at offset {Offset(stream)}.");
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
        bytes.CopyTo(_destination[_at..]);
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

    /// <summary>The bytes written since <paramref name="start"/>, to patch a length in.</summary>
    public readonly Span<byte> From(int start) => _destination[start.._at];

    private readonly void TooLong() => StructureThrow.Corrupt($"Packed stream decodes to more than the {_destination.Length} bytes expected.");
}
