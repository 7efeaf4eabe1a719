using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using Compression.Internal;

namespace Compression.Structure;

/// <summary>
/// What a namespace's documents share value by value (issue #37, docs/field-model.md): for some fields of a shape
/// table, a table of the values that repeat across documents, a numeric range and string templates (literals around
/// fixed-width digit runs), each with the frequencies learned in training. A field is a key of the shape table
/// (table-wide key index, <see cref="ShapeTable.FirstKey"/>), either its value or the items of an array it holds.
/// <see cref="FieldCoder"/> codes a packed stream's values at these fields as symbols of a static rANS stream (a table
/// index; a bit length of the offset in the range and its low bits; or a template and, per slot, a bit length and low
/// bits) and leaves everything else, escapes included, in the packed stream for zstd. Learned by
/// <see cref="FieldModelBuilder"/>, serialized deterministically beside the shape table, and parsed with every field
/// checked: a model read from a store is untrusted.
/// </summary>
internal sealed class FieldModel
{
    /// <summary>The first four bytes of a serialized model: "FLDM".</summary>
    public static ReadOnlySpan<byte> Magic => "FLDM"u8;

    /// <summary>The version written when no field has a source: every reader of codec 8 reads it.</summary>
    public const byte FormatVersion = 1;

    /// <summary>
    /// The version written when some field has a source (a key whose latest value in the document its templates copy, or
    /// its range counts from): a field's source and flags follow its key, and a template slot of width 0 is a copy.
    /// </summary>
    public const byte SourcesFormatVersion = 2;

    /// <summary>
    /// The version written when some field copies a part of its source (<see cref="Field.CopyDelimiter"/>): version 2,
    /// with flag 0x02 on such a field, its delimiter and skip after the flags.
    /// </summary>
    public const byte PartsFormatVersion = 3;

    /// <summary>The most bytes past its delimiter a copied part may start.</summary>
    public const int MaxCopySkip = 15;

    /// <summary>The shortest source string a template copies (shorter ones are not looked for when coding).</summary>
    public const int MinCopyLength = 3;

    /// <summary>Every field's frequencies add up to 2^ScaleBits.</summary>
    public const int ScaleBits = 12;

    public const int ScaleTotal = 1 << ScaleBits;

    /// <summary>The most fields a model holds.</summary>
    public const int MaxFields = 2048;

    /// <summary>The most values one field's table holds.</summary>
    public const int MaxValuesPerField = 1024;

    /// <summary>The most values all tables hold together.</summary>
    public const int MaxValues = 65_536;

    /// <summary>The longest value a table holds (its packed token: tag and payload).</summary>
    public const int MaxValueLength = 96;

    /// <summary>The widest range, in bits.</summary>
    public const int MaxRangeBits = 48;

    /// <summary>The most bytes a serialized model may take.</summary>
    public const int MaxSerializedLength = 512 * 1024;

    private const int HeaderLength = 7; // magic, version, two reserved bytes
    private const int ChecksumLength = 4;

    private readonly Field[] _fields;
    private readonly int[] _fieldOf;     // key index * 2 + (items ? 1 : 0) -> field index, or -1
    private readonly byte[] _values;     // every table's values, field by field
    private readonly int[] _valueStarts; // value v (model-wide) is _values[_valueStarts[v].._valueStarts[v + 1]]
    private readonly int[] _buckets;     // open addressing: model-wide value index + 1, 0 empty
    private readonly ulong _seed;
    private readonly byte[][][] _templateKeys; // per field, per template
    private readonly int[] _sourceSlotOf;      // key index * 2 + (items ? 1 : 0) -> source slot, or -1

    private FieldModel(Field[] fields, byte[] values, int[] valueStarts, int[] sourceSlotOf, int sourceCount)
    {
        _fields = fields;
        _sourceSlotOf = sourceSlotOf;
        SourceCount = sourceCount;
        _values = values;
        _valueStarts = valueStarts;
        // Only as far as the last field's key (fields are in ascending order): a table of many keys and a model of few
        // fields costs a few entries, not two for every key of the table.
        _fieldOf = new int[fields.Length == 0 ? 0 : fields[^1].Key * 2 + 2];
        Array.Fill(_fieldOf, -1);
        for (int f = 0; f < fields.Length; f++) _fieldOf[fields[f].Key * 2 + (fields[f].Items ? 1 : 0)] = f;
        _templateKeys = new byte[fields.Length][][];
        for (int f = 0; f < fields.Length; f++)
        {
            _templateKeys[f] = [.. fields[f].Templates.Select(t => t.Key())];
            for (int t = 0; t < _templateKeys[f].Length; t++)
            {
                for (int u = 0; u < t; u++)
                {
                    if (_templateKeys[f][u].AsSpan().SequenceEqual(_templateKeys[f][t])) StructureThrow.Corrupt($"Field model: field {f} lists template {t} twice.");
                }
            }
        }
        int valueCount = valueStarts.Length - 1;
        _buckets = new int[Math.Max(16, (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(1, valueCount * 2)))];
        _seed = BinaryPrimitives.ReadUInt64LittleEndian(RandomNumberGenerator.GetBytes(8));
        for (int f = 0; f < fields.Length; f++)
        {
            Field field = fields[f];
            for (int i = 0; i < field.ValueCount; i++)
            {
                int v = field.FirstValue + i;
                if (Find(f, Value(v)) >= 0) StructureThrow.Corrupt($"Field model: field {f} lists the value {Convert.ToHexString(Value(v))} twice.");
                int b = Bucket(f, Value(v));
                while (_buckets[b] != 0) b = (b + 1) & (_buckets.Length - 1);
                _buckets[b] = v + 1;
            }
        }
    }

    /// <summary>One field: its table (a run of the model-wide values), its range, its templates, and the cumulative frequencies of its symbols.</summary>
    internal sealed class Field
    {
        public required int Key { get; init; }
        public required bool Items { get; init; }
        public required int FirstValue { get; init; }

        /// <summary>The source, key index * 2 + (items ? 1 : 0): the key whose latest value in the document this field's copy slots copy and its relative range counts from; -1 for none.</summary>
        public int SourceKey { get; init; } = -1;

        /// <summary>The source's slot (<see cref="SourceSlotOf"/>), -1 for none.</summary>
        public int SourceSlot { get; private set; } = -1;

        internal void NumberSource(int[] sourceSlotOf)
        {
            if (SourceKey >= 0) SourceSlot = sourceSlotOf[SourceKey];
        }

        /// <summary>The range counts from the source's latest number: a value v is coded as u = v - (source + RangeMin), modulo 2^64.</summary>
        public bool RangeRelative { get; init; }

        /// <summary>
        /// What a copy slot copies of the source's latest string: all of it when 0; else the part after the last
        /// occurrence of this byte in it, less its first <see cref="CopySkip"/> bytes (<see cref="TryCopyPart"/>).
        /// </summary>
        public byte CopyDelimiter { get; init; }

        /// <summary>The bytes past the delimiter the copied part starts (0 to <see cref="MaxCopySkip"/>).</summary>
        public byte CopySkip { get; init; }
        public required int ValueCount { get; init; }

        /// <summary>The numeric tag the range codes (<see cref="PackedTag.Integer"/>, Int64, DateTime or a Decimal), 0 when there is no range.</summary>
        public required byte RangeTag { get; init; }

        /// <summary>What the range counts from: a value v is coded as u = v - RangeMin.</summary>
        public required long RangeMin { get; init; }

        /// <summary>The longest u in bits: u is coded as its bit length (a symbol, 0 to RangeBits) and the bits below its top bit.</summary>
        public required int RangeBits { get; init; }

        /// <summary>The range's symbols: one per bit length of u, 0 to <see cref="RangeBits"/>; 0 when there is no range.</summary>
        public int BucketCount => RangeTag == 0 ? 0 : RangeBits + 1;

        /// <summary>For each 256th of the scale, the symbol its first slot falls in (<see cref="SymbolAt(Field, int)"/>).</summary>
        public required ushort[] Coarse { get; init; }

        /// <summary>Symbols: the table's values, then the range's bit lengths (when there is one), then the templates, then the escape. Length: symbols + 1; last is <see cref="ScaleTotal"/>.</summary>
        public required ushort[] Cumulative { get; init; }

        /// <summary>The symbol of bit length 0 (the range's first).</summary>
        public int RangeSymbol => ValueCount;

        /// <summary>The field's string templates (digit runs as numbered slots), each a symbol after the range's.</summary>
        public required Template[] Templates { get; init; }

        /// <summary>The symbol of the first template.</summary>
        public int TemplateSymbol => ValueCount + BucketCount;
        public int EscapeSymbol => Cumulative.Length - 2;
        public int SymbolCount => Cumulative.Length - 1;
        public int Frequency(int symbol) => Cumulative[symbol + 1] - Cumulative[symbol];
    }

    /// <summary>
    /// A string pattern of a field: literal text around runs of decimal digits of fixed widths (slots). A string whose
    /// maximal digit runs have these widths, between exactly these literals, is coded as the template's symbol and each
    /// slot's number as its bit length above the slot's minimum (a symbol with the slot's frequencies) and low bits.
    /// </summary>
    internal sealed class Template
    {
        /// <summary>The literals: one more than the slots (before the first slot, between slots, after the last; any may be empty).</summary>
        public required byte[][] Literals { get; init; }
        public required byte[] Widths { get; init; }
        public required long[] Mins { get; init; }
        public required byte[] Bits { get; init; }
        public required ushort[][] Cumulative { get; init; }

        /// <summary>The string's length in bytes: literals and slot widths (a copy slot's bytes not included).</summary>
        public required int Length { get; init; }

        /// <summary>The slot of width 0 that copies the field's source's latest string, or -1.</summary>
        public int CopySlot { get; init; } = -1;

        /// <summary>The lookup key: per slot, varint literal length, literal, width; then the last literal's length and bytes.</summary>
        public byte[] Key() => KeyOf(Literals, Widths);

        public static byte[] KeyOf(IReadOnlyList<byte[]> literals, IReadOnlyList<byte> widths)
        {
            var key = new List<byte>();
            Span<byte> varint = stackalloc byte[Varint64.MaxLength];
            for (int s = 0; s <= widths.Count; s++)
            {
                Varint64.TryWrite(varint, (ulong)literals[s].Length, out int n);
                key.AddRange(varint[..n].ToArray());
                key.AddRange(literals[s]);
                if (s < widths.Count) key.Add(widths[s]);
            }
            return [.. key];
        }
    }

    /// <summary>The most templates a field holds.</summary>
    public const int MaxTemplatesPerField = 64;

    /// <summary>The most slots a template holds.</summary>
    public const int MaxSlots = 16;

    /// <summary>The widest slot: 18 digits (under 2^60).</summary>
    public const int MaxSlotWidth = 18;

    /// <summary>The most bits a slot's number takes above its minimum (18 digits need 60).</summary>
    public const int MaxSlotBits = 60;

    /// <summary>The longest string a template matches (and the longest it may describe).</summary>
    public const int MaxTemplateLength = 256;

    /// <summary>The room a template key of a string of up to <see cref="MaxTemplateLength"/> bytes may need.</summary>
    public const int MaxKeyLength = MaxTemplateLength + 2 * (MaxSlots + 1) + MaxSlots;

    /// <summary>
    /// Splits <paramref name="text"/> into a template key (written to <paramref name="key"/>, at least
    /// <see cref="MaxKeyLength"/> bytes) and its slots' numbers (<paramref name="numbers"/>, at least
    /// <see cref="MaxSlots"/>): maximal runs of ASCII digits are slots. False when the text is longer than
    /// <see cref="MaxTemplateLength"/>, has no digit run, more than <see cref="MaxSlots"/>, or a run over
    /// <see cref="MaxSlotWidth"/> digits.
    /// </summary>
    public static bool TrySplitTemplate(ReadOnlySpan<byte> text, Span<byte> key, out int keyLength, Span<long> numbers, out int slots) =>
        TrySplitTemplate(text, -1, 0, key, out keyLength, numbers, out slots);

    /// <summary>
    /// As <see cref="TrySplitTemplate(ReadOnlySpan{byte}, Span{byte}, out int, Span{long}, out int)"/>, with the
    /// <paramref name="copyLength"/> bytes at <paramref name="copyStart"/> (when it is not negative) as a copy slot (width
    /// 0, number 0): digit runs are the maximal runs before it and after it, never across it.
    /// </summary>
    public static bool TrySplitTemplate(ReadOnlySpan<byte> text, int copyStart, int copyLength, Span<byte> key, out int keyLength, Span<long> numbers, out int slots)
    {
        keyLength = 0;
        slots = 0;
        if (text.Length > MaxTemplateLength) return false;
        int literalStart = 0, i = 0;
        bool copyPending = copyStart >= 0;
        while (true)
        {
            int limit = copyPending ? copyStart : text.Length;
            while (i < limit && (uint)(text[i] - '0') > 9) i++;
            ReadOnlySpan<byte> literal = text[literalStart..i];
            Varint64.TryWrite(key[keyLength..], (ulong)literal.Length, out int n);
            keyLength += n;
            literal.CopyTo(key[keyLength..]);
            keyLength += literal.Length;
            if (i == limit && copyPending)
            {
                if (slots == MaxSlots) return false;
                key[keyLength++] = 0;
                numbers[slots++] = 0;
                i = literalStart = copyStart + copyLength;
                copyPending = false;
                continue;
            }
            if (i == text.Length) break;
            int runStart = i;
            long value = 0;
            while (i < limit && (uint)(text[i] - '0') <= 9 && i - runStart < MaxSlotWidth) value = value * 10 + (text[i++] - '0');
            if (i < limit && (uint)(text[i] - '0') <= 9) return false; // a run over MaxSlotWidth digits
            if (slots == MaxSlots) return false;
            key[keyLength++] = (byte)(i - runStart);
            numbers[slots++] = value;
            literalStart = i;
        }
        return slots > 0;
    }

    /// <summary>A template key's literals and slot widths (0: the copy slot).</summary>
    public static (List<byte[]> Literals, List<byte> Widths) PartsOfKey(ReadOnlySpan<byte> key)
    {
        var literals = new List<byte[]>();
        var widths = new List<byte>();
        var reader = new PackedReader(key);
        while (true)
        {
            literals.Add(reader.Bytes((int)reader.Varint()).ToArray());
            if (reader.Remaining == 0) break;
            widths.Add(reader.Byte());
        }
        return (literals, widths);
    }

    /// <summary>
    /// The part of a source's string a copy slot copies: all of it when <paramref name="delimiter"/> is 0; else what
    /// follows the last occurrence of <paramref name="delimiter"/>, less its first <paramref name="skip"/> bytes. False when
    /// the string holds no such delimiter or the part would start past its end.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryCopyPart(ReadOnlySpan<byte> source, byte delimiter, byte skip, out ReadOnlySpan<byte> part)
    {
        part = source;
        if (delimiter == 0) return true;
        int at = source.LastIndexOf(delimiter);
        if (at < 0 || at + 1 + skip > source.Length) return false;
        part = source[(at + 1 + skip)..];
        return true;
    }

    /// <summary>The bytes a copy part's delimiter may be: ASCII punctuation and space (never a letter or a digit, which a part's text holds).</summary>
    public static bool IsCopyDelimiter(byte b) => b is >= 0x20 and < 0x7F && !char.IsAsciiLetterOrDigit((char)b);

    /// <summary>How many sources the model's fields name (slots of <see cref="SourceSlotOf"/>).</summary>
    public int SourceCount { get; }

    /// <summary>The source slot of key <paramref name="key"/> (its value, or its array's items): the key some field copies from or counts from; -1 when none does.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int SourceSlotOf(int key, bool items)
    {
        int i = key * 2 + (items ? 1 : 0);
        return (uint)i < (uint)_sourceSlotOf.Length ? _sourceSlotOf[i] : -1;
    }

    /// <summary>The index of the template of <paramref name="key"/> in field <paramref name="field"/>, or -1.</summary>
    public int FindTemplate(int field, ReadOnlySpan<byte> key)
    {
        byte[][] keys = _templateKeys[field];
        for (int t = 0; t < keys.Length; t++)
        {
            if (keys[t].AsSpan().SequenceEqual(key)) return t;
        }
        return -1;
    }

    public int FieldCount => _fields.Length;

    public Field this[int field] => _fields[field];

    /// <summary>The field of key <paramref name="key"/> (its value, or its array's items), or -1 when the model has none.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int FieldOf(int key, bool items)
    {
        int i = key * 2 + (items ? 1 : 0);
        return (uint)i < (uint)_fieldOf.Length ? _fieldOf[i] : -1;
    }

    public ReadOnlySpan<byte> Value(int modelWideIndex) => _values.AsSpan(_valueStarts[modelWideIndex], _valueStarts[modelWideIndex + 1] - _valueStarts[modelWideIndex]);

    /// <summary>The index of <paramref name="token"/> in field <paramref name="field"/>'s table, or -1.</summary>
    public int Find(int field, ReadOnlySpan<byte> token)
    {
        if (token.Length > MaxValueLength) return -1;
        Field f = _fields[field];
        int mask = _buckets.Length - 1;
        for (int b = Bucket(field, token); ; b = (b + 1) & mask)
        {
            int entry = _buckets[b] - 1;
            if (entry < 0) return -1;
            if (entry >= f.FirstValue && entry < f.FirstValue + f.ValueCount && Value(entry).SequenceEqual(token)) return entry - f.FirstValue;
        }
    }

    private int Bucket(int field, ReadOnlySpan<byte> token) =>
        (int)((XxHash3.HashToUInt64(token, (long)_seed) ^ ((ulong)field * 0x9E3779B97F4A7C15UL)) * 0xD6E8FEB86659FD93UL >> 40) & (_buckets.Length - 1);

    /// <summary>Builds a model from per-field tables and frequencies (training); checks it as <see cref="Parse"/> does.</summary>
    internal static FieldModel Create(ShapeTable table, IReadOnlyList<FieldDefinition> fields)
    {
        byte[] bytes = Serialize(fields);
        return Parse(bytes, table);
    }

    /// <summary>One field as training defines it: the values of its table, the range, and the raw counts of every symbol (values, bit lengths, templates, escape; normalized on serialization).</summary>
    internal sealed record FieldDefinition(int Key, bool Items, IReadOnlyList<byte[]> Values, byte RangeTag, long RangeMin, int RangeBits, IReadOnlyList<long> Counts)
    {
        /// <summary>The source, key index * 2 + (items ? 1 : 0), or -1: the key whose latest value in the document the field's copy slots copy and its relative range counts from.</summary>
        public int Source { get; init; } = -1;

        /// <summary>The range counts from the source's latest number (see <see cref="Field.RangeRelative"/>).</summary>
        public bool RangeRelative { get; init; }

        /// <summary>What of the source's string a copy slot copies (see <see cref="Field.CopyDelimiter"/>); 0: all of it.</summary>
        public byte CopyDelimiter { get; init; }

        /// <summary>See <see cref="Field.CopySkip"/>.</summary>
        public byte CopySkip { get; init; }

        /// <summary>The field's templates; their symbols' counts are in <see cref="Counts"/> after the range's, before the escape's.</summary>
        public IReadOnlyList<TemplateDefinition> Templates { get; init; } = [];

        /// <summary>The sample bytes the table, range and templates code (an order for choosing fields; not serialized).</summary>
        public long Coded { get; init; }
    }

    private byte[] Serialized { get; init; } = [];

    /// <summary>A template as training defines it: literals, slot widths (0: the copy slot, whose minimum, bits and counts are not used), and per slot its minimum, bits and the raw counts of its bit lengths.</summary>
    internal sealed record TemplateDefinition(IReadOnlyList<byte[]> Literals, IReadOnlyList<byte> Widths, IReadOnlyList<long> Mins, IReadOnlyList<byte> Bits, IReadOnlyList<IReadOnlyList<long>> Counts);

    /// <summary>The model's bytes: deterministic for the same definitions.</summary>
    public byte[] Serialize() => Serialized.ToArray();

    private static byte[] Serialize(IReadOnlyList<FieldDefinition> fields)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>(1024);
        buffer.Write(Magic);
        bool sources = fields.Any(f => f.Source >= 0);
        bool parts = fields.Any(f => f.Source >= 0 && f.CopyDelimiter != 0);
        buffer.Write<byte>([parts ? PartsFormatVersion : sources ? SourcesFormatVersion : FormatVersion, 0, 0]);
        WriteVarint(buffer, (ulong)fields.Count);
        foreach (FieldDefinition f in fields)
        {
            WriteVarint(buffer, ((ulong)f.Key << 1) | (f.Items ? 1UL : 0));
            if (sources)
            {
                WriteVarint(buffer, (ulong)(f.Source + 1));
                bool part = f.Source >= 0 && f.CopyDelimiter != 0;
                buffer.Write<byte>([(byte)((f.RangeRelative ? 1 : 0) | (part ? 2 : 0))]);
                if (part) buffer.Write<byte>([f.CopyDelimiter, f.CopySkip]);
            }
            WriteVarint(buffer, (ulong)f.Values.Count);
            foreach (byte[] v in f.Values)
            {
                WriteVarint(buffer, (ulong)v.Length);
                buffer.Write(v);
            }
            buffer.Write<byte>([f.RangeTag]);
            if (f.RangeTag != 0)
            {
                WriteVarint(buffer, Varint64.ZigZag(f.RangeMin));
                buffer.Write<byte>([(byte)f.RangeBits]);
            }
            WriteVarint(buffer, (ulong)f.Templates.Count);
            foreach (TemplateDefinition t in f.Templates)
            {
                WriteVarint(buffer, (ulong)t.Widths.Count);
                for (int s = 0; s <= t.Widths.Count; s++)
                {
                    WriteVarint(buffer, (ulong)t.Literals[s].Length);
                    buffer.Write(t.Literals[s]);
                    if (s == t.Widths.Count) break;
                    buffer.Write<byte>([t.Widths[s]]);
                    if (t.Widths[s] == 0) continue; // the copy slot: nothing more
                    WriteVarint(buffer, (ulong)t.Mins[s]);
                    buffer.Write<byte>([t.Bits[s]]);
                    foreach (ushort frequency in Normalize(t.Counts[s])) WriteVarint(buffer, frequency);
                }
            }
            foreach (ushort frequency in Normalize(f.Counts)) WriteVarint(buffer, frequency);
        }
        byte[] body = buffer.WrittenSpan.ToArray();
        byte[] all = new byte[body.Length + ChecksumLength];
        body.CopyTo(all, 0);
        BinaryPrimitives.WriteUInt32LittleEndian(all.AsSpan(body.Length), XxHash32.HashToUInt32(body));
        return all;
    }

    private static void WriteVarint(System.Buffers.ArrayBufferWriter<byte> buffer, ulong value)
    {
        Span<byte> span = buffer.GetSpan(Varint64.MaxLength);
        Varint64.TryWrite(span, value, out int written);
        buffer.Advance(written);
    }

    /// <summary>Counts scaled to frequencies that add up to <see cref="ScaleTotal"/>, each at least 1.</summary>
    internal static ushort[] Normalize(IReadOnlyList<long> counts)
    {
        if (counts.Count is 0 or > ScaleTotal) throw new ArgumentException($"A field has {counts.Count} symbols; 1 to {ScaleTotal} allowed.", nameof(counts));
        double total = counts.Sum(c => (double)Math.Max(0, c));
        var frequencies = new int[counts.Count];
        int sum = 0;
        for (int i = 0; i < counts.Count; i++)
        {
            frequencies[i] = Math.Max(1, (int)(Math.Max(0, counts[i]) / Math.Max(1, total) * ScaleTotal));
            sum += frequencies[i];
        }
        // Give or take the rounding's difference from the largest symbols first, never below 1.
        int[] order = Enumerable.Range(0, counts.Count).OrderByDescending(i => frequencies[i]).ThenBy(i => i).ToArray();
        for (int k = 0; sum != ScaleTotal; k = (k + 1) % order.Length)
        {
            int i = order[k];
            if (sum < ScaleTotal) { frequencies[i]++; sum++; }
            else if (frequencies[i] > 1) { frequencies[i]--; sum--; }
        }
        return frequencies.Select(f => (ushort)f).ToArray();
    }

    /// <summary>
    /// Reads a serialized model for <paramref name="table"/>, checking everything: size, magic, version, reserved bytes,
    /// checksum, counts, fields in ascending order naming keys of the table, every value one scalar packed token of at
    /// most <see cref="MaxValueLength"/> bytes and none twice in a field, ranges of a numeric tag within 48 bits and
    /// 64-bit arithmetic, templates (at most <see cref="MaxTemplatesPerField"/> a field, none twice; 1 to
    /// <see cref="MaxSlots"/> slots of 1 to <see cref="MaxSlotWidth"/> digits, minimums under 10^width, at most
    /// <see cref="MaxSlotBits"/> bits; at most <see cref="MaxTemplateLength"/> bytes described), frequencies (a field's
    /// symbols: values, bit lengths, templates, escape; each slot's bit lengths) at least 1 adding up to
    /// <see cref="ScaleTotal"/>, no bytes after the end; in version 2, per field a source of the table that is not the
    /// field itself, flags 0 or 1 (relative: with a source and a range), copy slots (width 0) only in a field with a
    /// source and at most one a template, and at least one field with a source; in version 3, as version 2 with flag 0x02
    /// too (copies a part: with a source, followed by a delimiter of ASCII punctuation or space and a skip of at most
    /// <see cref="MaxCopySkip"/>), on at least one field. Every refusal's message starts with "Field model".
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not a valid model for the table; the message says what is wrong.</exception>
    public static FieldModel Parse(ReadOnlySpan<byte> bytes, ShapeTable table)
    {
        if (bytes.Length > MaxSerializedLength) StructureThrow.Corrupt($"Field model has {bytes.Length} bytes; the limit is {MaxSerializedLength}.");
        if (bytes.Length < HeaderLength + 1 + ChecksumLength) StructureThrow.Corrupt($"Field model has {bytes.Length} bytes; at least {HeaderLength + 1 + ChecksumLength} are needed.");
        if (!bytes[..4].SequenceEqual(Magic)) StructureThrow.Corrupt($"Field model does not start with the magic 'FLDM' (found {Convert.ToHexString(bytes[..4])}).");
        if (bytes[4] is not (FormatVersion or SourcesFormatVersion or PartsFormatVersion)) StructureThrow.Corrupt($"Field model format version {bytes[4]} is not supported; this reader knows versions {FormatVersion} to {PartsFormatVersion}.");
        if (bytes[5] != 0 || bytes[6] != 0) StructureThrow.Corrupt("Field model: the reserved bytes are not 0.");
        ReadOnlySpan<byte> body = bytes[..^ChecksumLength];
        uint stored = BinaryPrimitives.ReadUInt32LittleEndian(bytes[^ChecksumLength..]);
        uint actual = XxHash32.HashToUInt32(body);
        if (stored != actual) StructureThrow.Corrupt($"Field model checksum mismatch (stored 0x{stored:x8}, computed 0x{actual:x8}).");
        try
        {
            return ParseBody(body, table, bytes);
        }
        catch (InvalidDataException e) when (e.Message.StartsWith(PackedReaderPrefix, StringComparison.Ordinal))
        {
            // The reader's own messages (a truncated body, a non-minimal varint) name the packed stream: name the model.
            throw new InvalidDataException("Field model: " + e.Message[PackedReaderPrefix.Length..], e);
        }
    }

    private const string PackedReaderPrefix = "Packed stream: ";

    private static FieldModel ParseBody(ReadOnlySpan<byte> body, ShapeTable table, ReadOnlySpan<byte> bytes)
    {
        var reader = new PackedReader(body);
        bool sources = body[4] >= SourcesFormatVersion;
        bool parts = body[4] == PartsFormatVersion;
        bool anyPart = false;
        reader.Skip(HeaderLength);
        ulong fieldCount = reader.Varint();
        if (fieldCount > MaxFields || fieldCount > (ulong)reader.Remaining) StructureThrow.Corrupt($"Field model: {fieldCount} fields; at most {MaxFields} allowed, each taking bytes.");
        var fields = new Field[(int)fieldCount];
        var valueStarts = new List<int> { 0 };
        var sourceKeys = new HashSet<int>();
        var values = new System.Buffers.ArrayBufferWriter<byte>();
        long previousKey = -1;
        for (int f = 0; f < fields.Length; f++)
        {
            ulong keyAndItems = reader.Varint();
            if (keyAndItems >= (ulong)table.TotalKeys * 2) StructureThrow.Corrupt($"Field model: field {f} names key {keyAndItems >> 1}; the shape table has {table.TotalKeys} keys.");
            if ((long)keyAndItems <= previousKey) StructureThrow.Corrupt($"Field model: field {f} is out of order or repeated.");
            previousKey = (long)keyAndItems;
            long source = -1;
            bool relative = false;
            byte delimiter = 0, skip = 0;
            if (sources)
            {
                ulong sourcePlusOne = reader.Varint();
                if (sourcePlusOne > (ulong)table.TotalKeys * 2) StructureThrow.Corrupt($"Field model: field {f}'s source names key {(sourcePlusOne - 1) >> 1}; the shape table has {table.TotalKeys} keys.");
                source = (long)sourcePlusOne - 1;
                if (source == (long)keyAndItems) StructureThrow.Corrupt($"Field model: field {f} is its own source.");
                byte flags = reader.Byte();
                if (flags > (parts ? 3 : 1))
                {
                    StructureThrow.Corrupt(parts
                        ? $"Field model: field {f} has flags 0x{flags:x2}; only 0x01 (a relative range) and 0x02 (copies a part) are defined."
                        : $"Field model: field {f} has flags 0x{flags:x2}; only 0x01 (a relative range) is defined.");
                }
                relative = (flags & 1) != 0;
                if (relative && source < 0) StructureThrow.Corrupt($"Field model: field {f}'s range is relative but it has no source.");
                if ((flags & 2) != 0)
                {
                    if (source < 0) StructureThrow.Corrupt($"Field model: field {f} copies a part of its source but it has no source.");
                    delimiter = reader.Byte();
                    skip = reader.Byte();
                    if (!IsCopyDelimiter(delimiter)) StructureThrow.Corrupt($"Field model: field {f}'s copy delimiter is 0x{delimiter:x2}; allowed: ASCII punctuation or space.");
                    if (skip > MaxCopySkip) StructureThrow.Corrupt($"Field model: field {f}'s copy skips {skip} bytes; at most {MaxCopySkip}.");
                    anyPart = true;
                }
            }
            ulong valueCount = reader.Varint();
            if (valueCount > MaxValuesPerField || (ulong)(valueStarts.Count - 1) + valueCount > MaxValues)
                StructureThrow.Corrupt($"Field model: field {f} has {valueCount} values; at most {MaxValuesPerField} a field and {MaxValues} in all.");
            int first = valueStarts.Count - 1;
            for (ulong i = 0; i < valueCount; i++)
            {
                ulong length = reader.Varint();
                if (length is 0 or > MaxValueLength) StructureThrow.Corrupt($"Field model: field {f} has a value of {length} bytes; 1 to {MaxValueLength} allowed.");
                ReadOnlySpan<byte> value = reader.Bytes((int)length);
                if (PackedTokens.ScalarLength(value) != value.Length) StructureThrow.Corrupt($"Field model: field {f}'s value {Convert.ToHexString(value)} is not one packed scalar value.");
                values.Write(value);
                valueStarts.Add(values.WrittenCount);
            }
            byte rangeTag = reader.Byte();
            long rangeMin = 0;
            int rangeBits = 0;
            if (rangeTag != 0)
            {
                if (!PackedTokens.IsRangeTag(rangeTag)) StructureThrow.Corrupt($"Field model: field {f}'s range has tag 0x{rangeTag:x2}, not a number's.");
                rangeMin = Varint64.UnZigZag(reader.Varint());
                rangeBits = reader.Byte();
                if (rangeBits > MaxRangeBits) StructureThrow.Corrupt($"Field model: field {f}'s range has {rangeBits} bits; at most {MaxRangeBits}.");
                if (rangeMin > long.MaxValue - ((1L << rangeBits) - 1)) StructureThrow.Corrupt($"Field model: field {f}'s range passes the largest 64-bit integer.");
                if (valueCount + (ulong)rangeBits + 2 > ScaleTotal) StructureThrow.Corrupt($"Field model: field {f} has more symbols than {ScaleTotal}.");
            }
            else if (relative) StructureThrow.Corrupt($"Field model: field {f}'s range is relative but it has no range.");
            ulong templateCount = reader.Varint();
            if (templateCount > MaxTemplatesPerField) StructureThrow.Corrupt($"Field model: field {f} has {templateCount} templates; at most {MaxTemplatesPerField}.");
            var templates = new Template[(int)templateCount];
            for (int t = 0; t < templates.Length; t++) templates[t] = ReadTemplate(ref reader, f, t, copies: source >= 0);
            int symbols = (int)valueCount + (rangeTag != 0 ? rangeBits + 1 : 0) + templates.Length + 1;
            if (symbols > ScaleTotal) StructureThrow.Corrupt($"Field model: field {f} has more symbols than {ScaleTotal}.");
            ushort[] cumulative = ReadFrequencies(ref reader, symbols, $"field {f}");
            if (source >= 0) sourceKeys.Add((int)source);
            fields[f] = new Field
            {
                Key = (int)(keyAndItems >> 1), Items = (keyAndItems & 1) != 0, FirstValue = first, ValueCount = (int)valueCount,
                SourceKey = (int)source, RangeRelative = relative, CopyDelimiter = delimiter, CopySkip = skip,
                RangeTag = rangeTag, RangeMin = rangeMin, RangeBits = rangeBits, Cumulative = cumulative, Coarse = CoarseOf(cumulative), Templates = templates,
            };
        }
        if (reader.Remaining != 0) StructureThrow.Corrupt($"Field model: {reader.Remaining} bytes after the end of the model (offset {reader.Position}).");
        // Canonical: a model without sources is written as version 1 (which every reader of codec 8 reads).
        if (sources && sourceKeys.Count == 0) StructureThrow.Corrupt($"Field model: version {body[4]}, but no field has a source (a model without sources is version 1).");
        if (parts && !anyPart) StructureThrow.Corrupt("Field model: version 3, but no field copies a part of its source (such a model is version 2).");
        // Source slots: one per distinct source key, in ascending order of the key.
        int[] ordered = [.. sourceKeys.Order()];
        var sourceSlotOf = new int[ordered.Length == 0 ? 0 : ordered[^1] + 1];
        Array.Fill(sourceSlotOf, -1);
        for (int s = 0; s < ordered.Length; s++) sourceSlotOf[ordered[s]] = s;
        foreach (Field field in fields) field.NumberSource(sourceSlotOf);
        return new FieldModel(fields, values.WrittenSpan.ToArray(), [.. valueStarts], sourceSlotOf, ordered.Length) { Serialized = bytes.ToArray() };
    }

    private static ushort[] ReadFrequencies(ref PackedReader reader, int symbols, string what)
    {
        var cumulative = new ushort[symbols + 1];
        int sum = 0;
        for (int s = 0; s < symbols; s++)
        {
            ulong frequency = reader.Varint();
            if (frequency is 0 or > ScaleTotal || sum + (int)frequency > ScaleTotal)
                StructureThrow.Corrupt($"Field model: {what}'s frequencies are not at least 1 each and {ScaleTotal} in all.");
            sum += (int)frequency;
            cumulative[s + 1] = (ushort)sum;
        }
        if (sum != ScaleTotal) StructureThrow.Corrupt($"Field model: {what}'s frequencies add up to {sum}, not {ScaleTotal}.");
        return cumulative;
    }

    private static Template ReadTemplate(ref PackedReader reader, int f, int t, bool copies)
    {
        int copySlot = -1;
        ulong slots = reader.Varint();
        if (slots is 0 or > MaxSlots) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has {slots} slots; 1 to {MaxSlots} allowed.");
        var literals = new byte[(int)slots + 1][];
        var widths = new byte[(int)slots];
        var mins = new long[(int)slots];
        var bits = new byte[(int)slots];
        var cumulative = new ushort[(int)slots][];
        int length = 0;
        for (int s = 0; ; s++)
        {
            ulong literalLength = reader.Varint();
            if (literalLength > MaxTemplateLength) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has a literal of {literalLength} bytes.");
            literals[s] = reader.Bytes((int)literalLength).ToArray();
            length += literals[s].Length;
            if (s == (int)slots) break;
            widths[s] = reader.Byte();
            if (widths[s] == 0)
            {
                if (!copies) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has a copy slot (width 0) but the field has no source.");
                if (copySlot >= 0) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has more than one copy slot.");
                copySlot = s;
                continue;
            }
            if (widths[s] > MaxSlotWidth) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has a slot {widths[s]} digits wide; 1 to {MaxSlotWidth} allowed.");
            length += widths[s];
            ulong min = reader.Varint();
            if (min >= (ulong)Pow10[widths[s]]) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has a slot minimum {min} of more than its {widths[s]} digits.");
            bits[s] = reader.Byte();
            if (bits[s] > MaxSlotBits) StructureThrow.Corrupt($"Field model: field {f}'s template {t} has a slot of {bits[s]} bits; at most {MaxSlotBits}.");
            mins[s] = (long)min;
            cumulative[s] = ReadFrequencies(ref reader, bits[s] + 1, $"field {f}'s template {t}, slot {s}");
        }
        if (length > MaxTemplateLength) StructureThrow.Corrupt($"Field model: field {f}'s template {t} describes {length} bytes; at most {MaxTemplateLength}.");
        return new Template { Literals = literals, Widths = widths, Mins = mins, Bits = bits, Cumulative = cumulative, Length = length, CopySlot = copySlot };
    }

    /// <summary>10^0 to 10^18.</summary>
    internal static readonly long[] Pow10 = [.. Enumerable.Range(0, 19).Select(e => e == 0 ? 1L : checked((long)Math.Round(Math.Pow(10, e))))];

    /// <summary>The symbol of <paramref name="cumulative"/> whose range holds <paramref name="slot"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int SymbolAt(ushort[] cumulative, int slot)
    {
        int lo = 0, hi = cumulative.Length - 2;
        while (lo < hi)
        {
            int mid = (lo + hi + 1) >> 1;
            if (cumulative[mid] <= slot) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }

    /// <summary>The symbol whose range in field <paramref name="field"/> holds <paramref name="slot"/> (0 to <see cref="ScaleTotal"/> - 1).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int SymbolAt(Field field, int slot)
    {
        // The symbol at the start of the slot's 256th of the scale, then forward: a few steps at most on average.
        ushort[] c = field.Cumulative;
        int s = field.Coarse[slot >> CoarseShift];
        while (c[s + 1] <= slot) s++;
        return s;
    }

    private const int CoarseShift = ScaleBits - 8;

    /// <summary>For each of the 256 equal parts of the scale, the symbol whose range holds its first slot.</summary>
    private static ushort[] CoarseOf(ushort[] cumulative)
    {
        var coarse = new ushort[256];
        int s = 0;
        for (int i = 0; i < coarse.Length; i++)
        {
            int slot = i << CoarseShift;
            while (cumulative[s + 1] <= slot) s++;
            coarse[i] = (ushort)s;
        }
        return coarse;
    }
}

/// <summary>Token-level facts of the packed stream the field coder needs.</summary>
internal static class PackedTokens
{
    /// <summary>
    /// The length of the scalar value (tag and payload) at the start of <paramref name="token"/>; -1 for an object or an
    /// array, -2 when it is not a well-formed value (unknown tag, truncated, non-minimal varint).
    /// </summary>
    public static int ScalarLength(ReadOnlySpan<byte> token)
    {
        if (token.IsEmpty) return -2;
        byte tag = token[0];
        if (tag >= PackedTag.ShortString) return 1 + tag - PackedTag.ShortString <= token.Length ? 1 + tag - PackedTag.ShortString : -2;
        switch (tag)
        {
            case PackedTag.Null or PackedTag.False or PackedTag.True: return 1;
            case PackedTag.Object or PackedTag.Array: return -1;
            case PackedTag.String or PackedTag.NumberText:
                return LengthPrefixed(token, 1, 0);
            case PackedTag.Integer or PackedTag.Int64 or PackedTag.DateTime:
            case >= PackedTag.Decimal and <= PackedTag.Decimal + PackedTag.MaxScale:
                return Varint64.TryRead(token[1..], out _, out int read) ? 1 + read : -2;
            case PackedTag.Double: return token.Length >= 9 ? 9 : -2;
            case PackedTag.ObjectId: return token.Length >= 13 ? 13 : -2;
            case PackedTag.Binary: return LengthPrefixed(token, 1, 1);
            case PackedTag.BsonRaw: return token.Length >= 2 ? LengthPrefixed(token, 2, 0) : -2;
            default: return -2;
        }
    }

    /// <summary>A varint length at <paramref name="at"/>, <paramref name="extra"/> bytes, then that many bytes.</summary>
    private static int LengthPrefixed(ReadOnlySpan<byte> token, int at, int extra)
    {
        if (!Varint64.TryRead(token[at..], out ulong length, out int read)) return -2;
        long total = (long)at + read + extra + (long)Math.Min(length, int.MaxValue);
        return length <= int.MaxValue && total <= token.Length ? (int)total : -2;
    }

    /// <summary>The content of a string token (short, its length in the tag; or long, a varint length first); false for any other token.</summary>
    public static bool TryGetString(ReadOnlySpan<byte> token, out ReadOnlySpan<byte> text)
    {
        text = default;
        if (token.IsEmpty) return false;
        if (token[0] >= PackedTag.ShortString) text = token[1..];
        else if (token[0] == PackedTag.String && Varint64.TryRead(token[1..], out _, out int read)) text = token[(1 + read)..];
        else return false;
        return true;
    }

    /// <summary>Tags whose payload is one zigzag varint: what a field's range may code.</summary>
    public static bool IsRangeTag(byte tag) => tag is PackedTag.Integer or PackedTag.Int64 or PackedTag.DateTime
        or (>= PackedTag.Decimal and <= PackedTag.Decimal + PackedTag.MaxScale);
}
