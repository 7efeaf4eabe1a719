namespace Compression.Structure;

/// <summary>
/// Splits a packed stream into what the field model codes (table indexes, range offsets, templates and their slots'
/// numbers, as symbols and raw bits of a static rANS stream) and the rest (the <em>residual</em>: the structure,
/// escaped values and fields without a model, in the packed stream's own layout), and joins them back byte for byte.
/// The walk is the unpackers': the root object's members, shape by shape; a member of shape <c>s</c> at index <c>m</c>
/// is key <c>FirstKey(s) + m</c>, and the items of an array it holds (at any depth of arrays) are that key's items.
/// Members of objects with inline keys have no field. Thread-safe (the walks keep their state on the stack).
/// </summary>
internal sealed class FieldCoder
{
    public FieldCoder(ShapeTable table, FieldModel model)
    {
        Table = table;
        Model = model;
    }

    public ShapeTable Table { get; }

    public FieldModel Model { get; }

    /// <summary>
    /// Splits <paramref name="packed"/> (a well-formed packed stream of <see cref="Table"/>) into a residual and the
    /// symbols added to <paramref name="symbols"/>. False when the stream is not well-formed or the residual does not fit.
    /// </summary>
    public bool TrySplit(ReadOnlySpan<byte> packed, Span<byte> residual, out int residualLength, RansEncoder symbols)
    {
        residualLength = 0;
        try
        {
            var splitter = new Splitter(this, packed, residual, symbols);
            splitter.Object(1);
            splitter.In.End();
            residualLength = splitter.Out.Position;
            return true;
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }

    /// <summary>Joins a residual and a symbol stream back into the packed stream, in <paramref name="packed"/>; returns its length.</summary>
    /// <exception cref="InvalidDataException">Either part is damaged or they do not belong together (the message says where), or the stream would be longer than <paramref name="packed"/>.</exception>
    public int Join(ReadOnlySpan<byte> residual, ReadOnlySpan<byte> stream, Span<byte> packed)
    {
        var joiner = new Joiner(this, residual, stream, packed);
        joiner.Object(1);
        joiner.In.End();
        joiner.Symbols.End();
        return joiner.Out.Position;
    }

    private ref struct Splitter
    {
        private readonly FieldCoder _coder;
        private readonly ReadOnlySpan<byte> _packed;
        private readonly RansEncoder _symbols;
        public PackedReader In;
        public UnpackedWriter Out;

        public Splitter(FieldCoder coder, ReadOnlySpan<byte> packed, Span<byte> residual, RansEncoder symbols)
        {
            _coder = coder;
            _packed = packed;
            _symbols = symbols;
            In = new PackedReader(packed);
            Out = new UnpackedWriter(residual);
        }

        public void Object(int depth)
        {
            if (depth > PackScratch.MaxDepth) StructureThrow.Corrupt("Packed stream: nested too deep.");
            int at = In.Position;
            int id = JsonUnpacker.ShapeId(ref In, _coder.Table);
            if (id != 0)
            {
                Out.Bytes(_packed[at..In.Position]);
                int first = _coder.Table.FirstKey(id), count = _coder.Table.KeyCount(id);
                for (int m = 0; m < count; m++) Value(first + m, items: false, depth);
                return;
            }
            int inline = In.Count("inline key count");
            Out.Bytes(_packed[at..In.Position]);
            for (int m = 0; m < inline; m++)
            {
                int keyAt = In.Position;
                In.Bytes(In.Count("key length"));
                Out.Bytes(_packed[keyAt..In.Position]);
                Value(-1, items: false, depth);
            }
        }

        private void Value(int key, bool items, int depth)
        {
            ReadOnlySpan<byte> ahead = In.Ahead;
            int length = PackedTokens.ScalarLength(ahead);
            if (length == -2) StructureThrow.Corrupt($"Packed stream: no value at offset {In.Position}.");
            int field = key < 0 ? -1 : _coder.Model.FieldOf(key, items);
            if (field >= 0)
            {
                FieldModel.Field f = _coder.Model[field];
                if (length > 0)
                {
                    int index = _coder.Model.Find(field, ahead[..length]);
                    if (index >= 0)
                    {
                        Add(f, index);
                        In.Skip(length);
                        return;
                    }
                    if (f.RangeTag != 0 && ahead[0] == f.RangeTag && Varint64.TryRead(ahead[1..], out ulong zigzag, out _))
                    {
                        long value = Varint64.UnZigZag(zigzag);
                        ulong offset = (ulong)value - (ulong)f.RangeMin;
                        int bits = 64 - System.Numerics.BitOperations.LeadingZeroCount(offset);
                        if (value >= f.RangeMin && bits <= f.RangeBits)
                        {
                            // Its bit length as a symbol, then the bits below its top bit.
                            Add(f, f.RangeSymbol + bits);
                            if (bits > 1) _symbols.AddBits(offset & ((1UL << (bits - 1)) - 1), bits - 1);
                            In.Skip(length);
                            return;
                        }
                    }
                }
                if (length > 0 && f.Templates.Length > 0 && TryTemplate(field, f, ahead[..length]))
                {
                    In.Skip(length);
                    return;
                }
                Add(f, f.EscapeSymbol);
            }
            if (length > 0)
            {
                Out.Bytes(ahead[..length]);
                In.Skip(length);
                return;
            }
            byte tag = In.Byte();
            Out.Byte(tag);
            if (tag == PackedTag.Object)
            {
                Object(depth + 1);
                return;
            }
            if (depth + 1 > PackScratch.MaxDepth) StructureThrow.Corrupt("Packed stream: nested too deep.");
            int countAt = In.Position;
            int count = In.Count("array length");
            Out.Bytes(_packed[countAt..In.Position]);
            for (int i = 0; i < count; i++) Value(key, items: true, depth + 1);
        }

        /// <summary>Codes a string token as one of the field's templates and its slots' numbers; false when none fits.</summary>
        private readonly bool TryTemplate(int field, FieldModel.Field f, ReadOnlySpan<byte> token)
        {
            ReadOnlySpan<byte> text;
            if (token[0] >= PackedTag.ShortString) text = token[1..];
            else if (token[0] == PackedTag.String && Varint64.TryRead(token[1..], out _, out int read)) text = token[(1 + read)..];
            else return false;
            Span<byte> key = stackalloc byte[FieldModel.MaxKeyLength];
            Span<long> numbers = stackalloc long[FieldModel.MaxSlots];
            if (!FieldModel.TrySplitTemplate(text, key, out int keyLength, numbers, out int slots)) return false;
            int t = _coder.Model.FindTemplate(field, key[..keyLength]);
            if (t < 0) return false;
            FieldModel.Template template = f.Templates[t];
            for (int s = 0; s < slots; s++)
            {
                ulong offset = (ulong)numbers[s] - (ulong)template.Mins[s];
                if (numbers[s] < template.Mins[s] || 64 - System.Numerics.BitOperations.LeadingZeroCount(offset) > template.Bits[s]) return false;
            }
            Add(f, f.TemplateSymbol + t);
            for (int s = 0; s < slots; s++)
            {
                ulong offset = (ulong)numbers[s] - (ulong)template.Mins[s];
                int bits = 64 - System.Numerics.BitOperations.LeadingZeroCount(offset);
                ushort[] c = template.Cumulative[s];
                _symbols.Add(c[bits], c[bits + 1] - c[bits], FieldModel.ScaleBits);
                if (bits > 1) _symbols.AddBits(offset & ((1UL << (bits - 1)) - 1), bits - 1);
            }
            return true;
        }

        private readonly void Add(FieldModel.Field f, int symbol) =>
            _symbols.Add(f.Cumulative[symbol], f.Frequency(symbol), FieldModel.ScaleBits);
    }

    private ref struct Joiner
    {
        private readonly FieldCoder _coder;
        private readonly ReadOnlySpan<byte> _residual;
        public PackedReader In;
        public UnpackedWriter Out;
        public RansDecoder Symbols;

        public Joiner(FieldCoder coder, ReadOnlySpan<byte> residual, ReadOnlySpan<byte> stream, Span<byte> packed)
        {
            _coder = coder;
            _residual = residual;
            In = new PackedReader(residual);
            Out = new UnpackedWriter(packed);
            Symbols = new RansDecoder(stream);
        }

        public void Object(int depth)
        {
            if (depth > PackScratch.MaxDepth) StructureThrow.Corrupt($"Residual: nesting deeper than {PackScratch.MaxDepth} at offset {In.Position}.");
            int at = In.Position;
            int id = JsonUnpacker.ShapeId(ref In, _coder.Table);
            if (id != 0)
            {
                Out.Bytes(_residual[at..In.Position]);
                int first = _coder.Table.FirstKey(id), count = _coder.Table.KeyCount(id);
                for (int m = 0; m < count; m++) Value(first + m, items: false, depth);
                return;
            }
            int inline = In.Count("inline key count");
            Out.Bytes(_residual[at..In.Position]);
            for (int m = 0; m < inline; m++)
            {
                int keyAt = In.Position;
                In.Bytes(In.Count("key length"));
                Out.Bytes(_residual[keyAt..In.Position]);
                Value(-1, items: false, depth);
            }
        }

        /// <summary>Writes a string of <paramref name="template"/>: its tag, then literals and slots, each slot's number decoded.</summary>
        private void Template(FieldModel.Template template)
        {
            int length = template.Length;
            if (length <= PackedTag.MaxShortString)
            {
                Out.Byte((byte)(PackedTag.ShortString + length));
            }
            else
            {
                Out.Byte(PackedTag.String);
                Span<byte> free = Out.Free;
                if (!Varint64.TryWrite(free, (ulong)length, out int written)) Out.Full();
                Out.Advance(written);
            }
            for (int s = 0; ; s++)
            {
                Out.Bytes(template.Literals[s]);
                if (s == template.Widths.Length) break;
                ushort[] c = template.Cumulative[s];
                int bits = FieldModel.SymbolAt(c, Symbols.Peek(FieldModel.ScaleBits));
                Symbols.Advance(c[bits], c[bits + 1] - c[bits], FieldModel.ScaleBits);
                ulong offset = bits == 0 ? 0 : 1UL << (bits - 1) | Symbols.Bits(bits - 1);
                ulong value = (ulong)template.Mins[s] + offset;
                int width = template.Widths[s];
                if (value >= (ulong)FieldModel.Pow10[width]) StructureThrow.Corrupt($"Field stream: a template slot's number {value} has more than its {width} digits.");
                Span<byte> digits = Out.Reserve(width);
                for (int d = width - 1; d >= 0; d--)
                {
                    digits[d] = (byte)('0' + (int)(value % 10));
                    value /= 10;
                }
            }
        }

        private void Value(int key, bool items, int depth)
        {
            int field = key < 0 ? -1 : _coder.Model.FieldOf(key, items);
            if (field >= 0)
            {
                FieldModel.Field f = _coder.Model[field];
                int slot = Symbols.Peek(FieldModel.ScaleBits);
                int symbol = FieldModel.SymbolAt(f, slot);
                Symbols.Advance(f.Cumulative[symbol], f.Frequency(symbol), FieldModel.ScaleBits);
                if (symbol < f.ValueCount)
                {
                    Out.Bytes(_coder.Model.Value(f.FirstValue + symbol));
                    return;
                }
                if ((uint)(symbol - f.TemplateSymbol) < (uint)f.Templates.Length)
                {
                    Template(f.Templates[symbol - f.TemplateSymbol]);
                    return;
                }
                if ((uint)(symbol - f.RangeSymbol) < (uint)f.BucketCount)
                {
                    int bits = symbol - f.RangeSymbol;
                    ulong offset = bits == 0 ? 0 : 1UL << (bits - 1) | Symbols.Bits(bits - 1);
                    long value = (long)((ulong)f.RangeMin + offset);
                    Span<byte> token = Out.Free;
                    int written = 0;
                    if (token.IsEmpty || !Varint64.TryWrite(token[1..], Varint64.ZigZag(value), out written)) Out.Full();
                    token[0] = f.RangeTag;
                    Out.Advance(1 + written);
                    return;
                }
            }
            ReadOnlySpan<byte> ahead = In.Ahead;
            int length = PackedTokens.ScalarLength(ahead);
            if (length == -2) StructureThrow.Corrupt($"Residual: no value at offset {In.Position}.");
            if (length > 0)
            {
                Out.Bytes(ahead[..length]);
                In.Skip(length);
                return;
            }
            byte tag = In.Byte();
            Out.Byte(tag);
            if (tag == PackedTag.Object)
            {
                Object(depth + 1);
                return;
            }
            if (depth + 1 > PackScratch.MaxDepth) StructureThrow.Corrupt($"Residual: nesting deeper than {PackScratch.MaxDepth} at offset {In.Position}.");
            int countAt = In.Position;
            ulong count = In.Varint();
            // Items the model codes take no residual bytes, but every item takes at least one byte of the packed stream.
            if (count > (ulong)Out.Free.Length) StructureThrow.Corrupt($"Residual: an array of {count} items at offset {countAt} cannot fit the {Out.Free.Length} bytes left.");
            Out.Bytes(_residual[countAt..In.Position]);
            for (ulong i = 0; i < count; i++) Value(key, items: true, depth + 1);
        }
    }
}
