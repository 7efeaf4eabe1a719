using Compression.Core.Tests.Dictionaries;
using Compression.Testing.Couchbase;

namespace Compression.Tool.Couchbase.Tests;

/// <summary>
/// What docz's Couchbase tests run against: a loopback KV server (every command logged), a temporary directory, and
/// an appsettings.json there naming the server and the namespace <see cref="Namespace"/>, as an application's would.
/// </summary>
internal sealed class LoopbackBucket : IAsyncDisposable
{
    public const string Namespace = "default._default._default";

    /// <summary>The common flags of a JSON document.</summary>
    public const uint JsonFlags = 0x02000006;

    private LoopbackBucket(CouchbaseLoopbackServer server, string directory, string config)
    {
        Server = server;
        Directory = directory;
        Config = config;
    }

    public CouchbaseLoopbackServer Server { get; }

    public string Directory { get; }

    /// <summary>The path of the configuration file.</summary>
    public string Config { get; }

    /// <param name="directoryPrefix">The temporary directory's name prefix.</param>
    /// <param name="preserveTtl">False plays a server older than Couchbase Server 7.0, which cannot keep an expiry on replace.</param>
    /// <param name="bucketMaxTtl">The bucket's maximum TTL (none by default).</param>
    public static async Task<LoopbackBucket> StartAsync(string directoryPrefix, bool preserveTtl = true, TimeSpan? bucketMaxTtl = null)
    {
        var server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions
        {
            CommandLogCapacity = 1_000_000, PreserveTtl = preserveTtl, BucketMaxTtl = bucketMaxTtl,
        });
        string directory = System.IO.Directory.CreateTempSubdirectory(directoryPrefix).FullName;
        string config = Path.Combine(directory, "appsettings.json");
        File.WriteAllText(config, $$"""
            {
              "Couchbase": { "ConnectionString": "{{server.ConnectionString}}", "Username": "{{server.Username}}", "Password": "{{server.Password}}" },
              "Compression": {
                "Defaults": { "Codec": "Zstd" },
                "Namespaces": {
                  "{{Namespace}}": { "Dictionary": { "DictionarySize": 8192, "MinSampleCount": 32, "MaxSampleCount": 2000 } }
                }
              }
            }
            """);
        return new LoopbackBucket(server, directory, config);
    }

    /// <summary>Where docz (as an application started with <c>AddCouchbase(bucket)</c>) keeps the dictionaries: the store's own collection.</summary>
    public static async Task<global::Couchbase.KeyValue.ICouchbaseCollection> StoreCollectionAsync(global::Couchbase.IBucket bucket) =>
        (await bucket.ScopeAsync("compression")).Collection("dictionaries");

    /// <summary>Puts <paramref name="count"/> generated movie documents (<c>doc::00000</c> on) as plain JSON; returns them by key.</summary>
    public Dictionary<string, byte[]> Arrange(int count, int seed)
    {
        var random = new Random(seed);
        var documents = new Dictionary<string, byte[]>();
        for (int i = 0; i < count; i++)
        {
            byte[] json = TestDocuments.Movie(random);
            documents[$"doc::{i:D5}"] = json;
            Server.PutDocument($"doc::{i:D5}", json, JsonFlags, dataType: 1);
        }
        return documents;
    }

    public async ValueTask DisposeAsync()
    {
        await Server.DisposeAsync();
        System.IO.Directory.Delete(Directory, recursive: true);
    }
}
