using CouchbaseSample;
using Microsoft.Extensions.Configuration;

// Configured from appsettings.json; any key can be overridden on the command line, e.g.
//   dotnet run -c Release --project samples/CouchbaseSample -- Couchbase:ConnectionString=couchbase://db1 Sample:Limit=500
IConfiguration configuration = new ConfigurationBuilder()
    .SetBasePath(AppContext.BaseDirectory)
    .AddJsonFile("appsettings.json", optional: false)
    .AddEnvironmentVariables("COUCHBASE_SAMPLE_")
    .AddCommandLine(args)
    .Build();

// A real cluster's wire bytes are not visible from here: the table says n/a (the tests run it against the loopback server's counters).
SampleReport report = await SampleRunner.RunAsync(configuration, Console.Out);
return report.Mismatches == 0 ? 0 : 1;
