using System.Buffers.Binary;
using System.IO.Hashing;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;

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
internal sealed partial class FieldModel
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
