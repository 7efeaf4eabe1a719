using Compression.Dictionaries;
using Compression.MongoDB.Configuration;
using Compression.MongoDB.Schemaless;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.MongoDB;

/// <summary>
/// Compressed collections without a CLR document type (<see cref="BsonDocument"/> and <see cref="RawBsonDocument"/>), and
/// what any compressed collection can be asked: to train before a bulk load.
/// </summary>
public static class CompressedCollections
{
    /// <summary>
    /// For a bulk load: trains the collection's namespace from <paramref name="documents"/> before they are written, so
    /// they (and what follows) are compressed with a dictionary instead of alone while the write path gathers samples.
    /// Each document is split as the collection's serializer splits it (the clear fields left out), then
    /// <see cref="CompressionNamespace.TrainAsync(IEnumerable{ReadOnlyMemory{byte}}, CancellationToken)"/> trains, adopts
    /// and publishes by the usual rule. Give it the first batch of the load (a few hundred documents or more), then
    /// insert; docs/dictionary-engine.md, "Bulk loads", has the measurements.
    /// </summary>
    /// <param name="collection">A collection compressed through <c>AddMongoDB</c>'s mappings, <see cref="CompressedDocumentSerializer.Register{T}"/> or <see cref="GetCompressedCollection{TDocument}"/>.</param>
    /// <param name="documents">The documents about to be written.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <exception cref="ArgumentException"><paramref name="collection"/> is not compressed (its document serializer is not this library's).</exception>
    public static Task<TrainingResult> TrainCompressionAsync<TDocument>(this IMongoCollection<TDocument> collection, IEnumerable<TDocument> documents, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(collection);
        ArgumentNullException.ThrowIfNull(documents);
        if (collection.DocumentSerializer is not ICompressedDocumentSerializer<TDocument> serializer)
        {
            throw new ArgumentException(
                $"Collection '{collection.CollectionNamespace.FullName}' is not compressed: its serializer for {typeof(TDocument).Name} is {collection.DocumentSerializer.GetType().Name}. " +
                "Map the type with AddMongoDB(..., map => map.Map<T>(collection)), or use GetCompressedCollection for BsonDocument.", nameof(collection));
        }
        return serializer.CompressionNamespace.TrainAsync(documents.Select(d => (ReadOnlyMemory<byte>)serializer.CompressedPart(d)), cancellationToken);
    }

    /// <summary>
    /// The collection <paramref name="name"/> of <paramref name="database"/> as <see cref="IMongoCollection{TDocument}"/>
    /// of <see cref="BsonDocument"/> or <see cref="RawBsonDocument"/>, stored compressed in the namespace
    /// <c>database.name</c> of <paramref name="engine"/>: <c>{ _id, &lt;clear fields&gt;, _z: BinData(0x81, envelope) }</c>.
    /// A document reads back as it was written, byte for byte; documents without <c>_z</c> (legacy, or written while
    /// compression was off) read as they are.
    /// </summary>
    /// <typeparam name="TDocument"><see cref="BsonDocument"/> or <see cref="RawBsonDocument"/>.</typeparam>
    /// <param name="database">The application's database.</param>
    /// <param name="name">The collection's name.</param>
    /// <param name="engine">The engine whose namespace <c>database.name</c> compresses the documents.</param>
    /// <param name="options">
    /// Clear fields (top-level element names; <c>_id</c> and <c>_t</c> always are) and whether new documents are compressed;
    /// without, the namespace's configured <c>ClearFields</c> (<c>Compression:Namespaces:database.name:ClearFields</c>)
    /// and compression on.
    /// </param>
    /// <param name="settings">The collection's settings, as for <see cref="IMongoDatabase.GetCollection{TDocument}(string, MongoCollectionSettings)"/>.</param>
    /// <remarks>
    /// The driver keeps one serializer per CLR type for every collection and refuses one for <see cref="BsonValue"/>
    /// types, so <c>GetCollection&lt;BsonDocument&gt;</c> stays plain everywhere; only the collection returned here
    /// compresses. Filters, sorts, projections, indexes and updates built with <see cref="Builders{TDocument}"/> on a
    /// compressed field fail, naming it; JSON or <see cref="BsonDocument"/> filters are not checked and match nothing
    /// on a compressed field. <c>OfType&lt;TDerived&gt;()</c> is not supported.
    /// </remarks>
    /// <exception cref="ArgumentException">A clear field is not a top-level element name, or is <c>_z</c>.</exception>
    /// <exception cref="NotSupportedException"><typeparamref name="TDocument"/> is another type, or the driver is of a version without per-collection serializers.</exception>
    public static IMongoCollection<TDocument> GetCompressedCollection<TDocument>(this IMongoDatabase database, string name, CompressionEngine engine,
        CompressedDocumentOptions? options = null, MongoCollectionSettings? settings = null)
        where TDocument : BsonDocument
    {
        ArgumentNullException.ThrowIfNull(database);
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(engine);
        CompressionNamespace @namespace = engine.GetNamespace($"{database.DatabaseNamespace.DatabaseName}.{name}");
        IReadOnlyList<string> clearFields = options is null ? MongoNamespaceSettings.ClearFieldsOf(@namespace) : [.. options.ClearFields];
        foreach (string field in clearFields)
        {
            if (!MongoNamespaceSettings.IsClearFieldName(field))
                throw new ArgumentException($"'{field}' is not a clear field of '{@namespace.Name}'; allowed: {MongoNamespaceSettings.AllowedClearFieldNames}.", nameof(options));
        }
        var serializer = new CompressedBsonDocumentSerializer<TDocument>(@namespace, clearFields, options?.Compress ?? true);
        return CompressedCollection<TDocument>.Create(database.GetCollection<TDocument>(name, settings), serializer);
    }
}
