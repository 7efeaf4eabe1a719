using System.Text;
using System.Text.Json;
using Compression.Core.Tests.Dictionaries;
using Compression.Couchbase;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Xunit;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>Faults of docz on Couchbase found by review (2026-11-24, eighth session): one document failed a whole run, or
/// was compressed in a form the other commands refused; each test failed before its fix.</summary>
public sealed class CouchbaseRewriteFaultTests : IAsyncLifetime
{
    private LoopbackBucket _bucket = null!;

    private CouchbaseLoopbackServer Server => _bucket.Server;

    public async Task InitializeAsync() => _bucket = await LoopbackBucket.StartAsync("docz-faults-");

    public async Task DisposeAsync() => await _bucket.DisposeAsync();

    [Fact]
    public void A_deeply_nested_document_that_migrate_compressed_can_be_verified_and_decompressed()
    {
        _bucket.Arrange(64, seed: 2);
        var nested = new StringBuilder();
        for (int i = 0; i < 80; i++) nested.Append("{\"level\":").Append(i).Append(",\"child\":");
        nested.Append("null").Append('}', 80);
        byte[] deep = Encoding.UTF8.GetBytes(nested.ToString()); // well-formed JSON, 80 levels deep
        Server.PutDocument("tree::1", deep, LoopbackBucket.JsonFlags, dataType: 1);

        (int exit, string json, string error) = Run("migrate");
        Assert.True(exit == 0, error + json);
        Assert.True(Server.TryGetDocument("tree::1", out KvDocument? compressed) && DocumentEnvelope.IsEnvelope(compressed.Value.Span), "migrate compressed it");

        (exit, json, error) = Run("verify");
        Assert.True(exit == 0, "verify: " + error + json);
        (exit, json, error) = Run("migrate", "--decompress");
        Assert.True(exit == 0, "decompress: " + error + json);
        Assert.True(Server.TryGetDocument("tree::1", out KvDocument? back));
        Assert.Equal(deep, back.Value.ToArray());
    }

    [Fact]
    public void A_document_flagged_JSON_that_is_not_JSON_is_left_plain_and_named()
    {
        // --decompress and verify refuse a body that is not well-formed JSON, so migrate must not compress one: it would
        // stay compressed for good.
        Dictionary<string, byte[]> originals = _bucket.Arrange(64, seed: 7);
        byte[] broken = "{\"title\": \"unterminated"u8.ToArray();
        Server.PutDocument("broken::1", broken, LoopbackBucket.JsonFlags, dataType: 1);

        (int exit, string json, string error) = Run("migrate");
        Assert.Equal(1, exit);
        Assert.Contains("not well-formed JSON", json, StringComparison.Ordinal);
        Assert.True(Server.TryGetDocument("broken::1", out KvDocument? stored));
        Assert.Equal(broken, stored.Value.ToArray());
        Assert.All(originals.Keys, k => Assert.True(Server.TryGetDocument(k, out KvDocument? d) && DocumentEnvelope.IsEnvelope(d.Value.Span)));
        (exit, json, error) = Run("migrate", "--decompress");
        Assert.True(exit == 0, error + json);
    }

    [Fact]
    public async Task Decompress_of_a_document_over_20_MiB_fails_that_document_and_decompresses_the_others()
    {
        Dictionary<string, byte[]> originals = _bucket.Arrange(100, seed: 3);
        (int exit, string json, string error) = Run("migrate");
        Assert.True(exit == 0, error + json);

        // The application stores a 25 MB document through the compressed collection: its envelope is far under 20 MiB.
        byte[] bigJson = MovieList(25_000_000, seed: 4);
        await using (ICluster cluster = await Cluster.ConnectAsync(Server.ConnectionString, new ClusterOptions
                     { KvTimeout = TimeSpan.FromSeconds(30) }.WithPasswordAuthentication(Server.Username, Server.Password)))
        {
            IBucket bucket = await cluster.BucketAsync(Server.BucketName);
            ICouchbaseCollection plain = bucket.DefaultCollection();
            await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(await LoopbackBucket.StoreCollectionAsync(bucket)));
            ICouchbaseCollection compressed = plain.WithCompression(engine, new CompressedCollectionOptions { JsonTranscoder = new RawJsonTranscoder() });
            await compressed.UpsertAsync("big", bigJson);
            using IGetResult read = await compressed.GetAsync("big");
            Assert.Equal(bigJson.Length, read.ContentAs<byte[]>()!.Length);
        }
        Assert.True(Server.TryGetDocument("big", out KvDocument? stored) && stored.Value.Length < 20 * 1024 * 1024);

        // Compression switched off: every document but the big one can be decompressed.
        (exit, json, error) = Run("migrate", "--decompress", "--batch-size", "10");
        int plainAfter = originals.Count(o => Server.TryGetDocument(o.Key, out KvDocument? d) && d.Value.Span.SequenceEqual(o.Value));
        Assert.True(plainAfter == originals.Count, $"{plainAfter} of {originals.Count} documents decompressed; exit {exit}; {error} {json}");
        Assert.Equal(1, exit); // the big one is a failure, named in the report, and stays compressed
        Assert.Contains("\"big\"", json, StringComparison.Ordinal);
        Assert.True(Server.TryGetDocument("big", out KvDocument? still) && DocumentEnvelope.IsEnvelope(still.Value.Span));
    }

    [Fact]
    public void One_document_over_MaxUncompressedLength_fails_alone_and_migrate_compresses_the_others()
    {
        Dictionary<string, byte[]> originals = _bucket.Arrange(100, seed: 5);
        Server.PutDocument("catalog", MovieList(40_000, seed: 6), LoopbackBucket.JsonFlags, dataType: 1); // sorts before doc::
        string config = Path.Combine(_bucket.Directory, "limited.json");
        string text = File.ReadAllText(_bucket.Config);
        Assert.Contains("{ \"Dictionary\": {", text, StringComparison.Ordinal);
        File.WriteAllText(config, text.Replace("{ \"Dictionary\": {", "{ \"MaxUncompressedLength\": 32768, \"Dictionary\": {", StringComparison.Ordinal));

        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run(["migrate", "--batch-size", "10", "--config", config, "--format", "json"], output, error);
        int compressed = originals.Keys.Count(k => Server.TryGetDocument(k, out KvDocument? d) && DocumentEnvelope.IsEnvelope(d.Value.Span));
        Assert.True(compressed == originals.Count, $"{compressed} of {originals.Count} compressed; exit {exit}; {error} {output}");
        Assert.Equal(1, exit); // one failure, named in the report
    }

    /// <summary>A JSON document <c>{"items": [movie, ...]}</c> of at least <paramref name="bytes"/> bytes.</summary>
    private static byte[] MovieList(int bytes, int seed)
    {
        var random = new Random(seed);
        var list = new MemoryStream();
        list.Write("{\"items\":["u8);
        for (int i = 0; list.Length < bytes; i++)
        {
            if (i > 0) list.WriteByte((byte)',');
            list.Write(TestDocuments.Movie(random));
        }
        list.Write("]}"u8);
        return list.ToArray();
    }

    private (int Exit, string Output, string Error) Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run([.. args, "--config", _bucket.Config, "--format", "json"], output, error);
        return (exit, output.ToString(), error.ToString());
    }
}
