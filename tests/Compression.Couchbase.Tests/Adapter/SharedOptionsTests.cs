using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// An options object passed to the compressed collection is not changed by it (issue #39: the compressed collection set
/// its transcoder on the caller's <c>UpsertOptions</c>, so the same object passed to a plain collection afterwards stored
/// an envelope, flags 0x03000001, and a plain <c>ContentAs&lt;JObject&gt;</c> then threw).
/// </summary>
public sealed class SharedOptionsTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Options_used_on_the_compressed_collection_then_on_a_plain_one_write_plain_json_there()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        var document = JObject.Parse("""{"title":"Heat","year":1995,"genres":["Crime","Drama","Thriller"],"cast":["Al Pacino","Robert De Niro"]}""");
        var upsert = new UpsertOptions().Timeout(TimeSpan.FromSeconds(30));
        var replace = new ReplaceOptions().Timeout(TimeSpan.FromSeconds(30));
        var get = new GetOptions().Timeout(TimeSpan.FromSeconds(30));

        await compressed.UpsertAsync("shared::compressed", document, upsert);
        await compressed.ReplaceAsync("shared::compressed", document, replace);
        await data.Collection.UpsertAsync("shared::plain", document, upsert);
        await data.Collection.ReplaceAsync("shared::plain", document, replace);
        using (IGetResult compressedBack = await compressed.GetAsync("shared::compressed", get))
            Assert.True(JToken.DeepEquals(document, compressedBack.ContentAs<JObject>()));

        // The plain collection, given the same objects, wrote JSON and reads it with the SDK's default transcoder.
        using IGetResult plainBack = await data.Collection.GetAsync("shared::plain", get);
        Assert.True(JToken.DeepEquals(document, plainBack.ContentAs<JObject>()));
        Assert.Null(upsert.AsReadOnly().Transcoder);
        Assert.Null(replace.AsReadOnly().Transcoder);
        Assert.Null(get.AsReadOnly().Transcoder);
        Assert.Equal(TimeSpan.FromSeconds(30), upsert.AsReadOnly().Timeout);
    }
}
