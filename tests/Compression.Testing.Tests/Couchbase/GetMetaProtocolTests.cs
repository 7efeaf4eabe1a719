using System.Buffers.Binary;
using Compression.Testing.Couchbase;
using Xunit;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>GET_META (0xa0), as the SDK's <c>ExistsAsync</c> sends it: version 2 extras, 21 bytes of metadata back.</summary>
public sealed class GetMetaProtocolTests
{
    private static byte[] Key(string key) => [.. KvProtocol.EncodeCollectionId(0), .. System.Text.Encoding.UTF8.GetBytes(key)];

    [Fact]
    public async Task A_document_answers_its_flags_expiry_sequence_and_datatype_and_a_missing_one_is_not_found()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);
        ulong cas = server.PutDocument("doc", "{}"u8.ToArray(), flags: 0x03000001, dataType: 0);

        KvRawResponse meta = await client.CallAsync(KvProtocol.Opcodes.GetMeta, Key("doc"), extras: [0x02]);

        Assert.Equal(0, meta.Status);
        Assert.Equal(21, meta.Extras.Length);
        Assert.Equal(0u, BinaryPrimitives.ReadUInt32BigEndian(meta.Extras)); // not deleted
        Assert.Equal(0x03000001u, BinaryPrimitives.ReadUInt32BigEndian(meta.Extras.AsSpan(4)));
        Assert.Equal(cas, BinaryPrimitives.ReadUInt64BigEndian(meta.Extras.AsSpan(12)));
        Assert.Empty(meta.Value);
        Assert.Equal(20, (await client.CallAsync(KvProtocol.Opcodes.GetMeta, Key("doc"))).Extras.Length); // version 1
        Assert.Equal(KvProtocol.Status.KeyNotFound, (await client.CallAsync(KvProtocol.Opcodes.GetMeta, Key("missing"), extras: [0x02])).Status);
        Assert.Equal(KvProtocol.Status.InvalidArguments, (await client.CallAsync(KvProtocol.Opcodes.GetMeta, Key("doc"), extras: [0x07])).Status);
    }
}
