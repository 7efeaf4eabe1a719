namespace Compression.Structure;

/// <summary>
/// Learns a <see cref="FieldModel"/> from the packed streams of training samples: per field (a key of the shape table,
/// or its array's items), the values seen at least twice (at most <see cref="FieldModel.MaxValuesPerField"/>, the most
/// frequent first, ties by their bytes) and, for the commonest numeric tag, a range widened past what the samples show.
/// A field gets a model when its table would code at least <see cref="MinCodedShare"/> of its sample values, or its
/// range would. The model depends on the samples, not on their order.
/// </summary>
internal sealed class FieldModelBuilder
{
    /// <summary>The share of a field's sample values a table or range must code for the field to get a model.</summary>
    public const double MinCodedShare = 0.25;

    /// <summary>Distinct values tracked per field; past it, new values are counted as escapes.</summary>
    private const int MaxTrackedValues = 1 << 16;

    private readonly ShapeTable _table;
    private readonly Dictionary<int, FieldStats> _fields = [];

    public FieldModelBuilder(ShapeTable table) => _table = table;

    private sealed class FieldStats
    {
        public long Values;
        public readonly Dictionary<byte[], long> Counts = new(ShapeTableBuilder.ByteArrayComparer.Instance);
        public readonly Dictionary<byte, NumericStats> Numbers = [];
    }

    private sealed class NumericStats
    {
        public readonly List<long> Values = [];
    }

    /// <summary>Adds one sample's packed stream (from this table's transform). False when it is not well-formed (then nothing is counted).</summary>
    public bool Add(ReadOnlySpan<byte> packed)
    {
        var values = new List<(int Field, byte[]? Token)>();
        try
        {
            var reader = new PackedReader(packed);
            Object(ref reader, values, 1);
            reader.End();
        }
        catch (InvalidDataException)
        {
            return false;
        }
        foreach ((int field, byte[]? token) in values)
        {
            if (!_fields.TryGetValue(field, out FieldStats? stats)) _fields[field] = stats = new FieldStats();
            stats.Values++;
            if (token is null) continue;
            if (token.Length <= FieldModel.MaxValueLength && (stats.Counts.Count < MaxTrackedValues || stats.Counts.ContainsKey(token)))
                stats.Counts[token] = stats.Counts.GetValueOrDefault(token) + 1;
            if (PackedTokens.IsRangeTag(token[0]) && Varint64.TryRead(token.AsSpan(1), out ulong zigzag, out _))
            {
                if (!stats.Numbers.TryGetValue(token[0], out NumericStats? n)) stats.Numbers[token[0]] = n = new NumericStats();
                n.Values.Add(Varint64.UnZigZag(zigzag));
            }
        }
        return true;
    }

    private void Object(ref PackedReader reader, List<(int, byte[]?)> values, int depth)
    {
        if (depth > PackScratch.MaxDepth) StructureThrow.Corrupt("Packed stream: nested too deep.");
        int id = JsonUnpacker.ShapeId(ref reader, _table);
        if (id != 0)
        {
            int first = _table.FirstKey(id), count = _table.KeyCount(id);
            for (int m = 0; m < count; m++) Value(ref reader, values, first + m, items: false, depth);
            return;
        }
        int inline = reader.Count("inline key count");
        for (int m = 0; m < inline; m++)
        {
            reader.Bytes(reader.Count("key length"));
            Value(ref reader, values, -1, items: false, depth);
        }
    }

    private void Value(ref PackedReader reader, List<(int, byte[]?)> values, int key, bool items, int depth)
    {
        int length = PackedTokens.ScalarLength(reader.Ahead);
        if (length == -2) StructureThrow.Corrupt("Packed stream: no value.");
        if (length > 0)
        {
            ReadOnlySpan<byte> token = reader.Bytes(length);
            if (key >= 0) values.Add((key * 2 + (items ? 1 : 0), token.ToArray()));
            return;
        }
        if (key >= 0) values.Add((key * 2 + (items ? 1 : 0), null));
        byte tag = reader.Byte();
        if (tag == PackedTag.Object)
        {
            Object(ref reader, values, depth + 1);
            return;
        }
        int count = reader.Count("array length");
        for (int i = 0; i < count; i++) Value(ref reader, values, key, items: true, depth + 1);
    }

    /// <summary>The model, or null when no field pays.</summary>
    public FieldModel? Build() => Build(BuildDefinitions());

    /// <summary>The model of some of the fields <see cref="BuildDefinitions"/> gave, or null when there are none.</summary>
    public FieldModel? Build(IReadOnlyList<FieldModel.FieldDefinition> definitions) =>
        definitions.Count == 0 ? null : FieldModel.Create(_table, definitions);

    /// <summary>Every field that passes the rules of the type, in the model's order.</summary>
    public List<FieldModel.FieldDefinition> BuildDefinitions()
    {
        var definitions = new List<FieldModel.FieldDefinition>();
        int totalValues = 0;
        foreach ((int field, FieldStats stats) in _fields.OrderBy(pair => pair.Key))
        {
            if (definitions.Count >= FieldModel.MaxFields) break;
            List<KeyValuePair<byte[], long>> table = [.. stats.Counts
                .Where(pair => pair.Value >= 2)
                .OrderByDescending(pair => pair.Value)
                .ThenBy(pair => pair.Key, ShapeTableBuilder.ByteArrayComparer.Instance)
                .Take(Math.Min(FieldModel.MaxValuesPerField, FieldModel.MaxValues - totalValues))];
            long hits = table.Sum(pair => pair.Value);
            var inTable = new HashSet<byte[]>(table.Select(pair => pair.Key), ShapeTableBuilder.ByteArrayComparer.Instance);

            // The range: the numeric tag with the most values outside the table. It counts from below its smallest value
            // (an eighth of the span lower) and reaches past its largest (half the span higher: counters and timestamps
            // grow); each bit length of (value - min) is a symbol with its training frequency.
            byte rangeTag = 0;
            long rangeMin = 0, rangeCount = 0;
            int rangeBits = 0;
            long[] buckets = [];
            foreach ((byte tag, NumericStats n) in stats.Numbers.OrderBy(pair => pair.Key))
            {
                long outside = n.Values.Count - table.Where(pair => pair.Key[0] == tag).Sum(pair => pair.Value);
                if (outside <= rangeCount) continue;
                long min = n.Values.Min(), max = n.Values.Max();
                double width = (double)max - min + 1;
                double low = Math.Max(long.MinValue / 2, min - Math.Floor(width / 8));
                double high = max + Math.Ceiling(width / 2);
                int bits = (int)Math.Ceiling(Math.Log2(high - low + 1));
                if (bits > FieldModel.MaxRangeBits || high >= long.MaxValue / 2) continue;
                (rangeTag, rangeMin, rangeBits, rangeCount) = (tag, (long)low, bits, outside);
                buckets = new long[bits + 1];
                foreach (long value in n.Values) buckets[64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)(value - (long)low))]++;
            }
            bool useTable = hits >= stats.Values * MinCodedShare;
            bool useRange = rangeTag != 0 && rangeCount >= stats.Values * MinCodedShare;
            if (!useTable && !useRange) continue;
            if (!useTable) { table.Clear(); hits = 0; }
            var counts = new List<long>(table.Select(pair => pair.Value));
            if (useRange) counts.AddRange(buckets);
            else rangeCount = 0;
            counts.Add(Math.Max(1, stats.Values - hits - rangeCount));
            definitions.Add(new FieldModel.FieldDefinition(field >> 1, (field & 1) != 0, [.. table.Select(pair => pair.Key)],
                useRange ? rangeTag : (byte)0, useRange ? rangeMin : 0, useRange ? rangeBits : 0, counts)
            {
                Coded = table.Sum(pair => pair.Value * pair.Key.Length) + (useRange ? rangeCount * 4 : 0),
            });
            totalValues += table.Count;
        }
        return definitions;
    }
}
