using System.Text;
using System.Text.Json;
using Compression.Couchbase;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.KeyValue;
using Xunit;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>
/// <c>docz cat</c>, <c>export</c> and <c>import</c> on Couchbase collections, through the real SDK against the loopback KV
/// server: a compressed collection exported and imported into an empty bucket reads back byte for byte; <c>cat</c> selects
/// by key and prefix with a limit and names what it cannot read.
/// </summary>
public sealed class CouchbaseExportImportTests : IAsyncLifetime
{
    private const string Ns = LoopbackBucket.Namespace;

    /// <summary>The common flags of a string document.</summary>
    private const uint StringFlags = 0x04000000;

    /// <summary>The common flags of a binary document.</summary>
    private const uint BinaryFlags = 0x03000000;

    private LoopbackBucket _source = null!;
    private LoopbackBucket _target = null!;

    public async Task InitializeAsync()
    {
        _source = await LoopbackBucket.StartAsync("docz-cb-export-");
        _target = await LoopbackBucket.StartAsync("docz-cb-import-");
    }

    public async Task DisposeAsync()
    {
        await _source.DisposeAsync();
        await _target.DisposeAsync();
    }

    [Fact]
    public async Task Export_then_import_into_an_empty_bucket_reads_back_through_the_transcoder_byte_for_byte()
    {
        Dictionary<string, byte[]> originals = _source.Arrange(400, seed: 11);
        byte[] pretty = "{\n  \"title\": \"on two lines\",\n  \"year\": 2001\n}"u8.ToArray();
        _source.Server.PutDocument("pretty::1", pretty, LoopbackBucket.JsonFlags, dataType: 1);
        originals["pretty::1"] = pretty;
        _source.Server.PutDocument("legacy::string", "just a string"u8.ToArray(), StringFlags);
        Assert.Equal(0, Run(_source, "migrate").Exit);

        string file = Path.Combine(_source.Directory, "export.jsonl");
        (int exit, string output, string error) = Run(_source, "export", "--to", file, "--batch-size", "64");
        Assert.True(exit == 0, error + output);
        using (JsonDocument report = JsonDocument.Parse(output))
        {
            Assert.Equal(402, report.RootElement.GetProperty("documents").GetInt64());
        }
        string[] lines = File.ReadAllLines(file);
        Assert.Equal(402, lines.Length);
        Assert.StartsWith("{\"id\":\"doc::00000\",\"value\":{", lines[0], StringComparison.Ordinal);
        Assert.Contains(lines, line => line.StartsWith("{\"id\":\"pretty::1\",\"json\":\"{\\n", StringComparison.Ordinal));
        Assert.Contains(lines, line => line.StartsWith("{\"id\":\"legacy::string\",\"flags\":{", StringComparison.Ordinal));

        Assert.False(_target.Server.TryGetDocument("doc::00000", out _));
        (exit, output, error) = Run(_target, "import", "--from", file, "--batch-size", "50");
        Assert.True(exit == 0, error + output);
        using (JsonDocument report = JsonDocument.Parse(output))
        {
            Assert.Equal(402, report.RootElement.GetProperty("documents").GetInt64());
            Assert.Equal("adopted", report.RootElement.GetProperty("trained")[0].GetProperty("outcome").GetString());
        }

        // Each JSON document is stored compressed with the target's dictionary and decompresses, as the compressing
        // transcoder reads it, to the very bytes of the original; the string document is stored as it was, flags included.
        await using (ICluster cluster = await Cluster.ConnectAsync(_target.Server.ConnectionString,
            new ClusterOptions().WithPasswordAuthentication(_target.Server.Username, _target.Server.Password)))
        {
            IBucket bucket = await cluster.BucketAsync(_target.Server.BucketName);
            ICouchbaseCollection plain = bucket.DefaultCollection();
            await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(await LoopbackBucket.StoreCollectionAsync(bucket)));
            CompressionNamespace handle = engine.GetNamespace(Ns);
            ICouchbaseCollection compressed = plain.WithCompression(engine);
            foreach ((string key, byte[] original) in originals)
            {
                Assert.True(_target.Server.TryGetDocument(key, out KvDocument? stored), key);
                Assert.True(DocumentEnvelope.IsEnvelope(stored.Value.Span), key);
                Assert.True(stored.Value.Length < original.Length || key == "pretty::1", key);
                _ = await handle.PreloadDictionaryAsync(stored.Value.ToArray());
                Assert.Equal(original, handle.Decompress(stored.Value.Span));
                using IGetResult read = await compressed.GetAsync(key);
                Assert.True(Newtonsoft.Json.Linq.JToken.DeepEquals(Newtonsoft.Json.Linq.JObject.Parse(Encoding.UTF8.GetString(original)),
                    read.ContentAs<Newtonsoft.Json.Linq.JObject>()), key);
            }
        }
        Assert.True(_target.Server.TryGetDocument("legacy::string", out KvDocument? legacy));
        Assert.Equal("just a string"u8.ToArray(), legacy.Value.ToArray());
        Assert.Equal(StringFlags, legacy.Flags);

        // The copy exports to the same file, byte for byte.
        string again = Path.Combine(_target.Directory, "again.jsonl");
        (exit, output, error) = Run(_target, "export", "--to", again);
        Assert.True(exit == 0, error + output);
        Assert.Equal(File.ReadAllBytes(file), File.ReadAllBytes(again));
    }

    [Fact]
    public void Cat_by_prefix_and_keys_with_a_limit_prints_decoded_documents_and_names_an_unreadable_one()
    {
        Dictionary<string, byte[]> originals = _source.Arrange(50, seed: 12);
        _source.Server.PutDocument("other::1", "{\"a\":1}"u8.ToArray(), LoopbackBucket.JsonFlags, dataType: 1);
        Assert.Equal(0, Run(_source, "migrate").Exit);
        _source.Server.PutDocument("doc::00003", "not an envelope"u8.ToArray(), BinaryFlags); // binary flags, not an envelope: unreadable

        (int exit, string output, string error) = Run(_source, "cat", "--prefix", "doc::", "--limit", "5");
        Assert.Equal(1, exit);
        string[] lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(["doc::00000", "doc::00001", "doc::00002", "doc::00004"], lines.Select(KeyOf));
        foreach (string line in lines) Assert.Equal(originals[KeyOf(line)], ValueOf(line));
        Assert.Contains("cat: doc::00003 cannot be read: ", error, StringComparison.Ordinal);

        (exit, output, error) = Run(_source, "cat", "--id", "other::1", "--id", "doc::00010");
        Assert.True(exit == 0, error + output);
        lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(["other::1", "doc::00010"], lines.Select(KeyOf));
        Assert.Equal("{\"a\":1}"u8.ToArray(), ValueOf(lines[0]));
        Assert.Equal(originals["doc::00010"], ValueOf(lines[1]));

        (exit, _, error) = Run(_source, "cat", "--filter", "{\"year\": 2000}");
        Assert.Equal(2, exit);
        Assert.Contains("--prefix", error, StringComparison.Ordinal);
    }

    private static string KeyOf(string line) => JsonDocument.Parse(line).RootElement.GetProperty("id").GetString()!;

    /// <summary>The exact bytes of a line's <c>value</c>.</summary>
    private static byte[] ValueOf(string line)
    {
        byte[] utf8 = Encoding.UTF8.GetBytes(line);
        const string marker = ",\"value\":";
        int start = line.IndexOf(marker, StringComparison.Ordinal) + marker.Length;
        return utf8[start..^1];
    }

    private static (int Exit, string Output, string Error) Run(LoopbackBucket bucket, params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run([.. args, "--config", bucket.Config, "--format", "json"], output, error);
        return (exit, output.ToString(), error.ToString());
    }
}
