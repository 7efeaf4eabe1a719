using Compression.Couchbase.Tests.Loopback;
using Compression.Testing.Couchbase;
using CouchbaseSample;
using Microsoft.Extensions.Configuration;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>samples/CouchbaseSample run against the loopback server, with its wire counters.</summary>
public sealed class SampleTests(ITestOutputHelper output)
{
    [Fact]
    public async Task The_sample_writes_the_corpus_plain_and_compressed_reads_it_back_and_reports_wire_bytes()
    {
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = new TestLog(output).Write });
        string corpus = FindUp("samples/data/movies.jsonl");
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Couchbase:ConnectionString"] = server.ConnectionString,
            ["Couchbase:Username"] = server.Username,
            ["Couchbase:Password"] = server.Password,
            ["Couchbase:EnableDnsSrvResolution"] = "false",
            ["Sample:Bucket"] = server.BucketName,
            ["Sample:Corpus"] = corpus,
            ["Sample:Limit"] = "600",
        }).Build();
        var report = new StringWriter();

        SampleReport result = await SampleRunner.RunAsync(configuration, report, () => (server.BytesSent, server.BytesReceived));

        output.WriteLine(report.ToString());
        Assert.Equal(600, result.Documents);
        Assert.Equal(0, result.Mismatches);
        Assert.True(result.DictionaryVersion >= 1, "no dictionary was adopted");
        // Trained from the documents before writing them: none went out without a dictionary.
        Assert.Equal(0, result.WithoutDictionary);
        Assert.Contains("Written without a dictionary: 0 of 600 compressed documents", report.ToString(), StringComparison.Ordinal);
        Assert.True(result.CompressedStoredBytes * 2 < result.PlainStoredBytes, $"{result.CompressedStoredBytes} compressed bytes against {result.PlainStoredBytes} plain");
        Assert.DoesNotContain("n/a", report.ToString(), StringComparison.Ordinal);
        Assert.True(server.TryGetDocument("z::599", out _) && server.TryGetDocument("plain::599", out _));
    }

    [Fact]
    public async Task Without_a_cluster_the_sample_says_where_and_why_in_one_line()
    {
        int port = Compression.Testing.UnusedPort.Take();
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Couchbase:ConnectionString"] = $"couchbase://127.0.0.1:{port}",
            ["Couchbase:Username"] = "Administrator",
            ["Couchbase:Password"] = "password",
            ["Couchbase:EnableDnsSrvResolution"] = "false",
            ["Sample:Corpus"] = FindUp("samples/data/movies.jsonl"),
        }).Build();

        var unreachable = await Assert.ThrowsAsync<ClusterUnreachableException>(() => SampleRunner.RunAsync(configuration, new StringWriter()));

        Assert.Equal($"no Couchbase cluster answered at couchbase://127.0.0.1:{port} (bucket 'default'): 127.0.0.1:{port}: Connection refused. " +
            "Start one, pass Couchbase:ConnectionString=..., or run with --loopback (an in-process test double).", unreachable.Message);
    }

    private static string FindUp(string relative)
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            string candidate = Path.Combine(dir.FullName, relative);
            if (File.Exists(candidate)) return candidate;
        }
        throw new FileNotFoundException($"{relative} not found above {AppContext.BaseDirectory}");
    }
}
