using System.Text;
using System.Text.Json;
using Compression.Core.Tests.Dictionaries;
using Compression.Couchbase;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Compression.Tool.Live;
using Couchbase;
using Couchbase.KeyValue;
using Xunit;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>docz's live commands on a Couchbase collection, through the real SDK against the loopback KV server.</summary>
public sealed class CouchbaseLiveTests : IAsyncLifetime
{
    private const string Ns = LoopbackBucket.Namespace;

    private LoopbackBucket _bucket = null!;

    private CouchbaseLoopbackServer Server => _bucket.Server;

    private string ConfigFile => _bucket.Config;

    private string WorkDirectory => _bucket.Directory;

    public async Task InitializeAsync() => _bucket = await LoopbackBucket.StartAsync("docz-cb-");

    public async Task DisposeAsync() => await _bucket.DisposeAsync();

    [Fact]
    public async Task Migrate_verify_stats_and_decompress_round_trip_every_document_byte_for_byte()
    {
        Dictionary<string, byte[]> originals = Arrange(600, seed: 1);
        Server.PutDocument("legacy::string", "just a string"u8.ToArray(), 0x04000000); // string flags: never touched

        (int exit, string json, string error) = Run("migrate", "--batch-size", "64");
        Assert.True(exit == 0, error + json);
        using (JsonDocument report = JsonDocument.Parse(json))
        {
            JsonElement trained = report.RootElement.GetProperty("trained")[0];
            Assert.Equal("adopted", trained.GetProperty("outcome").GetString());
            JsonElement ns = report.RootElement.GetProperty("namespaces")[0];
            Assert.Equal(600, ns.GetProperty("written").GetInt64());
            Assert.Equal(1, ns.GetProperty("unchanged").GetInt64());
            Assert.Equal(0, ns.GetProperty("failed").GetInt64());
        }
        foreach ((string key, byte[] original) in originals)
        {
            Assert.True(Server.TryGetDocument(key, out KvDocument? stored));
            Assert.True(DocumentEnvelope.IsEnvelope(stored.Value.Span), key);
            Assert.True(stored.Value.Length < original.Length, key);
        }
        Assert.True(Server.TryGetDocument("legacy::string", out KvDocument? untouched) && untouched.Flags == 0x04000000);

        // An application client that never saw the dictionary reads every document through the compressed collection.
        await using (ICluster cluster = await Cluster.ConnectAsync(Server.ConnectionString, new ClusterOptions().WithPasswordAuthentication(Server.Username, Server.Password)))
        {
            IBucket bucket = await cluster.BucketAsync(Server.BucketName);
            ICouchbaseCollection plain = bucket.DefaultCollection();
            await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(await LoopbackBucket.StoreCollectionAsync(bucket)));
            ICouchbaseCollection compressed = plain.WithCompression(engine);
            foreach ((string key, byte[] original) in originals.Take(100))
            {
                using IGetResult read = await compressed.GetAsync(key);
                Assert.True(Newtonsoft.Json.Linq.JToken.DeepEquals(Newtonsoft.Json.Linq.JObject.Parse(Encoding.UTF8.GetString(original)),
                    read.ContentAs<Newtonsoft.Json.Linq.JObject>()), key);
            }
        }

        // Running it again changes nothing: everything is already compressed.
        (exit, json, error) = Run("migrate");
        Assert.True(exit == 0, error + json);
        using (JsonDocument again = JsonDocument.Parse(json))
        {
            JsonElement ns = again.RootElement.GetProperty("namespaces")[0];
            Assert.Equal(0, ns.GetProperty("written").GetInt64());
            Assert.Equal(600, ns.GetProperty("skipped").GetInt64());
        }

        (exit, json, error) = Run("verify");
        Assert.True(exit == 0, error + json);
        using (JsonDocument verify = JsonDocument.Parse(json))
        {
            JsonElement ns = verify.RootElement.GetProperty("namespaces")[0];
            Assert.Equal(601, ns.GetProperty("documents").GetInt64());
            Assert.Equal(600, ns.GetProperty("compressed").GetInt64());
            Assert.Equal(1, ns.GetProperty("plain").GetInt64());
        }

        (exit, json, error) = Run("stats");
        Assert.True(exit == 0, error + json);
        using (JsonDocument stats = JsonDocument.Parse(json))
        {
            JsonElement ns = stats.RootElement.GetProperty("namespaces")[0];
            long storedBytes = originals.Keys.Sum(k => Server.TryGetDocument(k, out KvDocument? d) ? d.Value.Length : 0) + "just a string"u8.Length;
            Assert.Equal(storedBytes, ns.GetProperty("storedBytes").GetInt64());
            Assert.Equal(originals.Values.Sum(v => (long)v.Length) + "just a string"u8.Length, ns.GetProperty("rawBytes").GetInt64());
            Assert.Equal(1, ns.GetProperty("currentVersion").GetInt32());
            JsonElement use = ns.GetProperty("dictionaries")[0];
            Assert.Equal(1, use.GetProperty("version").GetInt32());
            Assert.Equal(600, use.GetProperty("documents").GetInt64());
        }

        (exit, json, error) = Run("migrate", "--decompress");
        Assert.True(exit == 0, error + json);
        foreach ((string key, byte[] original) in originals)
        {
            Assert.True(Server.TryGetDocument(key, out KvDocument? stored));
            Assert.Equal(original, stored.Value.ToArray());
            Assert.Equal(LoopbackBucket.JsonFlags, stored.Flags);
        }
    }

    [Fact]
    public void The_forms_whole_body_sub_document_writes_leave_are_read_as_the_compressed_collection_reads_them()
    {
        // JSON text under binary flags (a transaction's ReplaceBodyWithXattr on a server that keeps the old flags), and an
        // envelope under JSON flags (a SetDoc on a legacy document, same server): verify reads both, migrate compresses
        // the first, decompress makes both plain JSON again.
        Dictionary<string, byte[]> originals = Arrange(200, seed: 5);
        Assert.Equal(0, Run("migrate").Exit);
        Assert.True(Server.TryGetDocument("doc::00001", out KvDocument? compressed));
        Server.PutDocument("txn::committed", originals["doc::00000"], compressed.Flags); // binary flags
        Server.PutDocument("setdoc::legacy", compressed.Value, LoopbackBucket.JsonFlags);

        (int exit, string json, string error) = Run("verify");
        Assert.True(exit == 0, error + json);
        using (JsonDocument verify = JsonDocument.Parse(json))
        {
            JsonElement ns = verify.RootElement.GetProperty("namespaces")[0];
            Assert.Equal(201, ns.GetProperty("compressed").GetInt64());
            Assert.Equal(1, ns.GetProperty("plain").GetInt64());
        }
        Assert.Equal(0, Run("migrate").Exit);
        Assert.True(Server.TryGetDocument("txn::committed", out KvDocument? migrated) && DocumentEnvelope.IsEnvelope(migrated.Value.Span));
        Assert.Equal(compressed.Flags, migrated.Flags);

        (exit, json, error) = Run("migrate", "--decompress");
        Assert.True(exit == 0, error + json);
        Assert.True(Server.TryGetDocument("txn::committed", out KvDocument? committed) && committed.Value.Span.SequenceEqual(originals["doc::00000"]));
        Assert.True(Server.TryGetDocument("setdoc::legacy", out KvDocument? legacy) && legacy.Value.Span.SequenceEqual(originals["doc::00001"]));
        Assert.Equal(LoopbackBucket.JsonFlags, committed.Flags);
        Assert.Equal(LoopbackBucket.JsonFlags, legacy.Flags);
    }

    [Fact]
    public async Task Migrate_interrupted_at_random_points_resumes_from_its_checkpoint_and_compresses_each_document_once()
    {
        Dictionary<string, byte[]> originals = Arrange(800, seed: 2);
        Assert.Equal(0, Run("train").Exit);
        var random = new Random(17);
        int interruptions = 0;
        var settings = new LiveSettings { Connection = null, ConfigPath = ConfigFile, Namespaces = [Ns], Json = true, BatchSize = 40, MaxFailures = 10 };
        for (int run = 0; run < 40; run++)
        {
            long replacesBefore = Server.CommandCount(KvProtocol.Opcodes.Replace);
            int stopAfter = random.Next(1, 120);
            using var stop = new CancellationTokenSource();
            Task watcher = Server.WaitUntilAsync(s => s.CommandCount(KvProtocol.Opcodes.Replace) - replacesBefore >= stopAfter, stop.Token).ContinueWith(_ => stop.Cancel(), TaskScheduler.Default);
            var output = new StringWriter();
            var console = new LiveOutput(output, new StringWriter(), settings);
            try
            {
                int exit = await new CouchbaseBackend().RewriteAsync("migrate", settings, new RewriteOptions { Mode = RewriteMode.Compress }, train: false, null, console, stop.Token);
                Assert.Equal(0, exit);
                using JsonDocument report = JsonDocument.Parse(output.ToString());
                JsonElement ns = report.RootElement.GetProperty("namespaces")[0];
                Assert.Equal(800, ns.GetProperty("written").GetInt64() + ns.GetProperty("skipped").GetInt64());
                Assert.Equal(interruptions > 0, ns.GetProperty("resumed").GetBoolean());
                break;
            }
            catch (OperationCanceledException)
            {
                interruptions++;
            }
            finally
            {
                await stop.CancelAsync();
                await watcher;
            }
        }
        Assert.True(interruptions >= 5, $"only {interruptions} interruptions");

        // Every document compressed exactly once (one successful REPLACE each), and each reads back as it was.
        Assert.Equal(800, Replaces());
        foreach (string key in originals.Keys)
        {
            Assert.True(Server.TryGetDocument(key, out KvDocument? stored) && DocumentEnvelope.IsEnvelope(stored.Value.Span), key);
        }
        Assert.Equal(0, Run("verify").Exit);
        Assert.Equal(0, Run("migrate", "--decompress").Exit);
        foreach ((string key, byte[] original) in originals)
        {
            Assert.True(Server.TryGetDocument(key, out KvDocument? stored));
            Assert.Equal(original, stored.Value.ToArray());
        }
    }

    [Fact]
    public async Task Decompress_after_an_interrupted_decompress_and_a_full_migrate_decompresses_every_document()
    {
        // As for MongoDB (found by review there): the second --decompress must not resume after the first one's
        // checkpoint, since the migrate between them compressed the documents before it again.
        Dictionary<string, byte[]> originals = Arrange(200, seed: 5);
        Assert.Equal(0, Run("migrate", "--batch-size", "40").Exit);
        var settings = new LiveSettings { Connection = null, ConfigPath = ConfigFile, Namespaces = [Ns], Json = true, BatchSize = 40, MaxFailures = 10 };
        long replacesBefore = Server.CommandCount(KvProtocol.Opcodes.Replace);
        using (var stop = new CancellationTokenSource())
        {
            Task watcher = Server.WaitUntilAsync(s => s.CommandCount(KvProtocol.Opcodes.Replace) - replacesBefore >= 60, stop.Token).ContinueWith(_ => stop.Cancel(), TaskScheduler.Default);
            var console = new LiveOutput(new StringWriter(), new StringWriter(), settings);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() =>
                new CouchbaseBackend().RewriteAsync("migrate", settings, new RewriteOptions { Mode = RewriteMode.Decompress }, train: false, null, console, stop.Token));
            await stop.CancelAsync();
            await watcher;
        }
        Assert.Equal(0, Run("migrate", "--batch-size", "40").Exit); // everything compressed again
        Assert.Equal(0, Run("migrate", "--decompress", "--batch-size", "40").Exit);
        foreach ((string key, byte[] original) in originals)
        {
            Assert.True(Server.TryGetDocument(key, out KvDocument? stored));
            Assert.True(original.AsSpan().SequenceEqual(stored.Value.Span), $"{key} was left compressed");
        }
    }

    [Fact]
    public async Task Verify_names_a_corrupted_document_a_missing_dictionary_and_a_foreign_binary_body()
    {
        Arrange(300, seed: 3);
        Assert.Equal(0, Run("migrate").Exit);
        Assert.True(Server.TryGetDocument("doc::00010", out KvDocument? victim));
        byte[] corrupted = victim.Value.ToArray();
        corrupted[^3] ^= 0x5a;
        Server.PutDocument("doc::00010", corrupted, victim.Flags);

        // A document compressed with a dictionary the store does not have.
        var foreignStore = new InMemoryDictionaryStore();
        await using (var other = TestEngine.Create(foreignStore))
        {
            CompressionNamespace handle = other.GetNamespace(Ns);
            var random = new Random(9);
            for (int i = 0; i < 300; i++) handle.State.Reservoir.Offer(TestDocuments.Movie(random));
            // The engine may already be training in the background when asked (the run then says AlreadyRunning, seen
            // once in about ten runs): wait for it either way, then require a dictionary.
            await other.WhenIdleAsync();
            TrainingOutcome outcome = (await handle.TrainAsync()).Outcome;
            await other.WhenIdleAsync();
            Assert.True(handle.CurrentDictionary is not null, $"no dictionary adopted (training said {outcome})");
            Server.PutDocument("doc::00020", handle.Compress(TestDocuments.Movie(random)), victim.Flags);
            Server.PutDocument("doc::00030", "not an envelope"u8.ToArray(), victim.Flags); // binary flags
            (int exit, string json, string error) = Run("verify");
            Assert.Equal(1, exit);
            using JsonDocument report = JsonDocument.Parse(json);
            JsonElement ns = report.RootElement.GetProperty("namespaces")[0];
            Assert.True(ns.GetProperty("failed").GetInt64() == 3, json);
            var failures = ns.GetProperty("failures").EnumerateArray().ToDictionary(f => f.GetProperty("id").GetString()!, f => f.GetProperty("error").GetString()!);
            Assert.Equal(["doc::00010", "doc::00020", "doc::00030"], failures.Keys.Order(StringComparer.Ordinal));
            Assert.Contains(handle.CurrentDictionary!.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), failures["doc::00020"], StringComparison.Ordinal);
            Assert.Contains("neither a compressed envelope nor JSON text", failures["doc::00030"], StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Recompress_at_level_19_makes_the_collection_smaller_and_older_than_is_refused()
    {
        Arrange(400, seed: 4);
        Assert.Equal(0, Run("migrate", "--no-train").Exit);
        Assert.Equal(0, Run("train").Exit);
        long before = StoredBytes();
        (int exit, string json, string error) = Run("recompress", "--level", "19");
        Assert.True(exit == 0, error + json);
        Assert.True(StoredBytes() < before * 0.8, $"{StoredBytes()} of {before}");
        Assert.Equal(0, Run("verify").Exit);

        (exit, _, error) = Run("recompress", "--older-than", "2026-01-01");
        Assert.Equal(2, exit);
        Assert.Contains("Couchbase keys carry no time", error, StringComparison.Ordinal);
    }

    [Fact]
    public void Bad_namespaces_and_an_unreachable_server_are_reported_without_a_stack_trace()
    {
        var error = new StringWriter();
        Assert.Equal(2, Program.Run(["verify", "--config", ConfigFile, "--namespace", "default.only-two"], new StringWriter(), error));
        Assert.Contains("expected bucket.scope.collection", error.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", error.ToString(), StringComparison.Ordinal);
    }

    private long Replaces() => Server.Commands.Count(c => c.Opcode == KvProtocol.Opcodes.Replace && c.Status == 0);

    private long StoredBytes() => Enumerable.Range(0, 400).Sum(i => Server.TryGetDocument($"doc::{i:D5}", out KvDocument? d) ? d.Value.Length : 0);

    [Fact]
    public void Migrate_and_decompress_keep_each_documents_expiry()
    {
        Dictionary<string, byte[]> originals = Arrange(300, seed: 5);
        var expiries = new Dictionary<string, uint>();
        foreach (string key in originals.Keys.Where((_, i) => i % 3 == 0))
        {
            expiries[key] = 2_000_000_000u + (uint)expiries.Count; // an absolute expiry, as the server stores it
            Server.PutDocument(key, originals[key], LoopbackBucket.JsonFlags, dataType: 1, expiry: expiries[key]);
        }

        foreach (string command in new[] { "migrate", "migrate --decompress" })
        {
            (int exit, string json, string error) = Run(command.Split(' '));
            Assert.True(exit == 0, error + json);
            Assert.Equal("", error);
            foreach ((string key, byte[] original) in originals)
            {
                Assert.True(Server.TryGetDocument(key, out KvDocument? stored));
                Assert.Equal(command == "migrate", DocumentEnvelope.IsEnvelope(stored.Value.Span));
                Assert.Equal(expiries.GetValueOrDefault(key), stored.Expiry);
            }
        }
    }

    [Fact]
    public async Task Migrate_on_a_server_that_cannot_keep_expiry_is_refused_and_replaces_nothing()
    {
        await using LoopbackBucket old = await LoopbackBucket.StartAsync("docz-cb-old-", preserveTtl: false);
        Dictionary<string, byte[]> originals = old.Arrange(100, seed: 6);
        old.Server.PutDocument("doc::00000", originals["doc::00000"], LoopbackBucket.JsonFlags, dataType: 1, expiry: 2_000_000_000u);
        int before = old.Server.DocumentCount;

        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run(["migrate", "--config", old.Config, "--format", "json"], output, error);

        Assert.Equal(2, exit);
        Assert.Contains("PRESERVE_TTL", error.ToString(), StringComparison.Ordinal);
        Assert.Contains("no document was replaced", error.ToString(), StringComparison.Ordinal);
        // Refused before anything is written: no dictionary, checkpoint or document (found by review: the first version
        // checked at the first replacement, after training had published a dictionary).
        Assert.Empty(old.Server.Commands.Where(c => c.Name is "SET" or "ADD" or "REPLACE" or "DELETE").Select(c => $"{c.Name} status 0x{c.Status:x2}"));
        Assert.Equal(before, old.Server.DocumentCount);
        foreach ((string key, byte[] original) in originals)
        {
            Assert.True(old.Server.TryGetDocument(key, out KvDocument? stored));
            Assert.Equal(original, stored.Value.ToArray());
        }
        Assert.True(old.Server.TryGetDocument("doc::00000", out KvDocument? withExpiry));
        Assert.Equal(2_000_000_000u, withExpiry.Expiry);
    }

    private Dictionary<string, byte[]> Arrange(int count, int seed) => _bucket.Arrange(count, seed);

    [Theory]
    [InlineData("verify")]
    [InlineData("train")]
    public async Task A_store_location_whose_dictionaries_would_expire_stops_every_command_with_the_reason(string command)
    {
        await using LoopbackBucket expiring = await LoopbackBucket.StartAsync("docz-cb-ttl-", bucketMaxTtl: TimeSpan.FromDays(30));
        expiring.Arrange(50, seed: 9);
        var output = new StringWriter();
        var error = new StringWriter();

        int exit = Program.Run([command, "--config", expiring.Config, "--format", "json"], output, error);

        Assert.Equal(1, exit);
        Assert.StartsWith($"{command}: The dictionary store's collection 'default.compression.dictionaries' cannot keep dictionaries: " +
            "its documents expire 2592000 s after they are written (bucket 'default''s maxTTL)", error.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(expiring.Server.KeysIn("compression", "dictionaries"), key => key.Contains("dict::", StringComparison.Ordinal));
    }

    private (int Exit, string Output, string Error) Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run([.. args, "--config", ConfigFile, "--format", "json"], output, error);
        return (exit, output.ToString(), error.ToString());
    }
}
