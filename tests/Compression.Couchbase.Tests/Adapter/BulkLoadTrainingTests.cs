using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// <c>collection.TrainCompressionAsync(batch)</c> before a bulk load: the batch goes out with a dictionary trained from
/// what the collection compresses (the documents' JSON), instead of alone while the write path gathers samples.
/// </summary>
public sealed class BulkLoadTrainingTests(ITestOutputHelper output)
{
    [Fact]
    public async Task A_batch_trained_from_before_it_is_written_goes_out_with_the_dictionary()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new CouchbaseDictionaryStore(data.Collection));
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        var random = new Random(3);
        List<JObject> batch = [.. Enumerable.Range(0, 300).Select(_ => Docs.Movie(random))];

        TrainingResult training = await compressed.TrainCompressionAsync(batch);
        Assert.Equal(TrainingOutcome.Adopted, training.Outcome);
        uint id = training.Dictionary!.Id;

        for (int i = 0; i < batch.Count; i++) await compressed.UpsertAsync($"bulk::{i}", batch[i]);
        var raw = new GetOptions().Transcoder(new RawBinaryTranscoder());
        for (int i = 0; i < batch.Count; i++)
        {
            using IGetResult stored = await data.Collection.GetAsync($"bulk::{i}", raw);
            Assert.True(DocumentEnvelope.TryReadHeader(stored.ContentAs<byte[]>(), out EnvelopeHeader header));
            Assert.Equal(id, header.DictionaryId);
            using IGetResult back = await compressed.GetAsync($"bulk::{i}");
            Assert.True(JToken.DeepEquals(batch[i], back.ContentAs<JObject>()));
        }
    }

    [Fact]
    public async Task A_plain_collection_is_refused_by_name()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        var ex = await Assert.ThrowsAsync<ArgumentException>(() => data.Collection.TrainCompressionAsync(new[] { new JObject() }));
        Assert.Contains("is not compressed", ex.Message, StringComparison.Ordinal);
    }
}
