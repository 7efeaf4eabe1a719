using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Compression.StructureAnalysis;

/// <summary>
/// <c>Compression.StructureAnalysis fields FILE.jsonl...</c>: how much of a collection's values a per-field model could
/// code (issue #37, step 1: the measurement the design starts from). Each corpus is split (seed 42) into a 20% training
/// share and the 80% held out, as the engine trains. Every leaf value is taken with its field path (array items under
/// <c>path[]</c>) as its raw JSON text. From the training share, each path gets a value table: the values seen at least
/// twice (at most 4,096), with their counts. On the held-out documents it reports, per corpus and for the fields that
/// hold the most value bytes:
/// <list type="bullet">
/// <item>hits: values found in their field's table (share of values, and of value bytes);</item>
/// <item>index bits: what coding each hit as its index costs with an entropy coder using the training counts
/// (-log2 p, an escape symbol taking the training share of values not in the table), and each miss's escape symbol;</item>
/// <item>range bits: integers that miss, coded as an offset in the field's training range [min, max] (log2 of its width),
/// when they fall inside it;</item>
/// <item>templated strings: strings that miss, whose template (digit runs replaced by slots of their width) was seen at
/// least twice in training with every slot inside its training range: the template's index and each slot as an offset;</item>
/// <item>left: the bytes of the values nothing above codes (what zstd and its dictionary would still see).</item>
/// </list>
/// Keys and structure are not counted (the shape table already removes them). A measurement of potential: nothing here
/// is a codec.
/// </summary>
internal static class FieldAnalysis
{
    private const int MaxTable = 4096;

    public static int Run(IReadOnlyList<string> files)
    {
        var report = new StringBuilder();
        report.AppendLine("| corpus | held-out docs | value bytes/doc | hits (values) | hits (bytes) | index + escape bits/doc | range-coded ints | templated strings | left bytes/doc | model bytes/doc (bits / 8 + left) |");
        report.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        var details = new StringBuilder();
        foreach (string file in files)
        {
            string corpus = Path.GetFileNameWithoutExtension(file);
            string[] lines = [.. File.ReadLines(file).Where(l => l.Trim().Length > 0)];
            new Random(42).Shuffle(lines);
            int trainingCount = lines.Length / 5;
            var fields = new Dictionary<string, Field>(StringComparer.Ordinal);
            foreach (string line in lines[..trainingCount])
            {
                foreach ((string path, string value, JsonValueKind kind) in Leaves(line)) Get(fields, path).Train(value, kind);
            }
            foreach (Field field in fields.Values) field.Freeze();

            int heldOut = lines.Length - trainingCount;
            foreach (string line in lines[trainingCount..])
            {
                foreach ((string path, string value, JsonValueKind kind) in Leaves(line)) Get(fields, path).Measure(value, kind);
            }
            long values = fields.Values.Sum(f => f.Values), valueBytes = fields.Values.Sum(f => f.ValueBytes);
            long hits = fields.Values.Sum(f => f.Hits), hitBytes = fields.Values.Sum(f => f.HitBytes);
            double bits = fields.Values.Sum(f => f.IndexBits + f.RangeBits + f.TemplateBits);
            long templated = fields.Values.Sum(f => f.Templated);
            long ranged = fields.Values.Sum(f => f.Ranged), left = fields.Values.Sum(f => f.LeftBytes);
            report.AppendLine(CultureInfo.InvariantCulture, $"| {corpus} | {heldOut:N0} | {(double)valueBytes / heldOut:0.0} | {Share(hits, values)} | {Share(hitBytes, valueBytes)} | {fields.Values.Sum(f => f.IndexBits) / heldOut:0.0} | {Share(ranged, values)} of values, {fields.Values.Sum(f => f.RangeBits) / heldOut:0.0} bits/doc | {Share(templated, values)} of values, {fields.Values.Sum(f => f.TemplateBits) / heldOut:0.0} bits/doc | {(double)left / heldOut:0.0} | {(bits / 8 + left) / heldOut:0.0} |");

            details.AppendLine(CultureInfo.InvariantCulture, $"\n**{corpus}**: the fields holding the most value bytes (held out)\n");
            details.AppendLine("| field | values/doc | value bytes/doc | table size | hits (values) | index bits/hit | bytes/hit raw | left bytes/doc |");
            details.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|");
            foreach ((string path, Field f) in fields.OrderByDescending(p => p.Value.ValueBytes).Take(8))
            {
                details.AppendLine(CultureInfo.InvariantCulture,
                    $"| `{path}` | {(double)f.Values / heldOut:0.00} | {(double)f.ValueBytes / heldOut:0.0} | {f.TableSize:N0} | {Share(f.Hits, f.Values)} | {(f.Hits == 0 ? 0 : f.HitIndexBits / f.Hits):0.0} | {(f.Hits == 0 ? 0 : (double)f.HitBytes / f.Hits):0.0} | {(double)f.LeftBytes / heldOut:0.0} |");
            }
        }
        Console.WriteLine(report.ToString());
        Console.WriteLine(details.ToString());
        return 0;
    }

    private static string Share(long part, long whole) => whole == 0 ? "-" : ((double)part / whole).ToString("0.00", CultureInfo.InvariantCulture);

    private static Field Get(Dictionary<string, Field> fields, string path)
    {
        if (!fields.TryGetValue(path, out Field? field)) fields[path] = field = new Field();
        return field;
    }

    /// <summary>Every leaf (not an object or array) with its path; array items share the path <c>name[]</c>. Iterative.</summary>
    private static IEnumerable<(string Path, string Value, JsonValueKind Kind)> Leaves(string json)
    {
        using JsonDocument document = JsonDocument.Parse(json, new JsonDocumentOptions { MaxDepth = 256 });
        var pending = new Stack<(JsonElement Element, string Path)>();
        pending.Push((document.RootElement, ""));
        var leaves = new List<(string, string, JsonValueKind)>();
        while (pending.Count > 0)
        {
            (JsonElement element, string path) = pending.Pop();
            switch (element.ValueKind)
            {
                case JsonValueKind.Object:
                    foreach (JsonProperty property in element.EnumerateObject()) pending.Push((property.Value, path.Length == 0 ? property.Name : path + "." + property.Name));
                    break;
                case JsonValueKind.Array:
                    foreach (JsonElement item in element.EnumerateArray()) pending.Push((item, path + "[]"));
                    break;
                default:
                    leaves.Add((path, element.GetRawText(), element.ValueKind));
                    break;
            }
        }
        return leaves;
    }

    /// <summary>
    /// A string's template: its text with each run of ASCII digits replaced by a slot of that width (so leading zeros come
    /// back), and the runs as numbers. <c>2001/01/01 00:47</c> is <c>{4}/{2}/{2} {2}:{2}</c> with 2001, 1, 1, 0, 47.
    /// </summary>
    private static (string Template, List<long> Slots) Template(string value)
    {
        var template = new StringBuilder(value.Length);
        var slots = new List<long>();
        for (int i = 0; i < value.Length;)
        {
            if (!char.IsAsciiDigit(value[i]))
            {
                template.Append(value[i] == '{' ? "{{" : value[i].ToString());
                i++;
                continue;
            }
            int start = i;
            while (i < value.Length && char.IsAsciiDigit(value[i]) && i - start < 18) i++;
            slots.Add(long.Parse(value.AsSpan(start, i - start), CultureInfo.InvariantCulture));
            template.Append('{').Append(i - start).Append('}');
        }
        return (template.ToString(), slots);
    }

    private sealed class Field
    {
        private readonly Dictionary<string, int> _counts = new(StringComparer.Ordinal);
        private readonly Dictionary<string, (int Count, long[] Min, long[] Max)> _templates = new(StringComparer.Ordinal);
        private long _stringsTrained;
        private Dictionary<string, int> _table = new(StringComparer.Ordinal);
        private long _trained;
        private long _tableTotal;
        private long _min = long.MaxValue, _max = long.MinValue;

        public long Values, ValueBytes, Hits, HitBytes, Ranged, LeftBytes, Templated;
        public double IndexBits, HitIndexBits, RangeBits, TemplateBits;

        public int TableSize => _table.Count;

        public void Train(string value, JsonValueKind kind)
        {
            _trained++;
            _counts[value] = _counts.GetValueOrDefault(value) + 1;
            if (kind == JsonValueKind.String)
            {
                _stringsTrained++;
                (string template, List<long> slots) = Template(value);
                if (slots.Count > 0)
                {
                    if (!_templates.TryGetValue(template, out var t)) t = (0, [.. slots], [.. slots]);
                    for (int i = 0; i < slots.Count; i++)
                    {
                        t.Min[i] = Math.Min(t.Min[i], slots[i]);
                        t.Max[i] = Math.Max(t.Max[i], slots[i]);
                    }
                    _templates[template] = (t.Count + 1, t.Min, t.Max);
                }
            }
            if (kind == JsonValueKind.Number && long.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n))
            {
                _min = Math.Min(_min, n);
                _max = Math.Max(_max, n);
            }
        }

        public void Freeze()
        {
            _table = _counts.Where(c => c.Value >= 2).OrderByDescending(c => c.Value).Take(MaxTable).ToDictionary(c => c.Key, c => c.Value, StringComparer.Ordinal);
            _tableTotal = _table.Values.Sum();
        }

        public void Measure(string value, JsonValueKind kind)
        {
            int bytes = Encoding.UTF8.GetByteCount(value);
            Values++;
            ValueBytes += bytes;
            // One more symbol than the table: the escape, with the training share of values outside the table (at least one).
            double total = _trained + 1;
            double escape = Math.Max(1, _trained - _tableTotal) / total;
            if (_table.TryGetValue(value, out int count))
            {
                double bits = -Math.Log2(count / total);
                Hits++;
                HitBytes += bytes;
                IndexBits += bits;
                HitIndexBits += bits;
                return;
            }
            IndexBits += -Math.Log2(escape);
            if (kind == JsonValueKind.Number && _min <= _max && long.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n) && n >= _min && n <= _max
                && value == n.ToString(CultureInfo.InvariantCulture))
            {
                Ranged++;
                RangeBits += Math.Log2((double)(_max - _min) + 1);
                return;
            }
            if (kind == JsonValueKind.String)
            {
                // A template seen at least twice in training, every slot inside its training range: the template's
                // index (-log2 of its share of the field's strings) and each slot as an offset in its range.
                (string template, List<long> slots) = Template(value);
                if (slots.Count > 0 && _templates.TryGetValue(template, out var t) && t.Count >= 2
                    && slots.Select((v, i) => v >= t.Min[i] && v <= t.Max[i]).All(x => x))
                {
                    Templated++;
                    TemplateBits += -Math.Log2(t.Count / (_stringsTrained + 1.0)) + slots.Select((_, i) => Math.Log2((double)(t.Max[i] - t.Min[i]) + 1)).Sum();
                    return;
                }
            }
            LeftBytes += bytes;
        }
    }
}
