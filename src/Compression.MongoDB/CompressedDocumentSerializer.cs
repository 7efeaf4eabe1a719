using Compression.Dictionaries;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Serializers;

namespace Compression.MongoDB;

/// <summary>
/// A BSON serializer that stores a <typeparamref name="T"/> as <c>{ _id, &lt;clear fields&gt;, _z: BinData(0x80, envelope) }</c>:
/// the id and the configured clear fields stay queryable; everything else is compressed by a
/// <see cref="CompressionEngine"/> with the collection's shared dictionaries. Documents without <c>_z</c> (written before
/// compression was switched on, or while it was off) are read as plain documents.
/// </summary>
/// <remarks>
/// The driver's serializer registry is global per CLR type, so a compressed type maps to one namespace.
/// Register it with <see cref="CompressedDocumentSerializer.Register{T}"/> at start-up, before the first use of the type.
/// Filters on a compressed member fail: LINQ throws with a message naming the member; string-built filters
/// (<c>Builders&lt;T&gt;.Filter.Eq("Field", v)</c>) silently match nothing, since the field is not stored in the clear.
/// </remarks>
public sealed class CompressedDocumentSerializer<T> : SerializerBase<T>, IBsonDocumentSerializer, IBsonIdProvider
    where T : class
{
    private readonly CompressionEngine _engine;
    private readonly BsonClassMapSerializer<T> _inner;
    private readonly HashSet<string> _clearElements;
    private readonly HashSet<string> _clearMembers;

    /// <summary>Creates the serializer; prefer <see cref="CompressedDocumentSerializer.Register{T}"/>.</summary>
    /// <param name="engine">The engine that compresses and holds the dictionaries.</param>
    /// <param name="namespace">The namespace (<c>database.collection</c>) the documents belong to.</param>
    /// <param name="options">Clear fields and whether new documents are compressed.</param>
    public CompressedDocumentSerializer(CompressionEngine engine, string @namespace, CompressedDocumentOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(engine);
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        options ??= new CompressedDocumentOptions();
        _engine = engine;
        Namespace = @namespace;
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
            _clearMembers.Add(map.MemberName);
            _clearElements.Add(map.ElementName);
        }
    }

    /// <summary>The name of the element that holds the envelope.</summary>
    public const string CompressedElementName = "_z";

    /// <summary>The namespace the documents belong to.</summary>
    public string Namespace { get; }

    /// <summary>Whether new documents are compressed. When <see langword="false"/>, they are written plain; compressed ones stay readable.</summary>
    public bool Compress { get; }

    /// <summary>The element names stored in the clear (always including <c>_id</c>).</summary>
    public IReadOnlyCollection<string> ClearElementNames => _clearElements;

    /// <inheritdoc/>
    public override void Serialize(BsonSerializationContext context, BsonSerializationArgs args, T value)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (!Compress || value is null)
        {
            _inner.Serialize(context, args, value!);
            return;
        }

        var full = new BsonDocument();
        using (var documentWriter = new BsonDocumentWriter(full))
        {
            _inner.Serialize(BsonSerializationContext.CreateRoot(documentWriter), args, value);
        }

        var rest = new BsonDocument();
        IBsonWriter writer = context.Writer;
        writer.WriteStartDocument();
        foreach (BsonElement element in full)
        {
            if (_clearElements.Contains(element.Name))
            {
                writer.WriteName(element.Name);
                BsonValueSerializer.Instance.Serialize(context, element.Value);
            }
            else
            {
                rest.Add(element);
            }
        }
        byte[] envelope = _engine.Compress(Namespace, rest.ToBson());
        writer.WriteName(CompressedElementName);
        writer.WriteBinaryData(new BsonBinaryData(envelope, BsonBinarySubType.UserDefined));
        writer.WriteEndDocument();
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidDataException">The compressed part is corrupt; the message names the document's <c>_id</c>.</exception>
    /// <exception cref="DictionaryNotFoundException">The dictionary it needs cannot be found; the message names the <c>_id</c>.</exception>
    public override T Deserialize(BsonDeserializationContext context, BsonDeserializationArgs args)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Reader.CurrentBsonType == BsonType.Null)
        {
            context.Reader.ReadNull();
            return null!;
        }
        BsonDocument stored = BsonDocumentSerializer.Instance.Deserialize(context);
        if (!stored.TryGetValue(CompressedElementName, out BsonValue compressed))
            return DeserializePlain(stored); // legacy, or written while compression was off

        BsonValue id = stored.GetValue("_id", BsonNull.Value);
        if (compressed is not BsonBinaryData { SubType: BsonBinarySubType.UserDefined } binary)
            throw new InvalidDataException($"Document _id {id} in '{Namespace}': element '{CompressedElementName}' is a {compressed.BsonType}, not BinData(0x80, envelope).");

        byte[] bson;
        try
        {
            bson = _engine.Decompress(Namespace, binary.Bytes);
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"Document _id {id} in '{Namespace}' cannot be decompressed: {ex.Message}", ex);
        }
        catch (DictionaryNotFoundException ex)
        {
            throw new DictionaryNotFoundException(ex.DictionaryId, Namespace, $"document _id {id} needs it ({ex.Message})", ex);
        }

        BsonDocument rest;
        try
        {
            rest = BsonSerializer.Deserialize<BsonDocument>(bson);
        }
        catch (Exception ex) when (ex is FormatException or EndOfStreamException or BsonSerializationException)
        {
            throw new InvalidDataException($"Document _id {id} in '{Namespace}': the decompressed part is not a BSON document: {ex.Message}", ex);
        }

        var merged = new BsonDocument();
        foreach (BsonElement element in stored)
        {
            if (element.Name != CompressedElementName) merged.Add(element);
        }
        foreach (BsonElement element in rest)
        {
            if (!merged.Contains(element.Name)) merged.Add(element);
        }
        return DeserializePlain(merged);
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException">The member is stored compressed, so no query can use it.</exception>
    public bool TryGetMemberSerializationInfo(string memberName, out BsonSerializationInfo serializationInfo)
    {
        if (!_clearMembers.Contains(memberName) && !_clearElements.Contains(memberName))
        {
            throw new InvalidOperationException(
                $"Member '{memberName}' of {typeof(T).Name} is compressed (stored inside '{CompressedElementName}' of '{Namespace}'), " +
                "so filters, sorts, projections and indexes cannot use it. Configure it as a clear field to query it.");
        }
        return _inner.TryGetMemberSerializationInfo(memberName, out serializationInfo);
    }

    /// <inheritdoc/>
    public bool GetDocumentId(object document, out object id, out Type idNominalType, out IIdGenerator idGenerator) =>
        _inner.GetDocumentId(document, out id, out idNominalType, out idGenerator);

    /// <inheritdoc/>
    public void SetDocumentId(object document, object id) => _inner.SetDocumentId(document, id);

    private T DeserializePlain(BsonDocument document)
    {
        using var reader = new BsonDocumentReader(document);
        return _inner.Deserialize(BsonDeserializationContext.CreateRoot(reader));
    }
}

/// <summary>Per-collection settings of a <see cref="CompressedDocumentSerializer{T}"/>.</summary>
public sealed class CompressedDocumentOptions
{
    /// <summary>Members (by member or element name) stored uncompressed so that filters, sorts and indexes can use them. <c>_id</c> always is.</summary>
    public IList<string> ClearFields { get; init; } = [];

    /// <summary>Whether new documents are compressed. Switch it off to write plain documents; compressed ones stay readable.</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Compress { get; init; } = true;
}

/// <summary>Registration of <see cref="CompressedDocumentSerializer{T}"/> with the driver's global serializer registry.</summary>
public static class CompressedDocumentSerializer
{
    /// <summary>
    /// Creates and registers the serializer of <typeparamref name="T"/>. Call it at start-up, before the first
    /// <c>GetCollection&lt;T&gt;</c> or any other use of the type by the driver.
    /// </summary>
    /// <exception cref="InvalidOperationException">A serializer for <typeparamref name="T"/> is already registered or was
    /// already looked up (and cached) by the driver: registration came too late.</exception>
    public static CompressedDocumentSerializer<T> Register<T>(CompressionEngine engine, string @namespace, CompressedDocumentOptions? options = null)
        where T : class
    {
        var serializer = new CompressedDocumentSerializer<T>(engine, @namespace, options);
        try
        {
            BsonSerializer.RegisterSerializer(typeof(T), serializer);
        }
        catch (BsonSerializationException ex)
        {
            throw new InvalidOperationException(
                $"Cannot register the compressed serializer of {typeof(T).FullName}: the driver already has a serializer for it " +
                "(registered, or cached by an earlier use of the type). Register compression at start-up, before the first GetCollection<T>.", ex);
        }
        return serializer;
    }
}
