using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Operations that do not touch a body pass through the compressed collection to the SDK's own (issue #39 item 3): they
/// answer for compressed and plain documents alike. (So far: exists. Touch, locks and replica reads need those commands
/// in the loopback server first.)
/// </summary>
public sealed class PassThroughTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Exists_answers_for_compressed_plain_and_missing_documents()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("compressed", JObject.Parse("""{"title":"Heat","plot":"A group of professional bank robbers start to feel the heat from police."}"""));
        await data.Collection.UpsertAsync("plain", new JObject { ["title"] = "Ronin" });

        Assert.True((await compressed.ExistsAsync("compressed")).Exists);
        Assert.True((await compressed.ExistsAsync("plain")).Exists);
        Assert.False((await compressed.ExistsAsync("missing")).Exists);
        Assert.True(data.Server.TryGetDocument("compressed", out var stored) && stored.Flags == 0x03000001, "the document was not stored compressed");
    }
}
