using Compression.Dictionaries;
using Compression.Testing.Mongo;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

// The driver's serializer registry is global per CLR type and per process: every test here maps types of its own.
public sealed class DiOrder
{
    public ObjectId Id { get; set; }

    public string CustomerId { get; set; } = "";

    public string Status { get; set; } = "";

    public string Notes { get; set; } = "";
}

public sealed class DiCustomer
{
    public int Id { get; set; }

    public string Name { get; set; } = "";
}

public sealed class DiTypo
{
    public int Id { get; set; }

    public decimal Total { get; set; }
}

public sealed class DiUsedBefore
{
    public int Id { get; set; }
}

public sealed class DiTwice
{
    public int Id { get; set; }
}

public sealed class DiSwitchedOff
{
    public int Id { get; set; }

    public string Body { get; set; } = "";
}

public sealed class DiEarly
{
    public int Id { get; set; }

    public string Body { get; set; } = "";
}

/// <summary><c>AddDocumentCompression(configuration).AddMongoDB(...)</c> through the real host builder and the real driver.</summary>
public sealed class DependencyInjectionTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private MongoTestServer Server => fixture.Server;

    private IHost Build(MongoTestDatabase db, IDictionary<string, string?> settings, Action<MongoCompressionMappings> map,
        Action<IServiceCollection>? before = null)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(settings);
        before?.Invoke(builder.Services);
        builder.Services.AddSingleton(Server.Client);
        builder.Services.AddDocumentCompression(builder.Configuration)
            .AddMongoDB(sp => sp.GetRequiredService<IMongoClient>().GetDatabase(db.Name), map);
        return builder.Build();
    }

    [Fact]
    public async Task AddMongoDB_MapsTypesToCollections_WithTheirNamespacesConfiguration_AndTheStoreInTheSameDatabase()
    {
        await using var db = Server.CreateDatabase("di-map");
        using IHost host = Build(db, new Dictionary<string, string?>
        {
            [$"Compression:Namespaces:{db.Name}.orders:ClearFields:0"] = "CustomerId",
            [$"Compression:Namespaces:{db.Name}.orders:ClearFields:1"] = "Status",
            [$"Compression:Namespaces:{db.Name}.orders:Level"] = "7",
            ["Compression:Defaults:Codec"] = "Brotli",
        }, mongo => mongo.Map<DiOrder>("orders").Map<DiCustomer>("customers"));
        await host.StartAsync();

        var engine = host.Services.GetRequiredService<CompressionEngine>();
        var store = Assert.IsType<MongoDictionaryStore>(engine.Store);
        Assert.Equal($"MongoDB collection {db.Name}._compression.dictionaries", store.Location);
        Assert.Equal(["CustomerId", "Status"], engine.GetNamespace($"{db.Name}.orders").AdapterSettings["ClearFields"]);
        Assert.Equal(CompressionCodec.Brotli, engine.GetNamespace($"{db.Name}.customers").Codec); // Defaults: no entry of its own

        var orders = host.Services.GetRequiredService<IMongoCollection<DiOrder>>();
        Assert.Equal("orders", orders.CollectionNamespace.CollectionName);
        var order = new DiOrder { CustomerId = "c-1", Status = "open", Notes = string.Concat(Enumerable.Repeat("fragile, handle with care; ", 20)) };
        await orders.InsertOneAsync(order);
        await host.Services.GetRequiredService<IMongoCollection<DiCustomer>>().InsertOneAsync(new DiCustomer { Id = 1, Name = "Ada" });

        var raw = await db.Database.GetCollection<BsonDocument>("orders").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(["_id", "CustomerId", "Status", "_z"], raw.Names.ToArray());
        var back = await orders.Find(o => o.CustomerId == "c-1").SingleAsync();
        Assert.Equal(order.Notes, back.Notes);
        var customer = await db.Database.GetCollection<BsonDocument>("customers").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(["_id", "_z"], customer.Names.ToArray());
        Assert.Equal("Ada", (await db.Database.GetCollection<DiCustomer>("customers").Find(c => c.Id == 1).SingleAsync()).Name);
        await host.StopAsync();
    }

    [Fact]
    public async Task ClearFieldNotAMemberOfTheType_FailsTheStart_NamingTheKeyTheTypeAndTheCollection()
    {
        await using var db = Server.CreateDatabase("di-typo");
        using IHost host = Build(db, new Dictionary<string, string?>
        {
            [$"Compression:Namespaces:{db.Name}.invoices:ClearFields:0"] = "Totl",
        }, mongo => mongo.Map<DiTypo>("invoices"));

        var ex = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        Assert.Contains($"Compression:Namespaces:{db.Name}.invoices:ClearFields: 'Totl' is not a mapped member of DiTypo (collection 'invoices'); mapped members: Id, Total.",
            ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task TypeAlreadyKnownToTheDriver_FailsTheStart_NamingTheTypeAndTheCollection()
    {
        await using var db = Server.CreateDatabase("di-used");
        BsonSerializer.LookupSerializer<DiUsedBefore>(); // as a GetCollection<DiUsedBefore> would, before compression was set up
        using IHost host = Build(db, new Dictionary<string, string?>(), mongo => mongo.Map<DiUsedBefore>("things"));

        var ex = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        Assert.Contains("Compression:Defaults: DiUsedBefore (collection 'things'): Cannot register the compressed serializer of Compression.MongoDB.Tests.DiUsedBefore", ex.Message, StringComparison.Ordinal);
        Assert.Contains("before the first GetCollection<T>", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task MapOfBsonDocument_FailsTheStart_NamingTheNamespaceKeyAndGetCompressedCollection()
    {
        await using var db = Server.CreateDatabase("di-bson");
        using IHost host = Build(db, new Dictionary<string, string?>(),
            mongo => mongo.Map<BsonDocument>("raw").Map<BsonDocument>("events").Map<RawBsonDocument>("blobs"));

        var ex = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        Assert.Contains($"Compression:Namespaces:{db.Name}.raw: Map<BsonDocument>(\"raw\") cannot work: the driver has one serializer per CLR type for every collection " +
            "and refuses one for BsonDocument (a BsonValue). Remove it from AddMongoDB and take the collection with " +
            "database.GetCompressedCollection<BsonDocument>(\"raw\", engine) (Compression.MongoDB; engine: the CompressionEngine from the container); " +
            $"its clear fields are Compression:Namespaces:{db.Name}.raw:ClearFields (top-level element names).", ex.Message, StringComparison.Ordinal);
        Assert.Contains($"Compression:Namespaces:{db.Name}.events: Map<BsonDocument>(\"events\") cannot work", ex.Message, StringComparison.Ordinal);
        Assert.Contains($"Compression:Namespaces:{db.Name}.blobs: Map<RawBsonDocument>(\"blobs\") cannot work", ex.Message, StringComparison.Ordinal);
        Assert.Contains("database.GetCompressedCollection<RawBsonDocument>(\"blobs\", engine)", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("Compression:Defaults", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("before the first GetCollection", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task CompressedBsonDocumentCollection_RegisteredAsDocsSay_TakesItsClearFieldsFromConfiguration()
    {
        await using var db = Server.CreateDatabase("di-schemaless");
        using IHost host = Build(db, new Dictionary<string, string?>
        {
            [$"Compression:Namespaces:{db.Name}.events:ClearFields:0"] = "tenant",
            [$"Compression:Namespaces:{db.Name}.events:ClearFields:1"] = "kind",
        }, mongo => { }, services => services.AddSingleton(sp => sp.GetRequiredService<IMongoClient>().GetDatabase(db.Name)
            .GetCompressedCollection<BsonDocument>("events", sp.GetRequiredService<CompressionEngine>())));
        await host.StartAsync();

        var events = host.Services.GetRequiredService<IMongoCollection<BsonDocument>>();
        var login = new BsonDocument { { "_id", 1 }, { "tenant", "t-1" }, { "kind", "login" }, { "payload", "from 10.0.0.7 with a password" } };
        await events.InsertOneAsync(login.DeepClone().AsBsonDocument);
        var stored = await db.Database.GetCollection<BsonDocument>("events").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(["_id", "tenant", "kind", "_z"], stored.Names.ToArray());
        Assert.Equal(login, await events.Find(Builders<BsonDocument>.Filter.Eq("kind", "login")).SingleAsync());
        Assert.IsType<MongoDictionaryStore>(host.Services.GetRequiredService<CompressionEngine>().Store);
        await host.StopAsync();
    }

    [Fact]
    public void TypeMappedTwice_OrAdapterAddedTwice_IsRefusedAtRegistration()
    {
        var services = new ServiceCollection();
        var database = Server.Client.GetDatabase("unused");
        var twice = Assert.Throws<ArgumentException>(() =>
            services.AddDocumentCompression().AddMongoDB(database, mongo => mongo.Map<DiTwice>("a").Map<DiTwice>("b")));
        Assert.StartsWith("Compression.MongoDB.Tests.DiTwice is mapped twice (collections 'a' and 'b')", twice.Message, StringComparison.Ordinal);

        var builder = new ServiceCollection().AddDocumentCompression();
        builder.AddMongoDB(database, _ => { });
        var again = Assert.Throws<InvalidOperationException>(() => builder.AddMongoDB(database, _ => { }));
        Assert.Contains("AddMongoDB was already called", again.Message, StringComparison.Ordinal);
    }

    /// <summary>A hosted service registered before compression that takes its collection in its constructor.</summary>
    private sealed class EarlyCollectionUser : IHostedService
    {
        public EarlyCollectionUser(IMongoClient client, EarlyDatabaseName name) => Collection = client.GetDatabase(name.Value).GetCollection<DiEarly>("early");

        public IMongoCollection<DiEarly> Collection { get; }

        public Task StartAsync(CancellationToken cancellationToken) => Collection.InsertOneAsync(new DiEarly { Id = 1, Body = "written at start" }, cancellationToken: cancellationToken);

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }

    private sealed record EarlyDatabaseName(string Value);

    [Fact]
    public async Task HostedServiceTakingAMappedCollectionInItsConstructor_AlreadyGetsTheCompressedSerializer()
    {
        await using var db = Server.CreateDatabase("di-early");
        using IHost host = Build(db, new Dictionary<string, string?>(), mongo => mongo.Map<DiEarly>("early"), services =>
        {
            services.AddSingleton(new EarlyDatabaseName(db.Name));
            services.AddHostedService<EarlyCollectionUser>(); // registered before AddDocumentCompression
        });
        await host.StartAsync();

        var raw = await db.Database.GetCollection<BsonDocument>("early").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(["_id", "_z"], raw.Names.ToArray());
        await host.StopAsync();
    }

    [Fact]
    public async Task MapWithCompressOff_WritesPlainDocuments_ThatReadBack()
    {
        await using var db = Server.CreateDatabase("di-off");
        using IHost host = Build(db, new Dictionary<string, string?>(), mongo => mongo.Map<DiSwitchedOff>("off", compress: false));
        await host.StartAsync();
        var collection = host.Services.GetRequiredService<IMongoCollection<DiSwitchedOff>>();
        await collection.InsertOneAsync(new DiSwitchedOff { Id = 1, Body = "plain as before" });

        var raw = await db.Database.GetCollection<BsonDocument>("off").Find(FilterDefinition<BsonDocument>.Empty).SingleAsync();
        Assert.Equal(new BsonDocument { { "_id", 1 }, { "Body", "plain as before" } }, raw);
        Assert.Equal("plain as before", (await collection.Find(d => d.Id == 1).SingleAsync()).Body);
        await host.StopAsync();
    }
}
