using System.Reflection;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;
using MongoDB.Driver.Search;

namespace Compression.MongoDB.Schemaless;

/// <summary>
/// A compressed <see cref="IMongoCollection{TDocument}"/> of <see cref="BsonDocument"/> or <see cref="RawBsonDocument"/>:
/// the driver's own collection, made with <see cref="CompressedBsonDocumentSerializer{TDocument}"/> as its document
/// serializer, so every operation (CRUD, bulk writes, aggregations, change streams, indexes, LINQ) reads and writes
/// through it. This wrapper only keeps that serializer across <c>WithReadConcern</c>, <c>WithReadPreference</c> and
/// <c>WithWriteConcern</c>, which in the driver make a new collection with the globally registered serializer (plain
/// BSON: reads would return the stored form, writes would not compress).
/// </summary>
/// <remarks>
/// MongoDB.Driver 3.x has no public way to give one collection its own document serializer (and refuses to register one
/// for a <see cref="BsonValue"/> type), while its collection has one internally: the constructor that
/// <c>OfType&lt;TDerived&gt;()</c> uses. It is reached by reflection, checked when the collection is made: a driver
/// without it fails there, saying so, never at the first read.
/// </remarks>
internal sealed class CompressedCollection<TDocument> : IMongoCollection<TDocument>
    where TDocument : BsonDocument
{
    private readonly IMongoCollection<TDocument> _inner;
    private readonly CompressedBsonDocumentSerializer<TDocument> _serializer;

    private CompressedCollection(IMongoCollection<TDocument> plain, CompressedBsonDocumentSerializer<TDocument> serializer)
    {
        _inner = WithDocumentSerializer(plain, serializer);
        _serializer = serializer;
    }

    /// <summary>The collection <paramref name="plain"/> names, reading and writing through <paramref name="serializer"/>.</summary>
    /// <exception cref="NotSupportedException">The driver's collection has no constructor taking a document serializer (another driver version).</exception>
    public static IMongoCollection<TDocument> Create(IMongoCollection<TDocument> plain, CompressedBsonDocumentSerializer<TDocument> serializer) =>
        new CompressedCollection<TDocument>(plain, serializer);

    private static IMongoCollection<TDocument> WithDocumentSerializer(IMongoCollection<TDocument> plain, IBsonSerializer<TDocument> serializer)
    {
        const BindingFlags Instance = BindingFlags.Instance | BindingFlags.NonPublic;
        Type type = plain.GetType();
        FieldInfo? cluster = type.GetField("_cluster", Instance);
        FieldInfo? executor = type.GetField("_operationExecutor", Instance);
        ConstructorInfo? constructor = cluster is null || executor is null ? null : type.GetConstructor(Instance, [
            typeof(IMongoDatabase), typeof(CollectionNamespace), typeof(MongoCollectionSettings), cluster.FieldType, executor.FieldType, typeof(IBsonSerializer<TDocument>)]);
        if (constructor is null)
        {
            throw new NotSupportedException(
                $"{type.FullName} ({type.Assembly.GetName().Name} {type.Assembly.GetName().Version}) has no constructor taking a document serializer: a compressed " +
                $"{typeof(TDocument).Name} collection needs the collection MongoDB.Driver's own IMongoDatabase returns, of the driver version this package depends on (it was tested with that one).");
        }
        return (IMongoCollection<TDocument>)constructor.Invoke([plain.Database, plain.CollectionNamespace, plain.Settings, cluster!.GetValue(plain), executor!.GetValue(plain), serializer]);
    }

    IMongoCollection<TDocument> IMongoCollection<TDocument>.WithReadConcern(ReadConcern readConcern) => new CompressedCollection<TDocument>(_inner.WithReadConcern(readConcern), _serializer);

    IMongoCollection<TDocument> IMongoCollection<TDocument>.WithReadPreference(ReadPreference readPreference) => new CompressedCollection<TDocument>(_inner.WithReadPreference(readPreference), _serializer);

    IMongoCollection<TDocument> IMongoCollection<TDocument>.WithWriteConcern(WriteConcern writeConcern) => new CompressedCollection<TDocument>(_inner.WithWriteConcern(writeConcern), _serializer);

    /// <exception cref="NotSupportedException">Always: the driver would read the derived type with its plain serializer.</exception>
    IFilteredMongoCollection<TDerivedDocument> IMongoCollection<TDocument>.OfType<TDerivedDocument>() =>
        throw new NotSupportedException($"OfType<{typeof(TDerivedDocument).Name}>() of the compressed collection '{_serializer.Namespace}' would read documents with the plain serializer of {typeof(TDerivedDocument).Name}; filter on a clear field instead.");

    // Everything else is the driver's collection's own (the obsolete members included: it is an implementation of the interface).
#pragma warning disable CS0618
    CollectionNamespace IMongoCollection<TDocument>.CollectionNamespace => _inner.CollectionNamespace;

    IMongoDatabase IMongoCollection<TDocument>.Database => _inner.Database;

    IBsonSerializer<TDocument> IMongoCollection<TDocument>.DocumentSerializer => _inner.DocumentSerializer;

    IMongoIndexManager<TDocument> IMongoCollection<TDocument>.Indexes => _inner.Indexes;

    IMongoSearchIndexManager IMongoCollection<TDocument>.SearchIndexes => _inner.SearchIndexes;

    MongoCollectionSettings IMongoCollection<TDocument>.Settings => _inner.Settings;

    IAsyncCursor<TResult> IMongoCollection<TDocument>.Aggregate<TResult>(PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.Aggregate(pipeline, options, cancellationToken);

    IAsyncCursor<TResult> IMongoCollection<TDocument>.Aggregate<TResult>(IClientSessionHandle session, PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.Aggregate(session, pipeline, options, cancellationToken);

    Task<IAsyncCursor<TResult>> IMongoCollection<TDocument>.AggregateAsync<TResult>(PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.AggregateAsync(pipeline, options, cancellationToken);

    Task<IAsyncCursor<TResult>> IMongoCollection<TDocument>.AggregateAsync<TResult>(IClientSessionHandle session, PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.AggregateAsync(session, pipeline, options, cancellationToken);

    void IMongoCollection<TDocument>.AggregateToCollection<TResult>(PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.AggregateToCollection(pipeline, options, cancellationToken);

    void IMongoCollection<TDocument>.AggregateToCollection<TResult>(IClientSessionHandle session, PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.AggregateToCollection(session, pipeline, options, cancellationToken);

    Task IMongoCollection<TDocument>.AggregateToCollectionAsync<TResult>(PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.AggregateToCollectionAsync(pipeline, options, cancellationToken);

    Task IMongoCollection<TDocument>.AggregateToCollectionAsync<TResult>(IClientSessionHandle session, PipelineDefinition<TDocument, TResult> pipeline, AggregateOptions options, CancellationToken cancellationToken) => _inner.AggregateToCollectionAsync(session, pipeline, options, cancellationToken);

    BulkWriteResult<TDocument> IMongoCollection<TDocument>.BulkWrite(IEnumerable<WriteModel<TDocument>> requests, BulkWriteOptions options, CancellationToken cancellationToken) => _inner.BulkWrite(requests, options, cancellationToken);

    BulkWriteResult<TDocument> IMongoCollection<TDocument>.BulkWrite(IClientSessionHandle session, IEnumerable<WriteModel<TDocument>> requests, BulkWriteOptions options, CancellationToken cancellationToken) => _inner.BulkWrite(session, requests, options, cancellationToken);

    Task<BulkWriteResult<TDocument>> IMongoCollection<TDocument>.BulkWriteAsync(IEnumerable<WriteModel<TDocument>> requests, BulkWriteOptions options, CancellationToken cancellationToken) => _inner.BulkWriteAsync(requests, options, cancellationToken);

    Task<BulkWriteResult<TDocument>> IMongoCollection<TDocument>.BulkWriteAsync(IClientSessionHandle session, IEnumerable<WriteModel<TDocument>> requests, BulkWriteOptions options, CancellationToken cancellationToken) => _inner.BulkWriteAsync(session, requests, options, cancellationToken);

    long IMongoCollection<TDocument>.Count(FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.Count(filter, options, cancellationToken);

    long IMongoCollection<TDocument>.Count(IClientSessionHandle session, FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.Count(session, filter, options, cancellationToken);

    Task<long> IMongoCollection<TDocument>.CountAsync(FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.CountAsync(filter, options, cancellationToken);

    Task<long> IMongoCollection<TDocument>.CountAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.CountAsync(session, filter, options, cancellationToken);

    long IMongoCollection<TDocument>.CountDocuments(FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.CountDocuments(filter, options, cancellationToken);

    long IMongoCollection<TDocument>.CountDocuments(IClientSessionHandle session, FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.CountDocuments(session, filter, options, cancellationToken);

    Task<long> IMongoCollection<TDocument>.CountDocumentsAsync(FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.CountDocumentsAsync(filter, options, cancellationToken);

    Task<long> IMongoCollection<TDocument>.CountDocumentsAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, CountOptions options, CancellationToken cancellationToken) => _inner.CountDocumentsAsync(session, filter, options, cancellationToken);

    DeleteResult IMongoCollection<TDocument>.DeleteMany(FilterDefinition<TDocument> filter, CancellationToken cancellationToken) => _inner.DeleteMany(filter, cancellationToken);

    DeleteResult IMongoCollection<TDocument>.DeleteMany(FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteMany(filter, options, cancellationToken);

    DeleteResult IMongoCollection<TDocument>.DeleteMany(IClientSessionHandle session, FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteMany(session, filter, options, cancellationToken);

    Task<DeleteResult> IMongoCollection<TDocument>.DeleteManyAsync(FilterDefinition<TDocument> filter, CancellationToken cancellationToken) => _inner.DeleteManyAsync(filter, cancellationToken);

    Task<DeleteResult> IMongoCollection<TDocument>.DeleteManyAsync(FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteManyAsync(filter, options, cancellationToken);

    Task<DeleteResult> IMongoCollection<TDocument>.DeleteManyAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteManyAsync(session, filter, options, cancellationToken);

    DeleteResult IMongoCollection<TDocument>.DeleteOne(FilterDefinition<TDocument> filter, CancellationToken cancellationToken) => _inner.DeleteOne(filter, cancellationToken);

    DeleteResult IMongoCollection<TDocument>.DeleteOne(FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteOne(filter, options, cancellationToken);

    DeleteResult IMongoCollection<TDocument>.DeleteOne(IClientSessionHandle session, FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteOne(session, filter, options, cancellationToken);

    Task<DeleteResult> IMongoCollection<TDocument>.DeleteOneAsync(FilterDefinition<TDocument> filter, CancellationToken cancellationToken) => _inner.DeleteOneAsync(filter, cancellationToken);

    Task<DeleteResult> IMongoCollection<TDocument>.DeleteOneAsync(FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteOneAsync(filter, options, cancellationToken);

    Task<DeleteResult> IMongoCollection<TDocument>.DeleteOneAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, DeleteOptions options, CancellationToken cancellationToken) => _inner.DeleteOneAsync(session, filter, options, cancellationToken);

    IAsyncCursor<TField> IMongoCollection<TDocument>.Distinct<TField>(FieldDefinition<TDocument, TField> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.Distinct(field, filter, options, cancellationToken);

    IAsyncCursor<TField> IMongoCollection<TDocument>.Distinct<TField>(IClientSessionHandle session, FieldDefinition<TDocument, TField> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.Distinct(session, field, filter, options, cancellationToken);

    Task<IAsyncCursor<TField>> IMongoCollection<TDocument>.DistinctAsync<TField>(FieldDefinition<TDocument, TField> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.DistinctAsync(field, filter, options, cancellationToken);

    Task<IAsyncCursor<TField>> IMongoCollection<TDocument>.DistinctAsync<TField>(IClientSessionHandle session, FieldDefinition<TDocument, TField> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.DistinctAsync(session, field, filter, options, cancellationToken);

    IAsyncCursor<TItem> IMongoCollection<TDocument>.DistinctMany<TItem>(FieldDefinition<TDocument, IEnumerable<TItem>> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.DistinctMany(field, filter, options, cancellationToken);

    IAsyncCursor<TItem> IMongoCollection<TDocument>.DistinctMany<TItem>(IClientSessionHandle session, FieldDefinition<TDocument, IEnumerable<TItem>> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.DistinctMany(session, field, filter, options, cancellationToken);

    Task<IAsyncCursor<TItem>> IMongoCollection<TDocument>.DistinctManyAsync<TItem>(FieldDefinition<TDocument, IEnumerable<TItem>> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.DistinctManyAsync(field, filter, options, cancellationToken);

    Task<IAsyncCursor<TItem>> IMongoCollection<TDocument>.DistinctManyAsync<TItem>(IClientSessionHandle session, FieldDefinition<TDocument, IEnumerable<TItem>> field, FilterDefinition<TDocument> filter, DistinctOptions options, CancellationToken cancellationToken) => _inner.DistinctManyAsync(session, field, filter, options, cancellationToken);

    long IMongoCollection<TDocument>.EstimatedDocumentCount(EstimatedDocumentCountOptions options, CancellationToken cancellationToken) => _inner.EstimatedDocumentCount(options, cancellationToken);

    Task<long> IMongoCollection<TDocument>.EstimatedDocumentCountAsync(EstimatedDocumentCountOptions options, CancellationToken cancellationToken) => _inner.EstimatedDocumentCountAsync(options, cancellationToken);

    IAsyncCursor<TProjection> IMongoCollection<TDocument>.FindSync<TProjection>(FilterDefinition<TDocument> filter, FindOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindSync(filter, options, cancellationToken);

    IAsyncCursor<TProjection> IMongoCollection<TDocument>.FindSync<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, FindOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindSync(session, filter, options, cancellationToken);

    Task<IAsyncCursor<TProjection>> IMongoCollection<TDocument>.FindAsync<TProjection>(FilterDefinition<TDocument> filter, FindOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindAsync(filter, options, cancellationToken);

    Task<IAsyncCursor<TProjection>> IMongoCollection<TDocument>.FindAsync<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, FindOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindAsync(session, filter, options, cancellationToken);

    TProjection IMongoCollection<TDocument>.FindOneAndDelete<TProjection>(FilterDefinition<TDocument> filter, FindOneAndDeleteOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndDelete(filter, options, cancellationToken);

    TProjection IMongoCollection<TDocument>.FindOneAndDelete<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, FindOneAndDeleteOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndDelete(session, filter, options, cancellationToken);

    Task<TProjection> IMongoCollection<TDocument>.FindOneAndDeleteAsync<TProjection>(FilterDefinition<TDocument> filter, FindOneAndDeleteOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndDeleteAsync(filter, options, cancellationToken);

    Task<TProjection> IMongoCollection<TDocument>.FindOneAndDeleteAsync<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, FindOneAndDeleteOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndDeleteAsync(session, filter, options, cancellationToken);

    TProjection IMongoCollection<TDocument>.FindOneAndReplace<TProjection>(FilterDefinition<TDocument> filter, TDocument replacement, FindOneAndReplaceOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndReplace(filter, replacement, options, cancellationToken);

    TProjection IMongoCollection<TDocument>.FindOneAndReplace<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, TDocument replacement, FindOneAndReplaceOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndReplace(session, filter, replacement, options, cancellationToken);

    Task<TProjection> IMongoCollection<TDocument>.FindOneAndReplaceAsync<TProjection>(FilterDefinition<TDocument> filter, TDocument replacement, FindOneAndReplaceOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndReplaceAsync(filter, replacement, options, cancellationToken);

    Task<TProjection> IMongoCollection<TDocument>.FindOneAndReplaceAsync<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, TDocument replacement, FindOneAndReplaceOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndReplaceAsync(session, filter, replacement, options, cancellationToken);

    TProjection IMongoCollection<TDocument>.FindOneAndUpdate<TProjection>(FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, FindOneAndUpdateOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndUpdate(filter, update, options, cancellationToken);

    TProjection IMongoCollection<TDocument>.FindOneAndUpdate<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, FindOneAndUpdateOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndUpdate(session, filter, update, options, cancellationToken);

    Task<TProjection> IMongoCollection<TDocument>.FindOneAndUpdateAsync<TProjection>(FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, FindOneAndUpdateOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndUpdateAsync(filter, update, options, cancellationToken);

    Task<TProjection> IMongoCollection<TDocument>.FindOneAndUpdateAsync<TProjection>(IClientSessionHandle session, FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, FindOneAndUpdateOptions<TDocument, TProjection> options, CancellationToken cancellationToken) => _inner.FindOneAndUpdateAsync(session, filter, update, options, cancellationToken);

    void IMongoCollection<TDocument>.InsertOne(TDocument document, InsertOneOptions options, CancellationToken cancellationToken) => _inner.InsertOne(document, options, cancellationToken);

    void IMongoCollection<TDocument>.InsertOne(IClientSessionHandle session, TDocument document, InsertOneOptions options, CancellationToken cancellationToken) => _inner.InsertOne(session, document, options, cancellationToken);

    Task IMongoCollection<TDocument>.InsertOneAsync(TDocument document, CancellationToken _cancellationToken) => _inner.InsertOneAsync(document, _cancellationToken);

    Task IMongoCollection<TDocument>.InsertOneAsync(TDocument document, InsertOneOptions options, CancellationToken cancellationToken) => _inner.InsertOneAsync(document, options, cancellationToken);

    Task IMongoCollection<TDocument>.InsertOneAsync(IClientSessionHandle session, TDocument document, InsertOneOptions options, CancellationToken cancellationToken) => _inner.InsertOneAsync(session, document, options, cancellationToken);

    void IMongoCollection<TDocument>.InsertMany(IEnumerable<TDocument> documents, InsertManyOptions options, CancellationToken cancellationToken) => _inner.InsertMany(documents, options, cancellationToken);

    void IMongoCollection<TDocument>.InsertMany(IClientSessionHandle session, IEnumerable<TDocument> documents, InsertManyOptions options, CancellationToken cancellationToken) => _inner.InsertMany(session, documents, options, cancellationToken);

    Task IMongoCollection<TDocument>.InsertManyAsync(IEnumerable<TDocument> documents, InsertManyOptions options, CancellationToken cancellationToken) => _inner.InsertManyAsync(documents, options, cancellationToken);

    Task IMongoCollection<TDocument>.InsertManyAsync(IClientSessionHandle session, IEnumerable<TDocument> documents, InsertManyOptions options, CancellationToken cancellationToken) => _inner.InsertManyAsync(session, documents, options, cancellationToken);

    IAsyncCursor<TResult> IMongoCollection<TDocument>.MapReduce<TResult>(BsonJavaScript map, BsonJavaScript reduce, MapReduceOptions<TDocument, TResult> options, CancellationToken cancellationToken) => _inner.MapReduce(map, reduce, options, cancellationToken);

    IAsyncCursor<TResult> IMongoCollection<TDocument>.MapReduce<TResult>(IClientSessionHandle session, BsonJavaScript map, BsonJavaScript reduce, MapReduceOptions<TDocument, TResult> options, CancellationToken cancellationToken) => _inner.MapReduce(session, map, reduce, options, cancellationToken);

    Task<IAsyncCursor<TResult>> IMongoCollection<TDocument>.MapReduceAsync<TResult>(BsonJavaScript map, BsonJavaScript reduce, MapReduceOptions<TDocument, TResult> options, CancellationToken cancellationToken) => _inner.MapReduceAsync(map, reduce, options, cancellationToken);

    Task<IAsyncCursor<TResult>> IMongoCollection<TDocument>.MapReduceAsync<TResult>(IClientSessionHandle session, BsonJavaScript map, BsonJavaScript reduce, MapReduceOptions<TDocument, TResult> options, CancellationToken cancellationToken) => _inner.MapReduceAsync(session, map, reduce, options, cancellationToken);

    ReplaceOneResult IMongoCollection<TDocument>.ReplaceOne(FilterDefinition<TDocument> filter, TDocument replacement, ReplaceOptions options, CancellationToken cancellationToken) => _inner.ReplaceOne(filter, replacement, options, cancellationToken);

    ReplaceOneResult IMongoCollection<TDocument>.ReplaceOne(FilterDefinition<TDocument> filter, TDocument replacement, UpdateOptions options, CancellationToken cancellationToken) => _inner.ReplaceOne(filter, replacement, options, cancellationToken);

    ReplaceOneResult IMongoCollection<TDocument>.ReplaceOne(IClientSessionHandle session, FilterDefinition<TDocument> filter, TDocument replacement, ReplaceOptions options, CancellationToken cancellationToken) => _inner.ReplaceOne(session, filter, replacement, options, cancellationToken);

    ReplaceOneResult IMongoCollection<TDocument>.ReplaceOne(IClientSessionHandle session, FilterDefinition<TDocument> filter, TDocument replacement, UpdateOptions options, CancellationToken cancellationToken) => _inner.ReplaceOne(session, filter, replacement, options, cancellationToken);

    Task<ReplaceOneResult> IMongoCollection<TDocument>.ReplaceOneAsync(FilterDefinition<TDocument> filter, TDocument replacement, ReplaceOptions options, CancellationToken cancellationToken) => _inner.ReplaceOneAsync(filter, replacement, options, cancellationToken);

    Task<ReplaceOneResult> IMongoCollection<TDocument>.ReplaceOneAsync(FilterDefinition<TDocument> filter, TDocument replacement, UpdateOptions options, CancellationToken cancellationToken) => _inner.ReplaceOneAsync(filter, replacement, options, cancellationToken);

    Task<ReplaceOneResult> IMongoCollection<TDocument>.ReplaceOneAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, TDocument replacement, ReplaceOptions options, CancellationToken cancellationToken) => _inner.ReplaceOneAsync(session, filter, replacement, options, cancellationToken);

    Task<ReplaceOneResult> IMongoCollection<TDocument>.ReplaceOneAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, TDocument replacement, UpdateOptions options, CancellationToken cancellationToken) => _inner.ReplaceOneAsync(session, filter, replacement, options, cancellationToken);

    UpdateResult IMongoCollection<TDocument>.UpdateMany(FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateMany(filter, update, options, cancellationToken);

    UpdateResult IMongoCollection<TDocument>.UpdateMany(IClientSessionHandle session, FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateMany(session, filter, update, options, cancellationToken);

    Task<UpdateResult> IMongoCollection<TDocument>.UpdateManyAsync(FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateManyAsync(filter, update, options, cancellationToken);

    Task<UpdateResult> IMongoCollection<TDocument>.UpdateManyAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateManyAsync(session, filter, update, options, cancellationToken);

    UpdateResult IMongoCollection<TDocument>.UpdateOne(FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateOne(filter, update, options, cancellationToken);

    UpdateResult IMongoCollection<TDocument>.UpdateOne(IClientSessionHandle session, FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateOne(session, filter, update, options, cancellationToken);

    Task<UpdateResult> IMongoCollection<TDocument>.UpdateOneAsync(FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateOneAsync(filter, update, options, cancellationToken);

    Task<UpdateResult> IMongoCollection<TDocument>.UpdateOneAsync(IClientSessionHandle session, FilterDefinition<TDocument> filter, UpdateDefinition<TDocument> update, UpdateOptions options, CancellationToken cancellationToken) => _inner.UpdateOneAsync(session, filter, update, options, cancellationToken);

    IChangeStreamCursor<TResult> IMongoCollection<TDocument>.Watch<TResult>(PipelineDefinition<ChangeStreamDocument<TDocument>, TResult> pipeline, ChangeStreamOptions options, CancellationToken cancellationToken) => _inner.Watch(pipeline, options, cancellationToken);

    IChangeStreamCursor<TResult> IMongoCollection<TDocument>.Watch<TResult>(IClientSessionHandle session, PipelineDefinition<ChangeStreamDocument<TDocument>, TResult> pipeline, ChangeStreamOptions options, CancellationToken cancellationToken) => _inner.Watch(session, pipeline, options, cancellationToken);

    Task<IChangeStreamCursor<TResult>> IMongoCollection<TDocument>.WatchAsync<TResult>(PipelineDefinition<ChangeStreamDocument<TDocument>, TResult> pipeline, ChangeStreamOptions options, CancellationToken cancellationToken) => _inner.WatchAsync(pipeline, options, cancellationToken);

    Task<IChangeStreamCursor<TResult>> IMongoCollection<TDocument>.WatchAsync<TResult>(IClientSessionHandle session, PipelineDefinition<ChangeStreamDocument<TDocument>, TResult> pipeline, ChangeStreamOptions options, CancellationToken cancellationToken) => _inner.WatchAsync(session, pipeline, options, cancellationToken);
#pragma warning restore CS0618
}
