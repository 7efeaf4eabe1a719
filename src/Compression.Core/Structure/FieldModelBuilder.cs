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

    /// <summary>The share of a field's strings that must hold the same other key's latest string for that key to become its source.</summary>
    private const double MinCopyShare = 0.25;

    /// <summary>The share of a field's numbers that must follow the same other key's latest number for that key to become its source.</summary>
    private const double MinRelativeShare = 0.75;

    /// <summary>
    /// The keys, most recently valued first, a value is compared with when sources are chosen: bounds the search to
    /// linear in a sample's values (a document of thousands of keys would otherwise cost their square). Sources found in
    /// the reference corpora are at most 25 keys back (earthquakes' <c>title</c> from its <c>place</c>).
    /// </summary>
    internal const int MaxSourceCandidates = 64;

    /// <summary>The bits a number must save on average, counted from a source rather than from the field's minimum, for the range to be relative.</summary>
    private const double MinRelativeGain = 2;

    private readonly ShapeTable _table;
    private readonly Dictionary<int, FieldStats> _fields = [];
    private readonly List<(int Field, byte[]? Token)[]> _documents = []; // every sample's values in walk order, for sources

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
        _documents.Add([.. values]);
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
    private static (List<FieldModel.TemplateDefinition>, List<long>, long, long) Templates(List<(byte[] Token, byte[]? Copy)> strings, HashSet<byte[]> inTable)
    {
        var groups = new Dictionary<byte[], (byte[] Token, List<long[]> Numbers)>(ShapeTableBuilder.ByteArrayComparer.Instance);
        byte[] key = new byte[FieldModel.MaxKeyLength];
        long[] numbers = new long[FieldModel.MaxSlots];
        foreach ((byte[] token, byte[]? copy) in strings)
        {
            if (inTable.Contains(token)) continue;
            if (!PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text)) continue;
            // As the coder does: the source's latest string as a copy slot where the text holds it, else digit runs alone.
            int at = copy is null ? -1 : text.IndexOf(copy);
            int keyLength, slots;
            if (!(at >= 0 && FieldModel.TrySplitTemplate(text, at, copy!.Length, key, out keyLength, numbers, out slots))
                && !FieldModel.TrySplitTemplate(text, key, out keyLength, numbers, out slots)) continue;
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
            (List<byte[]> literals, List<byte> widths) = FieldModel.PartsOfKey(k);
            int slots = widths.Count;
            var mins = new long[slots];
            var bits = new byte[slots];
            var slotCounts = new List<long>[slots];
            for (int s = 0; s < slots; s++)
            {
                if (widths[s] == 0)
                {
                    slotCounts[s] = [1]; // the copy slot: no number
                    continue;
                }
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

    /// <summary>
    /// A source a field takes: the key (index * 2 + items) whose latest value its strings hold (all of it, or the part a
    /// delimiter and skip name: <see cref="FieldModel.TryCopyPart"/>), or its numbers follow.
    /// </summary>
    private readonly record struct Source(int Key, bool Numeric, byte Delimiter = 0, byte Skip = 0);

    /// <summary>The most bytes past a delimiter a part is looked for at in training (the format allows <see cref="FieldModel.MaxCopySkip"/>).</summary>
    private const int MaxSkipTried = 3;

    /// <summary>
    /// The parts of <paramref name="source"/>'s string <paramref name="text"/> holds, as (delimiter, skip, length): all of
    /// it (delimiter 0) when it holds it; else, when it holds the string's last <see cref="FieldModel.MinCopyLength"/>
    /// bytes, each part after the last occurrence of a delimiter byte (<see cref="FieldModel.IsCopyDelimiter"/>) less 0 to
    /// <see cref="MaxSkipTried"/> bytes, of at least <see cref="FieldModel.MinCopyLength"/> bytes, that it holds.
    /// </summary>
    internal static IEnumerable<(byte Delimiter, byte Skip, int Length)> PartsHeld(byte[] text, byte[] source)
    {
        if (source.Length < FieldModel.MinCopyLength) yield break;
        if (text.AsSpan().IndexOf(source) >= 0)
        {
            yield return (0, 0, source.Length);
            yield break;
        }
        if (text.AsSpan().IndexOf(source.AsSpan(source.Length - FieldModel.MinCopyLength)) < 0) yield break;
        var seen = new bool[128]; // an iterator holds no span across its yields
        for (int at = source.Length - 1; at >= 0; at--)
        {
            byte d = source[at];
            if (!FieldModel.IsCopyDelimiter(d) || seen[d]) continue; // not a delimiter, or not its last occurrence
            seen[d] = true;
            for (int skip = 0; skip <= MaxSkipTried; skip++)
            {
                int start = at + 1 + skip;
                if (source.Length - start < FieldModel.MinCopyLength) break;
                if (text.AsSpan().IndexOf(source.AsSpan(start)) >= 0) yield return (d, (byte)skip, source.Length - start);
            }
        }
    }

    /// <summary>
    /// Per field, the other key whose latest value in the document (before the field's value, in walk order; an object
    /// or an array clears it) its values depend on, when one does often enough: for strings, the key whose latest string
    /// (of at least <see cref="FieldModel.MinCopyLength"/> bytes) they hold most bytes of, in at least
    /// <see cref="MinCopyShare"/> of them; for numbers, the key whose latest number they are nearest to (fewest bits of
    /// difference on average), for at least <see cref="MinRelativeShare"/> of them, saving <see cref="MinRelativeGain"/>
    /// bits a number or more over counting from the field's own minimum.
    /// </summary>
    private Dictionary<int, Source> ChooseSources()
    {
        var copies = new Dictionary<(int Field, int Source, byte Delimiter, byte Skip), (long Bytes, long Count)>();
        var nearness = new Dictionary<(int Field, int Source), (long Bits, long Count)>();
        var strings = new Dictionary<int, long>();
        var latest = new RecentValues();
        foreach ((int Field, byte[]? Token)[] document in _documents)
        {
            latest.Clear();
            foreach ((int field, byte[]? token) in document)
            {
                if (token is not null && PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text))
                {
                    strings[field] = strings.GetValueOrDefault(field) + 1;
                    if (text.Length <= FieldModel.MaxTemplateLength)
                    {
                        byte[]? held = null;
                        foreach ((int source, byte[]? other) in latest.MostRecent(MaxSourceCandidates))
                        {
                            // Every part ends where the source's string ends: without its last bytes in the text, none is there.
                            if (source == field || other is null || !PackedTokens.TryGetString(other, out ReadOnlySpan<byte> copy)
                                || copy.Length < FieldModel.MinCopyLength || text.IndexOf(copy[^FieldModel.MinCopyLength..]) < 0) continue;
                            held ??= text.ToArray();
                            foreach ((byte delimiter, byte skip, int length) in PartsHeld(held, copy.ToArray()))
                            {
                                (long bytes, long count) = copies.GetValueOrDefault((field, source, delimiter, skip));
                                copies[(field, source, delimiter, skip)] = (bytes + length, count + 1);
                            }
                        }
                    }
                }
                else if (token is not null && TryNumber(token, out long value))
                {
                    foreach ((int source, byte[]? other) in latest.MostRecent(MaxSourceCandidates))
                    {
                        if (source == field || other is null || !TryNumber(other, out long from)) continue;
                        ulong zigzag = Varint64.ZigZag((long)((ulong)value - (ulong)from));
                        (long bits, long count) = nearness.GetValueOrDefault((field, source));
                        nearness[(field, source)] = (bits + 64 - System.Numerics.BitOperations.LeadingZeroCount(zigzag), count + 1);
                    }
                }
                latest.Set(field, token);
            }
        }
        var sources = new Dictionary<int, Source>();
        foreach (var group in copies.GroupBy(pair => pair.Key.Field))
        {
            // The key whose whole string the values hold most bytes of, when it is held often enough; else the part of
            // a key's string that covers the most bytes, when it is (a whole string is one template where its parts
            // may need several: emoji's hexcodes lose half a byte a document if parts come first).
            var best = group.Where(pair => pair.Key.Delimiter == 0).OrderByDescending(pair => pair.Value.Bytes).ThenBy(pair => pair.Key.Source).FirstOrDefault();
            if (best.Value.Count < strings[group.Key] * MinCopyShare)
            {
                best = group.Where(pair => pair.Key.Delimiter != 0).OrderByDescending(pair => pair.Value.Bytes).ThenBy(pair => pair.Key.Source)
                    .ThenBy(pair => pair.Key.Delimiter).ThenBy(pair => pair.Key.Skip).FirstOrDefault();
            }
            if (best.Value.Count > 0 && best.Value.Count >= strings[group.Key] * MinCopyShare)
                sources[group.Key] = new Source(best.Key.Source, Numeric: false, best.Key.Delimiter, best.Key.Skip);
        }
        foreach (var group in nearness.GroupBy(pair => pair.Key.Field))
        {
            FieldStats stats = _fields[group.Key];
            long numbers = stats.Numbers.Values.Sum(n => (long)n.Values.Count);
            var best = group.Where(pair => pair.Value.Count >= numbers * MinRelativeShare)
                .OrderBy(pair => (double)pair.Value.Bits / pair.Value.Count).ThenBy(pair => pair.Key.Source).FirstOrDefault();
            if (best.Value.Count == 0 || numbers <= strings.GetValueOrDefault(group.Key)) continue;
            double own = stats.Numbers.Values.Sum(n => OwnBits(n.Values)) / numbers;
            if ((double)best.Value.Bits / best.Value.Count + MinRelativeGain <= own) sources[group.Key] = new Source(best.Key.Source, Numeric: true);
        }
        return sources;
    }

    /// <summary>The latest value of each key in a document, enumerable most recently set first (a key set again moves to the front).</summary>
    private sealed class RecentValues
    {
        private readonly LinkedList<(int Key, byte[]? Token)> _order = new();
        private readonly Dictionary<int, LinkedListNode<(int Key, byte[]? Token)>> _nodes = [];

        public void Clear()
        {
            _order.Clear();
            _nodes.Clear();
        }

        public void Set(int key, byte[]? token)
        {
            if (_nodes.Remove(key, out LinkedListNode<(int, byte[]?)>? node)) _order.Remove(node);
            _nodes[key] = _order.AddFirst((key, token));
        }

        public IEnumerable<(int Key, byte[]? Token)> MostRecent(int count)
        {
            for (LinkedListNode<(int Key, byte[]? Token)>? node = _order.First; node is not null && count-- > 0; node = node.Next) yield return node.Value;
        }
    }

    /// <summary>The bits of a tag's numbers counted from their smallest, in all.</summary>
    private static double OwnBits(List<long> values)
    {
        long min = values.Min();
        return values.Sum(v => (double)(64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)v - (ulong)min)));
    }

    private static bool TryNumber(byte[] token, out long value)
    {
        value = 0;
        if (!PackedTokens.IsRangeTag(token[0]) || !Varint64.TryRead(token.AsSpan(1), out ulong zigzag, out _)) return false;
        value = Varint64.UnZigZag(zigzag);
        return true;
    }

    /// <summary>
    /// Replays the samples for the fields with a source: for a string source, each string with the source's latest string
    /// when it holds it (else none); for a number source, per numeric tag, each number less the source's latest number
    /// (modulo 2^64), for the numbers that have one.
    /// </summary>
    private (Dictionary<int, List<(byte[], byte[]?)>> Strings, Dictionary<int, Dictionary<byte, List<long>>> Offsets) Replay(Dictionary<int, Source> sources)
    {
        var strings = new Dictionary<int, List<(byte[], byte[]?)>>();
        var offsets = new Dictionary<int, Dictionary<byte, List<long>>>();
        var latest = new Dictionary<int, byte[]?>();
        foreach ((int Field, byte[]? Token)[] document in _documents)
        {
            latest.Clear();
            foreach ((int field, byte[]? token) in document)
            {
                if (token is not null && sources.TryGetValue(field, out Source source))
                {
                    byte[]? other = latest.GetValueOrDefault(source.Key);
                    if (!source.Numeric && PackedTokens.TryGetString(token, out ReadOnlySpan<byte> text) && text.Length <= FieldModel.MaxTemplateLength + 4)
                    {
                        byte[]? copy = other is not null && PackedTokens.TryGetString(other, out ReadOnlySpan<byte> c)
                            && FieldModel.TryCopyPart(c, source.Delimiter, source.Skip, out c) && c.Length >= FieldModel.MinCopyLength && text.IndexOf(c) >= 0 ? c.ToArray() : null;
                        if (!strings.TryGetValue(field, out var list)) strings[field] = list = [];
                        list.Add((token, copy));
                    }
                    else if (source.Numeric && TryNumber(token, out long value) && other is not null && TryNumber(other, out long from))
                    {
                        if (!offsets.TryGetValue(field, out var byTag)) offsets[field] = byTag = [];
                        if (!byTag.TryGetValue(token[0], out var list)) byTag[token[0]] = list = [];
                        list.Add((long)((ulong)value - (ulong)from));
                    }
                }
                latest[field] = token;
            }
        }
        return (strings, offsets);
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
        Dictionary<int, Source> sources = ChooseSources();
        (Dictionary<int, List<(byte[], byte[]?)>> sourcedStrings, Dictionary<int, Dictionary<byte, List<long>>> offsets) = Replay(sources);
        foreach ((int field, FieldStats stats) in _fields.OrderBy(pair => pair.Key))
        {
            Source? source = sources.TryGetValue(field, out Source s) ? s : null;
            bool relative = source is { Numeric: true };
            if (definitions.Count >= FieldModel.MaxFields) break;
            // With a number source, numbers are coded from it (a relative range), not as table entries.
            List<KeyValuePair<byte[], long>> table = [.. stats.Counts
                .Where(pair => pair.Value >= 2 && !(relative && PackedTokens.IsRangeTag(pair.Key[0])))
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
                // A relative range counts the numbers that follow a source number, as their offsets from it.
                List<long> numbers = relative ? offsets.GetValueOrDefault(field)?.GetValueOrDefault(tag) ?? [] : n.Values;
                long outside = numbers.Count - table.Where(pair => pair.Key[0] == tag).Sum(pair => pair.Value);
                if (outside <= rangeCount || numbers.Count == 0) continue;
                long min = numbers.Min(), max = numbers.Max();
                double width = (double)max - min + 1;
                double low = Math.Max(long.MinValue / 2, min - Math.Floor(width / 8));
                double high = max + Math.Ceiling(width / 2);
                int needed = (int)Math.Ceiling(Math.Log2(high - low + 1));
                if (needed > FieldModel.MaxRangeBits || high >= long.MaxValue / 2) continue;
                int bits = Math.Min(FieldModel.MaxRangeBits, needed + ExtraBits);
                (rangeTag, rangeMin, rangeBits, rangeCount) = (tag, (long)low, bits, outside);
                buckets = new long[bits + 1];
                foreach (long value in numbers) buckets[64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)(value - (long)low))]++;
            }
            // Templates: the strings outside the table, by their pattern of literals and digit runs.
            (List<FieldModel.TemplateDefinition> templates, List<long> templateCounts, long templated, long templatedBytes) = Templates(
                source is { Numeric: false } ? sourcedStrings.GetValueOrDefault(field) ?? [] : [.. stats.Strings.Select(t => (t, (byte[]?)null))], inTable);

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
            // The source stays only where a part uses it: a template that copies, or the relative range.
            bool copies = templates.Any(t => t.Widths.Contains((byte)0));
            bool keepSource = source is { Numeric: false } ? copies : relative && useRange;
            definitions.Add(new FieldModel.FieldDefinition(field >> 1, (field & 1) != 0, [.. table.Select(pair => pair.Key)],
                useRange ? rangeTag : (byte)0, useRange ? rangeMin : 0, useRange ? rangeBits : 0, counts)
            {
                Source = keepSource ? source!.Value.Key : -1,
                RangeRelative = keepSource && relative,
                CopyDelimiter = keepSource && !relative ? source!.Value.Delimiter : (byte)0,
                CopySkip = keepSource && !relative ? source!.Value.Skip : (byte)0,
                Coded = table.Sum(pair => pair.Value * pair.Key.Length) + (useRange ? rangeCount * 4 : 0) + templatedBytes,
                Templates = templates,
            });
            totalValues += table.Count;
        }
        return definitions;
    }
}
