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
            Span<long> last = Model.SourceCount <= MaxStackSources ? stackalloc long[LastLength * Model.SourceCount] : new long[LastLength * Model.SourceCount];
            last.Clear();
            var walk = new Walk(this, packed, residual, symbols, default, last);
            walk.Object(1);
            walk.In.End();
            residualLength = walk.Out.Position;
            return true;
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }

    /// <summary>Joins a residual and a symbol stream back into the packed stream, in <paramref name="packed"/>; returns its length.</summary>
    /// <exception cref="InvalidDataException">Either part is damaged or they do not belong together (the message says where), or the stream would be longer than <paramref name="packed"/>.</exception>
    public int Join(ReadOnlySpan<byte> residual, ReadOnlySpan<byte> stream, Span<byte> packed) =>
        Join(residual, stream, packed, folds: false, out _);

    /// <summary>
    /// <see cref="Join(ReadOnlySpan{byte}, ReadOnlySpan{byte}, Span{byte})"/> for a stream written with a value folded
    /// into its initial state (<see cref="RansEncoder.EncodeFolded"/>), which <paramref name="folded"/> returns.
    /// </summary>
    public int JoinFolded(ReadOnlySpan<byte> residual, ReadOnlySpan<byte> stream, Span<byte> packed, out ushort folded) =>
        Join(residual, stream, packed, folds: true, out folded);

    private int Join(ReadOnlySpan<byte> residual, ReadOnlySpan<byte> stream, Span<byte> packed, bool folds, out ushort folded)
    {
        Span<long> last = Model.SourceCount <= MaxStackSources ? stackalloc long[LastLength * Model.SourceCount] : new long[LastLength * Model.SourceCount];
        last.Clear();
        var walk = new Walk(this, residual, packed, encoder: null, stream, last, folds);
        walk.Object(1);
        walk.In.End();
        folded = 0;
        if (folds) folded = walk.Symbols.EndFolded();
        else walk.Symbols.End();
        return walk.Out.Position;
    }

    private const int MaxStackSources = 32;

    /// <summary>Per source slot: its latest value's kind (<see cref="NoValue"/>, <see cref="StringValue"/>, <see cref="NumberValue"/>), then the string's offset in the packed stream and length, or the number.</summary>
    private const int LastLength = 3;
    private const long NoValue = 0, StringValue = 1, NumberValue = 2;

    /// <summary>
    /// One walk for both directions, so splitting and joining cannot disagree on the structure: everything is copied from
    /// <see cref="In"/> to <see cref="Out"/> (the packed stream to the residual when splitting, the residual to the
    /// packed stream when joining), except a value at a field of the model, which splitting codes as symbols (or escapes)
    /// and joining decodes from them (or, on the escape, copies).
    /// </summary>
    private ref struct Walk
    {
        private readonly FieldCoder _coder;
        private readonly ReadOnlySpan<byte> _source;
        private readonly RansEncoder? _encoder; // splitting; null when joining
        private readonly Span<long> _last;      // per source slot, LastLength longs: the source key's latest value in this document
        public PackedReader In;
        public UnpackedWriter Out;
        public RansDecoder Symbols;             // joining

        public Walk(FieldCoder coder, ReadOnlySpan<byte> source, Span<byte> destination, RansEncoder? encoder, ReadOnlySpan<byte> stream, Span<long> last,
            bool folded = false)
        {
            _coder = coder;
            _source = source;
            _encoder = encoder;
            _last = last;
            In = new PackedReader(source);
            Out = new UnpackedWriter(destination);
            Symbols = new RansDecoder(stream, folded);
        }

        private readonly string What => _encoder is null ? "Residual" : "Packed stream";

        public void Object(int depth)
        {
            if (depth > PackScratch.MaxDepth) StructureThrow.Corrupt($"{What}: nesting deeper than {PackScratch.MaxDepth} at offset {In.Position}.");
            int at = In.Position;
            int id = JsonUnpacker.ShapeId(ref In, _coder.Table);
            if (id != 0)
            {
                Out.Bytes(_source[at..In.Position]);
                int first = _coder.Table.FirstKey(id), count = _coder.Table.KeyCount(id);
                for (int m = 0; m < count; m++) Value(first + m, items: false, depth);
                return;
            }
            int inline = In.Count("inline key count");
            Out.Bytes(_source[at..In.Position]);
            for (int m = 0; m < inline; m++)
            {
                int keyAt = In.Position;
                In.Bytes(In.Count("key length"));
                Out.Bytes(_source[keyAt..In.Position]);
                Value(-1, items: false, depth);
            }
        }

        /// <summary>The position in the packed stream: what splitting reads, what joining writes.</summary>
        private readonly int PackedPosition => _encoder is null ? Out.Position : In.Position;

        /// <summary>The packed stream's bytes from <paramref name="start"/> to <see cref="PackedPosition"/>.</summary>
        private readonly ReadOnlySpan<byte> PackedFrom(int start) => _encoder is null ? Out.From(start) : _source[start..In.Position];

        private void Value(int key, bool items, int depth)
        {
            int slot = key < 0 ? -1 : _coder.Model.SourceSlotOf(key, items);
            if (slot < 0)
            {
                ValueOf(key, items, depth);
                return;
            }
            // A source key: its latest value is what follows, once it is whole (an object or an array is no source). None
            // from its start, so nothing inside an object or an array there sees an older value; and none again once it
            // is whole unless it is a string or a number, whatever values at the same key it held (a recursive shape).
            Span<long> last = _last.Slice(slot * LastLength, LastLength);
            last[0] = NoValue;
            int start = PackedPosition;
            ValueOf(key, items, depth);
            last[0] = NoValue;
            ReadOnlySpan<byte> token = PackedFrom(start);
            if (PackedTokens.ScalarLength(token) != token.Length) return;
            if (PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text))
            {
                last[0] = StringValue;
                last[1] = start + token.Length - text.Length;
                last[2] = text.Length;
            }
            else if (PackedTokens.IsRangeTag(token[0]) && Varint64.TryRead(token[1..], out ulong zigzag, out _))
            {
                last[0] = NumberValue;
                last[1] = Varint64.UnZigZag(zigzag);
            }
        }

        /// <summary>The latest string of source slot <paramref name="slot"/> in the packed stream, or false.</summary>
        private readonly bool TryLastString(int slot, out ReadOnlySpan<byte> text)
        {
            text = default;
            if (slot < 0 || _last[slot * LastLength] != StringValue) return false;
            int start = (int)_last[slot * LastLength + 1], length = (int)_last[slot * LastLength + 2];
            text = _encoder is null ? Out.From(start)[..length] : _source.Slice(start, length);
            return true;
        }

        /// <summary>The latest number of source slot <paramref name="slot"/>, or false.</summary>
        private readonly bool TryLastNumber(int slot, out long value)
        {
            value = 0;
            if (slot < 0 || _last[slot * LastLength] != NumberValue) return false;
            value = _last[slot * LastLength + 1];
            return true;
        }

        private void ValueOf(int key, bool items, int depth)
        {
            int field = key < 0 ? -1 : _coder.Model.FieldOf(key, items);
            if (field >= 0 && (_encoder is null ? TryDecode(_coder.Model[field]) : TryEncode(field, _coder.Model[field]))) return;

            // Not coded (no field, or the escape): copied as it stands, walking into objects and arrays.
            ReadOnlySpan<byte> ahead = In.Ahead;
            int length = PackedTokens.ScalarLength(ahead);
            if (length == -2) StructureThrow.Corrupt($"{What}: no value at offset {In.Position}.");
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
            if (depth + 1 > PackScratch.MaxDepth) StructureThrow.Corrupt($"{What}: nesting deeper than {PackScratch.MaxDepth} at offset {In.Position}.");
            int countAt = In.Position;
            ulong count = In.Varint();
            // Items the model codes take no residual bytes, but every item takes at least one byte of the packed stream
            // (and splitting never writes more residual than it has read).
            if (count > (ulong)Out.Free.Length) StructureThrow.Corrupt($"{What}: an array of {count} items at offset {countAt} cannot fit the {Out.Free.Length} bytes left.");
            Out.Bytes(_source[countAt..In.Position]);
            for (ulong i = 0; i < count; i++) Value(key, items: true, depth + 1);
        }

        /// <summary>Splitting: codes the value ahead as a table index, a range's bit length or a template, or adds the escape and returns false.</summary>
        private bool TryEncode(int field, FieldModel.Field f)
        {
            ReadOnlySpan<byte> ahead = In.Ahead;
            int length = PackedTokens.ScalarLength(ahead);
            if (length > 0 && TryEncodeScalar(field, f, ahead[..length]))
            {
                In.Skip(length);
                return true;
            }
            Add(f.Cumulative, f.EscapeSymbol);
            return false;
        }

        private readonly bool TryEncodeScalar(int field, FieldModel.Field f, ReadOnlySpan<byte> token)
        {
            int index = _coder.Model.Find(field, token);
            if (index >= 0)
            {
                Add(f.Cumulative, index);
                return true;
            }
            if (f.RangeTag != 0 && token[0] == f.RangeTag && Varint64.TryRead(token[1..], out ulong zigzag, out _)
                && TryRangeBase(f, out long rangeBase)
                && TryEncodeNumber(f.Cumulative, f.RangeSymbol, Varint64.UnZigZag(zigzag), rangeBase, f.RangeBits, check: false, wrapping: f.RangeRelative))
                return true;
            return f.Templates.Length > 0 && TryEncodeTemplate(field, f, token);
        }

        /// <summary>
        /// A number as its bit length above <paramref name="min"/> (symbol <paramref name="first"/> + length of
        /// <paramref name="cumulative"/>) and the bits below its top bit; false when it is below the minimum or longer
        /// than <paramref name="bits"/>. With <paramref name="check"/>, it only says whether it would code.
        /// </summary>
        private readonly bool TryEncodeNumber(ushort[] cumulative, int first, long value, long min, int bits, bool check, bool wrapping = false)
        {
            // A relative range's offset is taken modulo 2^64, as joining adds it back: exact whatever the source holds.
            ulong offset = (ulong)value - (ulong)min;
            int length = 64 - System.Numerics.BitOperations.LeadingZeroCount(offset);
            if ((!wrapping && value < min) || length > bits) return false;
            if (check) return true;
            Add(cumulative, first + length);
            if (length > 1) _encoder!.AddBits(offset & ((1UL << (length - 1)) - 1), length - 1);
            return true;
        }

        /// <summary>Codes a string token as one of the field's templates and its slots' numbers; false when none fits.</summary>
        private readonly bool TryEncodeTemplate(int field, FieldModel.Field f, ReadOnlySpan<byte> token)
        {
            if (!PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text)) return false;
            Span<byte> key = stackalloc byte[FieldModel.MaxKeyLength];
            Span<long> numbers = stackalloc long[FieldModel.MaxSlots];
            // With the source's latest string (or the part of it the field copies) in the text (its first occurrence), a
            // template that copies it; else, or when the model has no such template, one of digit runs alone.
            if (TryLastString(f.SourceSlot, out ReadOnlySpan<byte> copy) && FieldModel.TryCopyPart(copy, f.CopyDelimiter, f.CopySkip, out copy)
                && copy.Length >= FieldModel.MinCopyLength)
            {
                int at = text.IndexOf(copy);
                if (at >= 0 && FieldModel.TrySplitTemplate(text, at, copy.Length, key, out int copyKeyLength, numbers, out int copySlots)
                    && TryEncodeTemplate(field, f, key[..copyKeyLength], numbers[..copySlots]))
                    return true;
            }
            return FieldModel.TrySplitTemplate(text, key, out int keyLength, numbers, out int slots)
                && TryEncodeTemplate(field, f, key[..keyLength], numbers[..slots]);
        }

        private readonly bool TryEncodeTemplate(int field, FieldModel.Field f, ReadOnlySpan<byte> key, ReadOnlySpan<long> numbers)
        {
            int t = _coder.Model.FindTemplate(field, key);
            if (t < 0) return false;
            FieldModel.Template template = f.Templates[t];
            for (int s = 0; s < numbers.Length; s++)
            {
                if (s != template.CopySlot && !TryEncodeNumber(template.Cumulative[s], 0, numbers[s], template.Mins[s], template.Bits[s], check: true)) return false;
            }
            Add(f.Cumulative, f.TemplateSymbol + t);
            for (int s = 0; s < numbers.Length; s++)
            {
                if (s != template.CopySlot) TryEncodeNumber(template.Cumulative[s], 0, numbers[s], template.Mins[s], template.Bits[s], check: false);
            }
            return true;
        }

        /// <summary>What field <paramref name="f"/>'s range counts from: its minimum, or for a relative range the source's latest number plus it (modulo 2^64); false when that number is missing.</summary>
        private readonly bool TryRangeBase(FieldModel.Field f, out long rangeBase)
        {
            rangeBase = f.RangeMin;
            if (!f.RangeRelative) return true;
            if (!TryLastNumber(f.SourceSlot, out long source)) return false;
            rangeBase = (long)((ulong)source + (ulong)f.RangeMin);
            return true;
        }

        private readonly void Add(ushort[] cumulative, int symbol) =>
            _encoder!.Add(cumulative[symbol], cumulative[symbol + 1] - cumulative[symbol], FieldModel.ScaleBits);

        /// <summary>Joining: decodes the field's next symbol and writes its value; false on the escape (the value is in the residual).</summary>
        private bool TryDecode(FieldModel.Field f)
        {
            int symbol = FieldModel.SymbolAt(f, Symbols.Peek(FieldModel.ScaleBits));
            Symbols.Advance(f.Cumulative[symbol], f.Frequency(symbol), FieldModel.ScaleBits);
            if (symbol < f.ValueCount)
            {
                Out.Bytes(_coder.Model.Value(f.FirstValue + symbol));
                return true;
            }
            if ((uint)(symbol - f.TemplateSymbol) < (uint)f.Templates.Length)
            {
                Template(f, f.Templates[symbol - f.TemplateSymbol]);
                return true;
            }
            if ((uint)(symbol - f.RangeSymbol) < (uint)f.BucketCount)
            {
                if (!TryRangeBase(f, out long rangeBase)) StructureThrow.Corrupt("Field stream: a relative range's value where the document has no number at the field's source before it.");
                long value = (long)((ulong)rangeBase + LowBits(symbol - f.RangeSymbol));
                Span<byte> token = Out.Free;
                int written = 0;
                if (token.IsEmpty || !Varint64.TryWrite(token[1..], Varint64.ZigZag(value), out written)) Out.Full();
                token[0] = f.RangeTag;
                Out.Advance(1 + written);
                return true;
            }
            return false;
        }

        /// <summary>The number above a minimum whose bit length is <paramref name="bits"/>: its top bit and the bits read below it.</summary>
        private ulong LowBits(int bits) => bits == 0 ? 0 : 1UL << (bits - 1) | Symbols.Bits(bits - 1);

        /// <summary>Writes a string of <paramref name="template"/>: its tag, then literals and slots, each slot's number decoded.</summary>
        private void Template(FieldModel.Field f, FieldModel.Template template)
        {
            int length = template.Length;
            ReadOnlySpan<byte> copy = default;
            if (template.CopySlot >= 0)
            {
                if (!TryLastString(f.SourceSlot, out copy)) StructureThrow.Corrupt("Field stream: a template copies the field's source, which the document has not had as a string before it.");
                if (!FieldModel.TryCopyPart(copy, f.CopyDelimiter, f.CopySkip, out copy)) StructureThrow.Corrupt("Field stream: a template copies a part of the field's source, which its latest string does not have.");
                length += copy.Length;
            }
            if (length <= PackedTag.MaxShortString)
            {
                Out.Byte((byte)(PackedTag.ShortString + length));
            }
            else
            {
                Out.Byte(PackedTag.String);
                if (!Varint64.TryWrite(Out.Free, (ulong)length, out int written)) Out.Full();
                Out.Advance(written);
            }
            for (int s = 0; ; s++)
            {
                Out.Bytes(template.Literals[s]);
                if (s == template.Widths.Length) break;
                if (s == template.CopySlot)
                {
                    Out.Bytes(copy);
                    continue;
                }
                ushort[] c = template.Cumulative[s];
                int bits = FieldModel.SymbolAt(c, Symbols.Peek(FieldModel.ScaleBits));
                Symbols.Advance(c[bits], c[bits + 1] - c[bits], FieldModel.ScaleBits);
                ulong value = (ulong)template.Mins[s] + LowBits(bits);
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
    }
}
