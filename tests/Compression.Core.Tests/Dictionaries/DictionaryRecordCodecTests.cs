using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// The record codec every store shares: a record written and read back is the same record, and every record a broken
/// or hostile peer could store is refused with an <see cref="InvalidDataException"/> that names the record, where it is,
/// and the problem; never another exception.
/// </summary>
public sealed class DictionaryRecordCodecTests
{
    private const int MaxDictionaryBytes = 4096;

    private static DictionaryRecord Sample(bool shapes)
    {
        byte[] content = [1, 2, 3, 4, 5, 6, 7, 8];
        byte[] table = [0x53, 0x48, 0x50, 0x54, 1];
        return new DictionaryRecord
        {
            Id = uint.MaxValue,
            Namespace = "shop.orders",
            Version = DictionaryRecord.MaxVersion,
            Content = content,
            ContentHash = DictionaryRecord.ComputeContentHash(content),
            Created = new DateTimeOffset(2026, 12, 7, 16, 30, 0, TimeSpan.Zero),
            Codec = CompressionCodec.Zstd,
            Level = -7,
            SampleCount = int.MaxValue,
            Ratio = 3.25,
            Shapes = shapes ? table : default,
            ShapesHash = shapes ? DictionaryRecord.ComputeContentHash(table) : 0,
        };
    }

    /// <summary>A store in memory: each field under its enum name, as the value the codec gave.</summary>
    private sealed class Fields : IDictionaryRecordWriter, IDictionaryRecordReader
    {
        public readonly Dictionary<DictionaryRecordField, object?> Values = [];
        public readonly List<DictionaryRecordField> Order = [];

        public string Description => "Dictionary record 7 in the test store";

        public string NameOf(DictionaryRecordField field) => field.ToString();

        public bool Contains(DictionaryRecordField field) => Values.ContainsKey(field);

        private T Get<T>(DictionaryRecordField field) =>
            Values[field] is T value ? value : throw new InvalidDataException($"field '{field}' is a {Values[field]?.GetType().Name ?? "null"}, not a {typeof(T).Name}");

        public long ReadInteger(DictionaryRecordField field) => Get<long>(field);
        public string ReadText(DictionaryRecordField field) => Get<string>(field);
        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field) => Get<byte[]>(field);
        public ulong ReadHash(DictionaryRecordField field) => Get<ulong>(field);
        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) => Get<DateTimeOffset>(field);
        public double ReadNumber(DictionaryRecordField field) => Get<double>(field);

        private void Put(DictionaryRecordField field, object value)
        {
            Assert.False(Values.ContainsKey(field), $"{field} written twice");
            Values[field] = value;
            Order.Add(field);
        }

        public void WriteInteger(DictionaryRecordField field, long value) => Put(field, value);
        public void WriteText(DictionaryRecordField field, string value) => Put(field, value);
        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => Put(field, value.ToArray());
        public void WriteHash(DictionaryRecordField field, ulong value) => Put(field, value);
        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => Put(field, value);
        public void WriteNumber(DictionaryRecordField field, double value) => Put(field, value);
        public void WriteAbsent(DictionaryRecordField field) => Order.Add(field);
    }

    private static Fields Written(bool shapes = true)
    {
        var fields = new Fields();
        DictionaryRecordCodec.Write(Sample(shapes), fields);
        return fields;
    }

    private static void AssertSame(DictionaryRecord expected, DictionaryRecord actual)
    {
        Assert.Equal(expected with { Content = default, Shapes = default }, actual with { Content = default, Shapes = default });
        Assert.Equal(expected.Content.ToArray(), actual.Content.ToArray());
        Assert.Equal(expected.Shapes.ToArray(), actual.Shapes.ToArray());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Record_WrittenAndRead_IsTheSameRecord_AtTheEdgesOfEveryRange(bool shapes)
    {
        Fields fields = Written(shapes);
        Assert.Equal(DictionaryRecordCodec.Fields.ToArray(), fields.Order);
        Assert.Equal(shapes ? 12 : 10, fields.Values.Count);
        AssertSame(Sample(shapes), DictionaryRecordCodec.Read(fields, MaxDictionaryBytes));
        Assert.Equal("Zstd", fields.Values[DictionaryRecordField.Codec]); // the codec is stored by its name
    }

    [Fact]
    public void Write_InTheStoresOwnOrder_GivesEveryFieldOnce_AndRefusesAnOrderThatIsNotEveryField()
    {
        DictionaryRecordField[] reversed = [.. DictionaryRecordCodec.Fields.ToArray().Reverse()];
        var fields = new Fields();
        DictionaryRecordCodec.Write(Sample(true), fields, reversed);
        Assert.Equal(reversed, fields.Order);

        Assert.Throws<ArgumentException>(() => DictionaryRecordCodec.Write(Sample(true), new Fields(), reversed.AsSpan(1)));
        DictionaryRecordField[] twice = [.. reversed];
        twice[0] = twice[1];
        Assert.Throws<ArgumentException>(() => DictionaryRecordCodec.Write(Sample(true), new Fields(), twice));
        Assert.Throws<ArgumentException>(() => DictionaryRecordCodec.Write(Sample(true), new Fields(), [.. reversed, (DictionaryRecordField)12]));
    }

    [Fact]
    public void Required_AreAllButTheShapeTable()
    {
        foreach (DictionaryRecordField field in DictionaryRecordCodec.Fields)
        {
            Assert.Equal(field is not (DictionaryRecordField.Shapes or DictionaryRecordField.ShapesHash), DictionaryRecordCodec.IsRequired(field));
        }
    }

    [Fact]
    public void MaxRecordBytes_AreTheLimitsTheStoresAlwaysHad()
    {
        Assert.Equal(Compression.Structure.ShapeTransform.MaxStoredLength, DictionaryRecordCodec.MaxShapesBytes);
        Assert.Equal(768 * 1024 + 16, DictionaryRecordCodec.MaxShapesBytes);
        // BSON (MongoDB): the bytes as they are, and 8 KiB for the rest.
        Assert.Equal(1_048_576 + 786_448 + 8192, DictionaryRecordCodec.MaxRecordBytes(1_048_576, base64: false));
        // JSON (a folder, Couchbase): base64 of both, and 4 KiB for the rest.
        Assert.Equal((1_048_576 + 2L) / 3 * 4 + (786_448 + 2L) / 3 * 4 + 4096, DictionaryRecordCodec.MaxRecordBytes(1_048_576, base64: true));
    }

    public static TheoryData<string, DictionaryRecordField, object?, string> Hostile() => new()
    {
        { "id 0", DictionaryRecordField.Id, 0L, "Id 0 is not a dictionary id (1 to 4294967295)" },
        { "id negative", DictionaryRecordField.Id, -5L, "Id -5 is not a dictionary id" },
        { "id over 32 bits", DictionaryRecordField.Id, 1L + uint.MaxValue, "Id 4294967296 is not a dictionary id" },
        { "id as text", DictionaryRecordField.Id, "7", "field 'Id' is a String, not a Int64" },
        { "namespace empty", DictionaryRecordField.Namespace, "", "field 'Namespace' is empty" },
        { "namespace as a number", DictionaryRecordField.Namespace, 7L, "field 'Namespace' is a Int64, not a String" },
        { "version 0", DictionaryRecordField.Version, 0L, "version 0 is not a version (1 to 1000000)" },
        { "version negative", DictionaryRecordField.Version, -1L, "version -1 is not a version" },
        { "version over the highest", DictionaryRecordField.Version, DictionaryRecord.MaxVersion + 1L, "version 1000001 is not a version" },
        { "version huge", DictionaryRecordField.Version, long.MaxValue, $"version {long.MaxValue} is not a version" },
        { "content over the largest dictionary", DictionaryRecordField.Content, new byte[MaxDictionaryBytes + 1], $"'Content' has {MaxDictionaryBytes + 1} bytes, over {MaxDictionaryBytes}" },
        { "content as text", DictionaryRecordField.Content, "AAEC", "field 'Content' is a String, not a Byte[]" },
        { "content hash as text", DictionaryRecordField.ContentHash, "00FF", "field 'ContentHash' is a String, not a UInt64" },
        { "created as text", DictionaryRecordField.Created, "yesterday", "field 'Created' is a String, not a DateTimeOffset" },
        { "codec unknown", DictionaryRecordField.Codec, "Zip", "'Codec' is 'Zip', not a codec name" },
        { "codec by number", DictionaryRecordField.Codec, "1", "'Codec' is '1', not a codec name" },
        { "codec by negative number", DictionaryRecordField.Codec, "-1", "'Codec' is '-1', not a codec name" },
        { "codec as a list adding up to one", DictionaryRecordField.Codec, "Stored, Zstd", "'Codec' is 'Stored, Zstd', not a codec name" },
        { "codec in another case", DictionaryRecordField.Codec, "zstd", "'Codec' is 'zstd', not a codec name" },
        { "codec padded", DictionaryRecordField.Codec, " Zstd", "'Codec' is ' Zstd', not a codec name" },
        { "codec empty", DictionaryRecordField.Codec, "", "field 'Codec' is empty" },
        { "level over 32 bits", DictionaryRecordField.Level, 1L + int.MaxValue, "level 2147483648 is out of range" },
        { "level under 32 bits", DictionaryRecordField.Level, -1L + int.MinValue, "level -2147483649 is out of range" },
        { "sample count negative", DictionaryRecordField.SampleCount, -4L, "sample count -4 is out of range" },
        { "sample count over 32 bits", DictionaryRecordField.SampleCount, 1L + int.MaxValue, "sample count 2147483648 is out of range" },
        { "ratio as text", DictionaryRecordField.Ratio, "3.2", "field 'Ratio' is a String, not a Double" },
        { "shape table over its largest", DictionaryRecordField.Shapes, new byte[DictionaryRecordCodec.MaxShapesBytes + 1], $"'Shapes' has {DictionaryRecordCodec.MaxShapesBytes + 1} bytes, over {DictionaryRecordCodec.MaxShapesBytes}" },
        { "shape table hash as a number", DictionaryRecordField.ShapesHash, 5L, "field 'ShapesHash' is a Int64, not a UInt64" },
    };

    [Theory]
    [MemberData(nameof(Hostile))]
    public void HostileField_IsRefused_NamingTheRecordWhereItIs_AndTheProblem(string what, DictionaryRecordField field, object? value, string problem)
    {
        Fields fields = Written();
        fields.Values[field] = value;
        var ex = Assert.Throws<InvalidDataException>(() => DictionaryRecordCodec.Read(fields, MaxDictionaryBytes));
        Assert.StartsWith("Dictionary record 7 in the test store is invalid and was not used: ", ex.Message, StringComparison.Ordinal);
        Assert.Contains(problem, ex.Message, StringComparison.Ordinal);
        Assert.EndsWith(".", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("..", ex.Message, StringComparison.Ordinal);
        _ = what; // names the case in the test list
    }

    [Theory]
    [InlineData(DictionaryRecordField.Id)]
    [InlineData(DictionaryRecordField.Namespace)]
    [InlineData(DictionaryRecordField.Version)]
    [InlineData(DictionaryRecordField.Content)]
    [InlineData(DictionaryRecordField.ContentHash)]
    [InlineData(DictionaryRecordField.Created)]
    [InlineData(DictionaryRecordField.Codec)]
    [InlineData(DictionaryRecordField.Level)]
    [InlineData(DictionaryRecordField.SampleCount)]
    [InlineData(DictionaryRecordField.Ratio)]
    public void MissingRequiredField_IsRefused_NamingIt(DictionaryRecordField field)
    {
        Fields fields = Written();
        fields.Values.Remove(field);
        var ex = Assert.Throws<InvalidDataException>(() => DictionaryRecordCodec.Read(fields, MaxDictionaryBytes));
        Assert.Equal($"Dictionary record 7 in the test store is invalid and was not used: field '{field}' is missing.", ex.Message);
    }

    [Fact]
    public void ShapeTable_IsBothFieldsOrNeither()
    {
        Fields hashAlone = Written();
        hashAlone.Values.Remove(DictionaryRecordField.Shapes);
        var ex = Assert.Throws<InvalidDataException>(() => DictionaryRecordCodec.Read(hashAlone, MaxDictionaryBytes));
        Assert.Contains("its shape table is missing (the record has its hash, field 'ShapesHash')", ex.Message, StringComparison.Ordinal);

        Fields tableAlone = Written();
        tableAlone.Values.Remove(DictionaryRecordField.ShapesHash);
        ex = Assert.Throws<InvalidDataException>(() => DictionaryRecordCodec.Read(tableAlone, MaxDictionaryBytes));
        Assert.Contains("field 'ShapesHash' is missing", ex.Message, StringComparison.Ordinal);

        Fields neither = Written(shapes: false);
        DictionaryRecord read = DictionaryRecordCodec.Read(neither, MaxDictionaryBytes);
        Assert.True(read.Shapes.IsEmpty);
        Assert.Equal(0ul, read.ShapesHash);
    }

    [Fact]
    public void ReadersOwnProblem_KeepsItsCause()
    {
        var cause = new FormatException("truncated");
        var reader = new ThrowingReader(new InvalidDataException("it is not a well-formed document (truncated)", cause));
        var ex = Assert.Throws<InvalidDataException>(() => DictionaryRecordCodec.Read(reader, MaxDictionaryBytes));
        Assert.Equal("Dictionary record 7 in the test store is invalid and was not used: it is not a well-formed document (truncated).", ex.Message);
        Assert.Same(cause, ex.InnerException);
    }

    private sealed class ThrowingReader(Exception problem) : IDictionaryRecordReader
    {
        public string Description => "Dictionary record 7 in the test store";
        public string NameOf(DictionaryRecordField field) => field.ToString();
        public bool Contains(DictionaryRecordField field) => true;
        public long ReadInteger(DictionaryRecordField field) => throw problem;
        public string ReadText(DictionaryRecordField field) => throw problem;
        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field) => throw problem;
        public ulong ReadHash(DictionaryRecordField field) => throw problem;
        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) => throw problem;
        public double ReadNumber(DictionaryRecordField field) => throw problem;
    }

    [Fact]
    public void AnyRecordAPeerCouldStore_ReadsOrIsRefusedAsInvalidData_NeverAnotherException()
    {
        var random = new Random(36);
        object?[] values =
        [
            null, 0L, 1L, -1L, long.MinValue, long.MaxValue, (long)uint.MaxValue, "", "Zstd", "Stored", "9", "x", new byte[0], new byte[3],
            new byte[MaxDictionaryBytes + 1], 0ul, ulong.MaxValue, 0.0, double.NaN, double.NegativeInfinity, DateTimeOffset.MinValue,
        ];
        DictionaryRecordField[] all = DictionaryRecordCodec.Fields.ToArray();
        int read = 0, refused = 0;
        for (int i = 0; i < 5000; i++)
        {
            Fields fields = Written(shapes: random.Next(2) == 0);
            for (int n = random.Next(1, 4); n > 0; n--)
            {
                DictionaryRecordField field = all[random.Next(all.Length)];
                if (random.Next(8) == 0) fields.Values.Remove(field);
                else fields.Values[field] = values[random.Next(values.Length)];
            }
            try
            {
                DictionaryRecord record = DictionaryRecordCodec.Read(fields, MaxDictionaryBytes);
                Assert.InRange(record.Version, 1, DictionaryRecord.MaxVersion);
                Assert.NotEqual(0u, record.Id);
                Assert.NotEmpty(record.Namespace);
                Assert.InRange(record.Content.Length, 0, MaxDictionaryBytes);
                read++;
            }
            catch (InvalidDataException ex)
            {
                Assert.StartsWith("Dictionary record 7 in the test store is invalid and was not used: ", ex.Message, StringComparison.Ordinal);
                refused++;
            }
        }
        Assert.True(read > 0 && refused > 0, $"read {read}, refused {refused}");
    }
}
