using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using System.Text;
using Compression.Dictionaries;
using Compression.MongoDB.Configuration;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Serializers;

namespace Compression.MongoDB;

/// <summary>
/// A BSON serializer that stores a <typeparamref name="T"/> in the layout of <c>Layout/StoredLayout.cs</c>, as <c>{ _id, &lt;clear fields&gt;, _z: BinData(0x81, envelope) }</c>:
/// the id and the configured clear fields stay queryable; everything else is compressed by the collection's
/// <see cref="CompressionNamespace"/> with its shared dictionaries. Documents without <c>_z</c> (written before
/// compression was switched on, or while it was off) are read as plain documents, and so are documents whose <c>_z</c> is
/// not BinData 0x80 or 0x81 (the application's own field of that name: the serializer writes no other kind). A member
/// stored as <c>_z</c> is compressed like any other; it cannot be a clear field.
/// The envelope holds the compressed elements: with subtype 0x81 (written when the namespace writes envelope format v2 or v3)
/// their bytes alone, with subtype 0x80 (format v1, and every document written before format v2) as a whole BSON
/// document, with its int32 length and terminating 0. Both are read.
/// </summary>
/// <remarks>
/// The driver's serializer registry is global per CLR type, so a compressed type maps to one namespace.
/// Register it with <see cref="CompressedDocumentSerializer.Register{T}"/> at start-up, before the first use of the type.
/// Filters, sorts and projections on a compressed member fail with a message naming the member: LINQ, expressions and
/// (with MongoDB.Driver 3.14, which resolves field names through the serializer) string-built filters such as
/// <c>Builders&lt;T&gt;.Filter.Eq("Field", v)</c>. Only a filter sent through an untyped collection (<c>BsonDocument</c>)
/// can name a compressed field, and it matches nothing, since the field is not stored in the clear.
/// </remarks>
public sealed class CompressedDocumentSerializer<T> : SerializerBase<T>, IBsonDocumentSerializer, IBsonIdProvider, ICompressedDocumentSerializer<T>
    where T : class
{
    private readonly CompressionNamespace _namespace;
    private readonly BsonClassMapSerializer<T> _inner;
    private readonly HashSet<string> _clearElements;
    private readonly HashSet<string> _clearMembers;
    private readonly (byte[] Utf8, string Text)[] _clearNames;

    /// <summary>Creates the serializer; prefer <see cref="CompressedDocumentSerializer.Register{T}"/>.</summary>
    /// <param name="namespace">The collection's namespace (<c>database.collection</c>) in the engine.</param>
    /// <param name="options">Clear fields and whether new documents are compressed; without, the namespace's configured clear fields.</param>
    public CompressedDocumentSerializer(CompressionNamespace @namespace, CompressedDocumentOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(@namespace);
        options ??= new CompressedDocumentOptions { ClearFields = [.. MongoNamespaceSettings.ClearFieldsOf(@namespace)] };
        _namespace = @namespace;
        Namespace = @namespace.Name;
        Compress = options.Compress;
        BsonClassMap classMap = BsonClassMap.LookupClassMap(typeof(T));
        _inner = new BsonClassMapSerializer<T>(classMap);
        _clearMembers = new HashSet<string>(StringComparer.Ordinal);
        _clearElements = new HashSet<string>(StringComparer.Ordinal) { "_id" };
        if (classMap.IdMemberMap is { } id) _clearMembers.Add(id.MemberName);
        foreach (string member in options.ClearFields)
        {
            BsonMemberMap map = classMap.AllMemberMaps.FirstOrDefault(m => m.MemberName == member || m.ElementName == member)
                ?? throw new ArgumentException($"Clear field '{member}' is not a mapped member of {typeof(T).FullName}; mapped members: {string.Join(", ", classMap.AllMemberMaps.Select(m => m.MemberName))}.", nameof(options));
            if (map.ElementName == CompressedElementName)
                throw new ArgumentException($"Clear field '{member}' of {typeof(T).FullName} is stored as element '{CompressedElementName}', the name the compressed part is kept under; give the member another element name ([BsonElement]) or leave it compressed.", nameof(options));
            _clearMembers.Add(map.MemberName);
            _clearElements.Add(map.ElementName);
        }

        // The discriminator (_t) of a polymorphic class map stays in the clear: the driver adds it to the filters of
        // OfType<TDerived>() and of type tests in LINQ without asking this serializer, and compressed it matched nothing.
        string? discriminator = StoredLayout.DiscriminatorName(typeof(T));
        if (discriminator == CompressedElementName)
            throw new ArgumentException($"The discriminator of {typeof(T).FullName} is stored as element '{CompressedElementName}', the name the compressed part is kept under; give the discriminator convention another element name.", nameof(@namespace));
        if (!string.IsNullOrEmpty(discriminator)) _clearElements.Add(discriminator);
        _clearNames = [.. _clearElements.Select(name => (Encoding.UTF8.GetBytes(name), name))];
    }

    /// <summary>The name of the element that holds the envelope.</summary>
    internal const string CompressedElementName = StoredLayout.CompressedName;

    /// <summary>The namespace the documents belong to (named in error messages).</summary>
    internal string Namespace { get; }

    /// <summary>Whether new documents are compressed. When <see langword="false"/>, they are written plain; compressed ones stay readable.</summary>
    internal bool Compress { get; }

    /// <inheritdoc/>
    public override void Serialize(BsonSerializationContext context, BsonSerializationArgs args, T value)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (!Compress || value is null)
        {
            SerializeWithClassMap(context, args, value!);
            return;
        }

        // The class map writes the whole document into a reused buffer; its top-level elements are then split in place:
        // clear ones go to the caller's writer, the others are copied into one reused BSON document that is compressed.
        SerializerScratch scratch = SerializerScratch.Rent();
        scratch.Bson.Position = 0;
        SerializeWithClassMap(scratch.WriterContext, args, value); // on a throw the scratch (and its writer's state) is dropped
        ReadOnlySpan<byte> full = new(scratch.Bson.GetBuffer(), 0, (int)scratch.Bson.Position);

        IBsonWriter writer = context.Writer;
        writer.WriteStartDocument();
        Span<byte> rest = scratch.First.GetSpan(full.Length);
        int restLength = 4;
        var elements = new RawBsonWalker(full);
        while (elements.TryNext(out RawBsonElement element))
        {
            if (ClearName(element.Name(full)) is { } name)
            {
                writer.WriteName(name);
                WriteValue(context, element, full);
            }
            else
            {
                if (ClearFieldPlaceholder.Is(element, full)) ThrowPlaceholderValue(element.Name(full));
                element.Bytes(full).CopyTo(rest[restLength..]);
                restLength += element.End - element.Start;
            }
        }
        rest[restLength++] = 0;
        BinaryPrimitives.WriteInt32LittleEndian(rest, restLength);

        // Format v2 drops what the envelope already says: the document's length (the envelope's length less 5) and its
        // terminator. Format v1 keeps the layout every earlier reader expects.
        bool elementsOnly = StoredLayout.ElementsOnly(_namespace.Format);
        _namespace.Compress(elementsOnly ? rest[4..(restLength - 1)] : rest[..restLength], scratch.Second);
        writer.WriteName(CompressedElementName);
        writer.WriteBinaryData(new BsonBinaryData(scratch.Second.WrittenSpan.ToArray(), (BsonBinarySubType)StoredLayout.Subtype(elementsOnly)));
        writer.WriteEndDocument();
        SerializerScratch.Return(scratch);
    }

    /// <summary>A value readers would drop as docz's placeholder is refused rather than written and lost.</summary>
    [DoesNotReturn]
    private void ThrowPlaceholderValue(ReadOnlySpan<byte> name) => throw new InvalidOperationException(
        $"Member '{Encoding.UTF8.GetString(name)}' of {typeof(T).Name} holds BinData(0x82, \"docz clear field\"), the placeholder docz keeps " +
        $"in the compressed part of '{Namespace}': readers would drop it. Store another value, or make the member a clear field.");

    CompressionNamespace ICompressedDocumentSerializer<T>.CompressionNamespace => _namespace;

    /// <summary>What <see cref="Serialize"/> compresses for <paramref name="document"/>: the class map's document less its clear elements (docz's split, which is the same).</summary>
    byte[] ICompressedDocumentSerializer<T>.CompressedPart(T document)
    {
        _trainingCodec ??= new StoredDocumentCodec(_namespace, _clearElements);
        SerializerScratch scratch = SerializerScratch.Rent();
        scratch.Bson.Position = 0;
        SerializeWithClassMap(scratch.WriterContext, default, document); // on a throw the scratch is dropped
        byte[] part = _trainingCodec.CompressedPart(new ReadOnlySpan<byte>(scratch.Bson.GetBuffer(), 0, (int)scratch.Bson.Position));
        SerializerScratch.Return(scratch);
        return part;
    }

    private StoredDocumentCodec? _trainingCodec;

    /// <summary>
    /// The class map writes <paramref name="value"/>; for an instance of a derived type it hands it to the serializer
    /// registered for that type, a <see cref="CompressedDerivedSerializer{TDerived, TBase}"/>, which must then write it
    /// plain (it is being compressed here) rather than compress it a second time: it knows by <see cref="ClassMapInProgress.Writing"/>.
    /// </summary>
    private void SerializeWithClassMap(BsonSerializationContext context, BsonSerializationArgs args, T value)
    {
        object? outer = ClassMapInProgress.Writing;
        ClassMapInProgress.Writing = value;
        try
        {
            _inner.Serialize(context, args, value);
        }
        finally
        {
            ClassMapInProgress.Writing = outer;
        }
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidDataException">The compressed part is corrupt; the message names the document's <c>_id</c>.</exception>
    /// <exception cref="DictionaryNotFoundException">The dictionary it needs cannot be found; the message names the <c>_id</c>.</exception>
    public override T Deserialize(BsonDeserializationContext context, BsonDeserializationArgs args) => Read(context, _inner);

    /// <summary>
    /// Reads a stored document, compressed or plain, and has <paramref name="classMap"/> deserialize the plain form: this
    /// type's class map, or a derived type's (<see cref="CompressedDerivedSerializer{TDerived, TBase}"/>).
    /// </summary>
    internal TResult Read<TResult>(BsonDeserializationContext context, IBsonSerializer<TResult> classMap)
        where TResult : class
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Reader.CurrentBsonType == BsonType.Null)
        {
            context.Reader.ReadNull();
            return null!;
        }

        using IByteBuffer raw = context.Reader.ReadRawBsonDocument();
        SerializerScratch scratch = SerializerScratch.Rent();
        try
        {
            ReadOnlySpan<byte> stored = Contiguous(raw, scratch.Bson);
            RawBsonElement? compressed = null;
            // The clear elements' names, listed in the same walk: a stored document has few (_id and the configured clear
            // fields); with more than the list holds (-1), the merge looks them up in the stored document instead.
            Span<int> clearNames = stackalloc int[2 * MaxListedClearNames];
            int listed = 0;
            var elements = new RawBsonWalker(stored);
            while (elements.TryNext(out RawBsonElement element)) // every element: the merge below copies them unchecked
            {
                if (compressed is null && element.Name(stored).SequenceEqual(StoredLayout.CompressedNameUtf8))
                {
                    compressed = element;
                    continue;
                }
                if (listed < 0) continue;
                if (2 * listed == clearNames.Length)
                {
                    listed = -1;
                    continue;
                }
                clearNames[2 * listed] = element.NameStart;
                clearNames[2 * listed + 1] = element.NameLength;
                listed++;
            }
            // Without a _z, or with a _z this serializer never writes (not BinData 0x80 or 0x81: the application's own
            // field of that name), the document is plain: legacy, or written while compression was off.
            if (compressed is not { } z || !StoredLayout.IsEnvelope(z, stored))
                return ReadPlain(raw, classMap);

            return ReadMerged(stored, z, clearNames[..(2 * Math.Max(listed, 0))], listedAll: listed >= 0, scratch, classMap);
        }
        finally
        {
            SerializerScratch.Return(scratch);
        }
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException">The member is stored compressed, so no query can use it.</exception>
    public bool TryGetMemberSerializationInfo(string memberName, out BsonSerializationInfo serializationInfo)
    {
        EnsureClear(memberName, typeof(T));
        return _inner.TryGetMemberSerializationInfo(memberName, out serializationInfo);
    }

    /// <exception cref="InvalidOperationException">The member is stored compressed, so no query or update can use it.</exception>
    internal void EnsureClear(string memberName, Type type)
    {
        if (!_clearMembers.Contains(memberName) && !_clearElements.Contains(memberName))
        {
            throw new InvalidOperationException(
                $"Member '{memberName}' of {type.Name} is compressed (stored inside '{CompressedElementName}' of '{Namespace}'), " +
                "so filters, sorts, projections, indexes and updates cannot use it. Configure it as a clear field to query it.");
        }
    }

    /// <inheritdoc/>
    public bool GetDocumentId(object document, out object id, out Type idNominalType, out IIdGenerator idGenerator) =>
        _inner.GetDocumentId(document, out id, out idNominalType, out idGenerator);

    /// <inheritdoc/>
    public void SetDocumentId(object document, object id) => _inner.SetDocumentId(document, id);

    /// <summary>The clear element's name as a cached string, or null when the element is compressed.</summary>
    private string? ClearName(ReadOnlySpan<byte> name)
    {
        foreach ((byte[] utf8, string text) in _clearNames)
        {
            if (name.SequenceEqual(utf8)) return text;
        }
        return null;
    }

    /// <summary>Writes a raw element's value; the common id and field types without a detour through <see cref="BsonValue"/>.</summary>
    private static void WriteValue(BsonSerializationContext context, RawBsonElement element, ReadOnlySpan<byte> document)
    {
        IBsonWriter writer = context.Writer;
        ReadOnlySpan<byte> value = element.Value(document);
        switch ((BsonType)element.Type)
        {
            case BsonType.ObjectId: writer.WriteObjectId(ToObjectId(value)); break;
            case BsonType.String: writer.WriteString(Encoding.UTF8.GetString(value[4..^1])); break;
            case BsonType.Int32: writer.WriteInt32(BinaryPrimitives.ReadInt32LittleEndian(value)); break;
            case BsonType.Int64: writer.WriteInt64(BinaryPrimitives.ReadInt64LittleEndian(value)); break;
            case BsonType.Double: writer.WriteDouble(BinaryPrimitives.ReadDoubleLittleEndian(value)); break;
            case BsonType.Boolean: writer.WriteBoolean(value[0] != 0); break;
            case BsonType.DateTime: writer.WriteDateTime(BinaryPrimitives.ReadInt64LittleEndian(value)); break;
            case BsonType.Null: writer.WriteNull(); break;
            default: BsonValueSerializer.Instance.Serialize(context, ReadValue(element, document)); break;
        }
    }

    [ThreadStatic]
    private static byte[]? t_objectId;

    /// <summary>The driver's span constructor of <see cref="ObjectId"/> is not public; its array one copies out of a reused array.</summary>
    private static ObjectId ToObjectId(ReadOnlySpan<byte> value)
    {
        byte[] bytes = t_objectId ??= new byte[12];
        value.CopyTo(bytes);
        return new ObjectId(bytes);
    }

    /// <summary>Materializes one element's value (rare types, error messages) through a one-element document.</summary>
    private static BsonValue ReadValue(RawBsonElement element, ReadOnlySpan<byte> document)
    {
        ReadOnlySpan<byte> bytes = element.Bytes(document);
        byte[] single = new byte[bytes.Length + 5];
        BinaryPrimitives.WriteInt32LittleEndian(single, single.Length);
        bytes.CopyTo(single.AsSpan(4));
        return BsonSerializer.Deserialize<BsonDocument>(single).GetElement(0).Value;
    }

    private static string DescribeId(ReadOnlySpan<byte> stored)
    {
        try
        {
            var elements = new RawBsonWalker(stored);
            while (elements.TryNext(out RawBsonElement element))
            {
                if (element.Name(stored).SequenceEqual("_id"u8)) return ReadValue(element, stored).ToString()!;
            }
            return BsonNull.Value.ToString();
        }
        catch (Exception ex) when (ex is InvalidDataException or FormatException or EndOfStreamException or BsonSerializationException)
        {
            return "(unreadable)";
        }
    }

    /// <summary>
    /// Rebuilds the document the class map expects: the stored clear elements, then the decompressed ones, decompressed in
    /// place after them (a clear element wins over a compressed one of the same name: it was set later, by an update; and
    /// docz's placeholders are dropped). Only a document holding such an element is compacted; the others are not copied again.
    /// <paramref name="clearNames"/> holds the start and length of each clear element's name in <paramref name="stored"/>, in
    /// pairs; when it could not list them all (<paramref name="listedAll"/> false), they are looked up in the stored document.
    /// </summary>
    private TResult ReadMerged<TResult>(ReadOnlySpan<byte> stored, RawBsonElement compressed, ReadOnlySpan<int> clearNames, bool listedAll,
        SerializerScratch scratch, IBsonSerializer<TResult> classMap)
    {
        ArrayBufferWriter<byte> merged = scratch.Second;
        merged.ResetWrittenCount();
        int clearLength = stored.Length - 5 - (compressed.End - compressed.Start);
        Span<byte> head = merged.GetSpan(4 + clearLength);
        stored[4..compressed.Start].CopyTo(head[4..]);
        stored[compressed.End..^1].CopyTo(head[compressed.Start..]);
        merged.Advance(4 + clearLength);

        ReadOnlySpan<byte> value = compressed.Value(stored);
        bool elementsOnly = value[4] == StoredLayout.ElementsSubtype;
        try
        {
            _namespace.Decompress(value[5..], merged);
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"Document _id {DescribeId(stored)} in '{Namespace}' cannot be decompressed: {ex.Message}", ex);
        }
        catch (DictionaryNotFoundException ex)
        {
            throw new DictionaryNotFoundException(ex.DictionaryId, Namespace, $"document _id {DescribeId(stored)} needs it ({ex.Message})", ex);
        }
        int restEnd = merged.WrittenCount;
        merged.GetSpan(1)[0] = 0; // room for the terminator
        merged.Advance(1);
        if (!MemoryMarshal.TryGetArray(merged.WrittenMemory, out ArraySegment<byte> segment) || segment.Offset != 0)
            throw new InvalidOperationException("ArrayBufferWriter is expected to be backed by an array from offset 0.");
        Span<byte> document = segment.AsSpan();

        // The decompressed elements are walked (checked) and kept in place; from the first one dropped on, the ones
        // after it move down over it. The walk reads each element before anything is written over it.
        int restStart = 4 + clearLength;
        int length = restStart;
        bool tooDeep = false;
        try
        {
            ReadOnlySpan<byte> rest = document[restStart..restEnd];
            var restElements = elementsOnly ? RawBsonWalker.OverElements(rest) : new RawBsonWalker(rest);
            while (restElements.TryNext(out RawBsonElement element))
            {
                ReadOnlySpan<byte> name = element.Name(rest);
                if (listedAll ? IsListed(stored, clearNames, name) : IsStoredInTheClear(stored, compressed, name)) continue;
                // docz keeps the place of a clear field that was not leading by a placeholder; without its clear value
                // (removed by the application) the field is gone. A MinKey (the older placeholder's form) is a value: it
                // cannot be told from the application's own MinKey, and a value is never dropped (ClearFieldPlaceholder).
                if (ClearFieldPlaceholder.Is(element, rest)) continue;
                // Before anything recursive reads it (the clear elements were checked by the server when it stored them).
                if (!BsonNesting.IsWithinLimit(rest, element))
                {
                    tooDeep = true;
                    break;
                }
                int size = element.End - element.Start;
                if (restStart + element.Start != length) document.Slice(restStart + element.Start, size).CopyTo(document[length..]);
                length += size;
            }
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"Document _id {DescribeId(stored)} in '{Namespace}': the decompressed part is not a BSON document: {ex.Message}", ex);
        }
        if (tooDeep) throw new InvalidDataException($"Document _id {DescribeId(stored)} in '{Namespace}' {BsonNesting.TooDeep}.");
        document[length++] = 0;
        BinaryPrimitives.WriteInt32LittleEndian(document, length);

        MergedDocumentReader reader = scratch.RentReader();
        bool reusable = false;
        try
        {
            return reader.Read(segment.Array!, length, classMap, out reusable);
        }
        finally
        {
            if (reader.Sliced) scratch.GiveAwaySecond(); // raw members of the document (RawBsonDocument, ...) share the array
            scratch.ReturnReader(reader, reusable);
        }
    }

    private const int MaxListedClearNames = 16;

    /// <summary>Whether <paramref name="name"/> is one of the listed names of <paramref name="stored"/>.</summary>
    private static bool IsListed(ReadOnlySpan<byte> stored, ReadOnlySpan<int> names, ReadOnlySpan<byte> name)
    {
        for (int i = 0; i < names.Length; i += 2)
        {
            if (names[i + 1] == name.Length && stored.Slice(names[i], name.Length).SequenceEqual(name)) return true;
        }
        return false;
    }

    /// <summary>
    /// Whether <paramref name="name"/> is a clear element of <paramref name="stored"/>: any but <paramref name="compressed"/>,
    /// whose name a compressed member may have too (already walked whole, so it cannot throw).
    /// </summary>
    private static bool IsStoredInTheClear(ReadOnlySpan<byte> stored, RawBsonElement compressed, ReadOnlySpan<byte> name)
    {
        var elements = new RawBsonWalker(stored);
        while (elements.TryNext(out RawBsonElement element))
        {
            if (element.Start != compressed.Start && element.Name(stored).SequenceEqual(name)) return true;
        }
        return false;
    }

    private static TResult ReadPlain<TResult>(IByteBuffer document, IBsonSerializer<TResult> classMap)
    {
        using var stream = new ByteBufferStream(document);
        using var reader = new BsonBinaryReader(stream);
        // The class map hands a derived instance to the serializer of its type, at the start of this reader: that one
        // reads it with its class map straight away (CompressedDerivedSerializer.Deserialize), the document being plain here.
        BsonBinaryReader? outer = ClassMapInProgress.ReadingPlain;
        ClassMapInProgress.ReadingPlain = reader;
        try
        {
            return classMap.Deserialize(BsonDeserializationContext.CreateRoot(reader));
        }
        finally
        {
            ClassMapInProgress.ReadingPlain = outer;
        }
    }

    /// <summary>The raw document as one span: the buffer's own bytes when they are contiguous, else a copy into <paramref name="copy"/>.</summary>
    private static ReadOnlySpan<byte> Contiguous(IByteBuffer raw, MemoryStream copy)
    {
        ArraySegment<byte> backing = raw.AccessBackingBytes(0);
        if (backing.Count >= raw.Length) return backing.AsSpan(0, raw.Length);
        copy.SetLength(raw.Length);
        byte[] bytes = copy.GetBuffer();
        raw.GetBytes(0, bytes, 0, raw.Length);
        return bytes.AsSpan(0, raw.Length);
    }
}
