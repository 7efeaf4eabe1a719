using System.Text.RegularExpressions;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;
using Xunit.Abstractions;

namespace Compression.MongoDB.Tests;

/// <summary>samples/MongoSample run in-process (its entry point, its appsettings.json) against the loopback server or a real one.</summary>
public sealed class MongoSampleTests(MongoFixture fixture, ITestOutputHelper log) : IClassFixture<MongoFixture>
{
    [Fact]
    public async Task Sample_WritesAndReadsTheMoviesCorpus_PlainAndCompressed_AndReportsBytesAndDictionaries()
    {
        await using var db = fixture.Server.CreateDatabase("sample");
        var output = new StringWriter();
        int exitCode = await MongoSample.Program.RunAsync(
            [$"--MongoDB:ConnectionString={fixture.Server.ConnectionString}", $"--MongoDB:Database={db.Name}"], output);
        string report = output.ToString();
        log.WriteLine(report);

        Assert.Equal(0, exitCode);
        Assert.Contains("movies.jsonl: 3,201 documents", report, StringComparison.Ordinal);
        Assert.Contains("read back identical         3,201 of 3,201", report, StringComparison.Ordinal);
        Assert.Matches(@"documents written and read\s+3,201\s+3,201", report);
        if (fixture.Server.IsLoopback) Assert.Contains("stored bytes (plain)        not available (the server answered:", report, StringComparison.Ordinal);
        Assert.Matches($@"{Regex.Escape(db.Name)}\.movies_compressed v1: id \d+, [\d,]+ bytes", report);

        // Fewer bytes on the wire for the compressed collection, both ways.
        double writeRatio = Ratio(report, "write: bytes sent");
        double readRatio = Ratio(report, "read: bytes received");
        Assert.InRange(writeRatio, 0.01, 0.99);
        Assert.InRange(readRatio, 0.01, 0.99);

        // What the sample left in the database: the same documents, one collection compressed.
        var compressed = await db.Database.GetCollection<BsonDocument>("movies_compressed").Find(new BsonDocument("_id", 1)).SingleAsync();
        Assert.Equal(["_id", "_z"], compressed.Names.ToArray());
        Assert.Equal(3201, await db.Database.GetCollection<BsonDocument>("movies_plain").CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));
    }

    [Fact]
    public async Task Loopback_RunsWithoutAServer_AndSaysInItsFirstLineThatItIsATestDouble()
    {
        // As a user runs it: its own process (the driver's serializer registrations are per process, and the test above
        // has made one for the sample's document type in this one).
        var start = new System.Diagnostics.ProcessStartInfo("dotnet", [Path.Combine(AppContext.BaseDirectory, "MongoSample.dll"), "--loopback"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = System.Diagnostics.Process.Start(start)!;
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using var hang = new CancellationTokenSource(TimeSpan.FromMinutes(10)); // a hang guard, not a time limit
        await process.WaitForExitAsync(hang.Token);
        string report = await stdout;
        log.WriteLine(report);
        log.WriteLine(await stderr);

        Assert.Equal(MongoSample.Program.ExitOk, process.ExitCode);
        string first = report.Split('\n')[0];
        Assert.Matches(@"^server +the in-process loopback test double at mongodb://127\.0\.0\.1:\d+/\?directConnection=true .*NOT MongoDB", first);
        Assert.Contains("read back identical         3,201 of 3,201", report, StringComparison.Ordinal);
        // Trained from its first 1,000 documents before writing any: none went out without a dictionary (before, on an
        // in-process server, background training lost the race and all 3,201 did).
        Assert.Contains("trained     from the first 1,000 documents before writing any: Adopted, version 1", report, StringComparison.Ordinal);
        Assert.Contains("written without a dictionary 0 of 3,201", report, StringComparison.Ordinal);
    }

    [Fact]
    public async Task NoServerAtTheAddress_IsOneLine_NamingTheAddressAndTheCause_WithItsExitCode()
    {
        int port = Compression.Testing.UnusedPort.Take();
        string address = $"mongodb://127.0.0.1:{port}/?directConnection=true";

        var output = new StringWriter();
        int exitCode = await MongoSample.Program.RunAsync([$"--MongoDB:ConnectionString={address}"], output);
        string report = output.ToString();

        Assert.Equal(MongoSample.Program.ExitNoServer, exitCode);
        Assert.Equal($"MongoSample: no MongoDB answered at {address} within 10 s: Connection refused. Start one, pass --MongoDB:ConnectionString=..., or run with --loopback (an in-process test double).",
            report.TrimEnd());
    }

    private static double Ratio(string report, string label)
    {
        Match match = Regex.Match(report, $@"{Regex.Escape(label)}\s+[\d,]+\s+[\d,]+\s+(\d+\.\d+)");
        Assert.True(match.Success, $"no '{label}' row");
        return double.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
    }
}
