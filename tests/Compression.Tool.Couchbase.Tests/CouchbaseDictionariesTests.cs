using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Core.Tests.Dictionaries;
using Compression.Couchbase;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.KeyValue;
using Xunit;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>
/// <c>dictionaries list|export|import</c> on Couchbase, through the real SDK against the loopback KV server: every version
/// to one file and back into an empty store (records, version keys, hint and index gone), after which every document
/// reads again; a conflict and a changed file import nothing.
/// </summary>
public sealed class CouchbaseDictionariesTests : IAsyncLifetime
{
    private LoopbackBucket _bucket = null!;

    private CouchbaseLoopbackServer Server => _bucket.Server;

    public async Task InitializeAsync() => _bucket = await LoopbackBucket.StartAsync("docz-cb-dicts-");

    public async Task DisposeAsync() => await _bucket.DisposeAsync();

    [Fact]
    public async Task Export_then_import_into_an_empty_store_makes_every_document_readable_again()
    {
        Dictionary<string, byte[]> originals = TwoVersions();
        string file = Path.Combine(_bucket.Directory, "dictionaries.jsonl");

        JsonElement listed = Json(Run("dictionaries", "list"), 0);
        JsonElement ns = listed.GetProperty("stores")[0].GetProperty("namespaces")[0];
        Assert.Equal(LoopbackBucket.Namespace, ns.GetProperty("namespace").GetString());
        Assert.Equal(2, ns.GetProperty("currentVersion").GetInt32());
        Assert.Equal([1, 2], ns.GetProperty("dictionaries").EnumerateArray().Select(d => d.GetProperty("version").GetInt32()));
        uint[] ids = [.. ns.GetProperty("dictionaries").EnumerateArray().Select(d => d.GetProperty("id").GetUInt32())];

        JsonElement exported = Json(Run("dictionaries", "export", "--to", file), 0);
        Assert.Equal(2, exported.GetProperty("records").GetInt32());

        // The store is lost: every key of it gone (records, version keys, the hint, the index), the documents kept.
        WipeStore();
        Assert.DoesNotContain(Server.KeysIn("compression", "dictionaries"), k => k.StartsWith("_compression::", StringComparison.Ordinal));
        JsonElement broken = Json(Run("verify"), 1);
        Assert.Equal(originals.Count, broken.GetProperty("namespaces")[0].GetProperty("failed").GetInt64());

        JsonElement imported = Json(Run("dictionaries", "import", "--from", file), 0);
        Assert.Equal(2, imported.GetProperty("imported").GetInt32());
        Assert.Equal(2, imported.GetProperty("namespaces")[0].GetProperty("currentVersion").GetInt32());
        JsonElement relisted = Json(Run("dictionaries", "list"), 0).GetProperty("stores")[0].GetProperty("namespaces")[0];
        Assert.Equal(ids, relisted.GetProperty("dictionaries").EnumerateArray().Select(d => d.GetProperty("id").GetUInt32()));
        Assert.Equal(2, relisted.GetProperty("currentVersion").GetInt32());

        JsonElement verified = Json(Run("verify"), 0);
        Assert.Equal(originals.Count, verified.GetProperty("namespaces")[0].GetProperty("compressed").GetInt64());
        // An application client that never saw the dictionaries reads every document.
        await using (ICluster cluster = await Cluster.ConnectAsync(Server.ConnectionString, new ClusterOptions().WithPasswordAuthentication(Server.Username, Server.Password)))
        {
            IBucket bucket = await cluster.BucketAsync(Server.BucketName);
            ICouchbaseCollection plain = bucket.DefaultCollection();
            await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(await LoopbackBucket.StoreCollectionAsync(bucket)));
            ICouchbaseCollection compressed = plain.WithCompression(engine);
            foreach ((string key, byte[] original) in originals)
            {
                using IGetResult read = await compressed.GetAsync(key);
                Assert.True(Newtonsoft.Json.Linq.JToken.DeepEquals(Newtonsoft.Json.Linq.JObject.Parse(Encoding.UTF8.GetString(original)),
                    read.ContentAs<Newtonsoft.Json.Linq.JObject>()), key);
            }
        }

        JsonElement again = Json(Run("dictionaries", "import", "--from", file), 0);
        Assert.Equal(2, again.GetProperty("present").GetInt32());
        Assert.Equal(0, again.GetProperty("imported").GetInt32());
    }

    [Fact]
    public async Task Import_refuses_a_conflicting_version_and_a_changed_file_and_overwrites_nothing()
    {
        TwoVersions();
        string file = Path.Combine(_bucket.Directory, "dictionaries.jsonl");
        Json(Run("dictionaries", "export", "--to", file), 0);
        string[] lines = File.ReadAllLines(file);
        WipeStore();

        // A changed file: nothing is written.
        JsonObject second = JsonNode.Parse(lines[2])!.AsObject();
        byte[] content = Convert.FromBase64String(second["content"]!.GetValue<string>());
        content[10] ^= 0x01;
        second["content"] = Convert.ToBase64String(content);
        string changed = Path.Combine(_bucket.Directory, "changed.jsonl");
        File.WriteAllLines(changed, [lines[0], lines[1], second.ToJsonString(), lines[3]]);
        JsonElement refused = Json(Run("dictionaries", "import", "--from", changed), 1);
        Assert.Contains("line 3", refused.GetProperty("fileProblems")[0].GetString(), StringComparison.Ordinal);
        Assert.Contains("does not match its hash", refused.GetProperty("fileProblems")[0].GetString(), StringComparison.Ordinal);
        Assert.DoesNotContain(Server.KeysIn("compression", "dictionaries"), k => k.StartsWith("_compression::", StringComparison.Ordinal));

        // Version 1 taken by another dictionary: refused, version 2 not tried, the store's own version 1 left as it is.
        JsonObject first = JsonNode.Parse(lines[1])!.AsObject();
        uint fileId = first["id"]!.GetValue<uint>();
        uint otherId = fileId == 200 ? 201u : 200u;
        DictionaryRecord squatter;
        await using (ICluster cluster = await Cluster.ConnectAsync(Server.ConnectionString, new ClusterOptions().WithPasswordAuthentication(Server.Username, Server.Password)))
        {
            var store = new CouchbaseDictionaryStore(await LoopbackBucket.StoreCollectionAsync(await cluster.BucketAsync(Server.BucketName)));
            byte[] dictionary = Convert.FromBase64String(first["content"]!.GetValue<string>());
            squatter = new DictionaryRecord
            {
                Id = otherId, Namespace = LoopbackBucket.Namespace, Version = 1, Content = dictionary, ContentHash = DictionaryRecord.ComputeContentHash(dictionary),
                Created = DateTimeOffset.UnixEpoch, Level = 3, SampleCount = 1, Ratio = 1,
            };
            await store.PublishAsync(squatter);
        }
        (int exit, string json, string error) = Run("dictionaries", "import", "--from", file);
        JsonElement report = Json((exit, json, error), 1);
        JsonElement[] records = [.. report.GetProperty("namespaces")[0].GetProperty("records").EnumerateArray()];
        Assert.Equal(["conflict", "not-imported"], records.Select(r => r.GetProperty("outcome").GetString()));
        Assert.Contains($"by another dictionary (id {otherId})", records[0].GetProperty("message").GetString(), StringComparison.Ordinal);
        JsonElement listed = Json(Run("dictionaries", "list"), 0).GetProperty("stores")[0].GetProperty("namespaces")[0];
        Assert.Equal([otherId], listed.GetProperty("dictionaries").EnumerateArray().Select(d => d.GetProperty("id").GetUInt32()));
        Assert.False(Server.TryGetDocument($"_compression::dict::{fileId}", out _));
    }

    /// <summary>
    /// Documents compressed with two dictionary versions: movies with the first (trained on them), then sensor readings
    /// added and a second trained on both, adopted over the first (which knows nothing of sensors), and the readings
    /// compressed with it.
    /// </summary>
    private Dictionary<string, byte[]> TwoVersions()
    {
        Dictionary<string, byte[]> originals = _bucket.Arrange(400, seed: 5);
        WriteConfig(dictionarySize: 8192);
        Json(Run("migrate"), 0);
        var random = new Random(6);
        for (int i = 0; i < 400; i++)
        {
            byte[] sensor = TestDocuments.Sensor(random);
            originals[$"more::{i:D5}"] = sensor;
            Server.PutDocument($"more::{i:D5}", sensor, LoopbackBucket.JsonFlags, dataType: 1);
        }
        JsonElement trained = Json(Run("train"), 0);
        Assert.True(trained.GetProperty("namespaces")[0].GetProperty("dictionary").GetProperty("version").GetInt32() == 2, trained.ToString());
        Json(Run("migrate"), 0);
        return originals;
    }

    private void WriteConfig(int dictionarySize) => File.WriteAllText(_bucket.Config, $$"""
        {
          "Couchbase": { "ConnectionString": "{{Server.ConnectionString}}", "Username": "{{Server.Username}}", "Password": "{{Server.Password}}" },
          "Compression": {
            "Defaults": { "Codec": "Zstd" },
            "Namespaces": {
              "{{LoopbackBucket.Namespace}}": { "Dictionary": { "DictionarySize": {{dictionarySize}}, "MinSampleCount": 32, "MaxSampleCount": 2000, "AdoptionThreshold": 1.0 } }
            }
          }
        }
        """);

    /// <summary>Removes every key of the dictionary store (and the checkpoints beside it), keeping the documents as they are.</summary>
    private void WipeStore()
    {
        List<KvDocument> documents = [.. Server.KeysIn("_default", "_default").Where(k => !k.StartsWith("_compression::", StringComparison.Ordinal))
            .Select(k => Server.TryGetDocument(k, out KvDocument? d) ? d : throw new InvalidOperationException(k))];
        Server.ClearDocuments();
        foreach (KvDocument d in documents) Server.PutDocument(d.Key, d.Value, d.Flags, d.DataType, d.Expiry);
    }

    private static JsonElement Json((int Exit, string Output, string Error) run, int exit)
    {
        Assert.True(run.Exit == exit, $"exit {run.Exit}: {run.Error}{run.Output}");
        return JsonDocument.Parse(run.Output).RootElement.Clone();
    }

    private (int Exit, string Output, string Error) Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run([.. args, "--config", _bucket.Config, "--format", "json"], output, error);
        return (exit, output.ToString(), error.ToString());
    }
}
