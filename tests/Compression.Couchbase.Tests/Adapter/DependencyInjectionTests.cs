using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary><c>AddDocumentCompression(configuration).AddCouchbase(bucket)</c> on top of the SDK's own <c>services.AddCouchbase(...)</c>.</summary>
public sealed class DependencyInjectionTests(ITestOutputHelper output)
{
    private static IHost Build(CouchbaseLoopbackServer server, Dictionary<string, string?> settings, string bucket = "default")
    {
        settings["Couchbase:ConnectionString"] = server.ConnectionString;
        settings["Couchbase:Username"] = server.Username;
        settings["Couchbase:Password"] = server.Password;
        settings["Couchbase:EnableDnsSrvResolution"] = "false";
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddCouchbase(builder.Configuration.GetSection("Couchbase"));
        builder.Services.AddDocumentCompression(builder.Configuration).AddCouchbase(bucket);
        return builder.Build();
    }

    [Fact]
    public async Task A_collection_from_the_provider_compresses_with_its_namespace_settings_and_keeps_dictionaries_in_the_bucket()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = new TestLog(output).Write });
        using IHost host = Build(server, new()
        {
            ["Compression:Namespaces:default._default._default:Codec"] = "Brotli",
            ["Compression:Namespaces:default._default._default:Level"] = "5",
        });
        await host.StartAsync();

        var provider = host.Services.GetRequiredService<CompressedCollectionProvider>();
        ICouchbaseCollection collection = await provider.GetCollectionAsync("default");
        Assert.Same(collection, await provider.GetCollectionAsync("default", "_default", "_default"));
        await collection.UpsertAsync("di::1", new { name = "Ada", items = new[] { "A-1", "B-2" }, note = new string('x', 200) });
        using IGetResult read = await collection.GetAsync("di::1");

        Assert.Equal("Ada", read.ContentAs<Dictionary<string, object>>()!["name"].ToString());
        Assert.True(server.TryGetDocument("di::1", out KvDocument? stored));
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out EnvelopeHeader header));
        Assert.Equal(CompressionCodec.Brotli, header.Codec);
        var store = Assert.IsType<CouchbaseDictionaryStore>(host.Services.GetRequiredService<CompressionEngine>().Store);
        Assert.Equal("default.compression.dictionaries", store.CollectionName); // its own collection, created at start-up
        Assert.Null(await store.GetCurrentAsync("default._default._default")); // reachable, and empty
        await host.StopAsync();
    }

    [Fact]
    public async Task MongoDBs_ClearFields_in_a_shared_configuration_is_accepted_and_ignored()
    {
        // ClearFields is the MongoDB adapter's key; a configuration that also serves a MongoDB application (or is copied
        // from docs/appsettings.example.json) keeps starting with Couchbase alone, and the body is still stored whole.
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = new TestLog(output).Write });
        using IHost host = Build(server, new()
        {
            ["Compression:Defaults:ClearFields:0"] = "CustomerId",
            ["Compression:Namespaces:default._default._default:ClearFields:0"] = "Status",
        });
        await host.StartAsync();

        ICouchbaseCollection collection = await host.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync("default");
        await collection.UpsertAsync("cf::1", new { customerId = "c-1", status = "open", note = new string('x', 200) });
        using IGetResult read = await collection.GetAsync("cf::1");
        Assert.Equal("open", read.ContentAs<Dictionary<string, object>>()!["status"].ToString());
        Assert.True(server.TryGetDocument("cf::1", out KvDocument? stored));
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Value.Span, out _)); // one envelope: nothing kept beside it
        await host.StopAsync();
    }

    [Fact]
    public async Task A_namespace_of_the_bucket_that_is_not_bucket_scope_collection_fails_the_start_naming_its_key()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = new TestLog(output).Write });
        using IHost host = Build(server, new() { ["Compression:Namespaces:default.orders:Level"] = "5" });

        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        output.WriteLine(error.Message);
        Assert.Contains("Compression:Namespaces:default.orders", error.Message, StringComparison.Ordinal);
        Assert.Contains("bucket.scope.collection", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Without_the_sdks_registration_the_error_says_what_to_add()
    {
        var services = new ServiceCollection();
        services.AddDocumentCompression().AddCouchbase("travel");
        using ServiceProvider provider = services.BuildServiceProvider();

        var error = Assert.Throws<InvalidOperationException>(() => provider.GetRequiredService<CompressionEngine>());
        Assert.Contains("services.AddCouchbase(...)", error.Message, StringComparison.Ordinal);
    }
}
