using Compression.Core.Tests.Dictionaries;
using Compression.Couchbase.Internal;
using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Time.Testing;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// The adapter in named scopes and collections, through the real SDK on a loopback server that has them (as a 7.x
/// bucket with <c>inventory.hotels</c>, <c>inventory.airlines</c> and <c>compression.dictionaries</c>): each compressed
/// collection is its own namespace with its own documents, and the dictionary store can live in a collection of its own.
/// </summary>
public sealed class ScopesAndCollectionsTests(ITestOutputHelper output)
{
    public sealed record Hotel(string Name, string City, string[] Amenities, int Stars);

    private CouchbaseLoopbackServerOptions Options(string bucket = "default") => new()
    {
        BucketName = bucket,
        Collections =
        [
            new KvCollectionDefinition("inventory", "hotels"),
            new KvCollectionDefinition("inventory", "airlines"),
            new KvCollectionDefinition("compression", "dictionaries"),
        ],
        Log = new TestLog(output).Write,
    };

    [Fact]
    public async Task Inventory_hotels_and_another_collection_compress_in_their_own_namespaces_with_their_own_dictionaries_and_documents()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        CouchbaseLoopbackServer server = loopback.Server;
        IScope inventory = await loopback.Bucket.ScopeAsync("inventory");
        await using var writerEngine = new CompressionEngine(new CouchbaseDictionaryStore(loopback.Collection), CompressionEngineOptionsBuilder.Fast(), timeProvider: new FakeTimeProvider());
        ICouchbaseCollection hotels = inventory.Collection("hotels").WithCompression(writerEngine);
        ICouchbaseCollection airlines = inventory.Collection("airlines").WithCompression(writerEngine);
        var random = new Random(39);
        JObject[] movies = [.. Enumerable.Range(0, 300).Select(_ => Docs.Movie(random))];
        JObject[] sensors = [.. Enumerable.Range(0, 300).Select(_ => Docs.Sensor(random))];

        Assert.Equal("default.inventory.hotels", hotels.GetCompressingTranscoder()!.Namespace.Name);
        Assert.Equal("default.inventory.airlines", airlines.GetCompressingTranscoder()!.Namespace.Name);
        for (int i = 0; i < 200; i++)
        {
            await hotels.UpsertAsync($"doc::{i}", movies[i]);
            await airlines.UpsertAsync($"doc::{i}", sensors[i]);
        }

        await writerEngine.WhenIdleAsync();
        foreach (ICouchbaseCollection collection in new[] { hotels, airlines })
        {
            CompressionNamespace ns = collection.GetCompressingTranscoder()!.Namespace;
            if (ns.CurrentDictionary is null) await ns.TrainAsync();
        }

        DictionaryRecord hotelsDictionary = hotels.GetCompressingTranscoder()!.Namespace.CurrentDictionary!;
        DictionaryRecord airlinesDictionary = airlines.GetCompressingTranscoder()!.Namespace.CurrentDictionary!;
        Assert.Equal(("default.inventory.hotels", "default.inventory.airlines"), (hotelsDictionary.Namespace, airlinesDictionary.Namespace));
        Assert.NotEqual(hotelsDictionary.Id, airlinesDictionary.Id);
        for (int i = 200; i < 300; i++)
        {
            await hotels.UpsertAsync($"doc::{i}", movies[i]);
            await airlines.UpsertAsync($"doc::{i}", sensors[i]);
        }

        // The same keys, two collections: two sets of documents, each in its collection, none in the default one but the store's.
        Assert.Equal(300, server.KeysIn("inventory", "hotels").Count);
        Assert.Equal(300, server.KeysIn("inventory", "airlines").Count);
        Assert.DoesNotContain(server.KeysIn("_default", "_default"), key => key.StartsWith("doc::", StringComparison.Ordinal));

        // The last documents name a dictionary of their own collection's namespace (a newer one than above, when the
        // engine retrained in the background meanwhile).
        var readerStore = new CouchbaseDictionaryStore(loopback.Collection);
        Assert.Equal("default.inventory.hotels", (await readerStore.GetAsync(DictionaryIdOf(server, "hotels", "doc::299")))!.Namespace);
        Assert.Equal("default.inventory.airlines", (await readerStore.GetAsync(DictionaryIdOf(server, "airlines", "doc::299")))!.Namespace);

        await using var readerEngine = new CompressionEngine(readerStore, CompressionEngineOptionsBuilder.Fast(), timeProvider: new FakeTimeProvider());
        ICouchbaseCollection coldHotels = inventory.Collection("hotels").WithCompression(readerEngine);
        ICouchbaseCollection coldAirlines = inventory.Collection("airlines").WithCompression(readerEngine);
        for (int i = 0; i < 300; i += 7)
        {
            using (IGetResult read = await coldHotels.GetAsync($"doc::{i}")) Docs.Equal(movies[i], read.ContentAs<JObject>());
            using (IGetResult read = await coldAirlines.GetAsync($"doc::{i}")) Docs.Equal(sensors[i], read.ContentAs<JObject>());
        }

        Assert.Empty(server.UnknownCommands);
        Assert.Empty(server.ProtocolErrors);
    }

    [Fact]
    public async Task The_same_key_in_two_collections_stays_two_documents_through_writes_and_removes()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(loopback.Collection), CompressionEngineOptionsBuilder.Fast(), timeProvider: new FakeTimeProvider());
        IScope inventory = await loopback.Bucket.ScopeAsync("inventory");
        ICouchbaseCollection hotels = inventory.Collection("hotels").WithCompression(engine);
        ICouchbaseCollection airlines = inventory.Collection("airlines").WithCompression(engine);
        var grand = new Hotel("Grand", "Lisbon", ["pool", "spa"], 5);
        var budget = new Hotel("Budget", "Porto", [], 2);

        await hotels.InsertAsync("h::1", grand);
        await airlines.InsertAsync("h::1", budget); // not a conflict: another collection
        await loopback.Collection.UpsertAsync("h::1", new { plain = true });
        await hotels.ReplaceAsync("h::1", grand with { Stars = 4 });

        using (IGetResult read = await airlines.GetAsync("h::1")) Assert.Equal(budget.Name, read.ContentAs<Hotel>()!.Name);
        using (IGetResult read = await hotels.GetAsync("h::1")) Assert.Equal(4, read.ContentAs<Hotel>()!.Stars);
        await airlines.RemoveAsync("h::1");
        using (IGetResult read = await hotels.GetAsync("h::1")) Assert.Equal("Lisbon", read.ContentAs<Hotel>()!.City);
        Assert.True(loopback.Server.TryGetDocument("h::1", out KvDocument? plain));
        Assert.False(DocumentEnvelope.IsEnvelope(plain.Value.Span));
        Assert.True(loopback.Server.TryGetDocument("inventory", "hotels", "h::1", out KvDocument? compressed));
        Assert.True(DocumentEnvelope.IsEnvelope(compressed.Value.Span));
        Assert.Empty(loopback.Server.KeysIn("inventory", "airlines"));
    }

    [Fact]
    public async Task A_dictionary_store_in_its_own_scope_and_collection_keeps_every_record_there_and_a_cold_reader_finds_them()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        ICouchbaseCollection dictionaries = (await loopback.Bucket.ScopeAsync("compression")).Collection("dictionaries");
        ICouchbaseCollection plainHotels = (await loopback.Bucket.ScopeAsync("inventory")).Collection("hotels");
        var store = new CouchbaseDictionaryStore(dictionaries);
        await using var engine = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(), timeProvider: new FakeTimeProvider());
        ICouchbaseCollection hotels = plainHotels.WithCompression(engine);
        var random = new Random(40);
        JObject[] movies = [.. Enumerable.Range(0, 250).Select(_ => Docs.Movie(random))];

        for (int i = 0; i < 200; i++) await hotels.UpsertAsync($"m::{i}", movies[i]);
        await engine.WhenIdleAsync();
        CompressionNamespace ns = hotels.GetCompressingTranscoder()!.Namespace;
        if (ns.CurrentDictionary is null) await ns.TrainAsync();
        DictionaryRecord dictionary = ns.CurrentDictionary!;
        for (int i = 200; i < movies.Length; i++) await hotels.UpsertAsync($"m::{i}", movies[i]);

        Assert.Equal("default.compression.dictionaries", store.CollectionName);
        IReadOnlyList<string> storeKeys = loopback.Server.KeysIn("compression", "dictionaries");
        Assert.Contains(store.RecordKey(dictionary.Id), storeKeys);
        Assert.Contains(store.VersionKey(ns.Name, dictionary.Version), storeKeys);
        Assert.Empty(loopback.Server.KeysIn("_default", "_default"));
        Assert.DoesNotContain(loopback.Server.KeysIn("inventory", "hotels"), key => key.StartsWith(CouchbaseDictionaryStore.DefaultKeyPrefix, StringComparison.Ordinal));

        await using var cold = new CompressionEngine(new CouchbaseDictionaryStore(dictionaries), CompressionEngineOptionsBuilder.Fast(), timeProvider: new FakeTimeProvider());
        ICouchbaseCollection coldHotels = plainHotels.WithCompression(cold);
        using (IGetResult read = await coldHotels.GetAsync("m::249")) Docs.Equal(movies[249], read.ContentAs<JObject>());
        uint lastId = DictionaryIdOf(loopback.Server, "hotels", "m::249"); // the one above, or a newer one trained meanwhile
        Assert.Contains(store.RecordKey(lastId), loopback.Server.KeysIn("compression", "dictionaries"));
        Assert.Equal([ns.Name], await cold.Store.ListAsync().Select(r => r.Namespace).Distinct().ToListAsync());
    }

    [Fact]
    public async Task AddCouchbase_with_the_store_in_its_own_scope_and_collection_publishes_there_and_hands_out_inventory_hotels()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Options("travel"));
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Couchbase:ConnectionString"] = server.ConnectionString,
            ["Couchbase:Username"] = server.Username,
            ["Couchbase:Password"] = server.Password,
            ["Couchbase:EnableDnsSrvResolution"] = "false",
            ["Compression:Namespaces:travel.inventory.hotels:Codec"] = "Brotli",
        });
        builder.Services.AddCouchbase(builder.Configuration.GetSection("Couchbase"));
        builder.Services.AddDocumentCompression(builder.Configuration).AddCouchbase("travel", options =>
        {
            options.StoreScopeName = "compression";
            options.StoreCollectionName = "dictionaries";
        });
        using IHost host = builder.Build();
        await host.StartAsync();

        ICouchbaseCollection hotels = await host.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync("travel", "inventory", "hotels");
        await hotels.UpsertAsync("hotel::1", new Hotel("Grand", "Lisbon", ["pool", "spa", new string('x', 200)], 5));
        var store = Assert.IsType<CouchbaseDictionaryStore>(host.Services.GetRequiredService<CompressionEngine>().Store);
        byte[] content = [.. Enumerable.Range(0, 512).Select(i => (byte)i)];
        await store.PublishAsync(new DictionaryRecord
        {
            Id = 4242, Namespace = "travel.inventory.hotels", Version = 1, Content = content, ContentHash = DictionaryRecord.ComputeContentHash(content),
            Created = new DateTimeOffset(2026, 12, 7, 12, 0, 0, TimeSpan.Zero), Level = 3, SampleCount = 100, Ratio = 3.5,
        });

        Assert.Equal("travel.compression.dictionaries", store.CollectionName);
        Assert.Contains(store.RecordKey(4242), server.KeysIn("compression", "dictionaries"));
        Assert.Equal(["hotel::1"], server.KeysIn("inventory", "hotels"));
        Assert.True(server.TryGetDocument("inventory", "hotels", "hotel::1", out KvDocument? stored));
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out EnvelopeHeader header));
        Assert.Equal(CompressionCodec.Brotli, header.Codec);
        using (IGetResult read = await hotels.GetAsync("hotel::1")) Assert.Equal("Lisbon", read.ContentAs<Hotel>()!.City);
        Assert.Empty(server.KeysIn("_default", "_default"));
        await host.StopAsync();
    }

    [Fact]
    public async Task The_inventory_hotels_example_of_docs_couchbase_md_works_as_written()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Options("travel"));
        var options = new ClusterOptions { EnableDnsSrvResolution = false }.WithPasswordAuthentication(server.Username, server.Password);
        var hotel = new Hotel("Grand", "Lisbon", ["pool", "spa"], 5);

        // docs/couchbase.md, "Use", without dependency injection (only the connection string is the loopback server's):
        ICluster cluster = await Cluster.ConnectAsync(server.ConnectionString, options);
        IBucket bucket = await cluster.BucketAsync("travel");
        await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(bucket.DefaultCollection()));
        ICouchbaseCollection hotels = (await bucket.ScopeAsync("inventory")).Collection("hotels").WithCompression(engine);

        await hotels.UpsertAsync("hotel::1", hotel);                 // stored compressed (namespace travel.inventory.hotels)
        using IGetResult read = await hotels.GetAsync("hotel::1");   // the dictionary it names is loaded before decoding
        Hotel? h = read.ContentAs<Hotel>();

        Assert.Equal(hotel.Amenities, h!.Amenities);
        Assert.Equal(hotel with { Amenities = [] }, h with { Amenities = [] });
        Assert.Equal("travel.inventory.hotels", hotels.GetCompressingTranscoder()!.Namespace.Name);
        Assert.True(server.TryGetDocument("inventory", "hotels", "hotel::1", out KvDocument? stored));
        Assert.True(DocumentEnvelope.IsEnvelope(stored.Value.Span));
        Assert.False(server.TryGetDocument("hotel::1", out _));
        await cluster.DisposeAsync();
    }

    private static uint DictionaryIdOf(CouchbaseLoopbackServer server, string collection, string key)
    {
        Assert.True(server.TryGetDocument("inventory", collection, key, out KvDocument? stored), $"inventory.{collection} has no {key}");
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out EnvelopeHeader header));
        return Assert.NotNull(header.DictionaryId);
    }
}
