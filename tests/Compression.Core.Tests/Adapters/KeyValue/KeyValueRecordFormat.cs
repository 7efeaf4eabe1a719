using System.Globalization;
using System.Text;
using Compression.Dictionaries;

namespace Compression.Core.Tests.Adapters.KeyValue;

/// <summary>
/// The key-value adapter's own form of a dictionary record: UTF-8 lines <c>name=kind:value</c>, one per field, the kind a
/// letter (<c>i</c> integer, <c>s</c> text, <c>b</c> base64 bytes, <c>h</c> 16 hex digits, <c>t</c> round-trip time,
/// <c>n</c> number). The fields, their kinds and every check are <see cref="DictionaryRecordCodec"/>'s; this maps them.
/// </summary>
internal static class KeyValueRecordFormat
{
    private static string Name(DictionaryRecordField field) => field switch
    {
        DictionaryRecordField.Id => "id",
        DictionaryRecordField.Namespace => "ns",
        DictionaryRecordField.Version => "ver",
        DictionaryRecordField.Content => "dict",
        DictionaryRecordField.ContentHash => "dictHash",
        DictionaryRecordField.Created => "created",
        DictionaryRecordField.Codec => "codec",
        DictionaryRecordField.Level => "level",
        DictionaryRecordField.SampleCount => "samples",
        DictionaryRecordField.Ratio => "ratio",
        DictionaryRecordField.Shapes => "shapes",
        _ => "shapesHash",
    };

    public static byte[] Write(DictionaryRecord record)
    {
        var writer = new Writer();
        DictionaryRecordCodec.Write(record, writer);
        return writer.ToBytes();
    }

    /// <summary>Reads a stored record; anything wrong with it is an <see cref="InvalidDataException"/> naming it and where it is.</summary>
    public static DictionaryRecord Read(byte[] body, string description, int maxDictionaryBytes)
    {
        var fields = new Dictionary<string, (char Kind, string Value)>(StringComparer.Ordinal);
        foreach (string line in Encoding.UTF8.GetString(body).Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            int equals = line.IndexOf('=', StringComparison.Ordinal);
            if (equals < 1 || line.Length < equals + 3 || line[equals + 2] != ':' || !fields.TryAdd(line[..equals], (line[equals + 1], line[(equals + 3)..])))
                throw new InvalidDataException($"{description} is invalid and was not used: line '{(line.Length > 40 ? line[..40] : line)}' is not one name=kind:value.");
        }
        return DictionaryRecordCodec.Read(new Reader(fields, description), maxDictionaryBytes);
    }

    /// <summary>Gives every field a line of its kind; nothing for an absent one.</summary>
    internal sealed class Writer : IDictionaryRecordWriter
    {
        private readonly StringBuilder _text = new();

        private void Line(DictionaryRecordField field, char kind, string value) => _text.Append(Name(field)).Append('=').Append(kind).Append(':').Append(value).Append('\n');

        public void WriteInteger(DictionaryRecordField field, long value) => Line(field, 'i', value.ToString(CultureInfo.InvariantCulture));

        public void WriteText(DictionaryRecordField field, string value) =>
            Line(field, 's', value.Contains('\n', StringComparison.Ordinal) ? throw new ArgumentException($"'{Name(field)}' cannot hold a line break in this format.", nameof(value)) : value);

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => Line(field, 'b', Convert.ToBase64String(value.Span));

        public void WriteHash(DictionaryRecordField field, ulong value) => Line(field, 'h', value.ToString("X16", CultureInfo.InvariantCulture));

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => Line(field, 't', value.ToString("O", CultureInfo.InvariantCulture));

        public void WriteNumber(DictionaryRecordField field, double value) => Line(field, 'n', value.ToString("R", CultureInfo.InvariantCulture));

        public void WriteAbsent(DictionaryRecordField field)
        {
            // a record without a shape table has neither line
        }

        public byte[] ToBytes() => Encoding.UTF8.GetBytes(_text.ToString());
    }

    /// <summary>The lines of a stored record; a value of another kind or form is refused, never converted.</summary>
    private sealed class Reader(Dictionary<string, (char Kind, string Value)> fields, string description) : IDictionaryRecordReader
    {
        public string Description => description;

        public string NameOf(DictionaryRecordField field) => Name(field);

        public bool Contains(DictionaryRecordField field) => fields.ContainsKey(Name(field));

        private string Get(DictionaryRecordField field, char kind, string what)
        {
            (char stored, string value) = fields[Name(field)];
            return stored == kind ? value : throw new InvalidDataException($"field '{Name(field)}' is of kind '{stored}', not {what}");
        }

        public long ReadInteger(DictionaryRecordField field) =>
            long.TryParse(Get(field, 'i', "an integer"), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value) ? value
                : throw new InvalidDataException($"field '{Name(field)}' is not an integer");

        public string ReadText(DictionaryRecordField field) => Get(field, 's', "text");

        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field)
        {
            try
            {
                return Convert.FromBase64String(Get(field, 'b', "bytes"));
            }
            catch (FormatException)
            {
                throw new InvalidDataException($"field '{Name(field)}' is not base64");
            }
        }

        public ulong ReadHash(DictionaryRecordField field)
        {
            string text = Get(field, 'h', "a hash");
            return text.Length == 16 && ulong.TryParse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong value) ? value
                : throw new InvalidDataException($"field '{Name(field)}' is not 16 hex digits");
        }

        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) =>
            DateTimeOffset.TryParseExact(Get(field, 't', "a time"), "O", CultureInfo.InvariantCulture, DateTimeStyles.None, out DateTimeOffset value) ? value
                : throw new InvalidDataException($"field '{Name(field)}' is not a round-trip time");

        public double ReadNumber(DictionaryRecordField field) =>
            double.TryParse(Get(field, 'n', "a number"), NumberStyles.Float, CultureInfo.InvariantCulture, out double value) ? value
                : throw new InvalidDataException($"field '{Name(field)}' is not a number");
    }
}
