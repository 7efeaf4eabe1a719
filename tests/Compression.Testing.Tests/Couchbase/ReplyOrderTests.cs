using System.Text;
using Compression.Testing.Couchbase;
using Xunit;

namespace Compression.Testing.Tests.Couchbase;

/// <summary>
/// The order of the loopback KV server's replies, as kv_engine's docs/UnorderedExecution.md allows it: in request order
/// unless HELLO negotiated unordered execution (0x0e); then pipelined reorderable requests are answered last first,
/// and a barrier (framing extra 0) or a command that is not reorderable keeps its place.
/// </summary>
public sealed class ReplyOrderTests
{
    private const ushort UnorderedExecution = 0x0e;
    private static readonly byte[] Barrier = [0x00];

    [Fact]
    public async Task With_unordered_execution_pipelined_gets_and_sets_are_answered_last_first()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, [.. KvRawClient.SevenDotXFeatures, UnorderedExecution]);

        uint[] sent = await client.SendPipelineAsync(Get("a"), Get("b"), Get("c"), (KvProtocol.Opcodes.Delete, Key("d"), null));

        Assert.Equal(sent.Reverse(), await ReadOpaquesAsync(client, sent.Length));
        Assert.Equal(3, server.RepliesReordered);
    }

    [Fact]
    public async Task A_barrier_or_a_command_that_is_not_reorderable_keeps_its_place_and_ends_the_run_before_it()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync();
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, [.. KvRawClient.SevenDotXFeatures, UnorderedExecution]);

        uint[] sent = await client.SendPipelineAsync(
            Get("a"), Get("b"), (KvProtocol.Opcodes.Get, Key("c"), Barrier), Get("d"), Get("e"), (KvProtocol.Opcodes.Noop, [], null), Get("f"), Get("g"));

        uint[] expected = [sent[1], sent[0], sent[2], sent[4], sent[3], sent[5], sent[7], sent[6]];
        Assert.Equal(expected, await ReadOpaquesAsync(client, sent.Length));
        Assert.Equal(3, server.RepliesReordered); // b before a, e before d, g before f
        Assert.Empty(server.ProtocolErrors);
    }

    [Theory]
    [InlineData(true)] // the client did not ask
    [InlineData(false)] // the server does not offer it
    public async Task Without_unordered_execution_pipelined_requests_are_answered_in_order_and_a_barrier_is_refused(bool serverOffers)
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { UnorderedExecution = serverOffers });
        using KvRawClient client = await KvRawClient.OpenBucketAsync(server, KvRawClient.SevenDotXFeatures);

        uint[] sent = await client.SendPipelineAsync(Get("a"), Get("b"), Get("c"));
        Assert.Equal(sent, await ReadOpaquesAsync(client, sent.Length));
        Assert.Equal(0, server.RepliesReordered);

        KvRawResponse refused = await client.CallAsync(KvProtocol.Opcodes.Get, Key("a"), framing: Barrier);
        Assert.Equal(KvProtocol.Status.InvalidArguments, refused.Status);
        Assert.Contains("barrier", Encoding.UTF8.GetString(refused.Value), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Hello_acknowledges_unordered_execution_only_when_the_options_offer_it()
    {
        await using CouchbaseLoopbackServer offering = await CouchbaseLoopbackServer.StartAsync();
        await using CouchbaseLoopbackServer ordered = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { UnorderedExecution = false });
        byte[] asked = [0x00, 0x0e, 0x00, 0x07, 0x00, 0x08, 0x00, 0x0b];

        using KvRawClient first = await KvRawClient.ConnectAsync(offering.Port);
        using KvRawClient second = await KvRawClient.ConnectAsync(ordered.Port);

        Assert.Equal(asked, (await first.CallAsync(KvProtocol.Opcodes.Hello, key: "raw", value: asked)).Value);
        Assert.Equal(asked[2..], (await second.CallAsync(KvProtocol.Opcodes.Hello, key: "raw", value: asked)).Value);
    }

    private static byte[] Key(string key) => [.. KvProtocol.EncodeCollectionId(0), .. Encoding.UTF8.GetBytes(key)];

    private static (byte Opcode, byte[] Key, byte[]? Framing) Get(string key) => (KvProtocol.Opcodes.Get, Key(key), null);

    private static async Task<uint[]> ReadOpaquesAsync(KvRawClient client, int count)
    {
        var opaques = new uint[count];
        for (int i = 0; i < count; i++)
        {
            opaques[i] = (await client.ReadAsync()).Opaque;
        }

        return opaques;
    }
}
