using System.Buffers.Binary;
using System.Text;
using Compression.Testing.Couchbase;
using Microsoft.Extensions.Time.Testing;
using Xunit;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// Collections on the loopback KV server, byte by byte as kv_engine's docs/Collections.md and docs/BinaryProtocol.md
/// describe them: HELLO's collections feature, the manifest (0xBA), collection ids (0xBB), keys prefixed with their
/// collection id in unsigned LEB128, documents kept per collection, and a collection's maximum TTL.
/// </summary>
public sealed class CollectionsProtocolTests
{
    private static readonly CouchbaseLoopbackServerOptions Inventory = new()
    {
        Collections =
        [
            new KvCollectionDefinition("inventory", "hotels"),
            new KvCollectionDefinition("inventory", "airlines") { MaxTtl = TimeSpan.FromHours(1) },
            new KvCollectionDefinition("compression", "dictionaries"),
        ],
    };

    [Theory]
    [InlineData(0x00u, new byte[] { 0x00 })]
    [InlineData(0x01u, new byte[] { 0x01 })]
    [InlineData(0x7Fu, new byte[] { 0x7F })]
    [InlineData(0x80u, new byte[] { 0x80, 0x01 })]
    [InlineData(0x555u, new byte[] { 0xD5, 0x0A })]
    [InlineData(0x7FFFu, new byte[] { 0xFF, 0xFF, 0x01 })]
    [InlineData(0xBFFFu, new byte[] { 0xFF, 0xFF, 0x02 })]
    [InlineData(0xFFFFu, new byte[] { 0xFF, 0xFF, 0x03 })]
    [InlineData(0x8000u, new byte[] { 0x80, 0x80, 0x02 })]
    [InlineData(0x5555u, new byte[] { 0xD5, 0xAA, 0x01 })]
    [InlineData(0xCAFEF00u, new byte[] { 0x80, 0xDE, 0xBF, 0x65 })]
    [InlineData(0xCAFEF00Du, new byte[] { 0x8D, 0xE0, 0xFB, 0xD7, 0x0C })]
    [InlineData(0xFFFFFFFFu, new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x0F })]
    public void Collection_ids_are_read_and_written_as_the_leb128_examples_of_the_protocol(uint collectionId, byte[] encoded)
    {
        Assert.Equal(encoded, KvProtocol.EncodeCollectionId(collectionId));
        Assert.True(KvProtocol.TryReadCollectionId([.. encoded, .. "key"u8], out uint read, out int length));
        Assert.Equal((collectionId, encoded.Length), (read, length));
    }

    [Theory]
    [InlineData(new byte[] { 0x81, 0x00 })] // 1, not canonical
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 })] // no stop byte within 5 bytes
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x1F })] // more than 32 bits
    [InlineData(new byte[] { 0x80 })] // ends inside the id
    [InlineData(new byte[0])]
    public void A_key_without_a_canonical_collection_id_of_at_most_5_bytes_is_refused(byte[] key)
    {
        Assert.False(KvProtocol.TryReadCollectionId(key, out _, out _));
    }

    [Fact]
    public async Task A_fresh_bucket_has_only_the_default_collection_and_the_bucket_config_says_collections()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        KvRawResponse manifest = await client.CallAsync(KvProtocol.Opcodes.GetCollectionsManifest);
        KvRawResponse config = await client.CallAsync(KvProtocol.Opcodes.GetClusterConfig);

        Assert.Equal(0, manifest.Status);
        Assert.Equal(KvProtocol.JsonDataType, manifest.DataType);
        Assert.Equal("""{"uid":"0","scopes":[{"name":"_default","uid":"0","collections":[{"name":"_default","uid":"0"}]}]}""", Encoding.UTF8.GetString(manifest.Value));
        Assert.Contains("\"collections\"", Encoding.UTF8.GetString(config.Value), StringComparison.Ordinal);
        Assert.Equal(0ul, server.ManifestUid);
    }

    [Fact]
    public async Task The_manifest_lists_the_configured_scopes_and_collections_with_their_ids_and_max_ttl()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        (ushort status, byte[] manifest) = await client.CallAsync(KvProtocol.Opcodes.GetCollectionsManifest);

        Assert.Equal(0, status);
        // Two scopes and three collections created after the bucket: uid 5; ids from 8, as a server gives them.
        Assert.Equal(
            """{"uid":"5","scopes":[{"name":"_default","uid":"0","collections":[{"name":"_default","uid":"0"}]},"""
            + """{"name":"inventory","uid":"8","collections":[{"name":"hotels","uid":"8"},{"name":"airlines","uid":"9","maxTTL":3600}]},"""
            + """{"name":"compression","uid":"9","collections":[{"name":"dictionaries","uid":"a"}]}]}""",
            Encoding.UTF8.GetString(manifest));
        Assert.Equal((8u, 9u, 10u), (server.CollectionIdOf("inventory", "hotels"), server.CollectionIdOf("inventory", "airlines"), server.CollectionIdOf("compression", "dictionaries")));
    }

    [Theory]
    [InlineData("inventory.hotels", 8u)]
    [InlineData("inventory.airlines", 9u)]
    [InlineData("_default._default", 0u)]
    [InlineData(".", 0u)] // an empty name is _default
    [InlineData("compression.dictionaries", 10u)]
    public async Task Get_collection_id_answers_the_manifest_uid_and_the_collection_id_in_its_extras(string path, uint expected)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        KvRawResponse reply = await client.CallAsync(KvProtocol.Opcodes.GetCollectionId, value: Encoding.UTF8.GetBytes(path));

        Assert.Equal(0, reply.Status);
        Assert.Equal(12, reply.Extras.Length);
        Assert.Equal(5ul, BinaryPrimitives.ReadUInt64BigEndian(reply.Extras));
        Assert.Equal(expected, BinaryPrimitives.ReadUInt32BigEndian(reply.Extras.AsSpan(8)));
        Assert.Empty(reply.Value);
    }

    [Theory]
    [InlineData("inventory.rooms", KvProtocol.Status.UnknownCollection)]
    [InlineData("_default.hotels", KvProtocol.Status.UnknownCollection)]
    [InlineData("travel.hotels", KvProtocol.Status.UnknownScope)]
    public async Task Get_collection_id_of_a_path_the_manifest_lacks_is_unknown_collection_or_scope_with_the_manifest_uid(string path, ushort expected)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        (ushort status, byte[] value) = await client.CallAsync(KvProtocol.Opcodes.GetCollectionId, value: Encoding.UTF8.GetBytes(path));

        Assert.Equal(expected, status);
        Assert.Equal("""{"manifest_uid":"5"}""", Encoding.UTF8.GetString(value));
    }

    [Theory]
    [InlineData("", "inventory.hotels.x")] // not one dot
    [InlineData("", "inventory")]
    [InlineData("", "inventory.ho tels")] // not a valid name
    [InlineData("inventory.hotels", "")] // the path as the key: 7.x servers take it in the value only
    public async Task Get_collection_id_with_a_malformed_path_or_a_key_is_invalid(string key, string path)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        (ushort status, _) = await client.CallAsync(KvProtocol.Opcodes.GetCollectionId, key: key, value: Encoding.UTF8.GetBytes(path));

        Assert.Equal(KvProtocol.Status.InvalidArguments, status);
    }

    [Fact]
    public async Task The_same_key_in_two_collections_is_two_documents_and_the_default_collection_a_third()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        uint hotels = server.CollectionIdOf("inventory", "hotels"), dictionaries = server.CollectionIdOf("compression", "dictionaries");

        Assert.Equal(0, (await Set(client, Key(hotels, "k::1"), """{"in":"hotels"}""")).Status);
        Assert.Equal(0, (await Set(client, Key(dictionaries, "k::1"), """{"in":"dictionaries"}""")).Status);
        Assert.Equal(0, (await Set(client, Key(0, "k::1"), """{"in":"default"}""")).Status);
        Assert.Equal(KvProtocol.Status.KeyExists, (await client.CallAsync(KvProtocol.Opcodes.Add, Key(hotels, "k::1"), "{}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Delete, Key(dictionaries, "k::1"))).Status);

        Assert.Equal("""{"in":"hotels"}""", Encoding.UTF8.GetString((await client.CallAsync(KvProtocol.Opcodes.Get, Key(hotels, "k::1"))).Value));
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Get, Key(dictionaries, "k::1"))).Status);
        Assert.Equal("""{"in":"default"}""", Encoding.UTF8.GetString((await client.CallAsync(KvProtocol.Opcodes.Get, Key(0, "k::1"))).Value));
        Assert.Equal(2, server.DocumentCount);
        Assert.True(server.TryGetDocument("inventory", "hotels", "k::1", out KvDocument? inHotels));
        Assert.Equal(("k::1", hotels), (inHotels.Key, inHotels.CollectionId));
        Assert.True(server.TryGetDocument("k::1", out KvDocument? inDefault));
        Assert.Equal("""{"in":"default"}""", Encoding.UTF8.GetString(inDefault.Value.Span));
        Assert.Equal(["k::1"], server.KeysIn("inventory", "hotels"));
        Assert.Empty(server.KeysIn("compression", "dictionaries"));
    }

    [Fact]
    public async Task A_key_with_an_unknown_collection_id_is_answered_unknown_collection_and_nothing_is_stored()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        foreach (byte opcode in new[] { KvProtocol.Opcodes.Set, KvProtocol.Opcodes.Get, KvProtocol.Opcodes.Delete })
        {
            KvRawResponse reply = await client.CallAsync(opcode, Key(0x555, "k"), opcode == KvProtocol.Opcodes.Set ? "{}"u8.ToArray() : null,
                extras: opcode == KvProtocol.Opcodes.Set ? new byte[8] : null);
            Assert.Equal(KvProtocol.Status.UnknownCollection, reply.Status);
            Assert.Equal("""{"manifest_uid":"5"}""", Encoding.UTF8.GetString(reply.Value));
        }

        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.Get, [0x88, 0x00, .. "k"u8])).Status); // 8, not canonical
        Assert.Equal(0, server.DocumentCount);
    }

    [Fact]
    public async Task Without_hello_collections_keys_carry_no_id_and_name_documents_of_the_default_collection()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(Inventory);
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, 0x07, 0x08, 0x0b);

        Assert.Equal(0, (await Set(client, Encoding.UTF8.GetBytes("k::1"), "{}")).Status);

        Assert.True(server.TryGetDocument("k::1", out _));
        Assert.Empty(server.KeysIn("inventory", "hotels"));
    }

    [Fact]
    public async Task A_server_older_than_7_0_acknowledges_no_collections_and_says_none_in_its_bucket_config()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { PreserveTtl = false });
        using KvRawClient client = await KvRawClient.ConnectAsync(server.Port);

        (_, byte[] acknowledged) = await client.CallAsync(KvProtocol.Opcodes.Hello, key: "raw", value: [0x00, 0x12, 0x00, 0x07, 0x00, 0x08, 0x00, 0x0b]);
        Assert.True(await client.AuthenticateAsync("SCRAM-SHA256", server.Username, server.Password));
        await client.CallAsync(KvProtocol.Opcodes.SelectBucket, key: server.BucketName);
        (_, byte[] config) = await client.CallAsync(KvProtocol.Opcodes.GetClusterConfig);

        Assert.Equal(new byte[] { 0x00, 0x07, 0x00, 0x08, 0x00, 0x0b }, acknowledged);
        Assert.DoesNotContain("\"collections\"", Encoding.UTF8.GetString(config), StringComparison.Ordinal);
        await Assert.ThrowsAsync<ArgumentException>(() => CouchbaseLoopbackServer.StartAsync(
            new CouchbaseLoopbackServerOptions { PreserveTtl = false, Collections = [new KvCollectionDefinition("inventory", "hotels")] }));
    }

    [Theory]
    [InlineData("_system", "hotels")]
    [InlineData("inventory", "%hotels")]
    [InlineData("inventory", "")]
    [InlineData("inventory", "a-name-of-thirty-one-characters")]
    [InlineData("inventory", "ho.tels")]
    [InlineData("inventory", "_default")] // _default exists in the _default scope only
    public async Task Options_with_a_name_the_server_would_refuse_are_refused(string scope, string collection)
    {
        var options = new CouchbaseLoopbackServerOptions { Collections = [new KvCollectionDefinition(scope, collection)] };
        await Assert.ThrowsAsync<ArgumentException>(() => CouchbaseLoopbackServer.StartAsync(options));
    }

    [Fact]
    public async Task A_document_written_without_expiry_into_a_collection_with_a_max_ttl_expires_after_it_by_the_servers_clock()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 12, 7, 12, 0, 0, TimeSpan.Zero));
        uint now = (uint)clock.GetUtcNow().ToUnixTimeSeconds();
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Collections = Inventory.Collections, Clock = clock });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        uint airlines = server.CollectionIdOf("inventory", "airlines"), hotels = server.CollectionIdOf("inventory", "hotels");

        await Set(client, Key(airlines, "no-expiry"), "{}");
        clock.Advance(TimeSpan.FromMinutes(10));
        await Set(client, Key(airlines, "shorter"), "{}", expiry: 60);
        await Set(client, Key(airlines, "longer"), "{}", expiry: 7200);
        await Set(client, Key(airlines, "absolute-later"), "{}", expiry: now + 86_400);
        await Set(client, Key(hotels, "no-max-ttl"), "{}");
        await Set(client, Key(hotels, "relative"), "{}", expiry: 60);

        Assert.Equal(now + 3600, Expiry(server, "inventory", "airlines", "no-expiry"));
        Assert.Equal(now + 600 + 60, Expiry(server, "inventory", "airlines", "shorter"));
        Assert.Equal(now + 600 + 3600, Expiry(server, "inventory", "airlines", "longer"));
        Assert.Equal(now + 600 + 3600, Expiry(server, "inventory", "airlines", "absolute-later"));
        Assert.Equal(0u, Expiry(server, "inventory", "hotels", "no-max-ttl"));
        Assert.Equal(now + 600 + 60, Expiry(server, "inventory", "hotels", "relative"));
    }

    [Fact]
    public async Task Preserve_ttl_keeps_the_expiry_a_max_ttl_gave_and_a_replace_without_it_gets_the_max_ttl_again()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 12, 7, 12, 0, 0, TimeSpan.Zero));
        uint now = (uint)clock.GetUtcNow().ToUnixTimeSeconds();
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Collections = Inventory.Collections, Clock = clock });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        byte[] key = Key(server.CollectionIdOf("inventory", "airlines"), "a::1");

        await Set(client, key, "{\"v\":1}");
        clock.Advance(TimeSpan.FromMinutes(30));
        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Replace, key, "{\"v\":2}"u8.ToArray(), framing: [0x50], extras: new byte[8])).Status);
        Assert.Equal(now + 3600, Expiry(server, "inventory", "airlines", "a::1"));

        Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.Replace, key, "{\"v\":3}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.Equal(now + 1800 + 3600, Expiry(server, "inventory", "airlines", "a::1"));
    }

    private static byte[] Key(uint collectionId, string key) => [.. KvProtocol.EncodeCollectionId(collectionId), .. Encoding.UTF8.GetBytes(key)];

    private static Task<KvRawResponse> Set(KvRawClient client, byte[] key, string json, uint expiry = 0)
    {
        var extras = new byte[8];
        BinaryPrimitives.WriteUInt32BigEndian(extras.AsSpan(4), expiry);
        return client.CallAsync(KvProtocol.Opcodes.Set, key, Encoding.UTF8.GetBytes(json), extras: extras);
    }

    private static uint Expiry(CouchbaseLoopbackServer server, string scope, string collection, string key)
    {
        Assert.True(server.TryGetDocument(scope, collection, key, out KvDocument? document), $"{scope}.{collection} has no {key}");
        return document.Expiry;
    }
}
