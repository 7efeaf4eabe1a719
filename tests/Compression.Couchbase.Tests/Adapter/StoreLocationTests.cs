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
/// Where the dictionaries live (#39 item 2): a collection of their own by default (<c>compression.dictionaries</c>,
/// created at start-up), and no location that would lose them: a maximum TTL (the collection's or the bucket's), an
/// ephemeral bucket that evicts. Checked at start-up through the cluster's management service, which the loopback
/// server answers as 7.x does.
/// </summary>
public sealed class StoreLocationTests(ITestOutputHelper output)
{
    private CouchbaseLoopbackServerOptions Server(params KvCollectionDefinition[] collections) =>
        new() { Collections = collections, Log = new TestLog(output).Write };

    private static IHost Build(CouchbaseLoopbackServer server, Action<CouchbaseCompressionOptions>? configure = null, Dictionary<string, string?>? settings = null)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        settings ??= [];
        settings["Compression:Defaults:Level"] = "3";
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddCouchbase(o =>
        {
            o.ConnectionString = server.ConnectionString;
            o.WithPasswordAuthentication(server.Username, server.Password);
            o.EnableDnsSrvResolution = false;
        });
        builder.Services.AddDocumentCompression(builder.Configuration).AddCouchbase(server.BucketName, configure);
        return builder.Build();
    }

    private async Task<InvalidOperationException> RefusedAsync(CouchbaseLoopbackServer server, Action<CouchbaseCompressionOptions>? configure = null)
    {
        using IHost host = Build(server, configure);
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        output.WriteLine(error.Message);
        return error;
    }

    [Fact]
    public async Task The_default_location_is_a_collection_of_its_own_created_at_start_up_and_the_dictionaries_go_there()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Server());
        using IHost host = Build(server);
        await host.StartAsync();

        server.CollectionIdOf("compression", "dictionaries"); // throws when it was not created
        ICouchbaseCollection collection = await host.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync(server.BucketName);
        var random = new Random(2);
        TrainingResult training = await collection.TrainCompressionAsync(Enumerable.Range(0, 300).Select(_ => Docs.Movie(random)).ToList());
        Assert.Equal(TrainingOutcome.Adopted, training.Outcome);

        Assert.Contains(server.KeysIn("compression", "dictionaries"), key => key == $"_compression::dict::{training.Dictionary!.Id}");
        Assert.DoesNotContain(server.KeysIn("_default", "_default"), key => key.StartsWith("_compression::", StringComparison.Ordinal));
        Assert.Empty(server.UnknownManagementRequests);
        await host.StopAsync();

        // A second start finds it and starts as well.
        using IHost again = Build(server);
        await again.StartAsync();
        await again.StopAsync();
    }

    [Fact]
    public async Task The_location_is_read_from_Compression_Couchbase_in_the_configuration_and_a_bad_key_is_named_with_the_allowed_ones()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Server(new KvCollectionDefinition("ops", "dictionaries")));
        using (IHost host = Build(server, settings: new() { ["Compression:Couchbase:StoreScopeName"] = "ops" }))
        {
            await host.StartAsync();
            Assert.Equal("default.ops.dictionaries", Assert.IsType<CouchbaseDictionaryStore>(host.Services.GetRequiredService<CompressionEngine>().Store).CollectionName);
            await host.StopAsync();
        }

        using IHost bad = Build(server, settings: new() { ["Compression:Couchbase:StoreBucket"] = "x", ["Compression:Couchbase:CheckStoreLocation"] = "maybe" });
        var error = await Assert.ThrowsAsync<Microsoft.Extensions.Options.OptionsValidationException>(() => bad.StartAsync());
        output.WriteLine(error.Message);
        Assert.Contains("Compression:Couchbase:StoreBucket: unknown setting; allowed: StoreScopeName, StoreCollectionName, CheckStoreLocation, Compress.", error.Message, StringComparison.Ordinal);
        Assert.Contains("Compression:Couchbase:CheckStoreLocation: 'maybe' is not valid; allowed: true or false.", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_record_written_with_an_expiry_is_named_at_the_next_start()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Server());
        uint id;
        using (IHost host = Build(server))
        {
            await host.StartAsync();
            ICouchbaseCollection collection = await host.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync(server.BucketName);
            var random = new Random(6);
            TrainingResult training = await collection.TrainCompressionAsync(Enumerable.Range(0, 300).Select(_ => Docs.Movie(random)).ToList());
            id = training.Dictionary!.Id;
            await host.StopAsync();
        }

        // As if written under a maximum TTL since lifted: the record keeps its expiry.
        string key = $"_compression::dict::{id}";
        Assert.True(server.TryGetDocument("compression", "dictionaries", key, out KvDocument? record));
        server.PutDocument("compression", "dictionaries", key, record.Value, record.Flags, record.DataType, expiry: 2_000_000_000);

        InvalidOperationException error = await RefusedAsync(server);

        Assert.Contains($"1 record(s) already carry an expiry and will be deleted: default._default._default version 1 (id {id}) at 2033-05-18 03:33:20Z", error.Message, StringComparison.Ordinal);
        Assert.Contains("docz dictionaries export", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_store_collection_with_a_maximum_TTL_is_refused_at_start_up()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(
            Server(new KvCollectionDefinition("cache", "dictionaries") { MaxTtl = TimeSpan.FromDays(1) }));

        InvalidOperationException error = await RefusedAsync(server, o => { o.StoreScopeName = "cache"; o.StoreCollectionName = "dictionaries"; });

        Assert.Contains("'default.cache.dictionaries' cannot keep dictionaries", error.Message, StringComparison.Ordinal);
        Assert.Contains("expire 86400 s after they are written (the collection's maxTTL)", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_bucket_with_a_maximum_TTL_is_refused_at_start_up_for_a_collection_without_one()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions
        {
            BucketMaxTtl = TimeSpan.FromHours(2), Log = new TestLog(output).Write,
        });

        InvalidOperationException error = await RefusedAsync(server);

        Assert.Contains("expire 7200 s after they are written (bucket 'default''s maxTTL)", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("nruEviction", false)]
    [InlineData("noEviction", true)]
    public async Task An_ephemeral_bucket_is_refused_when_it_evicts(string eviction, bool starts)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions
        {
            BucketType = "ephemeral", EvictionPolicy = eviction, Log = new TestLog(output).Write,
        });

        if (starts)
        {
            using IHost host = Build(server);
            await host.StartAsync();
            await host.StopAsync();
            return;
        }

        InvalidOperationException error = await RefusedAsync(server);
        Assert.Contains("ephemeral with eviction (nruEviction)", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_management_access_the_start_says_how_to_create_the_collection_and_the_check_can_be_turned_off()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions
        {
            ManagementAccess = false, Collections = [new KvCollectionDefinition("compression", "dictionaries")], Log = new TestLog(output).Write,
        });

        InvalidOperationException error = await RefusedAsync(server);
        Assert.Contains("couchbase-cli collection-manage --bucket default --create-scope compression", error.Message, StringComparison.Ordinal);

        // Created by hand: with the check off, it starts and uses it.
        using IHost host = Build(server, o => o.CheckStoreLocation = false);
        await host.StartAsync();
        var store = Assert.IsType<CouchbaseDictionaryStore>(host.Services.GetRequiredService<CompressionEngine>().Store);
        Assert.Equal("default.compression.dictionaries", store.CollectionName);
        await host.StopAsync();
    }

    [Fact]
    public async Task Dictionaries_of_an_earlier_version_in_the_default_collection_stop_the_start_on_the_new_default_and_are_kept_with_the_old_one()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Server());
        // What an earlier version did: the store in _default._default.
        using (IHost old = Build(server, o => { o.StoreScopeName = "_default"; o.StoreCollectionName = "_default"; }))
        {
            await old.StartAsync();
            ICouchbaseCollection collection = await old.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync(server.BucketName);
            var random = new Random(4);
            Assert.Equal(TrainingOutcome.Adopted, (await collection.TrainCompressionAsync(Enumerable.Range(0, 300).Select(_ => Docs.Movie(random)).ToList())).Outcome);
            await collection.UpsertAsync("m::1", Docs.Movie(random));
            await old.StopAsync();
        }

        InvalidOperationException error = await RefusedAsync(server);

        Assert.Contains("Dictionaries are in default._default._default", error.Message, StringComparison.Ordinal);
        Assert.Contains("o.StoreScopeName = \"_default\"; o.StoreCollectionName = \"_default\";", error.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => server.CollectionIdOf("compression", "dictionaries")); // nothing created
    }
}
