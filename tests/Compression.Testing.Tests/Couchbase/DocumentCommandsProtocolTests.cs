using System.Buffers.Binary;
using System.Text;
using Compression.Testing.Couchbase;
using Microsoft.Extensions.Time.Testing;
using Xunit;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// TOUCH, GAT, GET_LOCKED/UNLOCK_KEY, GET_REPLICA, INCREMENT/DECREMENT and APPEND/PREPEND on the loopback KV server, as
/// the SDK's operations frame them (src/Couchbase/Core/IO/Operations: Touch, GetT, GetL, Unlock, ReplicaRead, Increment,
/// Decrement, Append, Prepend) and as kv_engine answers a client that negotiated XERROR.
/// </summary>
public sealed class DocumentCommandsProtocolTests
{
    private static readonly DateTimeOffset Start = new(2026, 12, 7, 12, 0, 0, TimeSpan.Zero);

    private static byte[] Key(string key) => [.. KvProtocol.EncodeCollectionId(0), .. Encoding.UTF8.GetBytes(key)];

    private static byte[] Seconds(uint seconds)
    {
        var extras = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(extras, seconds);
        return extras;
    }

    private static byte[] Counter(ulong delta, ulong initial, uint expiry)
    {
        var extras = new byte[20];
        BinaryPrimitives.WriteUInt64BigEndian(extras, delta);
        BinaryPrimitives.WriteUInt64BigEndian(extras.AsSpan(8), initial);
        BinaryPrimitives.WriteUInt32BigEndian(extras.AsSpan(16), expiry);
        return extras;
    }

    [Fact]
    public async Task Touch_sets_the_expiry_and_a_new_cas_and_gat_also_returns_the_document()
    {
        var clock = new FakeTimeProvider(Start);
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Clock = clock });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        ulong cas = server.PutDocument("doc", "{\"a\":1}"u8.ToArray(), flags: 0x02000006, dataType: 1);

        KvRawResponse touch = await client.CallAsync(KvProtocol.Opcodes.Touch, Key("doc"), extras: Seconds(60));
        Assert.Equal(KvProtocol.Status.Success, touch.Status);
        Assert.True(touch.Cas > cas);
        Assert.Empty(touch.Extras);
        Assert.Empty(touch.Value);
        Assert.True(server.TryGetDocument("doc", out KvDocument? touched));
        Assert.Equal((uint)Start.AddSeconds(60).ToUnixTimeSeconds(), touched.Expiry);
        Assert.Equal(touch.Cas, touched.Cas);

        KvRawResponse gat = await client.CallAsync(KvProtocol.Opcodes.GetAndTouch, Key("doc"), extras: Seconds(0));
        Assert.Equal(KvProtocol.Status.Success, gat.Status);
        Assert.Equal(0x02000006u, BinaryPrimitives.ReadUInt32BigEndian(gat.Extras));
        Assert.Equal("{\"a\":1}", Encoding.UTF8.GetString(gat.Value));
        Assert.Equal(1, gat.DataType);
        Assert.True(server.TryGetDocument("doc", out KvDocument? untouched) && untouched.Expiry == 0 && untouched.Cas == gat.Cas);

        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Touch, Key("missing"), extras: Seconds(1))).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.GetAndTouch, Key("doc"))).Status);
    }

    [Fact]
    public async Task A_locked_document_refuses_writes_without_the_lock_cas_until_unlocked_or_expired_by_the_clock()
    {
        var clock = new FakeTimeProvider(Start);
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Clock = clock });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        ulong cas = server.PutDocument("doc", "{}"u8.ToArray(), flags: 0x02000006, dataType: 1);

        KvRawResponse locked = await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"), extras: Seconds(10));
        Assert.Equal(KvProtocol.Status.Success, locked.Status);
        Assert.NotEqual(cas, locked.Cas);
        Assert.Equal("{}", Encoding.UTF8.GetString(locked.Value));
        Assert.True(server.IsLocked("doc"));

        Assert.Equal(ulong.MaxValue, (await client.CallAsync(KvProtocol.Opcodes.Get, Key("doc"))).Cas); // hidden from plain reads
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("doc"), "{}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.Delete, Key("doc"))).Status);
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.Touch, Key("doc"), extras: Seconds(1))).Status);
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"))).Status);
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.UnlockKey, Key("doc"), cas: locked.Cas + 1)).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.UnlockKey, Key("doc"))).Status);

        // The lock expires by the server's clock, not by waiting.
        clock.Advance(TimeSpan.FromSeconds(10));
        Assert.False(server.IsLocked("doc"));
        Assert.Equal(KvProtocol.Status.NotLocked, (await client.CallAsync(KvProtocol.Opcodes.UnlockKey, Key("doc"), cas: locked.Cas)).Status);

        // Unlocked with its CAS, the document takes writes again; a write with the lock's CAS releases it too.
        KvRawResponse again = await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"));
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.UnlockKey, Key("doc"), cas: again.Cas)).Status);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("doc"), "{\"v\":2}"u8.ToArray(), extras: new byte[8])).Status);
        KvRawResponse third = await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"), extras: Seconds(0)); // 0: the default, 15 s
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Replace, Key("doc"), "{\"v\":3}"u8.ToArray(), extras: new byte[8], cas: third.Cas)).Status);
        Assert.False(server.IsLocked("doc"));
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("missing"))).Status);
    }

    [Fact]
    public async Task Without_xerror_a_lock_conflict_is_a_temporary_failure()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, [.. KvRawClient.SevenDotXFeatures.Where(f => f != KvProtocol.Features.XError)]);
        server.PutDocument("doc", "{}"u8.ToArray(), flags: 0);

        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"))).Status);
        Assert.Equal(KvProtocol.Status.TemporaryFailure, (await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"))).Status);
    }

    [Fact]
    public async Task Replica_reads_answer_from_the_active_copy_when_replicas_are_advertised_and_not_my_vbucket_otherwise()
    {
        await using CouchbaseLoopbackServer withReplica = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Replicas = 1 });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(withReplica, KvRawClient.SevenDotXFeatures);
        ulong cas = withReplica.PutDocument("doc", "{\"r\":1}"u8.ToArray(), flags: 0x02000006, dataType: 1);
        await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"));

        KvRawResponse replica = await client.CallAsync(KvProtocol.Opcodes.GetReplica, Key("doc"));
        Assert.Equal(KvProtocol.Status.Success, replica.Status);
        Assert.Equal(0x02000006u, BinaryPrimitives.ReadUInt32BigEndian(replica.Extras));
        Assert.Equal("{\"r\":1}", Encoding.UTF8.GetString(replica.Value));
        Assert.NotEqual(ulong.MaxValue, replica.Cas); // a replica knows no locks
        Assert.NotEqual(0ul, cas);
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.GetReplica, Key("missing"))).Status);

        KvRawResponse config = await client.CallAsync(KvProtocol.Opcodes.GetClusterConfig);
        Assert.Contains("\"numReplicas\":1", Encoding.UTF8.GetString(config.Value), StringComparison.Ordinal);
        Assert.Contains("[0,0]", Encoding.UTF8.GetString(config.Value), StringComparison.Ordinal);

        await using CouchbaseLoopbackServer without = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient plain = await KvRawClient.OpenBucketAsync(without, KvRawClient.SevenDotXFeatures);
        without.PutDocument("doc", "{}"u8.ToArray(), flags: 0);
        Assert.Equal(KvProtocol.Status.NotMyVBucket, (await plain.CallAsync(KvProtocol.Opcodes.GetReplica, Key("doc"))).Status);
    }

    [Fact]
    public async Task Counters_are_created_counted_and_refused_on_a_body_that_is_not_a_number()
    {
        var clock = new FakeTimeProvider(Start);
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Clock = clock });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Increment, Key("n"), extras: Counter(1, 5, uint.MaxValue))).Status);
        KvRawResponse created = await client.CallAsync(KvProtocol.Opcodes.Increment, Key("n"), extras: Counter(1, 5, 60));
        Assert.Equal(5ul, BinaryPrimitives.ReadUInt64BigEndian(created.Value)); // the initial value, not initial + delta
        KvRawResponse incremented = await client.CallAsync(KvProtocol.Opcodes.Increment, Key("n"), extras: Counter(10, 0, 0));
        Assert.Equal(15ul, BinaryPrimitives.ReadUInt64BigEndian(incremented.Value));
        Assert.True(server.TryGetDocument("n", out KvDocument? stored));
        Assert.Equal("15", Encoding.ASCII.GetString(stored.Value.Span));
        Assert.Equal(0u, stored.Flags);
        Assert.Equal(KvProtocol.JsonDataType, stored.DataType);
        Assert.Equal((uint)Start.AddSeconds(60).ToUnixTimeSeconds(), stored.Expiry); // kept from the creation
        Assert.Equal(incremented.Cas, stored.Cas);
        Assert.Equal(0ul, BinaryPrimitives.ReadUInt64BigEndian((await client.CallAsync(KvProtocol.Opcodes.Decrement, Key("n"), extras: Counter(100, 0, 0))).Value));

        server.PutDocument("max", "18446744073709551615"u8.ToArray(), flags: 0);
        Assert.Equal(1ul, BinaryPrimitives.ReadUInt64BigEndian((await client.CallAsync(KvProtocol.Opcodes.Increment, Key("max"), extras: Counter(2, 0, 0))).Value));

        server.PutDocument("json", "{\"n\":1}"u8.ToArray(), flags: 0x02000006, dataType: 1);
        server.PutDocument("envelope", new byte[] { 0xC5, 0x01, 0x02 }, flags: 0x03000001);
        Assert.Equal(KvProtocol.Status.DeltaBadValue, (await client.CallAsync(KvProtocol.Opcodes.Increment, Key("json"), extras: Counter(1, 0, 0))).Status);
        Assert.Equal(KvProtocol.Status.DeltaBadValue, (await client.CallAsync(KvProtocol.Opcodes.Decrement, Key("envelope"), extras: Counter(1, 0, 0))).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.Increment, Key("n"), extras: new byte[8])).Status);

        await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("n"));
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.Increment, Key("n"), extras: Counter(1, 0, 0))).Status);
    }

    [Fact]
    public async Task Append_and_prepend_join_bytes_keep_flags_and_say_whether_the_result_is_json()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        ulong cas = server.PutDocument("doc", "23"u8.ToArray(), flags: 0x02000006, dataType: 1);

        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Append, Key("doc"), "4"u8.ToArray())).Status);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Prepend, Key("doc"), "1"u8.ToArray())).Status);
        Assert.True(server.TryGetDocument("doc", out KvDocument? joined));
        Assert.Equal("1234", Encoding.ASCII.GetString(joined.Value.Span));
        Assert.Equal(0x02000006u, joined.Flags);
        Assert.Equal(KvProtocol.JsonDataType, joined.DataType);

        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Append, Key("doc"), "x"u8.ToArray())).Status);
        Assert.True(server.TryGetDocument("doc", out KvDocument? notJson) && notJson.DataType == 0);

        Assert.Equal(KvProtocol.Status.KeyExists, (await client.CallAsync(KvProtocol.Opcodes.Append, Key("doc"), "y"u8.ToArray(), cas: cas)).Status);
        Assert.Equal(KvProtocol.Status.NotStored, (await client.CallAsync(KvProtocol.Opcodes.Prepend, Key("missing"), "y"u8.ToArray())).Status);

        KvRawResponse locked = await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"));
        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.Append, Key("doc"), "z"u8.ToArray())).Status);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Append, Key("doc"), "z"u8.ToArray(), cas: locked.Cas)).Status);
        Assert.False(server.IsLocked("doc"));
        Assert.Empty(server.UnknownCommands);
    }
}
