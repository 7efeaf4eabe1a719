using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// The compressed collection's <c>Binary</c> (issue #39 item 3): counters pass through (the server keeps them as plain
/// digits, and they read back through the compressed collection); on a compressed document the server's refusal is a
/// <see cref="NotSupportedException"/> naming the operation; append and prepend are refused before anything is sent.
/// </summary>
public sealed class BinaryOperationTests(ITestOutputHelper output)
{
    private static readonly JObject Heat = JObject.Parse("""{"title":"Heat","plot":"A group of professional bank robbers start to feel the heat from police."}""");

    [Fact]
    public async Task Counters_pass_through_are_stored_plain_and_read_back_through_the_compressed_collection()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);

        ICounterResult created = await compressed.Binary.IncrementAsync("visits", new IncrementOptions().Initial(10).Delta(1));
        ICounterResult incremented = await compressed.Binary.IncrementAsync("visits", new IncrementOptions().Delta(5));
        ICounterResult decremented = await compressed.Binary.DecrementAsync("visits", new DecrementOptions().Delta(3));

        Assert.Equal((10ul, 15ul, 12ul), (created.Content, incremented.Content, decremented.Content));
        Assert.True(data.Server.TryGetDocument("visits", out KvDocument? stored));
        Assert.Equal("12", System.Text.Encoding.ASCII.GetString(stored.Value.Span));
        Assert.Equal(0u, stored.Flags);
        using IGetResult read = await compressed.GetAsync("visits");
        Assert.Equal(12ul, read.ContentAs<ulong>());
    }

    [Fact]
    public async Task A_counter_on_a_compressed_document_is_refused_naming_the_operation_and_the_document_is_unchanged()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? before));

        NotSupportedException increment = await Assert.ThrowsAsync<NotSupportedException>(() => compressed.Binary.IncrementAsync("doc"));
        NotSupportedException decrement = await Assert.ThrowsAsync<NotSupportedException>(() => compressed.Binary.DecrementAsync("doc"));

        output.WriteLine(increment.Message);
        Assert.StartsWith("Increment is not supported on document 'doc'", increment.Message, StringComparison.Ordinal);
        Assert.StartsWith("Decrement is not supported on document 'doc'", decrement.Message, StringComparison.Ordinal);
        Assert.Contains("not a number", increment.Message, StringComparison.Ordinal);
        Assert.Equal(global::Couchbase.Core.IO.Operations.ResponseStatus.IncrDecrOnNonNumericValue,
            Assert.IsType<global::Couchbase.Core.Exceptions.KeyValue.KeyValueErrorContext>(((global::Couchbase.CouchbaseException)increment.InnerException!).Context).Status);
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? after));
        Assert.Equal(before.Cas, after.Cas);
        using IGetResult read = await compressed.GetAsync("doc");
        Assert.Equal("Heat", read.ContentAs<JObject>()!["title"]!.ToString());
    }

    [Fact]
    public async Task Append_and_prepend_are_refused_before_anything_is_sent_even_on_a_plain_document()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await data.Collection.UpsertAsync("plain", new JObject { ["title"] = "Ronin" });
        await compressed.UpsertAsync("compressed", Heat);

        NotSupportedException[] refused =
        [
            await Assert.ThrowsAsync<NotSupportedException>(() => compressed.Binary.AppendAsync("compressed", "x"u8.ToArray())),
            await Assert.ThrowsAsync<NotSupportedException>(() => compressed.Binary.PrependAsync("plain", "x"u8.ToArray())),
        ];

        Assert.StartsWith("Append is not supported", refused[0].Message, StringComparison.Ordinal);
        Assert.StartsWith("Prepend is not supported", refused[1].Message, StringComparison.Ordinal);
        Assert.Equal(0, data.Server.CommandCount(KvProtocol.Opcodes.Append) + data.Server.CommandCount(KvProtocol.Opcodes.Prepend));

        // The plain collection's own append still works: the refusal is the compressed collection's, not the server's.
        await data.Collection.Binary.AppendAsync("plain", " "u8.ToArray());
        Assert.Equal(1, data.Server.CommandCount(KvProtocol.Opcodes.Append));
    }
}
