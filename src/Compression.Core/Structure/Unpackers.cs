using System.Buffers;
using System.Buffers.Binary;
using System.Globalization;
using System.Runtime.Intrinsics;

namespace Compression.Structure;

/// <summary>Writes a packed stream back as the compact JSON text it came from.</summary>
internal ref struct JsonUnpacker
{
    private static readonly SearchValues<byte> s_numberBytes = SearchValues.Create("0123456789+-.eE"u8);

    private readonly ShapeTable _table;
    private PackedReader _in;
    private UnpackedWriter _out;

    private JsonUnpacker(ShapeTable table, ReadOnlySpan<byte> packed, Span<byte> destination)
    {
        _table = table;
        _in = new PackedReader(packed);
        _out = new UnpackedWriter(destination);
    }

    public static int Unpack(ShapeTable table, ReadOnlySpan<byte> packed, Span<byte> destination)
    {
        var unpacker = new JsonUnpacker(table, packed, destination);
        unpacker.ObjectBody(1);
        unpacker._in.End();
        return unpacker._out.Position;
    }

    private void ObjectBody(int depth)
    {
        if (depth > PackScratch.MaxDepth) StructureThrow.Corrupt($"Packed stream: nesting deeper than {PackScratch.MaxDepth} at offset {_in.Position}.");
        int id = ShapeId(ref _in, _table);
        if (id != 0)
        {
            _table.MemberPrefixes(id, out ReadOnlySpan<byte> prefixes, out ReadOnlySpan<int> offsets);
            if (offsets.Length == 1) _out.Byte((byte)'{');
            for (int m = 0; m + 1 < offsets.Length; m++)
            {
                // {"key": or ,"key": : when it is short and the output has room, one vector move (the prefixes are padded,
                // and the bytes written past the prefix are written over next).
                int start = offsets[m], length = offsets[m + 1] - start;
                if (length <= ShapeTable.PrefixPadding && Vector256.IsHardwareAccelerated && _out.Free.Length >= ShapeTable.PrefixPadding)
                {
                    Vector256.Create(prefixes[start..]).CopyTo(_out.Free);
                    _out.Advance(length);
                }
                else
                {
                    _out.Bytes(prefixes.Slice(start, length));
                }
                Value(depth);
            }
            _out.Byte((byte)'}');
            return;
        }
        _out.Byte((byte)'{');
        int count = _in.Count("inline key count");
        for (int m = 0; m < count; m++)
        {
            if (m > 0) _out.Byte((byte)',');
            ReadOnlySpan<byte> key = _in.Bytes(_in.Count("key length"));
            if (!JsonText.IsRawStringContent(key)) StructureThrow.Corrupt($"Packed stream: an inline key near offset {_in.Position} is not JSON string content.");
            _out.Byte((byte)'"');
            _out.Bytes(key);
            _out.Bytes("\":"u8);
            Value(depth);
        }
        _out.Byte((byte)'}');
    }

    private void Value(int depth)
    {
        int at = _in.Position;
        byte tag = _in.Byte();
        if (tag >= PackedTag.ShortString)
        {
            // The commonest value, first: a string of up to MaxShortString bytes, its length in the tag.
            int length = tag - PackedTag.ShortString;
            if (length <= JsonText.PlainShortLength && Vector256.IsHardwareAccelerated
                && _in.Remaining >= JsonText.PlainShortLength && _out.Free.Length >= JsonText.PlainShortLength + 2)
            {
                // Most strings are short and hold no quote or backslash: checked and copied in one vector move, the
                // closing quote written over the bytes past the string (room for both quotes around any such string).
                Span<byte> free = _out.Free;
                if (JsonText.TryCopyPlainShort(_in.Ahead, free[1..], length))
                {
                    free[0] = (byte)'"';
                    free[length + 1] = (byte)'"';
                    _out.Advance(length + 2);
                    _in.Skip(length);
                    return;
                }
            }
            ReadOnlySpan<byte> text = _in.Bytes(length);
            if (!JsonText.IsRawStringContent(text)) StructureThrow.Corrupt($"Packed stream: the string tagged at offset {at} is not JSON string content.");
            Span<byte> quoted = _out.Reserve(length + 2);
            quoted[0] = (byte)'"';
            ShortCopy.To(text, quoted[1..]);
            quoted[length + 1] = (byte)'"';
            return;
        }
        switch (tag)
        {
            case PackedTag.Null: _out.Bytes("null"u8); break;
            case PackedTag.False: _out.Bytes("false"u8); break;
            case PackedTag.True: _out.Bytes("true"u8); break;
            case PackedTag.Object:
                ObjectBody(depth + 1);
                break;
            case PackedTag.Array:
                if (depth + 1 > PackScratch.MaxDepth) StructureThrow.Corrupt($"Packed stream: nesting deeper than {PackScratch.MaxDepth} at offset {at}.");
                int count = _in.Count("array length");
                _out.Byte((byte)'[');
                for (int i = 0; i < count; i++)
                {
                    if (i > 0) _out.Byte((byte)',');
                    Value(depth + 1);
                }
                _out.Byte((byte)']');
                break;
            case PackedTag.String: // longer strings (short ones are taken above)
                ReadOnlySpan<byte> content = _in.Bytes(_in.Count("string length"));
                if (!JsonText.IsRawStringContent(content)) StructureThrow.Corrupt($"Packed stream: the string tagged at offset {at} is not JSON string content.");
                _out.Byte((byte)'"');
                _out.Bytes(content);
                _out.Byte((byte)'"');
                break;
            case PackedTag.NumberText:
                ReadOnlySpan<byte> text = _in.Bytes(_in.Count("number length"));
                if (text.IsEmpty || text.ContainsAnyExcept(s_numberBytes)) StructureThrow.Corrupt($"Packed stream: the number text tagged at offset {at} is empty or not a number's characters.");
                _out.Bytes(text);
                break;
            case PackedTag.Integer:
                Decimal(_in.ZigZag(), 0, at);
                break;
            case >= PackedTag.Decimal + 1 and <= PackedTag.Decimal + PackedTag.MaxScale:
                Decimal(_in.ZigZag(), tag - PackedTag.Decimal, at);
                break;
            default:
                StructureThrow.Corrupt($"Packed stream: tag 0x{tag:x2} at offset {at} is not a JSON value.");
                break;
        }
    }

    private void Decimal(long mantissa, int scale, int at)
    {
        // The packer writes at most JsonText.MaxDigits digits.
        ulong magnitude = mantissa < 0 ? (ulong)(-(mantissa + 1)) + 1 : (ulong)mantissa;
        if (magnitude >= 1_000_000_000_000_000_000UL)
            StructureThrow.Corrupt($"Packed stream: the number tagged at offset {at} has more than {JsonText.MaxDigits} digits.");
        int written;
        bool fits = scale == 0
            ? mantissa.TryFormat(_out.Free, out written, default, CultureInfo.InvariantCulture)
            : JsonText.TryFormatDecimal(mantissa, scale, _out.Free, out written);
        if (!fits) _out.Full();
        _out.Advance(written);
    }

    /// <summary>A shape reference: 0 (keys inline) or an id of the table.</summary>
    internal static int ShapeId(ref PackedReader input, ShapeTable table)
    {
        int at = input.Position;
        ulong id = input.Varint();
        if (id > (ulong)table.Count) StructureThrow.Corrupt($"Packed stream: shape {id} at offset {at} is not in the table ({table.Count} shapes).");
        return (int)id;
    }
}

/// <summary>Writes a packed stream back as the BSON document it came from (lengths, terminators and array keys recomputed).</summary>
internal ref struct BsonUnpacker
{

    private readonly ShapeTable _table;
    private PackedReader _in;
    private UnpackedWriter _out;

    private BsonUnpacker(ShapeTable table, ReadOnlySpan<byte> packed, Span<byte> destination)
    {
        _table = table;
        _in = new PackedReader(packed);
        _out = new UnpackedWriter(destination);
    }

    public static int Unpack(ShapeTable table, ReadOnlySpan<byte> packed, Span<byte> destination)
    {
        var unpacker = new BsonUnpacker(table, packed, destination);
        unpacker.Document(isArray: false, 1);
        unpacker._in.End();
        return unpacker._out.Position;
    }

    private void Document(bool isArray, int depth)
    {
        if (depth > PackScratch.MaxDepth) StructureThrow.Corrupt($"Packed stream: nesting deeper than {PackScratch.MaxDepth} at offset {_in.Position}.");
        int start = _out.Position;
        _out.Reserve(4);
        int id = 0, count;
        if (isArray)
        {
            count = _in.Count("array length");
        }
        else
        {
            id = JsonUnpacker.ShapeId(ref _in, _table);
            count = id == 0 ? _in.Count("inline key count") : _table.KeyCount(id);
        }
        ReadOnlySpan<byte> prefixes = default;
        ReadOnlySpan<int> offsets = default;
        if (id != 0) _table.MemberPrefixes(id, out prefixes, out offsets);
        Span<byte> index = stackalloc byte[11];
        for (int m = 0; m < count; m++)
        {
            scoped ReadOnlySpan<byte> name;
            if (isArray)
            {
                m.TryFormat(index, out int length, provider: CultureInfo.InvariantCulture);
                name = index[..length];
            }
            else if (id == 0)
            {
                name = _in.Bytes(_in.Count("key length"));
                if (name.Contains((byte)0)) StructureThrow.Corrupt($"Packed stream: an inline key near offset {_in.Position} holds a NUL byte.");
            }
            else
            {
                Element(prefixes[offsets[m]..offsets[m + 1]], depth, terminated: true);
                continue;
            }
            Element(name, depth);
        }
        _out.Byte(0);
        Span<byte> document = _out.From(start);
        BinaryPrimitives.WriteInt32LittleEndian(document, document.Length);
    }

    private void Element(scoped ReadOnlySpan<byte> name, int depth, bool terminated = false)
    {
        int at = _in.Position;
        byte tag = _in.Byte();
        int typeAt = _out.Position;
        _out.Byte(0); // the type, known once the tag is read below
        _out.Bytes(name);
        if (!terminated) _out.Byte(0);
        byte type;
        switch (tag)
        {
            case PackedTag.Null: type = 0x0A; break;
            case PackedTag.False or PackedTag.True:
                type = 0x08;
                _out.Byte(tag == PackedTag.True ? (byte)1 : (byte)0);
                break;
            case PackedTag.Object:
                type = 0x03;
                Document(isArray: false, depth + 1);
                break;
            case PackedTag.Array:
                type = 0x04;
                Document(isArray: true, depth + 1);
                break;
            case >= PackedTag.ShortString:
            case PackedTag.String:
                type = 0x02;
                int length = tag >= PackedTag.ShortString ? tag - PackedTag.ShortString : _in.Count("string length");
                BinaryPrimitives.WriteInt32LittleEndian(_out.Reserve(4), length + 1);
                _out.Bytes(_in.Bytes(length));
                _out.Byte(0);
                break;
            case PackedTag.Integer:
                type = 0x10;
                long int32 = _in.ZigZag();
                if (int32 is < int.MinValue or > int.MaxValue) StructureThrow.Corrupt($"Packed stream: the int32 tagged at offset {at} is out of range ({int32}).");
                BinaryPrimitives.WriteInt32LittleEndian(_out.Reserve(4), (int)int32);
                break;
            case PackedTag.Int64 or PackedTag.DateTime:
                type = tag == PackedTag.Int64 ? (byte)0x12 : (byte)0x09;
                BinaryPrimitives.WriteInt64LittleEndian(_out.Reserve(8), _in.ZigZag());
                break;
            case PackedTag.Double:
                type = 0x01;
                BinaryPrimitives.WriteInt64LittleEndian(_out.Reserve(8), _in.Int64LittleEndian());
                break;
            case >= PackedTag.Decimal and <= PackedTag.Decimal + PackedTag.MaxScale:
                type = 0x01;
                long mantissa = _in.ZigZag();
                if (mantissa is < -BsonShapeReader.MaxDoubleMantissa or > BsonShapeReader.MaxDoubleMantissa)
                    StructureThrow.Corrupt($"Packed stream: the decimal mantissa tagged at offset {at} is out of range ({mantissa}).");
                BinaryPrimitives.WriteDoubleLittleEndian(_out.Reserve(8), BsonShapeReader.DecimalToDouble(mantissa, tag - PackedTag.Decimal));
                break;
            case PackedTag.ObjectId:
                type = 0x07;
                _out.Bytes(_in.Bytes(12));
                break;
            case PackedTag.Binary:
                type = 0x05;
                int binaryLength = _in.Count("binary length");
                byte subtype = _in.Byte();
                BinaryPrimitives.WriteInt32LittleEndian(_out.Reserve(4), binaryLength);
                _out.Byte(subtype);
                _out.Bytes(_in.Bytes(binaryLength));
                break;
            case PackedTag.BsonRaw:
                type = _in.Byte();
                ReadOnlySpan<byte> raw = _in.Bytes(_in.Count("raw value length"));
                if (!PackedTag.IsRawBsonType(type) || BsonShapeReader.RawValueLength(type, raw) != raw.Length)
                    StructureThrow.Corrupt($"Packed stream: the raw BSON value tagged at offset {at} (type 0x{type:x2}, {raw.Length} bytes) is not a value of that type.");
                _out.Bytes(raw);
                break;
            default:
                StructureThrow.Corrupt($"Packed stream: tag 0x{tag:x2} at offset {at} is not a BSON value.");
                return;
        }
        _out.From(typeAt)[0] = type;
    }
}
