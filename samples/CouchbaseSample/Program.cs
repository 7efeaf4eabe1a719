using Compression.Testing.Couchbase;
using CouchbaseSample;
using Microsoft.Extensions.Configuration;

// Configured from appsettings.json; any key can be overridden on the command line, e.g.
//   dotnet run -c Release --project samples/CouchbaseSample -- Couchbase:ConnectionString=couchbase://db1 Sample:Limit=500
// --loopback runs against the in-process Couchbase test double (tests/Compression.Testing/Couchbase) instead of a cluster.
// Exit codes: 0 every compressed document read back equal, 1 some did not, 3 no cluster answered (one line says why).
bool loopback = args.Contains("--loopback");
args = [.. args.Where(a => a != "--loopback")];
await using CouchbaseLoopbackServer? server = loopback ? await CouchbaseLoopbackServer.StartAsync() : null;
var builder = new ConfigurationBuilder()
    .SetBasePath(AppContext.BaseDirectory)
    .AddJsonFile("appsettings.json", optional: false)
    .AddEnvironmentVariables("COUCHBASE_SAMPLE_")
    .AddCommandLine(args);
if (server is not null)
{
    Console.WriteLine($"Server: the in-process loopback test double at {server.ConnectionString} (tests/Compression.Testing/Couchbase), NOT Couchbase Server: memory only, one node");
    builder.AddInMemoryCollection(new Dictionary<string, string?>
    {
        ["Couchbase:ConnectionString"] = server.ConnectionString,
        ["Couchbase:Username"] = server.Username,
        ["Couchbase:Password"] = server.Password,
        ["Sample:Bucket"] = server.BucketName,
    });
}
IConfiguration configuration = builder.Build();

try
{
    // A real cluster's wire bytes are not visible from here: the table says n/a; the loopback server counts them.
    SampleReport report = await SampleRunner.RunAsync(configuration, Console.Out, server is null ? null : () => (server.BytesSent, server.BytesReceived));
    return report.Mismatches == 0 ? 0 : 1;
}
catch (ClusterUnreachableException unreachable)
{
    Console.WriteLine($"CouchbaseSample: {unreachable.Message}");
    return 3;
}
