using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Tool.Backends;
using Compression.Tool.Live;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.Core.IO.Operations;
using Couchbase.KeyValue;

namespace Compression.Tool.Couchbase;

/// <summary>
/// Where Couchbase keeps a rewrite's <see cref="RewriteCheckpoint{TKey}"/>: in the bucket beside the dictionaries (the
/// store's collection), one JSON document per collection and command under the key
/// <c>_compression::migrate::{scope}.{collection}::{mode}</c>:
/// <c>{ ns, mode, parameters, after, written, skipped, unchanged, failed, failures, runs, started, updated, done }</c>,
/// <c>after</c> being a key (the scan goes in byte order of the keys' UTF-8 form).
/// </summary>
internal sealed class CouchbaseCheckpointStore(ICouchbaseCollection store, CouchbaseNamespace ns, string mode) : ICheckpointStore<string>
{
    private static readonly string[] Modes = ["compress", "decompress", "recompress"];

    public string Id { get; } = KeyOf(ns, mode);

    public string Location => $"bucket {ns.Bucket}";

    public async Task RemoveOtherCommandsAsync(CancellationToken cancellationToken)
    {
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
    }

    public async Task<IStoredCheckpoint<string>?> ReadAsync(CancellationToken cancellationToken) =>
        await BodyAccess.ReadAsync(store, Id, cancellationToken).ConfigureAwait(false) is { } stored ? new Stored(stored.Body) : null;

    public bool IsDamage(Exception exception) => exception is JsonException or FormatException or InvalidOperationException or NullReferenceException;

    public async Task WriteAsync(RewriteCheckpoint<string> checkpoint, bool done, CancellationToken cancellationToken)
    {
        var json = new JsonObject
        {
            ["ns"] = checkpoint.Namespace,
            ["mode"] = checkpoint.Mode,
            ["parameters"] = checkpoint.Parameters,
            ["after"] = checkpoint.After,
            ["written"] = checkpoint.Written,
            ["skipped"] = checkpoint.Skipped,
            ["unchanged"] = checkpoint.Unchanged,
            ["failed"] = checkpoint.Failed,
            ["failures"] = new JsonArray([.. checkpoint.Failures.Select(f => (JsonNode)new JsonObject { ["id"] = f.Id, ["error"] = f.Error })]),
            ["runs"] = checkpoint.Runs,
            ["started"] = checkpoint.Started,
            ["updated"] = DateTime.UtcNow,
            ["done"] = done,
        };
        var flags = new Flags { DataFormat = DataFormat.Json, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = TypeCode.Object };
        await store.UpsertAsync(Id, (ReadOnlyMemory<byte>)JsonSerializer.SerializeToUtf8Bytes(json),
            new UpsertOptions().Transcoder(new BodyTranscoder(flags)).CancellationToken(cancellationToken)).ConfigureAwait(false);
    }

    private static string KeyOf(CouchbaseNamespace ns, string mode) => $"{BodyAccess.ReservedPrefix}migrate::{ns.Scope}.{ns.Collection}::{mode}";

    /// <summary>The stored JSON, parsed when a field is first asked for (so that a body that is not JSON is a damaged checkpoint).</summary>
    private sealed class Stored(byte[] body) : IStoredCheckpoint<string>
    {
        private JsonObject? _json;

        private JsonObject Json => _json ??= JsonNode.Parse(body)?.AsObject() ?? throw new FormatException("not a JSON object");

        public bool Done => Json["done"]!.GetValue<bool>();

        public string Parameters => Json["parameters"]!.GetValue<string>();

        public string Namespace => Json["ns"]!.GetValue<string>();

        public string? After => Json["after"]?.GetValue<string>();

        public long Count(string name) => Json[name]!.GetValue<long>();

        public DateTime Started => Json["started"]!.GetValue<DateTime>();

        public IEnumerable<RewriteFailure> Failures =>
            Json["failures"]!.AsArray().Select(failure => new RewriteFailure(failure!["id"]!.GetValue<string>(), failure["error"]!.GetValue<string>()));
    }
}
