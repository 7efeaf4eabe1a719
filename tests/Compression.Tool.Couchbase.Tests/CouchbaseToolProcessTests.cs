using System.Reflection;
using System.Text;
using System.Text.Json;
using Compression.Core.Tests.Dictionaries;
using Compression.Couchbase;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Compression.Tool.Tests;
using Compression.Tool.Tests.Live;
using Couchbase;
using Couchbase.KeyValue;
using Xunit;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>
/// docz with its Couchbase plugin as users run it: the package <c>Compression.Tool.WithCouchbase</c> installed from a
/// folder feed, and the built tool killed mid-migration; each command a process of its own, against the loopback KV
/// server of this test process.
/// </summary>
public sealed class CouchbaseToolProcessTests : IAsyncLifetime
{
    private const string Ns = LoopbackBucket.Namespace;
    private const string Project = "src/Compression.Tool.Couchbase.Package/Compression.Tool.Couchbase.Package.csproj";
    private const string EntryPoint = "Compression.Tool.Couchbase.Host.dll";
    private static readonly string Configuration = typeof(CouchbaseToolProcessTests).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()!.Configuration;

    private LoopbackBucket _bucket = null!;

    private CouchbaseLoopbackServer Server => _bucket.Server;

    private string ConfigFile => _bucket.Config;

    private string WorkDirectory => _bucket.Directory;

    public async Task InitializeAsync() => _bucket = await LoopbackBucket.StartAsync("docz-cb-process-");

    public async Task DisposeAsync() => await _bucket.DisposeAsync();

    [Fact]
    public async Task Package_InstalledFromAFolderFeed_RunsTheLiveCommandsOnCouchbase()
    {
        string docz = await ToolProcess.PackAndInstallAsync(Project, "Compression.Tool.WithCouchbase", "docz", EntryPoint, Configuration, WorkDirectory);
        Dictionary<string, byte[]> originals = Arrange(300, seed: 5);

        var help = await Docz(docz, "--help");
        Assert.True(help.Exit == 0, help.Describe());
        Assert.Contains("docz [command] [options]", help.Output);
        Assert.Contains("migrate", help.Output);

        // The plugin is found beside the installed docz: a couchbase:// connection string is not bad usage.
        var migrate = await Docz(docz, "migrate", "--config", ConfigFile, "--format", "json");
        Assert.True(migrate.Exit == 0, migrate.Describe());
        using (JsonDocument report = JsonDocument.Parse(migrate.Output))
        {
            Assert.Equal(300, report.RootElement.GetProperty("namespaces")[0].GetProperty("written").GetInt64());
        }
        Assert.All(originals.Keys, key => Assert.True(Server.TryGetDocument(key, out KvDocument? stored) && DocumentEnvelope.IsEnvelope(stored.Value.Span), key));

        var verify = await Docz(docz, "verify", "--config", ConfigFile, "--format", "json");
        Assert.True(verify.Exit == 0, verify.Describe());
        using (JsonDocument report = JsonDocument.Parse(verify.Output))
        {
            JsonElement ns = report.RootElement.GetProperty("namespaces")[0];
            Assert.Equal(300, ns.GetProperty("documents").GetInt64());
            Assert.Equal(300, ns.GetProperty("compressed").GetInt64());
        }

        var stats = await Docz(docz, "stats", "--config", ConfigFile, "--format", "json");
        Assert.True(stats.Exit == 0, stats.Describe());
        using (JsonDocument report = JsonDocument.Parse(stats.Output))
        {
            JsonElement ns = report.RootElement.GetProperty("namespaces")[0];
            Assert.Equal(originals.Values.Sum(v => (long)v.Length), ns.GetProperty("rawBytes").GetInt64());
            Assert.Equal(originals.Keys.Sum(k => Server.TryGetDocument(k, out KvDocument? d) ? (long)d.Value.Length : 0), ns.GetProperty("storedBytes").GetInt64());
        }
    }

    [Fact]
    public async Task Migrate_InAChildProcess_KilledAtTwentyOrMoreRandomPoints_CompressesEveryDocumentExactlyOnce()
    {
        const int Documents = 4000, Kills = 20;
        Dictionary<string, byte[]> originals = Arrange(Documents, seed: 6);
        string tool = Path.Combine(ToolProcess.RepositoryRoot(), "src", "Compression.Tool.Couchbase.Package", "bin", Configuration, "net10.0", EntryPoint);
        Assert.True(File.Exists(tool), $"{tool} is not built");
        var train = await ToolProcess.RunAsync(ToolProcess.Dotnet(), WorkDirectory, WorkDirectory, [tool, "train", "--config", ConfigFile, "--format", "json"]);
        Assert.True(train.Exit == 0, train.Describe());

        // Each run is killed once the server has received n more commands of one kind: every fifth run during the key
        // scan (n from 1 to 40 scan commands; a run scans every key before it writes), the others while documents are
        // read, replaced and checkpointed (n from 1 to 250 gets, replaces and checkpoint writes: batches of 50).
        // Every other kill first holds the server's replies, so the commands in flight are carried out by the server and
        // never acknowledged to the tool.
        var random = new Random(23);
        var killedAt = new List<string>();
        (int Exit, string Output, string Error)? finished = null;
        for (int run = 0; finished is null; run++)
        {
            Assert.True(run < 200, $"migrate did not finish in 200 runs ({killedAt.Count} killed)");
            bool kill = killedAt.Count < Kills;
            bool duringScan = killedAt.Count % 5 == 4;
            Func<CouchbaseLoopbackServer, long> counted = duringScan ? ScanCommands : WriteCommands;
            long before = counted(Server);
            int after = duringScan ? random.Next(1, 41) : random.Next(1, 251);
            bool holdReplies = killedAt.Count % 2 == 1;
            using var child = ChildDocz.StartTool(tool, "migrate", "--config", ConfigFile, "--format", "json", "--batch-size", "50");
            using var stop = new CancellationTokenSource(ToolProcess.Timeout);
            Task<(int Exit, string Output, string Error)> exited = child.WaitAsync(stop.Token);
            Task reached = kill ? Server.WaitUntilAsync(s => counted(s) - before >= after, stop.Token) : Task.Delay(Timeout.Infinite, stop.Token);
            if (await Task.WhenAny(exited, reached) == reached && !exited.IsCompleted)
            {
                if (holdReplies) Server.StallReplies = true;
                child.Kill();
                await exited;
                Server.StallReplies = false;
                killedAt.Add($"{(duringScan ? "scan" : "write")} {counted(Server) - before}{(holdReplies ? ", replies held" : "")}");
                continue;
            }
            await stop.CancelAsync();
            finished = await exited;
        }
        var (exit, output, error) = finished.Value;
        Assert.True(exit == 0, $"migrate exited {exit}\nstdout:\n{output}\nstderr:\n{error}");
        using (JsonDocument report = JsonDocument.Parse(output))
        {
            Assert.True(report.RootElement.GetProperty("namespaces")[0].GetProperty("resumed").GetBoolean(), $"killed at: {string.Join("; ", killedAt)}\n{output}");
        }
        Assert.True(killedAt.Count >= Kills, $"killed {killedAt.Count} times");
        Assert.Contains(killedAt, k => k.StartsWith("scan", StringComparison.Ordinal));

        // Every document compressed exactly once: one acknowledged-or-not REPLACE that the server carried out each.
        Assert.Equal(Documents, Server.Commands.Count(c => c.Opcode == KvProtocol.Opcodes.Replace && c.Status == 0));
        Assert.All(originals.Keys, key => Assert.True(Server.TryGetDocument(key, out KvDocument? stored) && DocumentEnvelope.IsEnvelope(stored.Value.Span), key));

        // A cold application client reads them as they were written.
        await using (ICluster cluster = await Cluster.ConnectAsync(Server.ConnectionString, new ClusterOptions().WithPasswordAuthentication(Server.Username, Server.Password)))
        {
            IBucket bucket = await cluster.BucketAsync(Server.BucketName);
            ICouchbaseCollection plain = bucket.DefaultCollection();
            await using var engine = new CompressionEngine(new CouchbaseDictionaryStore(await LoopbackBucket.StoreCollectionAsync(bucket)));
            ICouchbaseCollection compressed = plain.WithCompression(engine);
            foreach ((string key, byte[] original) in originals.Where((_, i) => i % 20 == 0))
            {
                using IGetResult read = await compressed.GetAsync(key);
                Assert.True(Newtonsoft.Json.Linq.JToken.DeepEquals(Newtonsoft.Json.Linq.JObject.Parse(Encoding.UTF8.GetString(original)),
                    read.ContentAs<Newtonsoft.Json.Linq.JObject>()), key);
            }
        }

        var verify = await ToolProcess.RunAsync(ToolProcess.Dotnet(), WorkDirectory, WorkDirectory, [tool, "verify", "--config", ConfigFile, "--format", "json"]);
        Assert.True(verify.Exit == 0, verify.Describe());
        var decompress = await ToolProcess.RunAsync(ToolProcess.Dotnet(), WorkDirectory, WorkDirectory, [tool, "migrate", "--decompress", "--config", ConfigFile, "--format", "json"]);
        Assert.True(decompress.Exit == 0, decompress.Describe());
        Assert.All(originals, pair => Assert.True(Server.TryGetDocument(pair.Key, out KvDocument? stored) && stored.Value.Span.SequenceEqual(pair.Value), pair.Key));
    }

    /// <summary>The key scan's commands the server has received.</summary>
    private static long ScanCommands(CouchbaseLoopbackServer server) =>
        server.CommandCount(KvProtocol.Opcodes.RangeScanCreate) + server.CommandCount(KvProtocol.Opcodes.RangeScanContinue);

    /// <summary>The reads and writes of documents and checkpoints the server has received.</summary>
    private static long WriteCommands(CouchbaseLoopbackServer server) =>
        server.CommandCount(KvProtocol.Opcodes.Get) + server.CommandCount(KvProtocol.Opcodes.Set) + server.CommandCount(KvProtocol.Opcodes.Add)
        + server.CommandCount(KvProtocol.Opcodes.Replace);

    private Task<ToolProcess.Outcome> Docz(string docz, params string[] args) => ToolProcess.RunAsync(docz, WorkDirectory, WorkDirectory, args);

    private Dictionary<string, byte[]> Arrange(int count, int seed) => _bucket.Arrange(count, seed);
}
