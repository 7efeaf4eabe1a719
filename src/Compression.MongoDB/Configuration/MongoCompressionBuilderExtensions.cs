using Compression.Dictionaries;
using Compression.MongoDB.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MongoDB.Driver;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>The MongoDB adapter of document compression: compressed document types, and dictionaries in the same database.</summary>
public static class MongoCompressionBuilderExtensions
{
    /// <summary>
    /// Stores the mapped document types compressed in collections of <paramref name="database"/>, and keeps the dictionaries
    /// in the same database (<see cref="Compression.MongoDB.MongoDictionaryStore"/>, collection <c>_compression.dictionaries</c>).
    /// </summary>
    /// <param name="builder">What <c>AddDocumentCompression</c> returned.</param>
    /// <param name="database">
    /// Makes the application's database from the service provider (called once), for example
    /// <c>sp =&gt; sp.GetRequiredService&lt;IMongoClient&gt;().GetDatabase("shop")</c>.
    /// </param>
    /// <param name="map">Maps document types to collections: <c>mongo =&gt; mongo.Map&lt;Order&gt;("orders").Map&lt;Customer&gt;("customers")</c>.</param>
    /// <remarks>
    /// <para>
    /// Each collection is the namespace <c>database.collection</c>: its codec, level, clear fields and dictionary settings come
    /// from <c>Compression:Namespaces:database.collection</c>, or <c>Compression:Defaults</c> when it has no entry.
    /// </para>
    /// <para>
    /// The driver caches a type's serializer at its first use (<c>GetCollection&lt;T&gt;</c> looks it up), and a serializer
    /// cannot be registered after that. So the serializers are registered when the <see cref="CompressionEngine"/> is created,
    /// and the engine is created by a hosted service placed before every other one, whose constructor runs before theirs:
    /// in a host, no hosted service can reach a mapped type first. Code that runs before the host starts (between
    /// <c>Build()</c> and <c>Run()</c>) should resolve <see cref="CompressionEngine"/> first, or take the collections from
    /// the container: an <see cref="IMongoCollection{TDocument}"/> is registered for each mapped type, and resolving it
    /// registers the serializers first.
    /// </para>
    /// <para>
    /// Errors name the type, the collection and the configuration key, and are thrown when the engine is created: a clear
    /// field that is not a mapped member of its type, a type whose serializer the driver already has (registered or used
    /// before), a type mapped twice (thrown by <see cref="MongoCompressionMappings.Map{T}"/>).
    /// </para>
    /// </remarks>
    /// <exception cref="InvalidOperationException">The MongoDB adapter was already added to these services.</exception>
    public static DocumentCompressionBuilder AddMongoDB(this DocumentCompressionBuilder builder, Func<IServiceProvider, IMongoDatabase> database,
        Action<MongoCompressionMappings> map)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(database);
        ArgumentNullException.ThrowIfNull(map);
        IServiceCollection services = builder.Services;
        if (services.Any(d => d.ServiceType == typeof(MongoSerializerRegistration)))
            throw new InvalidOperationException("AddMongoDB was already called: one engine keeps its dictionaries in one database.");

        var mappings = new MongoCompressionMappings();
        map(mappings);

        // ClearFields is the adapter's own key of a namespace's section: declared here, checked at start-up with the rest.
        builder.AddNamespaceSetting(MongoNamespaceSettings.ClearFields);
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<CompressionEngineOptions>, MongoNamespaceSettingsValidator>());

        services.AddSingleton(sp => new MongoSerializerRegistration(database(sp), mappings.Mappings,
            sp.GetRequiredService<IOptions<CompressionEngineOptions>>().Value));
        builder.UseStore(sp => new Compression.MongoDB.MongoDictionaryStore(sp.GetRequiredService<MongoSerializerRegistration>().Database,
            sp.GetRequiredService<IOptions<CompressionEngineOptions>>().Value.MaxDictionaryBytes));
        WrapEngineFactory(services);

        // First among the hosted services: constructing it creates the engine (and registers the serializers) before any
        // other hosted service is even constructed.
        services.Insert(0, ServiceDescriptor.Singleton<IHostedService, MongoSerializerRegistrationService>());

        foreach (MongoTypeMapping mapping in mappings.Mappings)
        {
            Type collectionType = typeof(IMongoCollection<>).MakeGenericType(mapping.Type);
            services.TryAdd(ServiceDescriptor.Singleton(collectionType, sp =>
            {
                sp.GetRequiredService<CompressionEngine>(); // the serializers first
                return sp.GetRequiredService<MongoSerializerRegistration>().GetCollection(mapping);
            }));
        }
        return builder;
    }

    /// <summary>
    /// <see cref="AddMongoDB(DocumentCompressionBuilder, Func{IServiceProvider, IMongoDatabase}, Action{MongoCompressionMappings})"/>
    /// with a database object made beforehand.
    /// </summary>
    public static DocumentCompressionBuilder AddMongoDB(this DocumentCompressionBuilder builder, IMongoDatabase database, Action<MongoCompressionMappings> map)
    {
        ArgumentNullException.ThrowIfNull(database);
        return builder.AddMongoDB(_ => database, map);
    }

    /// <summary>Makes the engine's creation register the serializers: whoever resolves the engine first, they are in place.</summary>
    private static void WrapEngineFactory(IServiceCollection services)
    {
        ServiceDescriptor? original = services.LastOrDefault(d => d.ServiceType == typeof(CompressionEngine));
        if (original?.ImplementationFactory is not { } factory || original.Lifetime != ServiceLifetime.Singleton)
            throw new InvalidOperationException("AddMongoDB needs the engine AddDocumentCompression registers; call it on the builder AddDocumentCompression returns.");
        services.Remove(original);
        services.AddSingleton(sp =>
        {
            var engine = (CompressionEngine)factory(sp);
            try
            {
                sp.GetRequiredService<MongoSerializerRegistration>().Register(engine);
            }
            catch
            {
                _ = engine.DisposeAsync().AsTask();
                throw;
            }
            return engine;
        });
    }
}
