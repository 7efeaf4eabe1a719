using System.Text;
using Compression.Testing.Mongo;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// <c>--loopback</c>: the command runs on <see cref="MongoLoopbackServer"/>, the in-process MongoDB wire-protocol test
/// double of the tests (tests/Compression.Testing/Mongo), started for the command and stopped after it, through
/// <see cref="MongoBackend"/> exactly as on a server. Its first line says that it is a test double, not MongoDB. The
/// double starts empty; <c>--load FILE.jsonl</c> first inserts a JSON Lines file into the one namespace's collection,
/// so that a new user can try every command on their own documents without a server (docs/docz.md, "Trying docz without a server").
/// </summary>
internal sealed class MongoLoopbackBackend : IDoczBackend
{
    public static readonly MongoLoopbackBackend Instance = new();

    public Task<int> TrainAsync(LiveSettings settings, FileInfo? from, int maxDocuments, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.TrainAsync(onDouble, from, maxDocuments, console, cancellationToken), cancellationToken);

    public Task<int> RewriteAsync(string command, LiveSettings settings, RewriteOptions options, bool train, DateTimeOffset? olderThan, LiveOutput console,
        CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.RewriteAsync(command, onDouble, options, train, olderThan, console, cancellationToken),
            cancellationToken);

    public Task<int> VerifyAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.VerifyAsync(onDouble, console, cancellationToken), cancellationToken);

    public Task<int> StatsAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.StatsAsync(onDouble, console, cancellationToken), cancellationToken);

    public Task<int> ListDictionariesAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.ListDictionariesAsync(onDouble, console, cancellationToken), cancellationToken);

    public Task<int> ExportDictionariesAsync(LiveSettings settings, FileInfo to, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.ExportDictionariesAsync(onDouble, to, console, cancellationToken), cancellationToken);

    public Task<int> ImportDictionariesAsync(LiveSettings settings, FileInfo from, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.ImportDictionariesAsync(onDouble, from, console, cancellationToken), cancellationToken);

    public Task<int> CatAsync(LiveSettings settings, DocumentQuery query, long limit, TextWriter documents, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.CatAsync(onDouble, query, limit, documents, console, cancellationToken), cancellationToken);

    public Task<int> ExportAsync(LiveSettings settings, TransferOptions options, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.ExportAsync(onDouble, options, console, cancellationToken), cancellationToken);

    public Task<int> ImportAsync(LiveSettings settings, TransferOptions options, LiveOutput console, CancellationToken cancellationToken) =>
        RunAsync(settings, console, onDouble => MongoBackend.Instance.ImportAsync(onDouble, options, console, cancellationToken), cancellationToken);

    /// <summary>Starts the double, says so, loads <see cref="LiveSettings.LoadPath"/> if given, and runs the command on it.</summary>
    private static async Task<int> RunAsync(LiveSettings settings, LiveOutput console, Func<LiveSettings, Task<int>> command, CancellationToken cancellationToken)
    {
        await using MongoLoopbackServer server = await MongoLoopbackServer.StartAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        console.Notice($"--loopback: an in-memory test double at {server.ConnectionString}, NOT MongoDB (tests/Compression.Testing/Mongo): "
            + "it starts empty, and everything written is gone when docz exits.");
        LiveSettings onDouble = settings with { Connection = server.ConnectionString };
        if (settings.LoadPath is { } path) await LoadAsync(onDouble, path, console, cancellationToken).ConfigureAwait(false);
        return await command(onDouble).ConfigureAwait(false);
    }

    /// <summary>Inserts every line of <paramref name="path"/> as a plain document (an <c>_id</c> is added where a line has none).</summary>
    /// <exception cref="UsageException">Not exactly one namespace, or a line that is not a JSON document (named by its number).</exception>
    private static async Task LoadAsync(LiveSettings settings, string path, LiveOutput console, CancellationToken cancellationToken)
    {
        await using MongoSession session = MongoSession.Open(settings);
        if (session.Namespaces.Count != 1) throw new UsageException("--load fills one collection: give exactly one --namespace.");
        MongoNamespace ns = session.Namespaces[0];
        IMongoCollection<BsonDocument> collection = session.Database(ns.Database).GetCollection<BsonDocument>(ns.Collection);
        var batch = new List<BsonDocument>(settings.BatchSize);
        long lineNumber = 0, loaded = 0;
        using var reader = new StreamReader(path, Encoding.UTF8);
        while (await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
        {
            lineNumber++;
            if (string.IsNullOrWhiteSpace(line)) continue;
            batch.Add(Parse(path, lineNumber, line));
            if (batch.Count < settings.BatchSize) continue;
            await collection.InsertManyAsync(batch, cancellationToken: cancellationToken).ConfigureAwait(false);
            loaded += batch.Count;
            batch.Clear();
        }
        if (batch.Count > 0) await collection.InsertManyAsync(batch, cancellationToken: cancellationToken).ConfigureAwait(false);
        loaded += batch.Count;
        console.Notice($"--load: {loaded:N0} documents from {path} inserted plain into {ns}.");
    }

    private static BsonDocument Parse(string path, long lineNumber, string line)
    {
        try
        {
            return BsonDocument.Parse(line);
        }
        catch (Exception ex) when (ex is FormatException or InvalidCastException or BsonException)
        {
            throw new UsageException($"--load {path}: line {lineNumber} is not a JSON document: {LiveRunner.FirstLine(ex.Message)}");
        }
    }
}
