using Compression.Dictionaries;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>Several applications with cold caches writing one collection at once, each with its own connection and engine.</summary>
public sealed class PublicationRaceTests(ITestOutputHelper output) : IAsyncLifetime
{
    private CouchbaseTarget _target = null!;

    public async Task InitializeAsync() => _target = await CouchbaseTarget.StartAsync(output);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    [Fact]
    public async Task Three_cold_clients_writing_at_once_publish_one_version_per_race_without_gaps_and_a_fourth_reads_everything()
    {
        Client[] clients = await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => _target.ConnectAsync()));
        var written = new Dictionary<string, JObject>();
        var outcomes = new List<TrainingOutcome[]>();

        // Two rounds of documents of different shapes, so that the second round's dictionaries beat the first's.
        foreach ((string shape, Func<Random, JObject> make) in new (string, Func<Random, JObject>)[] { ("movie", Docs.Movie), ("sensor", Docs.Sensor) })
        {
            Dictionary<string, JObject>[] batches = [.. clients.Select((_, n) =>
            {
                var random = new Random(shape.Length * 10 + n);
                return Enumerable.Range(0, 250).ToDictionary(i => _target.Key($"{shape}::{n}::{i}"), _ => make(random));
            })];
            await Task.WhenAll(clients.Select((client, n) => Task.Run(async () =>
            {
                foreach ((string key, JObject doc) in batches[n]) await client.Compressed.UpsertAsync(key, doc);
            })));
            foreach (var batch in batches) foreach (var (k, v) in batch) written[k] = v;
            await Task.WhenAll(clients.Select(c => c.Engine.WhenIdleAsync()));

            // Every client trains at once: they all race for the same next version.
            TrainingResult[] results = await Task.WhenAll(clients.Select(c => c.Namespace.TrainAsync()));
            outcomes.Add([.. results.Select(r => r.Outcome)]);
            output.WriteLine($"{shape}: {string.Join(", ", results.Select(r => $"{r.Outcome} v{r.Dictionary?.Version}"))}");
            Assert.True(results.Count(r => r.Outcome == TrainingOutcome.Adopted) <= 1, "two clients won the same race");
            await Task.WhenAll(clients.Select(c => c.Engine.WhenIdleAsync()));
        }

        // The store: versions 1..n, one id each, nothing after n.
        DictionaryRecord[] versions = await clients[0].Store.ListAsync(CouchbaseCollectionCompressionExtensions.NamespaceName(clients[0].Plain)).ToArrayAsync();
        output.WriteLine($"versions: {string.Join(", ", versions.Select(v => $"v{v.Version}=#{v.Id}"))}");
        Assert.NotEmpty(versions);
        Assert.Equal(Enumerable.Range(1, versions.Length), versions.Select(v => v.Version));
        Assert.Equal(versions.Length, versions.Select(v => v.Id).Distinct().Count());
        foreach (Client client in clients)
        {
            await client.Namespace.RefreshAsync();
            Assert.Equal(versions[^1].Id, client.Namespace.CurrentDictionary?.Id);
        }

        // A fourth client, cold, reads every document, byte for byte.
        Client fourth = await _target.ConnectAsync();
        foreach ((string key, JObject doc) in written)
        {
            using IGetResult read = await fourth.Compressed.GetAsync(key);
            Docs.Equal(doc, read.ContentAs<JObject>());
            var raw = await CouchbaseTarget.ReadRawAsync(fourth.Plain, key);
            Assert.Equal(Docs.Serialized(doc), await fourth.Namespace.DecompressAsync(raw.Data));
        }
        output.WriteLine($"{written.Count} documents read by a cold client; {fourth.Engine.CachedDictionaryCount} dictionaries loaded on demand");
        Assert.True(fourth.Engine.CachedDictionaryCount >= 1);
    }
}
