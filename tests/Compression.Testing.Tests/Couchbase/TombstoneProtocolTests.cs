using System.Buffers.Binary;
using System.Globalization;
using System.Numerics;
using System.Text;
using System.Text.Json.Nodes;
using Compression.Testing.Couchbase;
using Xunit;
using static Compression.Testing.Tests.Couchbase.SubdocFrames;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// What SDK 3.x's distributed transactions need of a data node, byte by byte: tombstones that keep system xattrs,
/// access-deleted, create-as-deleted and revive, macro expansion, whole-body specs, REPLACE_BODY_WITH_XATTR and the
/// <c>$vbucket</c> virtual xattr, framed as SDK 3.9.5 frames them and answered as kv_engine answers them.
/// </summary>
public sealed class TombstoneProtocolTests
{
    private static readonly ushort[] Features = [.. KvRawClient.SevenDotXFeatures, KvProtocol.Features.Xattr];

    private const byte Mkdoc = 0x01, Add = 0x02, AccessDeleted = 0x04, CreateAsDeleted = 0x08, Revive = 0x10;
    private const byte Xattr = 0x04, XattrCreatePath = 0x05, XattrMacro = 0x14;

    /// <summary>CRC32-C (Castagnoli) with the processor's instruction, independent of the server's table.</summary>
    private static string Crc32C(string body)
    {
        uint crc = ~0u;
        foreach (byte b in Encoding.UTF8.GetBytes(body)) crc = BitOperations.Crc32C(crc, b);
        return $"0x{~crc:x8}";
    }

    /// <summary>A CAS as <c>${Mutation.CAS}</c> expands it and the SDKs parse it: "0x", the 8 bytes little-endian in hex.</summary>
    private static string LittleEndianHex(ulong cas)
    {
        var bytes = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, cas);
        return "0x" + Convert.ToHexStringLower(bytes);
    }

    [Fact]
    public async Task A_delete_keeps_a_tombstone_with_the_system_xattrs_only_that_access_deleted_reaches()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        server.PutDocument("doc", "{\"a\":1}"u8.ToArray(), flags: 0x02000006, dataType: 1);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "_sys", "{\"keep\":true}")))).Status);
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "user", "1")))).Status);

        KvRawResponse deleted = await client.CallAsync(KvProtocol.Opcodes.Delete, Key("doc"));

        Assert.Equal(KvProtocol.Status.Success, deleted.Status);
        Assert.False(server.TryGetDocument("doc", out _));
        Assert.True(server.TryGetTombstone("doc", out KvDocument? tombstone));
        Assert.True(tombstone.Deleted);
        Assert.Equal(deleted.Cas, tombstone.Cas);
        Assert.Equal(0, tombstone.Value.Length);
        Assert.Equal("""{"_sys":{"keep":true}}""", tombstone.Xattrs); // the user xattr and the body are gone
        Assert.Empty(server.KeysIn("_default", "_default"));
        Assert.Equal(["doc"], server.TombstonesIn("_default", "_default"));

        // Plain reads do not see it; GET_META says deleted; a sub-document lookup reaches it only with access-deleted.
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Get, Key("doc"))).Status);
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Delete, Key("doc"))).Status);
        KvRawResponse meta = await client.CallAsync(KvProtocol.Opcodes.GetMeta, Key("doc"), extras: [0x02]);
        Assert.Equal(KvProtocol.Status.Success, meta.Status);
        Assert.Equal(1u, BinaryPrimitives.ReadUInt32BigEndian(meta.Extras));
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups((0xc5, Xattr, "_sys")))).Status);

        KvRawResponse lookup = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"),
            Lookups((0xc5, Xattr, "_sys"), (0xc5, Xattr, "$document.deleted"), (0x00, 0x00, "")), extras: [AccessDeleted]);
        Assert.Equal(KvProtocol.Status.SubdocSuccessDeleted, lookup.Status);
        Assert.Equal(tombstone.Cas, lookup.Cas);
        Assert.Equal([(0, """{"keep":true}"""), (0, "true"), (0, "")], LookupResults(lookup.Value));
        KvRawResponse partly = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups((0xc5, Xattr, "user")), extras: [AccessDeleted]);
        Assert.Equal(KvProtocol.Status.SubdocMultiPathFailureDeleted, partly.Status);
        Assert.Equal([(KvProtocol.Status.SubdocPathNotFound, "")], LookupResults(partly.Value));

        // An ADD over the tombstone creates a new document, as over nothing.
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.Add, Key("doc"), "{\"b\":2}"u8.ToArray(), extras: new byte[8])).Status);
        Assert.True(server.TryGetDocument("doc", out KvDocument? revived));
        Assert.False(revived.Deleted);
        Assert.False(server.TryGetTombstone("doc", out _));
        Assert.Empty(server.UnknownCommands);
    }

    [Fact]
    public async Task Create_as_deleted_makes_a_tombstone_with_xattrs_and_revive_with_replace_body_with_xattr_makes_it_live()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);

        // A staged insert as the SDK sends it: insert semantics, access-deleted, create-as-deleted.
        KvRawResponse staged = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xc8, XattrCreatePath, "txn", "{}"),
            (0xc8, XattrCreatePath, "txn.op.type", "\"insert\""),
            (0xc8, XattrCreatePath, "txn.op.stgd", "{\"name\":\"New\"}")), extras: [Add | AccessDeleted | CreateAsDeleted]);

        Assert.Equal(KvProtocol.Status.SubdocSuccessDeleted, staged.Status);
        Assert.False(server.TryGetDocument("doc", out _));
        Assert.True(server.TryGetTombstone("doc", out KvDocument? tombstone));
        Assert.Equal("""{"txn":{"op":{"type":"insert","stgd":{"name":"New"}}}}""", tombstone.Xattrs);
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.Get, Key("doc"))).Status);
        // Without access-deleted a mutation does not reach the tombstone.
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "txn.x", "1")))).Status);
        // The tombstone takes xattrs but no body unless revived.
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xd3, Xattr, "txn.op.stgd", "")), extras: [AccessDeleted])).Status);

        // The commit: the body from the staged xattr, the txn xattr removed, revived; user flags from the 9-byte extras.
        byte[] extras = new byte[9];
        BinaryPrimitives.WriteUInt32BigEndian(extras.AsSpan(4), 0x02000006);
        extras[8] = AccessDeleted | Revive;
        KvRawResponse committed = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xd3, Xattr, "txn.op.stgd", ""), (0xc8, XattrCreatePath, "txn", "\"\""), (0xc9, Xattr, "txn", "")), extras: extras, cas: tombstone.Cas);

        Assert.Equal(KvProtocol.Status.Success, committed.Status);
        Assert.False(server.TryGetTombstone("doc", out _));
        Assert.True(server.TryGetDocument("doc", out KvDocument? live));
        Assert.Equal("""{"name":"New"}""", Encoding.UTF8.GetString(live.Value.Span));
        Assert.Equal(0x02000006u, live.Flags);
        Assert.Equal(KvProtocol.JsonDataType, live.DataType);
        Assert.Null(live.Xattrs);
        Assert.Equal(committed.Cas, live.Cas);
        KvRawResponse get = await client.CallAsync(KvProtocol.Opcodes.Get, Key("doc"));
        Assert.Equal("""{"name":"New"}""", Encoding.UTF8.GetString(get.Value));
        Assert.Equal(0x02000006u, BinaryPrimitives.ReadUInt32BigEndian(get.Extras));

        // Only a deleted document can be revived; revive needs access-deleted and excludes create-as-deleted.
        Assert.Equal(KvProtocol.Status.SubdocCanOnlyReviveDeletedDocuments, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "a", "1")), extras: [AccessDeleted | Revive])).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "a", "1")), extras: [AccessDeleted | Revive | CreateAsDeleted])).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "a", "1")), extras: [Add], cas: live.Cas)).Status);
        Assert.Empty(server.UnknownCommands);
    }

    [Fact]
    public async Task A_server_without_revive_does_not_advertise_it_and_refuses_the_flag()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { ReviveDocument = false });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        string config = Encoding.UTF8.GetString((await client.CallAsync(KvProtocol.Opcodes.GetClusterConfig)).Value);
        Assert.Contains("\"tombstonedUserXAttrs\"", config, StringComparison.Ordinal);
        Assert.DoesNotContain("subdoc.ReviveDocument", config, StringComparison.Ordinal);
        await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "txn", "{}")), extras: [Add | AccessDeleted | CreateAsDeleted]);

        KvRawResponse refused = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc9, Xattr, "txn", "")), extras: [AccessDeleted | Revive]);

        Assert.Equal(KvProtocol.Status.InvalidArguments, refused.Status);
        Assert.True(server.TryGetTombstone("doc", out _));

        await using CouchbaseLoopbackServer modern = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient modernClient = await KvRawClient.OpenBucketAsync(modern, Features);
        Assert.Contains("\"subdoc.ReviveDocument\"", Encoding.UTF8.GetString((await modernClient.CallAsync(KvProtocol.Opcodes.GetClusterConfig)).Value), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Macros_expand_to_the_mutations_cas_seqno_and_the_bodys_crc32c()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        server.PutDocument("doc", "123456789"u8.ToArray(), flags: 0);

        KvRawResponse mutated = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xc8, XattrMacro | 0x01, "m.cas", "\"${Mutation.CAS}\""),
            (0xc8, XattrMacro | 0x01, "m.seqno", "\"${Mutation.seqno}\""),
            (0xc8, XattrMacro | 0x01, "m.crc", "\"${Mutation.value_crc32c}\""),
            (0xc8, XattrCreatePath, "m.literal", "\"${Mutation.CAS}\""))); // no expand-macros flag: kept as written

        Assert.Equal(KvProtocol.Status.Success, mutated.Status);
        Assert.True(server.TryGetDocument("doc", out KvDocument? stored));
        JsonObject m = JsonNode.Parse(stored.Xattrs!)!["m"]!.AsObject();
        Assert.Equal(LittleEndianHex(mutated.Cas), m["cas"]!.GetValue<string>());
        Assert.Equal(LittleEndianHex(stored.Cas), m["seqno"]!.GetValue<string>()); // this double's seqno is the CAS
        Assert.Equal("0xe3069283", m["crc"]!.GetValue<string>()); // CRC32-C of "123456789", the standard check value
        Assert.Equal(Crc32C("123456789"), m["crc"]!.GetValue<string>());
        Assert.Equal("${Mutation.CAS}", m["literal"]!.GetValue<string>());

        // $document reports the same CRC32-C, and its CAS in plain hex.
        KvRawResponse lookup = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups(
            (0xc5, Xattr, "$document.value_crc32c"), (0xc5, Xattr, "$document.CAS"), (0xc5, Xattr, "$document.deleted")));
        Assert.Equal([(0, "\"0xe3069283\""), (0, $"\"0x{stored.Cas:x16}\""), (0, "false")], LookupResults(lookup.Value));

        // A macro this server does not know is refused, not written.
        Assert.Equal(KvProtocol.Status.SubdocXattrUnknownMacro, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, XattrMacro, "m.x", "\"${Mutation.nope}\"")))).Status);
    }

    [Fact]
    public async Task Whole_body_specs_get_set_and_delete_the_document_beside_its_xattrs()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        server.PutDocument("doc", "{\"a\":1}"u8.ToArray(), flags: 0, dataType: 1);

        KvRawResponse lookup = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("doc"), Lookups((0xc5, Xattr, "$document.exptime"), (0x00, 0x00, "")));
        Assert.Equal(KvProtocol.Status.Success, lookup.Status);
        Assert.Equal([(0, "0"), (0, """{"a":1}""")], LookupResults(lookup.Value));

        // The SDK's SetDoc: opcode SET, empty path, after the xattr specs.
        KvRawResponse set = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xc8, XattrCreatePath, "txn.done", "true"), (0x01, 0x00, "", "{\"b\":2}")));
        Assert.Equal(KvProtocol.Status.Success, set.Status);
        Assert.True(server.TryGetDocument("doc", out KvDocument? stored));
        Assert.Equal("""{"b":2}""", Encoding.UTF8.GetString(stored.Value.Span));
        Assert.Equal("""{"txn":{"done":true}}""", stored.Xattrs);

        // The ATR's creation: upsert semantics (mkdoc), xattrs and a whole body of [null].
        Assert.Equal(KvProtocol.Status.Success, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("_txn:atr-1"), Mutations(
            (0xc7, XattrCreatePath, "attempts.a1.st", "\"PENDING\""), (0x01, 0x00, "", "[null]")), extras: [Mkdoc])).Status);
        Assert.True(server.TryGetDocument("_txn:atr-1", out KvDocument? atr));
        Assert.Equal("[null]", Encoding.UTF8.GetString(atr.Value.Span));

        // An xattr spec after a body spec is refused; a body path other than the whole body is not implemented (0x81).
        Assert.Equal(KvProtocol.Status.SubdocInvalidXattrOrder, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0x01, 0x00, "", "{}"), (0xc8, Xattr, "txn.x", "1")))).Status);
        Assert.Equal(KvProtocol.Status.SubdocInvalidCombo, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0x01, 0x00, "", "{}"), (0x04, 0x00, "", "")))).Status);
        Assert.Equal(KvProtocol.Status.UnknownCommand, (await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0x01, 0x00, "b", "{}")))).Status);

        // DELETE of the whole document: a tombstone, system xattrs kept.
        await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, Xattr, "_sys", "1")));
        KvRawResponse deleted = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0x04, 0x00, "", "")));
        Assert.Equal(KvProtocol.Status.SubdocSuccessDeleted, deleted.Status);
        Assert.False(server.TryGetDocument("doc", out _));
        Assert.True(server.TryGetTombstone("doc", out KvDocument? tombstone));
        Assert.Equal("""{"_sys":1}""", tombstone.Xattrs);
    }

    [Fact]
    public async Task Replace_body_with_xattr_keeps_the_flags_without_the_extra_and_fails_on_a_missing_xattr()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        ulong cas = server.PutDocument("doc", "{\"v\":1}"u8.ToArray(), flags: 0x02000006, dataType: 1);
        await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xc8, XattrCreatePath, "txn.op.stgd", "{\"v\":2}")));

        KvRawResponse missing = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations((0xd3, Xattr, "txn.op.nothing", "")));
        Assert.Equal(KvProtocol.Status.SubdocMultiPathFailure, missing.Status);
        Assert.Equal([0, 0x00, 0xc0], missing.Value);

        KvRawResponse replaced = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiMutation, Key("doc"), Mutations(
            (0xd3, Xattr, "txn.op.stgd", ""), (0xc8, XattrCreatePath, "txn", "\"\""), (0xc9, Xattr, "txn", "")));

        Assert.Equal(KvProtocol.Status.Success, replaced.Status);
        Assert.True(replaced.Cas > cas);
        Assert.True(server.TryGetDocument("doc", out KvDocument? stored));
        Assert.Equal("""{"v":2}""", Encoding.UTF8.GetString(stored.Value.Span));
        Assert.Equal(0x02000006u, stored.Flags);
        Assert.Null(stored.Xattrs);
    }

    [Fact]
    public async Task The_vbucket_vattr_reports_the_hlc_as_the_cas_clock_in_seconds()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, Features);
        ulong cas = server.PutDocument("_txn:client-record", "[null]"u8.ToArray(), flags: 0, dataType: 1);

        KvRawResponse lookup = await client.CallAsync(KvProtocol.Opcodes.SubdocMultiLookup, Key("_txn:client-record"), Lookups(
            (0xc5, Xattr, "$vbucket.HLC"), (0xc5, Xattr, "$vbucket"), (0xc5, Xattr, "$nope")));

        Assert.Equal(KvProtocol.Status.SubdocMultiPathFailure, lookup.Status);
        List<(ushort Status, string Value)> results = LookupResults(lookup.Value);
        JsonObject hlc = JsonNode.Parse(results[0].Value)!.AsObject();
        Assert.Equal((cas / 1_000_000_000UL).ToString(CultureInfo.InvariantCulture), hlc["now"]!.GetValue<string>()); // a string, as kv_engine writes it
        Assert.Equal("logical", hlc["mode"]!.GetValue<string>());
        Assert.True(JsonNode.DeepEquals(hlc, JsonNode.Parse(results[1].Value)!["HLC"]));
        Assert.Equal(KvProtocol.Status.SubdocXattrUnknownVattr, results[2].Status);
    }
}
