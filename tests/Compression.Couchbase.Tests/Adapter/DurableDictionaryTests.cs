using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// A dictionary outlives every document that names it, failovers included (issue #39: records were published without
/// durability, so a failover before replication could lose a dictionary while the documents naming it survived).
/// The loopback server plays the failover: every document goes back to its last durable write.
/// </summary>
public sealed class DurableDictionaryTests(ITestOutputHelper output)
{
    [Fact]
    public async Task After_a_failover_before_replication_durable_documents_still_find_their_dictionary()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        var store = new CouchbaseDictionaryStore(data.Collection);
        await using (var engine = Core.Tests.Dictionaries.TestEngine.Create(store))
        {
            ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
            var random = new Random(11);
            List<JObject> documents = [.. Enumerable.Range(0, 200).Select(_ => Docs.Movie(random))];
            Assert.Equal(TrainingOutcome.Adopted, (await compressed.TrainCompressionAsync(documents)).Outcome);
            for (int i = 0; i < documents.Count; i++)
                await compressed.UpsertAsync($"durable::{i}", documents[i], new UpsertOptions().Durability(DurabilityLevel.Majority));
        }

        int lost = data.Server.LoseUnreplicatedWrites();
        output.WriteLine($"{lost} documents went back to their last durable write or away");

        // A cold client (its own engine and cache) reads every durable document: their dictionary survived with them.
        await using var cold = Core.Tests.Dictionaries.TestEngine.Create(new CouchbaseDictionaryStore(data.Collection));
        ICouchbaseCollection reader = data.Collection.WithCompression(cold);
        var again = new Random(11);
        for (int i = 0; i < 200; i++)
        {
            using IGetResult read = await reader.GetAsync($"durable::{i}");
            Assert.True(JToken.DeepEquals(Docs.Movie(again), read.ContentAs<JObject>()));
        }
    }

    [Fact]
    public async Task The_double_loses_what_was_not_written_with_durability()
    {
        // What the test above relies on: without durability, a write does not survive the failover.
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await data.Collection.UpsertAsync("plain", new JObject { ["a"] = 1 });
        await data.Collection.UpsertAsync("durable", new JObject { ["a"] = 1 }, new UpsertOptions().Durability(DurabilityLevel.Majority));
        await data.Collection.UpsertAsync("durable", new JObject { ["a"] = 2 });

        Assert.Equal(2, data.Server.LoseUnreplicatedWrites());

        await Assert.ThrowsAsync<global::Couchbase.Core.Exceptions.KeyValue.DocumentNotFoundException>(() => data.Collection.GetAsync("plain"));
        using IGetResult durable = await data.Collection.GetAsync("durable");
        Assert.Equal(1, durable.ContentAs<JObject>()!["a"]!.Value<int>());
    }
}
