namespace Compression.Structure;

/// <summary>
/// Learns a <see cref="FieldModel"/> from the packed streams of training samples: per field (a key of the shape table,
/// or its array's items), the values seen at least twice (at most <see cref="FieldModel.MaxValuesPerField"/>, the most
/// frequent first, ties by their bytes), for the numeric tag with the most values outside the table a range widened
/// past what the samples show, and the templates of its other strings seen at least twice. A field gets a model when
/// its parts (each coding at least <see cref="MinPartShare"/>) together code at least <see cref="MinCodedShare"/> of
/// its sample values. The model depends on the samples, not on their order.
/// </summary>
internal sealed class FieldModelBuilder
{
    /// <summary>The share of a field's sample values its table, range and templates must code together for the field to get a model.</summary>
    public const double MinCodedShare = 0.25;

    /// <summary>The escape's least probability in a field: 1 / EscapeShare.</summary>
    private const int EscapeShare = 64;

    /// <summary>
    /// Bit lengths a range or a template slot takes past what its widened span needs, each with the least frequency:
    /// a number up to 4x further from the minimum than the samples' still codes (for about 12 bits more) instead of
    /// escaping.
    /// </summary>
    private const int ExtraBits = 2;

    /// <summary>The share of a field's sample values one part (table, range, templates) must code to be kept.</summary>
    public const double MinPartShare = 0.05;

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
        public readonly List<byte[]> Strings = []; // string tokens short enough for a template
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
            if ((token[0] >= PackedTag.ShortString || token[0] == PackedTag.String) && token.Length <= FieldModel.MaxTemplateLength + 4)
                stats.Strings.Add(token);
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

    /// <summary>
    /// The templates of a field's strings outside its table: those seen at least twice (at most
    /// <see cref="FieldModel.MaxTemplatesPerField"/>, most frequent first, ties by their keys), each slot's range from an
    /// eighth of its span below its smallest number to half its span above its largest (within its width), with the
    /// counts of each bit length; and how many strings (and bytes) they code.
    /// </summary>
    private static (List<FieldModel.TemplateDefinition>, List<long>, long, long) Templates(List<byte[]> strings, HashSet<byte[]> inTable)
    {
        var groups = new Dictionary<byte[], (byte[] Token, List<long[]> Numbers)>(ShapeTableBuilder.ByteArrayComparer.Instance);
        byte[] key = new byte[FieldModel.MaxKeyLength];
        long[] numbers = new long[FieldModel.MaxSlots];
        foreach (byte[] token in strings)
        {
            if (inTable.Contains(token)) continue;
            if (!PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text)
                || !FieldModel.TrySplitTemplate(text, key, out int keyLength, numbers, out int slots)) continue;
            byte[] k = key[..keyLength];
            if (!groups.TryGetValue(k, out var group)) groups[k] = group = (token, []);
            group.Numbers.Add(numbers[..slots]);
        }
        var definitions = new List<FieldModel.TemplateDefinition>();
        var counts = new List<long>();
        long templated = 0, bytes = 0;
        foreach ((byte[] k, (byte[] token, List<long[]> rows)) in groups
            .Where(pair => pair.Value.Numbers.Count >= 2)
            .OrderByDescending(pair => pair.Value.Numbers.Count)
            .ThenBy(pair => pair.Key, ShapeTableBuilder.ByteArrayComparer.Instance)
            .Take(FieldModel.MaxTemplatesPerField))
        {
            (List<byte[]> literals, List<byte> widths) = Parts(token);
            int slots = widths.Count;
            var mins = new long[slots];
            var bits = new byte[slots];
            var slotCounts = new List<long>[slots];
            for (int s = 0; s < slots; s++)
            {
                long min = rows.Min(r => r[s]), max = rows.Max(r => r[s]);
                long span = max - min + 1;
                long low = Math.Max(0, min - span / 8);
                long high = Math.Min(FieldModel.Pow10[widths[s]] - 1, max + (span + 1) / 2);
                int b = Math.Min(FieldModel.MaxSlotBits, (high == low ? 0 : 64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)(high - low))) + ExtraBits);
                mins[s] = low;
                bits[s] = (byte)b;
                var histogram = new long[b + 1];
                foreach (long[] r in rows) histogram[64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)(r[s] - low))]++;
                slotCounts[s] = [.. histogram];
            }
            definitions.Add(new FieldModel.TemplateDefinition(literals, widths, mins, bits, slotCounts));
            counts.Add(rows.Count);
            templated += rows.Count;
            bytes += (long)rows.Count * token.Length;
        }
        return (definitions, counts, templated, bytes);
    }

    /// <summary>A string token's literals and digit-run widths.</summary>
    private static (List<byte[]> Literals, List<byte> Widths) Parts(byte[] token)
    {
        PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text); // a string: Templates took it for one
        var literals = new List<byte[]>();
        var widths = new List<byte>();
        int i = 0, start = 0;
        while (true)
        {
            while (i < text.Length && (uint)(text[i] - '0') > 9) i++;
            literals.Add(text[start..i].ToArray());
            if (i == text.Length) break;
            int run = i;
            while (i < text.Length && (uint)(text[i] - '0') <= 9) i++;
            widths.Add((byte)(i - run));
            start = i;
        }
        return (literals, widths);
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
                int needed = (int)Math.Ceiling(Math.Log2(high - low + 1));
                if (needed > FieldModel.MaxRangeBits || high >= long.MaxValue / 2) continue;
                int bits = Math.Min(FieldModel.MaxRangeBits, needed + ExtraBits);
                (rangeTag, rangeMin, rangeBits, rangeCount) = (tag, (long)low, bits, outside);
                buckets = new long[bits + 1];
                foreach (long value in n.Values) buckets[64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)(value - (long)low))]++;
            }
            // Templates: the strings outside the table, by their pattern of literals and digit runs.
            (List<FieldModel.TemplateDefinition> templates, List<long> templateCounts, long templated, long templatedBytes) = Templates(stats.Strings, inTable);

            // Each part is kept when it codes at least a twentieth of the field's values, and the field when together
            // they code at least MinCodedShare.
            bool useTable = hits >= stats.Values * MinPartShare;
            bool useRange = rangeTag != 0 && rangeCount >= stats.Values * MinPartShare;
            bool useTemplates = templated >= stats.Values * MinPartShare;
            long coded = (useTable ? hits : 0) + (useRange ? rangeCount : 0) + (useTemplates ? templated : 0);
            if (coded < stats.Values * MinCodedShare) continue;
            if (!useTable) { table.Clear(); hits = 0; }
            if (!useTemplates) { templates.Clear(); templateCounts.Clear(); templated = 0; templatedBytes = 0; }
            var counts = new List<long>(table.Select(pair => pair.Value));
            if (useRange) counts.AddRange(buckets);
            else rangeCount = 0;
            counts.AddRange(templateCounts);
            // The escape keeps at least 1/64 of the field's probability: values unlike the samples (timestamps past the
            // samples', in a collection written in time order) cost at most 6 bits more than they would without a model.
            counts.Add(Math.Max(Math.Max(1, stats.Values / EscapeShare), stats.Values - hits - rangeCount - templated));
            definitions.Add(new FieldModel.FieldDefinition(field >> 1, (field & 1) != 0, [.. table.Select(pair => pair.Key)],
                useRange ? rangeTag : (byte)0, useRange ? rangeMin : 0, useRange ? rangeBits : 0, counts)
            {
                Coded = table.Sum(pair => pair.Value * pair.Key.Length) + (useRange ? rangeCount * 4 : 0) + templatedBytes,
                Templates = templates,
            });
            totalValues += table.Count;
        }
        return definitions;
    }
}
