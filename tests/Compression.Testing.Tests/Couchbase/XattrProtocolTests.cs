using System.Buffers.Binary;
using System.Text;
using Compression.Testing.Couchbase;
using Xunit;
using static Compression.Testing.Tests.Couchbase.SubdocFrames;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// SUBDOC_MULTI_LOOKUP and SUBDOC_MULTI_MUTATION on extended attributes, framed as SDK 3.9.5 frames them
/// (Core/IO/Operations/SubDocument: MultiLookup, MultiMutation) and answered as kv_engine's docs/SubDocument.md says.
/// </summary>
public sealed class XattrProtocolTests
{
    private static readonly ushort[] Features = [.. KvRawClient.SevenDotXFeatures, KvProtocol.Features.Xattr];

    [Fact]
    public async Task Xattrs_are_written_and_read_beside_a_body_that_stays_as_it_was()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        byte[] envelope = [0xC5, 0x01, 0x02, 0x03];
        ulong cas = server.PutDocument("doc", envelope, flags: 0x03000001);

        KvRawResponse mutated = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xc8, 0x05, "txn.id.atr", "\"atr-1\""), // DICT_UPSERT, xattr + create-path
            (0xc8, 0x05, "txn.op.type", "\"replace\""),
            (0xcf, 0x04, "txn.n", "2")), // COUNTER: its result comes back
            cas: cas);

        Assert.Equal(KvProtocol.Status.Success, mutated.Status);
        Assert.True(mutated.Cas > cas);
        Assert.Equal(2, mutated.Value[0]); // the counter's index, status, length, value
        Assert.Equal("2", Encoding.UTF8.GetString(mutated.Value, 7, mutated.Value.Length - 7));
        Assert.True(server.TryGetDocument("doc", out KvDocument? stored));
        Assert.Equal(envelope, stored.Value.ToArray());
        Assert.Equal(0x03000001u, stored.Flags);
        Assert.Equal("""{"txn":{"id":{"atr":"atr-1"},"op":{"type":"replace"},"n":2}}""", stored.Xattrs);

        KvRawResponse get = await client.CallAsync(KvProtocol.Opcodes.Get, Key("doc"));
        Assert.Equal(envelope, get.Value); // GET never returns xattrs

        KvRawResponse lookup = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups(
            (0xc5, 0x04, "txn.id"), (0xc6, 0x04, "txn.op.type"), (0xd2, 0x04, "txn"), (0xc5, 0x04, "$document.CAS"), (0xc5, 0x04, "txn.missing")));
        Assert.Equal(KvProtocol.Status.SubdocMultiPathFailure, lookup.Status); // one spec failed; every spec answered
        Assert.Equal(
            [(0, """{"atr":"atr-1"}"""), (0, ""), (0, "3"), (0, $"\"0x{stored.Cas:x16}\""), (KvProtocol.Status.SubdocPathNotFound, "")],
            LookupResults(lookup.Value));

        // A full-document write drops user xattrs and keeps system ones.
        await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "_sys", "1")));
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Set, Key("doc"), "{}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.True(server.TryGetDocument("doc", out KvDocument? replaced));
        Assert.Equal("""{"_sys":1}""", replaced.Xattrs);
    }

    [Fact]
    public async Task A_failing_spec_applies_nothing_and_names_its_index()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        server.PutDocument("doc", "{}"u8.ToArray(), flags: 0, dataType: 1);
        await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "a", "{\"x\":1}")));

        KvRawResponse failed = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xc8, 0x04, "a.y", "2"), (0xc7, 0x04, "a.x", "3"))); // DICT_ADD on an existing path

        Assert.Equal(KvProtocol.Status.SubdocMultiPathFailure, failed.Status);
        Assert.Equal([1, 0x00, 0xc9], failed.Value); // index 1, path exists
        Assert.True(server.TryGetDocument("doc", out KvDocument? stored));
        Assert.Equal("""{"a":{"x":1}}""", stored.Xattrs);

        Assert.Equal(KvProtocol.Status.SubdocXattrInvalidKeyCombo, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"),
            Mutations((0xc8, 0x04, "a.z", "1"), (0xc8, 0x04, "b", "1")))).Status);
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("missing"), Mutations((0xc8, 0x04, "a", "1")))).Status);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("created"), Mutations((0xc8, 0x04, "a", "1")), extras: [0x01])).Status);
        Assert.True(server.TryGetDocument("created", out KvDocument? created) && Encoding.UTF8.GetString(created.Value.Span) == "{}");
        Assert.Equal(KvProtocol.Status.KeyExists, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("created"), Mutations((0xc8, 0x04, "a", "1")), extras: [0x02])).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "a", "1")), extras: [0x03])).Status); // add and mkdoc
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "a", "1")), extras: [0x10])).Status); // revive without access-deleted
        Assert.Equal(KvProtocol.Status.SubdocXattrUnknownMacro, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x14, "a.cas", "\"${Mutation.Nope}\"")))).Status); // not a macro
    }

    [Fact]
    public async Task A_body_path_is_answered_as_an_unknown_command_and_recorded()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        server.PutDocument("doc", "{\"name\":\"Ada\"}"u8.ToArray(), flags: 0, dataType: 1);

        KvRawResponse lookup = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups((0xc5, 0x04, "a"), (0xc5, 0x00, "name")));
        KvRawResponse mutation = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x00, "name", "\"Grace\"")));

        Assert.Equal(KvProtocol.Status.UnknownCommand, lookup.Status);
        Assert.Contains("body path", Encoding.UTF8.GetString(lookup.Value), StringComparison.Ordinal);
        Assert.Equal(KvProtocol.Status.UnknownCommand, mutation.Status);
        Assert.Equal(["SUBDOC_MULTI_LOOKUP", "SUBDOC_MULTI_MUTATION"], server.UnknownCommands.Select(c => c.Name));
        Assert.True(server.TryGetDocument("doc", out KvDocument? stored) && stored.Xattrs is null);
    }

    [Fact]
    public async Task A_locked_document_refuses_an_xattr_mutation_without_the_lock_cas()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        server.PutDocument("doc", "{}"u8.ToArray(), flags: 0, dataType: 1);
        KvRawResponse locked = await client.CallAsync(KvProtocol.Opcodes.GetLocked, Key("doc"));

        Assert.Equal(KvProtocol.Status.Locked, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "a", "1")))).Status);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "a", "1")), cas: locked.Cas)).Status);
        Assert.False(server.IsLocked("doc"));
    }

    [Fact]
    public async Task A_replica_lookup_is_answered_from_the_active_copy_only_when_replicas_are_advertised()
    {
        await using CouchbaseLoopbackServer withReplica = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Replicas = 1 });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(withReplica, Features);
        withReplica.PutDocument("doc", "{}"u8.ToArray(), flags: 0, dataType: 1);
        await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, 0x04, "a", "1")));

        KvRawResponse replica = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups((0xc5, 0x04, "a")), extras: [0x20]);
        Assert.Equal([(KvProtocol.Status.Success, "1")], LookupResults(replica.Value));

        await using CouchbaseLoopbackServer without = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient plain = await KvRawClient.OpenBucketAsync(without, Features);
        without.PutDocument("doc", "{}"u8.ToArray(), flags: 0, dataType: 1);
        Assert.Equal(KvProtocol.Status.NotMyVBucket, (await plain.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups((0xc5, 0x04, "a")), extras: [0x20])).Status);
    }
}
