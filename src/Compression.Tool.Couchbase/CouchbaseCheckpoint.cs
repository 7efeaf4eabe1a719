using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Tool.Live;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.Core.IO.Operations;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

/// <summary>
/// Where a rewrite of a collection stands, kept in the bucket beside the dictionaries (the store's collection), one JSON
/// document per collection and command under the key <c>_compression::migrate::{scope}.{collection}::{mode}</c>:
/// <c>{ ns, mode, parameters, after, written, skipped, unchanged, failed, failures, runs, started, updated, done }</c>.
/// It is written after each batch's replacements have been acknowledged, so every document up to the key
/// <c>after</c> (in byte order of the keys' UTF-8 form) is in its final form; a run that finds it unfinished resumes after
/// <c>after</c>, one that finds it done starts over (and finds every document already in its final form).
/// </summary>
internal sealed class CouchbaseCheckpoint
{
    private readonly ICouchbaseCollection _store;

    private CouchbaseCheckpoint(ICouchbaseCollection store, string key) => (_store, Key) = (store, key);

    public string Key { get; }

    public string? After { get; set; }

    public long Written { get; set; }

    public long Skipped { get; set; }

    public long Unchanged { get; set; }

    public long Failed { get; set; }

    public List<RewriteFailure> Failures { get; } = [];

    public int Runs { get; private set; }

    public bool Resumed { get; private set; }

    public DateTime Started { get; private set; }

    private static readonly string[] Modes = ["compress", "decompress", "recompress"];

    private static string KeyOf(CouchbaseNamespace ns, string mode) => $"{BodyAccess.ReservedPrefix}migrate::{ns.Scope}.{ns.Collection}::{mode}";

    /// <exception cref="InvalidDataException">The stored checkpoint is damaged; the message names it.</exception>
    public static async Task<CouchbaseCheckpoint> LoadAsync(ICouchbaseCollection store, CouchbaseNamespace ns, string mode, string parameters, bool restart,
        CancellationToken cancellationToken)
    {
        var checkpoint = new CouchbaseCheckpoint(store, KeyOf(ns, mode)) { Started = DateTime.UtcNow, Runs = 1 };

        // This run rewrites documents an unfinished run of another command may already have passed: that run starts over
        // (as for MongoDB, RewriteCheckpoint).
        foreach (string other in Modes.Where(m => m != mode))
        {
            try
            {
                await store.RemoveAsync(KeyOf(ns, other), new RemoveOptions().CancellationToken(cancellationToken)).ConfigureAwait(false);
            }
            catch (DocumentNotFoundException)
            {
            }
        }

        StoredBody? stored = await BodyAccess.ReadAsync(store, checkpoint.Key, cancellationToken).ConfigureAwait(false);
        if (stored is null || restart) return checkpoint;
        try
        {
            JsonObject json = JsonNode.Parse(stored.Body)?.AsObject() ?? throw new FormatException("not a JSON object");
            if (json["done"]!.GetValue<bool>() || json["parameters"]!.GetValue<string>() != parameters || json["ns"]!.GetValue<string>() != ns.Name) return checkpoint;
            checkpoint.Resumed = true;
            checkpoint.After = json["after"]?.GetValue<string>();
            checkpoint.Written = Count(json, "written");
            checkpoint.Skipped = Count(json, "skipped");
            checkpoint.Unchanged = Count(json, "unchanged");
            checkpoint.Failed = Count(json, "failed");
            checkpoint.Runs = checked((int)Count(json, "runs") + 1);
            checkpoint.Started = json["started"]!.GetValue<DateTime>();
            foreach (JsonNode? failure in json["failures"]!.AsArray())
            {
                checkpoint.Failures.Add(new RewriteFailure(failure!["id"]!.GetValue<string>(), failure["error"]!.GetValue<string>()));
            }
            return checkpoint;
        }
        catch (Exception ex) when (ex is JsonException or FormatException or InvalidOperationException or NullReferenceException or OverflowException or ArgumentException)
        {
            throw new InvalidDataException(
                $"The checkpoint '{checkpoint.Key}' in bucket {ns.Bucket} is damaged ({ex.Message}); run again with --restart to start over.", ex);
        }
    }

    public void AddFailure(string key, string error, int keep)
    {
        Failed++;
        if (Failures.Count < keep) Failures.Add(new RewriteFailure(key, error));
    }

    /// <summary>Writes the checkpoint (only once the batch it follows has been acknowledged).</summary>
    public async Task SaveAsync(CouchbaseNamespace ns, string mode, string parameters, bool done, CancellationToken cancellationToken)
    {
        var json = new JsonObject
        {
            ["ns"] = ns.Name,
            ["mode"] = mode,
            ["parameters"] = parameters,
            ["after"] = After,
            ["written"] = Written,
            ["skipped"] = Skipped,
            ["unchanged"] = Unchanged,
            ["failed"] = Failed,
            ["failures"] = new JsonArray([.. Failures.Select(f => (JsonNode)new JsonObject { ["id"] = f.Id, ["error"] = f.Error })]),
            ["runs"] = Runs,
            ["started"] = Started,
            ["updated"] = DateTime.UtcNow,
            ["done"] = done,
        };
        var flags = new Flags { DataFormat = DataFormat.Json, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = TypeCode.Object };
        await _store.UpsertAsync(Key, (ReadOnlyMemory<byte>)JsonSerializer.SerializeToUtf8Bytes(json),
            new UpsertOptions().Transcoder(new BodyTranscoder(flags)).CancellationToken(cancellationToken)).ConfigureAwait(false);
    }

    private static long Count(JsonObject json, string name)
    {
        long value = json[name]!.GetValue<long>();
        return value >= 0 ? value : throw new ArgumentException($"'{name}' is negative ({value})");
    }
}
