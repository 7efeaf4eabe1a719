using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Dependency injection on the SDK's own terms (#39 item 5): its named collection providers
/// (<c>AddCouchbaseBucket&lt;T&gt;(..., b =&gt; b.AddScope(...).AddCollection&lt;T&gt;(...))</c>) handing out compressed
/// collections through <c>.CompressCollection&lt;T&gt;()</c>, and a keyed cluster (<c>AddKeyedCouchbase</c>) holding
/// the dictionaries through <c>.AddKeyedCouchbase(serviceKey, bucket)</c>.
/// </summary>
public sealed class NamedProviderTests(ITestOutputHelper output)
{
    public interface ITravelBucketProvider : INamedBucketProvider;

    public interface IHotelsCollectionProvider : INamedCollectionProvider;

    public interface IAirlinesCollectionProvider : INamedCollectionProvider;

    private CouchbaseLoopbackServerOptions ServerOptions() => new()
    {
        Collections = [new KvCollectionDefinition("inventory", "hotels"), new KvCollectionDefinition("inventory", "airlines")],
        Log = new TestLog(output).Write,
    };

    private static void Connect(ClusterOptions options, CouchbaseLoopbackServer server)
    {
        options.ConnectionString = server.ConnectionString;
        options.WithPasswordAuthentication(server.Username, server.Password);
        options.EnableDnsSrvResolution = false;
    }

    private static HostApplicationBuilder Builder()
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?> { ["Compression:Defaults:Level"] = "3" });
        return builder;
    }

    private static JObject Hotel(int i) => new()
    {
        ["name"] = $"Hotel {i}", ["city"] = i % 2 == 0 ? "Lyon" : "Porto", ["amenities"] = new JArray("wifi", "breakfast", "parking"),
        ["description"] = string.Concat(Enumerable.Repeat("A quiet room with a view of the old town. ", 6)),
    };

    [Fact]
    public async Task A_named_collection_provider_given_to_CompressCollection_hands_out_its_collection_compressed()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(ServerOptions());
        HostApplicationBuilder builder = Builder();
        builder.Services.AddCouchbase(o => Connect(o, server));
        builder.Services.AddCouchbaseBucket<ITravelBucketProvider>(server.BucketName, b => b.AddScope("inventory")
            .AddCollection<IHotelsCollectionProvider>("hotels")
            .AddCollection<IAirlinesCollectionProvider>("airlines"));
        builder.Services.AddDocumentCompression(builder.Configuration).AddCouchbase(server.BucketName).CompressCollection<IHotelsCollectionProvider>();
        using IHost host = builder.Build();
        await host.StartAsync();

        var hotelsProvider = host.Services.GetRequiredService<IHotelsCollectionProvider>();
        Assert.Equal("inventory", hotelsProvider.ScopeName);
        Assert.Equal("hotels", hotelsProvider.CollectionName);
        ICouchbaseCollection hotels = await hotelsProvider.GetCollectionAsync();
        await hotels.UpsertAsync("h::1", Hotel(1));
        using (IGetResult read = await hotels.GetAsync("h::1")) Assert.Equal("Hotel 1", read.ContentAs<JObject>()!["name"]!.Value<string>());
        Assert.True(server.TryGetDocument("inventory", "hotels", "h::1", out KvDocument? stored));
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out _), "the named provider's collection wrote an envelope");
        // One compressed collection per namespace, whichever way it is asked for.
        Assert.Same(hotels, await host.Services.GetRequiredService<IHotelsCollectionProvider>().GetCollectionAsync());
        Assert.Same(hotels, await host.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync(server.BucketName, "inventory", "hotels"));

        // A provider not given to CompressCollection stays the SDK's: plain JSON.
        ICouchbaseCollection airlines = await host.Services.GetRequiredService<IAirlinesCollectionProvider>().GetCollectionAsync();
        Assert.Null(airlines.GetCompressingTranscoder());
        await airlines.UpsertAsync("a::1", new JObject { ["name"] = "Air Lyon" });
        Assert.True(server.TryGetDocument("inventory", "airlines", "a::1", out KvDocument? plain));
        Assert.Equal((byte)'{', plain.Value.Span[0]);
        await host.StopAsync();
    }

    [Fact]
    public async Task A_keyed_cluster_holds_the_dictionaries_and_hands_out_the_compressed_collections()
    {
        await using CouchbaseLoopbackServer main = await CouchbaseLoopbackServer.StartAsync(ServerOptions());
        await using CouchbaseLoopbackServer travel = await CouchbaseLoopbackServer.StartAsync(ServerOptions());
        HostApplicationBuilder builder = Builder();
        builder.Services.AddCouchbase(o => Connect(o, main));
        builder.Services.AddKeyedCouchbase("travel", o => Connect(o, travel));
        builder.Services.AddKeyedCouchbaseBucket<ITravelBucketProvider>("travel", travel.BucketName, b => b.AddScope("inventory").AddCollection<IHotelsCollectionProvider>("hotels"));
        builder.Services.AddDocumentCompression(builder.Configuration).AddKeyedCouchbase("travel", travel.BucketName).CompressCollection<IHotelsCollectionProvider>();
        using IHost host = builder.Build();
        await host.StartAsync();

        ICouchbaseCollection hotels = await host.Services.GetRequiredKeyedService<IHotelsCollectionProvider>("travel").GetCollectionAsync();
        JObject[] batch = [.. Enumerable.Range(0, 300).Select(Hotel)];
        TrainingResult training = await hotels.TrainCompressionAsync(batch);
        Assert.Equal(TrainingOutcome.Adopted, training.Outcome);
        for (int i = 0; i < 20; i++) await hotels.UpsertAsync($"h::{i}", batch[i]);

        // The documents and the dictionary are in the keyed cluster; the unkeyed one saw nothing.
        Assert.True(travel.TryGetDocument("inventory", "hotels", "h::7", out KvDocument? stored));
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out EnvelopeHeader header));
        Assert.Equal(training.Dictionary!.Id, header.DictionaryId);
        Assert.Contains(travel.KeysIn("compression", "dictionaries"), key => key.StartsWith("_compression::", StringComparison.Ordinal));
        Assert.Empty(main.KeysIn("_default", "_default"));
        Assert.Empty(main.KeysIn("inventory", "hotels"));
        var store = Assert.IsType<CouchbaseDictionaryStore>(host.Services.GetRequiredService<CompressionEngine>().Store);
        Assert.NotNull(await store.GetCurrentAsync($"{travel.BucketName}.inventory.hotels"));
        using (IGetResult read = await (await host.Services.GetRequiredService<CompressedCollectionProvider>()
            .GetCollectionAsync(travel.BucketName, "inventory", "hotels")).GetAsync("h::7"))
        {
            Assert.Equal("Hotel 7", read.ContentAs<JObject>()!["name"]!.Value<string>());
        }
        await host.StopAsync();
    }

    [Fact]
    public void CompressCollection_before_the_sdks_registration_of_the_provider_says_what_to_register()
    {
        var services = new ServiceCollection();
        services.AddCouchbase(o => o.ConnectionString = "couchbase://127.0.0.1");
        DocumentCompressionBuilder compression = services.AddDocumentCompression().AddCouchbase("travel");

        var error = Assert.Throws<InvalidOperationException>(() => compression.CompressCollection<IHotelsCollectionProvider>());

        output.WriteLine(error.Message);
        Assert.Contains("AddCouchbaseBucket<IYourBucketProvider>(\"bucket\", b => b.AddScope(\"scope\").AddCollection<IHotelsCollectionProvider>(\"collection\"))", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void CompressCollection_before_AddCouchbase_and_a_second_AddCouchbase_are_refused()
    {
        var services = new ServiceCollection();
        DocumentCompressionBuilder compression = services.AddDocumentCompression();

        var early = Assert.Throws<InvalidOperationException>(() => compression.CompressCollection<IHotelsCollectionProvider>());
        compression.AddCouchbase("travel");
        var twice = Assert.Throws<InvalidOperationException>(() => compression.AddKeyedCouchbase("other", "travel"));

        Assert.Contains("call AddCouchbase(...)", early.Message, StringComparison.Ordinal);
        Assert.Contains("already added (AddCouchbase(\"travel\"))", twice.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_keyed_adapter_without_the_sdks_keyed_cluster_names_the_call_to_add()
    {
        var services = new ServiceCollection();
        services.AddCouchbase(o => o.ConnectionString = "couchbase://127.0.0.1");
        services.AddDocumentCompression().AddKeyedCouchbase("travel", "travel");
        using ServiceProvider provider = services.BuildServiceProvider();

        var error = Assert.Throws<InvalidOperationException>(() => provider.GetRequiredService<CompressionEngine>());
        Assert.Contains("services.AddKeyedCouchbase(\"travel\", ...)", error.Message, StringComparison.Ordinal);
    }
}
