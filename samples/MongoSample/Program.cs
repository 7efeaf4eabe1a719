using System.Diagnostics;
using System.Globalization;
using Compression.Dictionaries;
using Compression.MongoDB;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MongoDB.Bson;
using MongoDB.Driver;

namespace MongoSample;

/// <summary>
/// Writes a JSON Lines corpus into two collections through MongoDB.Driver, <c>movies_plain</c> (BsonDocument) and
/// <c>movies_compressed</c> (<see cref="CorpusDocument"/> through the compressed serializer, set up by
/// <c>AddDocumentCompression(configuration).AddMongoDB(...)</c>), reads both back, checks they hold the same documents,
/// and prints documents, bytes on the wire, stored bytes and the dictionary versions.
/// </summary>
/// <remarks>
/// Usage: <c>MongoSample [corpus.jsonl] [--MongoDB:ConnectionString=mongodb://...] [--MongoDB:Database=name]</c>; every
/// other setting comes from appsettings.json (section <c>Compression</c>), which any <c>--Key=value</c> overrides.
/// </remarks>
public static class Program
{
    private const string PlainCollection = "movies_plain";
    private const string CompressedCollection = "movies_compressed";
    private const int BatchSize = 100;

    /// <summary>Runs the sample; the exit code is 0 when both collections read back the same documents.</summary>
    public static Task<int> Main(string[] args) => RunAsync(args, Console.Out);

    /// <summary>Runs the sample, writing its report to <paramref name="output"/>.</summary>
    public static async Task<int> RunAsync(string[] args, TextWriter output, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        string[] positional = [.. args.Where(a => !a.StartsWith('-'))];
        string[] settings = [.. args.Where(a => a.StartsWith('-'))];
        string corpus = positional.Length > 0 ? positional[0] : FindDefaultCorpus();

        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings
        {
            Args = settings,
            ContentRootPath = AppContext.BaseDirectory, // appsettings.json beside the program, wherever it is run from
        });
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        string connectionString = builder.Configuration["MongoDB:ConnectionString"]
            ?? throw new InvalidOperationException("MongoDB:ConnectionString is not configured (appsettings.json or --MongoDB:ConnectionString=...).");
        string databaseName = builder.Configuration["MongoDB:Database"] ?? "compression_sample";

        // Two clients, so that each side's wire bytes are counted apart; the compressed side's include the dictionary store.
        var plainWire = new WireCounter();
        var compressedWire = new WireCounter();
        using var plainClient = new MongoClient(ClientSettings(connectionString, plainWire));
        using var compressedClient = new MongoClient(ClientSettings(connectionString, compressedWire));
        builder.Services.AddDocumentCompression(builder.Configuration)
            .AddMongoDB(_ => compressedClient.GetDatabase(databaseName), mongo => mongo.Map<CorpusDocument>(CompressedCollection));

        using IHost host = builder.Build();
        await host.StartAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            IMongoDatabase plainDatabase = plainClient.GetDatabase(databaseName);
            await plainDatabase.DropCollectionAsync(PlainCollection, cancellationToken).ConfigureAwait(false);
            await compressedClient.GetDatabase(databaseName).DropCollectionAsync(CompressedCollection, cancellationToken).ConfigureAwait(false);
            IMongoCollection<BsonDocument> plain = plainDatabase.GetCollection<BsonDocument>(PlainCollection);
            IMongoCollection<CorpusDocument> compressed = host.Services.GetRequiredService<IMongoCollection<CorpusDocument>>();
            var engine = host.Services.GetRequiredService<CompressionEngine>();

            List<BsonDocument> documents = ReadCorpus(corpus, out long jsonBytes);
            output.WriteLine($"corpus      {corpus}: {documents.Count.ToString("N0", CultureInfo.InvariantCulture)} documents, {jsonBytes.ToString("N0", CultureInfo.InvariantCulture)} bytes of JSON");
            output.WriteLine($"server      {Redact(connectionString)}, database {databaseName}");

            var (plainWrite, plainWriteTime) = await MeasureAsync(plainWire, async () =>
            {
                foreach (var batch in documents.Chunk(BatchSize))
                    await plain.InsertManyAsync(batch.Select(d => d.DeepClone().AsBsonDocument), cancellationToken: cancellationToken).ConfigureAwait(false);
            }).ConfigureAwait(false);
            var (compressedWrite, compressedWriteTime) = await MeasureAsync(compressedWire, async () =>
            {
                foreach (var batch in documents.Chunk(BatchSize))
                    await compressed.InsertManyAsync(batch.Select(ToCorpusDocument), cancellationToken: cancellationToken).ConfigureAwait(false);
            }).ConfigureAwait(false);

            List<BsonDocument> plainBack = [];
            var (plainRead, plainReadTime) = await MeasureAsync(plainWire, async () =>
                plainBack = await plain.Find(FilterDefinition<BsonDocument>.Empty).SortBy(d => d["_id"]).ToListAsync(cancellationToken).ConfigureAwait(false)).ConfigureAwait(false);
            List<CorpusDocument> compressedBack = [];
            var (compressedRead, compressedReadTime) = await MeasureAsync(compressedWire, async () =>
                compressedBack = await compressed.Find(FilterDefinition<CorpusDocument>.Empty).SortBy(d => d.Id).ToListAsync(cancellationToken).ConfigureAwait(false)).ConfigureAwait(false);

            int identical = plainBack.Zip(compressedBack).Count(p => p.First.Equals(new BsonDocument("_id", p.Second.Id).AddRange(p.Second.Fields)));
            bool same = plainBack.Count == documents.Count && compressedBack.Count == documents.Count && identical == documents.Count;

            output.WriteLine();
            output.WriteLine("                                   plain     compressed   compressed/plain");
            Row(output, "documents written and read", documents.Count, compressedBack.Count);
            Row(output, "write: bytes sent", plainWrite.Sent, compressedWrite.Sent);
            Row(output, "read: bytes received", plainRead.Received, compressedRead.Received);
            Row(output, "write: milliseconds", plainWriteTime, compressedWriteTime);
            Row(output, "read: milliseconds", plainReadTime, compressedReadTime);
            output.WriteLine($"stored bytes (plain)        {await StoredBytesAsync(plainDatabase, PlainCollection, cancellationToken).ConfigureAwait(false)}");
            output.WriteLine($"stored bytes (compressed)   {await StoredBytesAsync(plainDatabase, CompressedCollection, cancellationToken).ConfigureAwait(false)}");
            output.WriteLine($"read back identical         {identical.ToString("N0", CultureInfo.InvariantCulture)} of {documents.Count.ToString("N0", CultureInfo.InvariantCulture)}{(same ? "" : "  MISMATCH")}");

            output.WriteLine();
            output.WriteLine($"dictionary versions in {engine.Store.Location}:");
            int versions = 0;
            await foreach (DictionaryRecord record in engine.Store.ListAsync(cancellationToken: cancellationToken).ConfigureAwait(false))
            {
                versions++;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  {record.Namespace} v{record.Version}: id {record.Id}, {record.Content.Length:N0} bytes, {record.SampleCount} samples, ratio {record.Ratio:F2} on held-out samples, {record.Created:u}"));
            }
            if (versions == 0) output.WriteLine("  none yet (too few documents written to train one)");
            return same ? 0 : 1;
        }
        finally
        {
            await host.StopAsync(CancellationToken.None).ConfigureAwait(false);
        }
    }

    private static MongoClientSettings ClientSettings(string connectionString, WireCounter counter)
    {
        var settings = MongoClientSettings.FromConnectionString(connectionString);
        settings.ServerSelectionTimeout = TimeSpan.FromSeconds(10);
        settings.ClusterConfigurator = counter.Subscribe;
        return settings;
    }

    private static CorpusDocument ToCorpusDocument(BsonDocument document)
    {
        var fields = document.DeepClone().AsBsonDocument;
        fields.Remove("_id");
        return new CorpusDocument { Id = document["_id"].AsInt32, Fields = fields };
    }

    private static List<BsonDocument> ReadCorpus(string path, out long jsonBytes)
    {
        var documents = new List<BsonDocument>();
        jsonBytes = 0;
        int line = 0;
        foreach (string text in File.ReadLines(path))
        {
            line++;
            if (string.IsNullOrWhiteSpace(text)) continue;
            jsonBytes += System.Text.Encoding.UTF8.GetByteCount(text);
            BsonDocument parsed = BsonDocument.Parse(text);
            parsed.Remove("_id");
            var document = new BsonDocument("_id", line);
            document.AddRange(parsed);
            documents.Add(document);
        }
        return documents;
    }

    private static async Task<((long Sent, long Received) Bytes, long Milliseconds)> MeasureAsync(WireCounter counter, Func<Task> work)
    {
        var before = counter.Snapshot();
        long started = Stopwatch.GetTimestamp();
        await work().ConfigureAwait(false);
        long elapsed = (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        var after = counter.Snapshot();
        return ((after.Sent - before.Sent, after.Received - before.Received), elapsed);
    }

    private static void Row(TextWriter output, string label, long plain, long compressed) =>
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{label,-30} {plain,12:N0} {compressed,14:N0}   {(plain == 0 ? "-" : ((double)compressed / plain).ToString("F2", CultureInfo.InvariantCulture)),16}"));

    /// <summary>
    /// The collection's size on disk from <c>$collStats</c> (after an <c>fsync</c>, since sizes are only right after a
    /// checkpoint), or why it is not available (the loopback test server implements neither).
    /// </summary>
    private static async Task<string> StoredBytesAsync(IMongoDatabase database, string collection, CancellationToken cancellationToken)
    {
        try
        {
            await database.Client.GetDatabase("admin").RunCommandAsync<BsonDocument>(new BsonDocument("fsync", 1), cancellationToken: cancellationToken).ConfigureAwait(false);
        }
        catch (MongoCommandException)
        {
            // Not allowed or not implemented: the sizes below may then predate the last writes.
        }
        try
        {
            var pipeline = new[] { new BsonDocument("$collStats", new BsonDocument("storageStats", new BsonDocument())) };
            BsonDocument stats = await database.GetCollection<BsonDocument>(collection).Aggregate<BsonDocument>(pipeline, cancellationToken: cancellationToken)
                .FirstAsync(cancellationToken).ConfigureAwait(false);
            BsonDocument storage = stats["storageStats"].AsBsonDocument;
            return string.Create(CultureInfo.InvariantCulture,
                $"{storage["storageSize"].ToInt64():N0} on disk, {storage["size"].ToInt64():N0} of BSON");
        }
        catch (MongoCommandException ex)
        {
            return $"not available (the server answered: {ex.ErrorMessage})";
        }
    }

    private static string Redact(string connectionString)
    {
        var url = new MongoUrl(connectionString);
        return url.Password is null ? connectionString : connectionString.Replace(url.Password, "****", StringComparison.Ordinal);
    }

    /// <summary>samples/data/movies.jsonl of the repository, looked for from the current folder and the program's folder upwards.</summary>
    private static string FindDefaultCorpus()
    {
        foreach (string start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
        {
            for (DirectoryInfo? dir = new(start); dir is not null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, "samples", "data", "movies.jsonl");
                if (File.Exists(candidate)) return candidate;
            }
        }
        throw new FileNotFoundException("No corpus given, and samples/data/movies.jsonl was not found above the current folder: pass a JSON Lines file.");
    }
}
