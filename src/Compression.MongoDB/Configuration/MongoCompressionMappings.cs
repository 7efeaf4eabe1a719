using Compression.Dictionaries;
using Compression.MongoDB;
using MongoDB.Bson;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Which document types are stored compressed, and in which collection of the database given to
/// <see cref="MongoCompressionBuilderExtensions.AddMongoDB(DocumentCompressionBuilder, Func{IServiceProvider, MongoDB.Driver.IMongoDatabase}, Action{MongoCompressionMappings})"/>.
/// Each collection is the namespace <c>database.collection</c>, configured under <c>Compression:Namespaces:database.collection</c>
/// (or <c>Compression:Defaults</c> when it has no entry).
/// </summary>
public sealed class MongoCompressionMappings
{
    private readonly List<MongoTypeMapping> _mappings = [];

    internal MongoCompressionMappings()
    {
    }

    internal IReadOnlyList<MongoTypeMapping> Mappings => _mappings;

    /// <summary>
    /// Stores <typeparamref name="T"/> compressed in <paramref name="collection"/>. The driver's serializer registry is global
    /// per CLR type, so a type maps to one collection. <see cref="BsonDocument"/> and <see cref="RawBsonDocument"/> cannot be
    /// mapped (the driver refuses serializers for them): take such a collection with
    /// <see cref="CompressedCollections.GetCompressedCollection{TDocument}"/>; mapping one fails when the engine is created, saying so.
    /// </summary>
    /// <param name="collection">The collection's name in the database.</param>
    /// <param name="compress">
    /// Whether new documents are compressed; <see langword="false"/> writes them plain while every compressed one stays readable
    /// (switch compression off without losing anything). Defaults to <see langword="true"/>.
    /// </param>
    /// <exception cref="ArgumentException">The collection name is empty, or <typeparamref name="T"/> is already mapped.</exception>
    public MongoCompressionMappings Map<T>(string collection, bool compress = true)
        where T : class
    {
        ArgumentException.ThrowIfNullOrEmpty(collection);
        // BsonDocument and the other BsonValue types cannot be mapped at all: the engine's creation says so, naming each
        // collection and what to use instead (MongoSerializerRegistration), rather than calling one of them a duplicate here.
        if (!typeof(BsonValue).IsAssignableFrom(typeof(T)) && _mappings.Find(m => m.Type == typeof(T)) is { } existing)
        {
            throw new ArgumentException(
                $"{typeof(T).FullName} is mapped twice (collections '{existing.Collection}' and '{collection}'): the driver's serializer registry is global per CLR type, so a compressed type maps to one collection.",
                nameof(collection));
        }
        _mappings.Add(new MongoTypeMapping(typeof(T), collection, compress,
            static (ns, options) => CompressedDocumentSerializer.Register<T>(ns, options),
            static (database, name) => database.GetCollection<T>(name)));
        return this;
    }
}

/// <summary>One mapped type: its collection, and how to register its serializer (generic over the type).</summary>
internal sealed record MongoTypeMapping(Type Type, string Collection, bool Compress,
    Func<CompressionNamespace, CompressedDocumentOptions, object> Register, Func<MongoDB.Driver.IMongoDatabase, string, object> GetCollection);
