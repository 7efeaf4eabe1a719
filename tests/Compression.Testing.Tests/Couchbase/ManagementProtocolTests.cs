using System.Buffers.Binary;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Compression.Testing.Couchbase;
using Microsoft.Extensions.Time.Testing;
using Xunit;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// The loopback server's management (HTTP) service, as SDK 3.x's bucket and collection managers call it: bucket settings,
/// scopes, creating a scope and a collection (seen by KV at once), Basic authentication, 403 without access, 404 recorded.
/// </summary>
public sealed class ManagementProtocolTests
{
    private static HttpClient Client(CouchbaseLoopbackServer server, string? password = null)
    {
        var client = new HttpClient { BaseAddress = new Uri(server.ManagementUri!) };
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Basic",
            Convert.ToBase64String(Encoding.UTF8.GetBytes($"{server.Username}:{password ?? server.Password}")));
        return client;
    }

    [Fact]
    public async Task The_cluster_config_advertises_the_management_port_and_the_bucket_settings_are_those_of_the_options()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions
        {
            BucketType = "ephemeral", EvictionPolicy = "nruEviction", BucketMaxTtl = TimeSpan.FromHours(1),
        });
        using KvRawClient kv = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        using JsonDocument config = JsonDocument.Parse((await kv.CallAsync(KvProtocol.Opcodes.GetClusterConfig)).Value);
        int mgmt = config.RootElement.GetProperty("nodesExt")[0].GetProperty("services").GetProperty("mgmt").GetInt32();
        Assert.Equal(server.ManagementUri, $"http://127.0.0.1:{mgmt}");

        using HttpClient http = Client(server);
        using JsonDocument bucket = JsonDocument.Parse(await http.GetStringAsync("/pools/default/buckets/default"));

        Assert.Equal("default", bucket.RootElement.GetProperty("name").GetString());
        Assert.Equal("ephemeral", bucket.RootElement.GetProperty("bucketType").GetString());
        Assert.Equal("nruEviction", bucket.RootElement.GetProperty("evictionPolicy").GetString());
        Assert.Equal(3600, bucket.RootElement.GetProperty("maxTTL").GetInt32());
        Assert.Equal(HttpStatusCode.NotFound, (await http.GetAsync("/pools/default/buckets/other")).StatusCode);
    }

    [Fact]
    public async Task A_scope_and_a_collection_created_over_HTTP_are_listed_and_resolved_by_KV_and_a_second_create_says_already_exists()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using HttpClient http = Client(server);

        HttpResponseMessage scope = await http.PostAsync("/pools/default/buckets/default/scopes", new FormUrlEncodedContent([new("name", "compression")]));
        HttpResponseMessage collection = await http.PostAsync("/pools/default/buckets/default/scopes/compression/collections",
            new FormUrlEncodedContent([new("name", "dictionaries"), new("maxTTL", "600")]));
        HttpResponseMessage again = await http.PostAsync("/pools/default/buckets/default/scopes/compression/collections",
            new FormUrlEncodedContent([new("name", "dictionaries")]));
        HttpResponseMessage noScope = await http.PostAsync("/pools/default/buckets/default/scopes/missing/collections",
            new FormUrlEncodedContent([new("name", "x")]));

        Assert.Equal(HttpStatusCode.OK, scope.StatusCode);
        Assert.Equal(HttpStatusCode.OK, collection.StatusCode);
        Assert.Equal(2ul, server.ManifestUid);
        Assert.Equal(HttpStatusCode.BadRequest, again.StatusCode);
        Assert.Contains("already exists", await again.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.NotFound, noScope.StatusCode);
        Assert.Contains("not found", await noScope.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        using JsonDocument scopes = JsonDocument.Parse(await http.GetStringAsync("/pools/default/buckets/default/scopes"));
        JsonElement created = scopes.RootElement.GetProperty("scopes").EnumerateArray().Single(s => s.GetProperty("name").GetString() == "compression");
        Assert.Equal(600, created.GetProperty("collections")[0].GetProperty("maxTTL").GetInt32());

        using KvRawClient kv = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        KvRawResponse id = await kv.CallAsync(KvProtocol.Opcodes.GetCollectionId, value: "compression.dictionaries"u8.ToArray());
        Assert.Equal(0, id.Status);
        Assert.Equal(server.CollectionIdOf("compression", "dictionaries"), BinaryPrimitives.ReadUInt32BigEndian(id.Extras.AsSpan(8)));
    }

    [Fact]
    public async Task A_wrong_password_is_401_no_access_is_403_and_an_unknown_request_is_404_and_recorded()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        await using CouchbaseLoopbackServer forbidden = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { ManagementAccess = false });

        using (HttpClient wrong = Client(server, password: "wrong"))
            Assert.Equal(HttpStatusCode.Unauthorized, (await wrong.GetAsync("/pools/default/buckets/default")).StatusCode);
        using (HttpClient http = Client(forbidden))
            Assert.Equal(HttpStatusCode.Forbidden, (await http.GetAsync("/pools/default/buckets/default/scopes")).StatusCode);
        using (HttpClient http = Client(server))
            Assert.Equal(HttpStatusCode.NotFound, (await http.GetAsync("/pools/default/nodeServices")).StatusCode);

        Assert.Equal(["GET /pools/default/nodeServices"], server.UnknownManagementRequests);
    }

    [Fact]
    public async Task Without_a_management_port_none_is_advertised()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { ManagementPort = null });
        using KvRawClient kv = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        using JsonDocument config = JsonDocument.Parse((await kv.CallAsync(KvProtocol.Opcodes.GetClusterConfig)).Value);

        Assert.Null(server.ManagementUri);
        Assert.False(config.RootElement.GetProperty("nodesExt")[0].GetProperty("services").TryGetProperty("mgmt", out _));
    }

    [Fact]
    public async Task The_buckets_maximum_TTL_applies_to_a_collection_without_one_of_its_own()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 12, 7, 12, 0, 0, TimeSpan.Zero));
        long now = clock.GetUtcNow().ToUnixTimeSeconds();
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions
        {
            BucketMaxTtl = TimeSpan.FromHours(1), Clock = clock,
            Collections = [new KvCollectionDefinition("inventory", "hotels") { MaxTtl = TimeSpan.FromMinutes(5) }],
        });
        using KvRawClient kv = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        Assert.Equal(0, (await kv.CallAsync(KvProtocol.Opcodes.Set, [.. KvProtocol.EncodeCollectionId(0), .. "d"u8], "{}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.Equal(0, (await kv.CallAsync(KvProtocol.Opcodes.Set, [.. KvProtocol.EncodeCollectionId(server.CollectionIdOf("inventory", "hotels")), .. "h"u8],
            "{}"u8.ToArray(), extras: new byte[8])).Status);

        Assert.True(server.TryGetDocument("d", out KvDocument? plain));
        Assert.Equal(now + 3600, plain.Expiry);
        Assert.True(server.TryGetDocument("inventory", "hotels", "h", out KvDocument? hotel));
        Assert.Equal(now + 300, hotel.Expiry);
    }

    [Theory]
    [InlineData("membase", "nruEviction")]
    [InlineData("ephemeral", "valueOnly")]
    [InlineData("memcached", "valueOnly")]
    public async Task A_bucket_type_and_eviction_policy_that_do_not_go_together_are_refused_at_start(string type, string eviction)
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(() => CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { BucketType = type, EvictionPolicy = eviction }));
        Assert.Contains("allowed are membase with valueOnly or fullEviction, ephemeral with noEviction or nruEviction", error.Message, StringComparison.Ordinal);
    }
}
