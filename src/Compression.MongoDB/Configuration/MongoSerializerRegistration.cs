using System.Text;
using Compression.Dictionaries;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;

namespace Compression.MongoDB.Configuration;

/// <summary>
/// The mapped types of one database and their registration with the driver's global serializer registry: checked all at
/// once (every problem in one message), then registered, once per container.
/// </summary>
internal sealed class MongoSerializerRegistration(IMongoDatabase database, IReadOnlyList<MongoTypeMapping> mappings, CompressionEngineOptions options)
{
    private readonly object _gate = new();
    private bool _registered;

    public IMongoDatabase Database { get; } = database;

    public string NamespaceOf(MongoTypeMapping mapping) => $"{Database.DatabaseNamespace.DatabaseName}.{mapping.Collection}";

    public object GetCollection(MongoTypeMapping mapping) => mapping.GetCollection(Database, mapping.Collection);

    /// <summary>Registers a serializer for every mapped type; throws one <see cref="InvalidOperationException"/> listing every problem.</summary>
    public void Register(CompressionEngine engine)
    {
        lock (_gate)
        {
            if (_registered) return;
            var problems = new List<string>();
            foreach (MongoTypeMapping mapping in mappings)
            {
                if (typeof(BsonValue).IsAssignableFrom(mapping.Type)) problems.Add(CannotMapBsonValueType(mapping));
                else CheckClearFields(mapping, problems);
            }
            if (problems.Count == 0)
            {
                foreach (MongoTypeMapping mapping in mappings)
                {
                    string ns = NamespaceOf(mapping);
                    CompressionNamespace handle = engine.GetNamespace(ns);
                    var serializerOptions = new CompressedDocumentOptions { ClearFields = [.. MongoNamespaceSettings.ClearFieldsOf(handle)], Compress = mapping.Compress };
                    try
                    {
                        mapping.Register(handle, serializerOptions);
                    }
                    catch (InvalidOperationException ex)
                    {
                        problems.Add($"{Key(ns)}: {mapping.Type.Name} (collection '{mapping.Collection}'): {ex.Message}");
                    }
                }
            }
            if (problems.Count > 0)
            {
                var message = new StringBuilder("The MongoDB compression mappings are invalid:");
                foreach (string problem in problems) message.AppendLine().Append("  ").Append(problem);
                throw new InvalidOperationException(message.ToString());
            }
            _registered = true;
        }
    }

    /// <summary>The configuration key a namespace's settings come from: its own entry, or the defaults.</summary>
    private string Key(string ns) =>
        options.Namespaces.ContainsKey(ns) ? $"{CompressionEngineOptions.SectionName}:Namespaces:{ns}" : $"{CompressionEngineOptions.SectionName}:Defaults";

    /// <summary>
    /// <c>Map&lt;BsonDocument&gt;</c> cannot work: the driver refuses a serializer for any <see cref="BsonValue"/> type, and one
    /// would compress every collection of the type. The message says what does.
    /// </summary>
    private string CannotMapBsonValueType(MongoTypeMapping mapping)
    {
        string ns = NamespaceOf(mapping);
        string type = mapping.Type.Name;
        string document = mapping.Type == typeof(RawBsonDocument) ? nameof(RawBsonDocument) : nameof(BsonDocument); // what GetCompressedCollection takes
        return $"{CompressionEngineOptions.SectionName}:Namespaces:{ns}: Map<{type}>(\"{mapping.Collection}\") cannot work: the driver has one serializer per CLR type " +
            $"for every collection and refuses one for {type} (a BsonValue). Remove it from AddMongoDB and take the collection with " +
            $"database.GetCompressedCollection<{document}>(\"{mapping.Collection}\", engine) (Compression.MongoDB; engine: the CompressionEngine from the container); " +
            $"its clear fields are {CompressionEngineOptions.SectionName}:Namespaces:{ns}:{MongoNamespaceSettings.ClearFields} (top-level element names).";
    }

    private void CheckClearFields(MongoTypeMapping mapping, List<string> problems)
    {
        string ns = NamespaceOf(mapping);
        NamespaceOptions settings = options.Namespaces.TryGetValue(ns, out var specific) ? specific : options.Defaults;
        IList<string> clearFields = MongoNamespaceSettings.ClearFieldsOf(settings);
        if (clearFields.Count == 0) return;
        BsonClassMap classMap = BsonClassMap.LookupClassMap(mapping.Type);
        foreach (string field in clearFields)
        {
            if (classMap.AllMemberMaps.Any(m => m.MemberName == field || m.ElementName == field)) continue;
            problems.Add($"{Key(ns)}:{MongoNamespaceSettings.ClearFields}: '{field}' is not a mapped member of {mapping.Type.Name} (collection '{mapping.Collection}'); " +
                $"mapped members: {string.Join(", ", classMap.AllMemberMaps.Select(m => m.MemberName))}.");
        }
    }
}

/// <summary>Placed first among the hosted services: its construction creates the engine, which registers the serializers.</summary>
internal sealed class MongoSerializerRegistrationService : IHostedService
{
    public MongoSerializerRegistrationService(IServiceProvider services) => services.GetRequiredService<CompressionEngine>();

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
