using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;

namespace Compression.Structure;

// The model's bytes (docs/field-model.md): the definitions training builds, their deterministic serialization, and the
// parse that checks every field of an untrusted record.
internal sealed partial class FieldModel
{
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
}
