using Compression.Dictionaries;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Serializers;

namespace Compression.MongoDB.Schemaless;

/// <summary>
/// The document serializer of a compressed <c>IMongoCollection&lt;BsonDocument&gt;</c> (or <see cref="RawBsonDocument"/>):
/// the layout of <see cref="StoredLayout"/> without a class map. The clear fields are top-level element names; the split
/// and the merge are <see cref="StoredDocumentCodec"/>'s (docz's), so a document reads back byte for byte, its element
/// order included (a clear field that did not lead the document keeps its place through a placeholder). Documents
/// without an envelope (legacy, or written while compression was off) are read as they are.
/// </summary>
/// <remarks>
/// The driver refuses a serializer for any <see cref="BsonValue"/> type in its global registry, so this one is never
/// registered: <see cref="CompressedCollections.GetCompressedCollection{TDocument}"/> gives it to one collection.
/// </remarks>
internal sealed class CompressedBsonDocumentSerializer<TDocument> : SerializerBase<TDocument>, IBsonDocumentSerializer, IBsonIdProvider, ICompressedDocumentSerializer<TDocument>
    where TDocument : BsonDocument
{
    private readonly StoredDocumentCodec _codec;
    private readonly string _clearFieldsKey;

    /// <param name="namespace">The collection's namespace (<c>database.collection</c>) in the engine.</param>
    /// <param name="clearFields">The top-level element names stored in the clear besides <c>_id</c> and <c>_t</c>, already checked.</param>
    /// <param name="compress">Whether new documents are compressed (when not, they are written plain; compressed ones stay readable).</param>
    public CompressedBsonDocumentSerializer(CompressionNamespace @namespace, IEnumerable<string> clearFields, bool compress)
    {
        if (typeof(TDocument) != typeof(BsonDocument) && typeof(TDocument) != typeof(RawBsonDocument))
            throw new NotSupportedException($"A compressed collection holds BsonDocument or RawBsonDocument, not {typeof(TDocument).Name}.");
        _codec = new StoredDocumentCodec(@namespace, clearFields);
        Compress = compress;
        _clearFieldsKey = $"{CompressionEngineOptions.SectionName}:Namespaces:{@namespace.Name}:ClearFields";
    }

    /// <summary>Whether new documents are compressed.</summary>
    public bool Compress { get; }

    /// <summary>The namespace the documents belong to.</summary>
    public string Namespace => _codec.Namespace.Name;

    /// <inheritdoc/>
    public override void Serialize(BsonSerializationContext context, BsonSerializationArgs args, TDocument value)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (value is null)
        {
            context.Writer.WriteNull();
            return;
        }
        byte[] plain = PlainBson(value, args);
        using var stored = new ByteArrayBuffer(Compress ? _codec.Compress(plain) : plain, isReadOnly: true);
        context.Writer.WriteRawBsonDocument(stored);
    }

    /// <inheritdoc/>
    public CompressionNamespace CompressionNamespace => _codec.Namespace;

    /// <inheritdoc/>
    public byte[] CompressedPart(TDocument document) => _codec.CompressedPart(PlainBson(document, default));

    /// <summary>The document's own BSON: a <see cref="RawBsonDocument"/>'s bytes as they are, a <see cref="BsonDocument"/> as the driver writes it.</summary>
    private static byte[] PlainBson(TDocument value, BsonSerializationArgs args)
    {
        if (value is RawBsonDocument raw)
        {
            IByteBuffer slice = raw.Slice; // the document's own buffer: not disposed here
            byte[] bytes = new byte[slice.Length];
            slice.GetBytes(0, bytes, 0, bytes.Length);
            return bytes;
        }
        using var stream = new MemoryStream();
        using (var writer = new BsonBinaryWriter(stream))
        {
            BsonDocumentSerializer.Instance.Serialize(BsonSerializationContext.CreateRoot(writer), args, value);
        }
        return stream.ToArray();
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidDataException">The compressed part is corrupt; the message names the document's <c>_id</c>.</exception>
    /// <exception cref="DictionaryNotFoundException">The dictionary it needs cannot be found.</exception>
    public override TDocument Deserialize(BsonDeserializationContext context, BsonDeserializationArgs args)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Reader.CurrentBsonType == BsonType.Null)
        {
            context.Reader.ReadNull();
            return null!;
        }
        byte[] stored;
        using (IByteBuffer raw = context.Reader.ReadRawBsonDocument())
        {
            stored = new byte[raw.Length];
            raw.GetBytes(0, stored, 0, stored.Length);
        }
        byte[] plain = StoredDocumentCodec.Classify(stored) == StoredKind.Compressed ? Decode(stored) : stored;
        return typeof(TDocument) == typeof(RawBsonDocument)
            ? (TDocument)(BsonDocument)new RawBsonDocument(plain)
            : (TDocument)BsonSerializer.Deserialize<BsonDocument>(plain);
    }

    private byte[] Decode(byte[] stored)
    {
        try
        {
            return _codec.Decode(stored);
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"Document _id {DescribeId(stored)} in '{Namespace}' cannot be read: {ex.Message}", ex);
        }
        catch (DictionaryNotFoundException ex)
        {
            throw new DictionaryNotFoundException(ex.DictionaryId, Namespace, $"document _id {DescribeId(stored)} needs it ({ex.Message})", ex);
        }
    }

    private static string DescribeId(byte[] stored)
    {
        try
        {
            return new RawBsonDocument(stored).TryGetValue("_id", out BsonValue id) ? id.ToString()! : BsonNull.Value.ToString();
        }
        catch (Exception ex) when (ex is FormatException or EndOfStreamException or BsonSerializationException)
        {
            return "(unreadable)";
        }
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException">The field is stored compressed, so no filter, sort, projection, index or update can use it.</exception>
    public bool TryGetMemberSerializationInfo(string memberName, out BsonSerializationInfo serializationInfo)
    {
        if (!_codec.IsClear(memberName))
        {
            throw new InvalidOperationException(
                $"Field '{memberName}' is compressed (stored inside '{StoredLayout.CompressedName}' of '{Namespace}'), so filters, sorts, projections, " +
                $"indexes and updates cannot use it. Add it to {_clearFieldsKey} (top-level element names) to query it.");
        }
        return BsonDocumentSerializer.Instance.TryGetMemberSerializationInfo(memberName, out serializationInfo);
    }

    /// <inheritdoc/>
    /// <remarks>As the driver's own serializers: a <see cref="BsonDocument"/> gets an <c>_id</c> on insert when it has none; a <see cref="RawBsonDocument"/>, which cannot change, does not (the server gives it one).</remarks>
    public bool GetDocumentId(object document, out object id, out Type idNominalType, out IIdGenerator idGenerator)
    {
        if (document is RawBsonDocument)
        {
            id = null!;
            idNominalType = null!;
            idGenerator = null!;
            return false;
        }
        return BsonDocumentSerializer.Instance.GetDocumentId(document, out id, out idNominalType, out idGenerator);
    }

    /// <inheritdoc/>
    public void SetDocumentId(object document, object id) => BsonDocumentSerializer.Instance.SetDocumentId(document, id);
}
