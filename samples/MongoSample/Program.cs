using System.Diagnostics;
using System.Globalization;
using Compression;
using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Testing.Mongo;
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
/// Usage: <c>MongoSample [corpus.jsonl] [--loopback] [--MongoDB:ConnectionString=mongodb://...] [--MongoDB:Database=name]</c>;
/// every other setting comes from appsettings.json (section <c>Compression</c>), which any <c>--Key=value</c> overrides.
/// <c>--loopback</c> runs against the in-process MongoDB wire-protocol test double instead of a server. Exit codes:
/// <see cref="ExitOk"/>, <see cref="ExitMismatch"/>, <see cref="ExitNoServer"/>.
/// </remarks>
public static class Program
{
    /// <summary>Both collections read back the same documents.</summary>
    public const int ExitOk = 0;

    /// <summary>The collections read back different documents.</summary>
    public const int ExitMismatch = 1;

    /// <summary>No MongoDB answered at the configured address within <see cref="ServerTimeout"/> (one line says why).</summary>
    public const int ExitNoServer = 3;

    private const string PlainCollection = "movies_plain";
    private const string CompressedCollection = "movies_compressed";
    private const int BatchSize = 100;

    /// <summary>How many of the first documents train the dictionary before the compressed side writes any (a bulk load's first batch).</summary>
    private const int TrainFirst = 1_000;
    private static readonly TimeSpan ServerTimeout = TimeSpan.FromSeconds(10);

    /// <summary>Runs the sample; the exit code is 0 when both collections read back the same documents.</summary>
    public static Task<int> Main(string[] args) => RunAsync(args, Console.Out);

    /// <summary>Runs the sample, writing its report to <paramref name="output"/>.</summary>
    public static async Task<int> RunAsync(string[] args, TextWriter output, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        bool loopback = args.Contains("--loopback");
        string[] positional = [.. args.Where(a => !a.StartsWith('-'))];
        string[] settings = [.. args.Where(a => a.StartsWith('-') && a != "--loopback")];
        string corpus = positional.Length > 0 ? positional[0] : FindDefaultCorpus();
        if (!loopback) return await RunAsync(corpus, settings, server: null, output, cancellationToken).ConfigureAwait(false);

        await using MongoLoopbackServer server = await MongoLoopbackServer.StartAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        output.WriteLine($"server      the in-process loopback test double at {server.ConnectionString} (tests/Compression.Testing/Mongo), NOT MongoDB: memory only, no storage statistics");
        return await RunAsync(corpus, [.. settings, $"--MongoDB:ConnectionString={server.ConnectionString}"], server, output, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<int> RunAsync(string corpus, string[] settings, MongoLoopbackServer? server, TextWriter output, CancellationToken cancellationToken)
    {
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
        if (await NoServerAsync(plainClient, cancellationToken).ConfigureAwait(false) is { } why)
        {
            output.WriteLine($"MongoSample: no MongoDB answered at {Redact(connectionString)} within {ServerTimeout.TotalSeconds:F0} s: {why}. Start one, pass --MongoDB:ConnectionString=..., or run with --loopback (an in-process test double).");
            return ExitNoServer;
        }
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
            if (server is null) output.WriteLine($"server      {Redact(connectionString)}, database {databaseName}");

            var (plainWrite, plainWriteTime) = await MeasureAsync(plainWire, async () =>
            {
                foreach (var batch in documents.Chunk(BatchSize))
                    await plain.InsertManyAsync(batch.Select(d => d.DeepClone().AsBsonDocument), cancellationToken: cancellationToken).ConfigureAwait(false);
            }).ConfigureAwait(false);
            // A bulk load trains from its first batch before writing it (docs/dictionary-engine.md, "Bulk loads"): otherwise
            // the documents written while background training gathers samples go out without a dictionary.
            TrainingResult training = await compressed.TrainCompressionAsync(documents.Take(TrainFirst).Select(ToCorpusDocument), cancellationToken).ConfigureAwait(false);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"trained     from the first {Math.Min(TrainFirst, documents.Count):N0} documents before writing any: {training.Outcome}{(training.Dictionary is { } first ? $", version {first.Version}" : "")}"));
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
            (long withoutDictionary, long stored) = await CountWithoutDictionaryAsync(plainDatabase.GetCollection<RawBsonDocument>(CompressedCollection), cancellationToken).ConfigureAwait(false);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"written without a dictionary {withoutDictionary:N0} of {stored:N0}{(withoutDictionary > 0 ? " (written before training had one: they compress alone, which costs most on small documents)" : "")}"));

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
            return same ? ExitOk : ExitMismatch;
        }
        finally
        {
            await host.StopAsync(CancellationToken.None).ConfigureAwait(false);
        }
    }

    private static MongoClientSettings ClientSettings(string connectionString, WireCounter counter)
    {
        var settings = MongoClientSettings.FromConnectionString(connectionString);
        settings.ServerSelectionTimeout = ServerTimeout;
        settings.ConnectTimeout = ServerTimeout;
        settings.ClusterConfigurator = counter.Subscribe;
        return settings;
    }

    /// <summary>
    /// Null when the server answers a ping; else why not, in a few words: the innermost cause the driver saw for a server
    /// of the cluster (<c>Connection refused</c>, a name that does not resolve), as soon as every server has failed its
    /// first heartbeat, or that none was selected within <see cref="ServerTimeout"/> (an address that never answers).
    /// </summary>
    private static async Task<string?> NoServerAsync(MongoClient client, CancellationToken cancellationToken)
    {
        using var done = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Task ping = client.GetDatabase("admin").RunCommandAsync<BsonDocument>(new BsonDocument("ping", 1), cancellationToken: done.Token);
        while (!ping.IsCompleted)
        {
            await Task.WhenAny(ping, Task.Delay(TimeSpan.FromMilliseconds(100), cancellationToken)).ConfigureAwait(false);
            var servers = client.Cluster.Description.Servers;
            if (!ping.IsCompleted && servers.Count > 0 && servers.All(s => s.HeartbeatException is not null))
            {
                done.Cancel(); // every server refused: no need to wait out the selection timeout
                return Cause(client);
            }
        }
        try
        {
            await ping.ConfigureAwait(false);
            return null;
        }
        catch (TimeoutException)
        {
            return Cause(client) ?? "no server was selected";
        }

        static string? Cause(MongoClient client)
        {
            Exception? cause = client.Cluster.Description.Servers.Select(s => s.HeartbeatException).FirstOrDefault(e => e is not null);
            while (cause?.InnerException is not null) cause = cause.InnerException;
            return cause?.Message;
        }
    }

    /// <summary>
    /// How many of the collection's stored documents name no dictionary in their envelope (written before one was
    /// trained, or too small to compress), read as the server holds them.
    /// </summary>
    private static async Task<(long WithoutDictionary, long Stored)> CountWithoutDictionaryAsync(IMongoCollection<RawBsonDocument> collection, CancellationToken cancellationToken)
    {
        long without = 0, stored = 0;
        using IAsyncCursor<RawBsonDocument> cursor = await collection.FindAsync(FilterDefinition<RawBsonDocument>.Empty, cancellationToken: cancellationToken).ConfigureAwait(false);
        while (await cursor.MoveNextAsync(cancellationToken).ConfigureAwait(false))
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                stored++;
                if (!document.TryGetValue("_z", out BsonValue z) || !z.IsBsonBinaryData
                    || !DocumentEnvelope.TryReadHeader(z.AsBsonBinaryData.Bytes, out EnvelopeHeader header) || header.DictionaryId is null)
                {
                    without++;
                }
                document.Dispose();
            }
        }
        return (without, stored);
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
