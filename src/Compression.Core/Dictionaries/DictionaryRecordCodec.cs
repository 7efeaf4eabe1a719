namespace Compression.Dictionaries;

/// <summary>
/// The fields of a stored dictionary record, in the order <see cref="DictionaryRecordCodec.Write(DictionaryRecord, IDictionaryRecordWriter)"/> gives them unless told
/// another. Each store names them its own way (<c>_id</c>, <c>ns</c>, <c>v</c> in MongoDB; <c>Id</c>, <c>Namespace</c>,
/// <c>Version</c> in a folder) and holds each value in its own representation; the kind of each (what
/// <see cref="IDictionaryRecordReader"/> returns for it) is fixed here.
/// </summary>
public enum DictionaryRecordField
{
    /// <summary>Required integer, 1 to <see cref="uint.MaxValue"/>: <see cref="DictionaryRecord.Id"/>.</summary>
    Id,

    /// <summary>Required non-empty text: <see cref="DictionaryRecord.Namespace"/>.</summary>
    Namespace,

    /// <summary>Required integer, 1 to <see cref="DictionaryRecord.MaxVersion"/>: <see cref="DictionaryRecord.Version"/>.</summary>
    Version,

    /// <summary>Required bytes, at most the store's largest dictionary: <see cref="DictionaryRecord.Content"/>.</summary>
    Content,

    /// <summary>Required 64-bit hash: <see cref="DictionaryRecord.ContentHash"/>.</summary>
    ContentHash,

    /// <summary>Required timestamp: <see cref="DictionaryRecord.Created"/>.</summary>
    Created,

    /// <summary>Required non-empty text, a <see cref="CompressionCodec"/> name such as <c>Zstd</c>: <see cref="DictionaryRecord.Codec"/>.</summary>
    Codec,

    /// <summary>Required integer within <see cref="int"/>: <see cref="DictionaryRecord.Level"/>.</summary>
    Level,

    /// <summary>Required integer, 0 to <see cref="int.MaxValue"/>: <see cref="DictionaryRecord.SampleCount"/>.</summary>
    SampleCount,

    /// <summary>Required number: <see cref="DictionaryRecord.Ratio"/>.</summary>
    Ratio,

    /// <summary>
    /// Optional bytes, at most <see cref="DictionaryRecordCodec.MaxShapesBytes"/>: <see cref="DictionaryRecord.Shapes"/>.
    /// Present together with <see cref="ShapesHash"/> or not at all (records without a shape table have neither).
    /// </summary>
    Shapes,

    /// <summary>Optional 64-bit hash, present with <see cref="Shapes"/>: <see cref="DictionaryRecord.ShapesHash"/>.</summary>
    ShapesHash,
}

/// <summary>
/// A stored record as a store read it, field by field, in the store's own representation: what
/// <see cref="DictionaryRecordCodec.Read"/> reads a <see cref="DictionaryRecord"/> from. Each method reads one field of
/// the kind its <see cref="DictionaryRecordField"/> documents; it is only called for a field the record
/// <see cref="Contains"/>.
/// </summary>
/// <remarks>
/// A value of another type or form is not converted: the method throws <see cref="InvalidDataException"/> whose message is
/// the problem alone, naming the field as the store does (<c>field 'v' is a String, not an Int32 or Int64</c>); the codec
/// adds which record and where. Ranges, sizes, required and paired fields, and codec names are the codec's to check.
/// </remarks>
public interface IDictionaryRecordReader
{
    /// <summary>The record as messages name it, with where it is: <c>Dictionary document _id 7 in MongoDB collection app._compression.dictionaries</c>.</summary>
    string Description { get; }

    /// <summary>The field's name in this store, for messages.</summary>
    string NameOf(DictionaryRecordField field);

    /// <summary>Whether the record holds the field (a field stored as null counts as absent where the store writes absent ones so).</summary>
    bool Contains(DictionaryRecordField field);

    /// <summary>An integer field (<see cref="DictionaryRecordField.Id"/>, <see cref="DictionaryRecordField.Version"/>, <see cref="DictionaryRecordField.Level"/>, <see cref="DictionaryRecordField.SampleCount"/>).</summary>
    long ReadInteger(DictionaryRecordField field);

    /// <summary>A text field (<see cref="DictionaryRecordField.Namespace"/>, <see cref="DictionaryRecordField.Codec"/>).</summary>
    string ReadText(DictionaryRecordField field);

    /// <summary>A bytes field (<see cref="DictionaryRecordField.Content"/>, <see cref="DictionaryRecordField.Shapes"/>).</summary>
    ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field);

    /// <summary>A 64-bit hash field (<see cref="DictionaryRecordField.ContentHash"/>, <see cref="DictionaryRecordField.ShapesHash"/>).</summary>
    ulong ReadHash(DictionaryRecordField field);

    /// <summary>A timestamp field (<see cref="DictionaryRecordField.Created"/>).</summary>
    DateTimeOffset ReadTimestamp(DictionaryRecordField field);

    /// <summary>A number field (<see cref="DictionaryRecordField.Ratio"/>).</summary>
    double ReadNumber(DictionaryRecordField field);
}

/// <summary>
/// Where <see cref="DictionaryRecordCodec.Write(DictionaryRecord, IDictionaryRecordWriter)"/> puts a record's fields: the store maps each to its own representation
/// (a BSON element, a JSON property, a column). Each method is called once per field, of the kind the field documents.
/// </summary>
public interface IDictionaryRecordWriter
{
    /// <summary>An integer field.</summary>
    void WriteInteger(DictionaryRecordField field, long value);

    /// <summary>A text field.</summary>
    void WriteText(DictionaryRecordField field, string value);

    /// <summary>A bytes field.</summary>
    void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value);

    /// <summary>A 64-bit hash field.</summary>
    void WriteHash(DictionaryRecordField field, ulong value);

    /// <summary>A timestamp field.</summary>
    void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value);

    /// <summary>A number field.</summary>
    void WriteNumber(DictionaryRecordField field, double value);

    /// <summary>An optional field the record does not have (a store that writes nothing for it does nothing here).</summary>
    void WriteAbsent(DictionaryRecordField field);
}

/// <summary>
/// The record format every <see cref="DictionaryStore"/> shares, owned by Core: which fields a
/// <see cref="DictionaryRecord"/> is stored as, of which kind, which are required, how large they may be, and the checks
/// on what a store read. A store maps the fields to its native representation (<see cref="IDictionaryRecordWriter"/>,
/// <see cref="IDictionaryRecordReader"/>) and does its own I/O; nothing else.
/// </summary>
/// <remarks>
/// Nothing read from a store is trusted: a store is shared, and a broken or hostile peer may write any record.
/// <see cref="Read"/> refuses a record whose fields are missing, of another kind, out of range or over their size with an
/// <see cref="InvalidDataException"/> naming the record, where it is, and the problem; it never throws anything else for a
/// record's content. The engine then checks what a read record claims (its id and namespace against what was asked,
/// its hashes, its level, that zstd loads it) before any envelope is written or read with it.
/// </remarks>
public static class DictionaryRecordCodec
{
    /// <summary>The largest shape table (with its field model) a record may hold: what the engine ever writes.</summary>
    public static readonly int MaxShapesBytes = Structure.ShapeTransform.MaxStoredLength;

    /// <summary>The fields in the order <see cref="Write(DictionaryRecord, IDictionaryRecordWriter)"/> gives them by default.</summary>
    public static ReadOnlySpan<DictionaryRecordField> Fields =>
    [
        DictionaryRecordField.Id, DictionaryRecordField.Namespace, DictionaryRecordField.Version, DictionaryRecordField.Content,
        DictionaryRecordField.ContentHash, DictionaryRecordField.Created, DictionaryRecordField.Codec, DictionaryRecordField.Level,
        DictionaryRecordField.SampleCount, DictionaryRecordField.Ratio, DictionaryRecordField.Shapes, DictionaryRecordField.ShapesHash,
    ];

    /// <summary>Whether a record must hold the field (all but the shape table's two).</summary>
    public static bool IsRequired(DictionaryRecordField field) => field is not (DictionaryRecordField.Shapes or DictionaryRecordField.ShapesHash);

    /// <summary>
    /// The most bytes a stored record can take whose dictionary is at most <paramref name="maxDictionaryBytes"/>: a store
    /// refuses a larger one before it parses it.
    /// </summary>
    /// <param name="maxDictionaryBytes">The largest dictionary the store accepts.</param>
    /// <param name="base64">Whether the store holds bytes as base64 text (JSON), 4 bytes for every 3; otherwise as they are (BSON).</param>
    public static long MaxRecordBytes(int maxDictionaryBytes, bool base64) => base64
        ? (maxDictionaryBytes + 2L) / 3 * 4 + (MaxShapesBytes + 2L) / 3 * 4 + 4096
        : maxDictionaryBytes + (long)MaxShapesBytes + 8 * 1024; // the names, the namespace (at most NamespaceName.MaxLength UTF-8 characters) and numbers

    /// <summary>Gives every field of <paramref name="record"/> to <paramref name="writer"/>, in <see cref="Fields"/> order.</summary>
    public static void Write(DictionaryRecord record, IDictionaryRecordWriter writer) => Write(record, writer, Fields);

    /// <summary>
    /// Gives every field of <paramref name="record"/> to <paramref name="writer"/>, in <paramref name="order"/> (every field
    /// once: a store keeps the order its records have always had). The shape table's two fields go to
    /// <see cref="IDictionaryRecordWriter.WriteAbsent"/> when the record has none.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="order"/> does not name every field once.</exception>
    public static void Write(DictionaryRecord record, IDictionaryRecordWriter writer, ReadOnlySpan<DictionaryRecordField> order)
    {
        ArgumentNullException.ThrowIfNull(record);
        ArgumentNullException.ThrowIfNull(writer);
        int seen = 0;
        foreach (DictionaryRecordField field in order)
        {
            int bit = 1 << (int)field;
            if ((uint)field > (uint)DictionaryRecordField.ShapesHash || (seen & bit) != 0)
                throw new ArgumentException($"The order names {field} twice or is not a field.", nameof(order));
            seen |= bit;
        }
        if (seen != (1 << Fields.Length) - 1) throw new ArgumentException("The order must name every field once.", nameof(order));

        foreach (DictionaryRecordField field in order)
        {
            switch (field)
            {
                case DictionaryRecordField.Id: writer.WriteInteger(field, record.Id); break;
                case DictionaryRecordField.Namespace: writer.WriteText(field, record.Namespace); break;
                case DictionaryRecordField.Version: writer.WriteInteger(field, record.Version); break;
                case DictionaryRecordField.Content: writer.WriteBytes(field, record.Content); break;
                case DictionaryRecordField.ContentHash: writer.WriteHash(field, record.ContentHash); break;
                case DictionaryRecordField.Created: writer.WriteTimestamp(field, record.Created); break;
                case DictionaryRecordField.Codec: writer.WriteText(field, record.Codec.ToString()); break;
                case DictionaryRecordField.Level: writer.WriteInteger(field, record.Level); break;
                case DictionaryRecordField.SampleCount: writer.WriteInteger(field, record.SampleCount); break;
                case DictionaryRecordField.Ratio: writer.WriteNumber(field, record.Ratio); break;
                case DictionaryRecordField.Shapes:
                    if (record.Shapes.IsEmpty) writer.WriteAbsent(field);
                    else writer.WriteBytes(field, record.Shapes);
                    break;
                default: // ShapesHash
                    if (record.Shapes.IsEmpty) writer.WriteAbsent(field);
                    else writer.WriteHash(field, record.ShapesHash);
                    break;
            }
        }
    }

    /// <summary>
    /// Reads a record from what a store read, checking every field: present when required, of its kind, in its range,
    /// within its size; the shape table's two fields together or not at all.
    /// </summary>
    /// <param name="reader">The stored record, in the store's representation.</param>
    /// <param name="maxDictionaryBytes">The largest dictionary the store accepts.</param>
    /// <exception cref="InvalidDataException">
    /// The record does not read: <c>{Description} is invalid and was not used: {problem}.</c>
    /// </exception>
    public static DictionaryRecord Read(IDictionaryRecordReader reader, int maxDictionaryBytes)
    {
        ArgumentNullException.ThrowIfNull(reader);
        try
        {
            long id = Integer(reader, DictionaryRecordField.Id);
            if (id is < 1 or > uint.MaxValue) throw Problem($"{reader.NameOf(DictionaryRecordField.Id)} {id} is not a dictionary id (1 to {uint.MaxValue})");
            string @namespace = Text(reader, DictionaryRecordField.Namespace);
            long version = Integer(reader, DictionaryRecordField.Version);
            if (version is < 1 or > DictionaryRecord.MaxVersion) throw Problem($"version {version} is not a version (1 to {DictionaryRecord.MaxVersion})");
            ReadOnlyMemory<byte> content = Bytes(reader, DictionaryRecordField.Content, maxDictionaryBytes);

            // The shape table is optional (records without one have neither field); its size is checked before it is used.
            ReadOnlyMemory<byte> shapes = default;
            ulong shapesHash = 0;
            bool hasShapes = reader.Contains(DictionaryRecordField.Shapes);
            if (hasShapes || reader.Contains(DictionaryRecordField.ShapesHash))
            {
                if (!hasShapes)
                    throw Problem($"its shape table is missing (the record has its hash, field '{reader.NameOf(DictionaryRecordField.ShapesHash)}')");
                shapes = Bytes(reader, DictionaryRecordField.Shapes, MaxShapesBytes);
                shapesHash = Hash(reader, DictionaryRecordField.ShapesHash);
            }

            string codecName = Text(reader, DictionaryRecordField.Codec);
            // Only a codec's own name: not its number, nor a list of names that adds up to one.
            if (!Enum.TryParse(codecName, ignoreCase: false, out CompressionCodec codec) || !Enum.IsDefined(codec) || codec.ToString() != codecName)
                throw Problem($"'{reader.NameOf(DictionaryRecordField.Codec)}' is '{codecName}', not a codec name");

            long level = Integer(reader, DictionaryRecordField.Level);
            long samples = Integer(reader, DictionaryRecordField.SampleCount);
            if (level is < int.MinValue or > int.MaxValue) throw Problem($"level {level} is out of range");
            if (samples is < 0 or > int.MaxValue) throw Problem($"sample count {samples} is out of range");

            return new DictionaryRecord
            {
                Id = (uint)id,
                Namespace = @namespace,
                Version = (int)version,
                Content = content,
                ContentHash = Hash(reader, DictionaryRecordField.ContentHash),
                Created = Required(reader, DictionaryRecordField.Created).ReadTimestamp(DictionaryRecordField.Created),
                Codec = codec,
                Level = (int)level,
                SampleCount = (int)samples,
                Ratio = Required(reader, DictionaryRecordField.Ratio).ReadNumber(DictionaryRecordField.Ratio),
                Shapes = shapes,
                ShapesHash = shapesHash,
            };
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"{reader.Description} is invalid and was not used: {ex.Message.TrimEnd('.')}.", ex.InnerException);
        }
    }

    private static IDictionaryRecordReader Required(IDictionaryRecordReader reader, DictionaryRecordField field) =>
        reader.Contains(field) ? reader : throw Problem($"field '{reader.NameOf(field)}' is missing");

    private static long Integer(IDictionaryRecordReader reader, DictionaryRecordField field) => Required(reader, field).ReadInteger(field);

    private static ulong Hash(IDictionaryRecordReader reader, DictionaryRecordField field) => Required(reader, field).ReadHash(field);

    private static string Text(IDictionaryRecordReader reader, DictionaryRecordField field)
    {
        string text = Required(reader, field).ReadText(field);
        return string.IsNullOrEmpty(text) ? throw Problem($"field '{reader.NameOf(field)}' is empty") : text;
    }

    private static ReadOnlyMemory<byte> Bytes(IDictionaryRecordReader reader, DictionaryRecordField field, int limit)
    {
        ReadOnlyMemory<byte> bytes = Required(reader, field).ReadBytes(field);
        return bytes.Length > limit ? throw Problem($"'{reader.NameOf(field)}' has {bytes.Length} bytes, over {limit}") : bytes;
    }

    /// <summary>A problem alone; <see cref="Read"/> adds which record and where, as it does to the reader's.</summary>
    private static InvalidDataException Problem(string problem) => new(problem);
}
