using System.Text.Json;
using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

// The versions of a namespace: insert-only version keys naming the id that won each, found by probing upward from the
// last known version or the hint, and read back checked against the record they name.
public sealed partial class CouchbaseDictionaryStore
{
    /// <summary>
    /// The newest version from <paramref name="from"/> down whose record reads: one that does not (a peer's broken or
    /// hostile record) is reported and skipped, at most <see cref="DictionaryStore.MaxSkippedRecords"/>, then the newest
    /// one's problem is thrown. Versions are contiguous keys, so a broken one never hides those below it.
    /// </summary>
    private async ValueTask<DictionaryRecord?> NewestReadableAsync(ICouchbaseCollection collection, string ns, int from, CancellationToken cancellationToken)
    {
        InvalidDataException? newestProblem = null;
        for (int version = from; version >= 1 && version > from - MaxSkippedRecords - 1; version--)
        {
            try
            {
                return await ReadVersionAsync(collection, ns, version, cancellationToken).ConfigureAwait(false);
            }
            catch (InvalidDataException ex)
            {
                newestProblem ??= ex;
                ReportSkippedRecord(ex.Message);
            }
        }
        return newestProblem is null ? null : throw newestProblem;
    }

    /// <summary>The newest version of a namespace and its id: from the last known version or the hint, probing upward.</summary>
    private async ValueTask<(int Version, uint Id)> FindNewestAsync(ICouchbaseCollection collection, string ns, CancellationToken cancellationToken)
    {
        int known = _lastKnown.GetValueOrDefault(ns);
        int hint = await ReadHintAsync(collection, ns, cancellationToken).ConfigureAwait(false);
        int start = Math.Max(known, hint);
        uint id = 0;
        if (start > 0)
        {
            uint? found = await ReadPointerAsync(collection, ns, start, cancellationToken).ConfigureAwait(false);
            if (found is null && start > known && known > 0) found = await ReadPointerAsync(collection, ns, start = known, cancellationToken).ConfigureAwait(false);
            if (found is null) start = 0; // a hint ahead of the versions (or version keys removed by hand): probe from the start
            else id = found.Value;
        }
        int version = start;
        while (await ReadPointerAsync(collection, ns, version + 1, cancellationToken).ConfigureAwait(false) is uint next)
        {
            version++;
            id = next;
        }
        if (version > 0)
        {
            Remember(ns, version);
            if (version != hint) await TryWriteHintAsync(collection, ns, version, cancellationToken).ConfigureAwait(false);
        }
        return (version, id);
    }

    private void Remember(string ns, int version) => _lastKnown.AddOrUpdate(ns, version, (_, old) => Math.Max(old, version));

    private async ValueTask<DictionaryRecord> ReadVersionAsync(ICouchbaseCollection collection, string ns, int version, CancellationToken cancellationToken)
    {
        uint id = await ReadPointerAsync(collection, ns, version, cancellationToken).ConfigureAwait(false)
            ?? throw new InvalidDataException($"{VersionKey(ns, version)} is missing from {Location}, although version {version} of '{ns}' was published; this store never deletes one.");
        return await ReadVersionRecordAsync(collection, ns, version, id, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The record a version key names, checked against it: same id, namespace and version.</summary>
    private async ValueTask<DictionaryRecord> ReadVersionRecordAsync(ICouchbaseCollection collection, string ns, int version, uint id, CancellationToken cancellationToken)
    {
        DictionaryRecord record = await ReadRecordAsync(collection, id, cancellationToken).ConfigureAwait(false)
            ?? throw new InvalidDataException($"{VersionKey(ns, version)} in {Location} names dictionary {id}, whose record {RecordKey(id)} is missing.");
        if (record.Version != version || !string.Equals(record.Namespace, ns, StringComparison.Ordinal))
        {
            throw new InvalidDataException(
                $"Dictionary record {RecordKey(id)} in {Location} says version {record.Version} of '{record.Namespace}', but {VersionKey(ns, version)} names it as version {version} of '{ns}'.");
        }
        return record;
    }

    /// <summary>The id a version key names, or null when the version does not exist.</summary>
    private async ValueTask<uint?> ReadPointerAsync(ICouchbaseCollection collection, string ns, int version, CancellationToken cancellationToken)
    {
        string key = VersionKey(ns, version);
        return await ReadSmallAsync(collection, key, cancellationToken, (body, store) =>
        {
            using JsonDocument json = store._json.Parse(key, body);
            JsonElement root = json.RootElement;
            string? docNamespace = store._json.String(key, root, "namespace");
            int docVersion = store._json.Int(key, root, "version");
            uint id = store._json.UInt(key, root, "id");
            if (!string.Equals(docNamespace, ns, StringComparison.Ordinal) || docVersion != version)
                throw new InvalidDataException($"{key} in {store.Location} says version {docVersion} of '{docNamespace}', not version {version} of '{ns}'.");
            if (id == 0) throw new InvalidDataException($"{key} in {store.Location} names dictionary 0, which is not a dictionary id.");
            return (uint?)id;
        }).ConfigureAwait(false);
    }

    private async ValueTask<int> ReadHintAsync(ICouchbaseCollection collection, string ns, CancellationToken cancellationToken)
    {
        string key = HintKey(ns);
        try
        {
            return await ReadSmallAsync(collection, key, cancellationToken, static (body, _) =>
            {
                // Only a hint: anything unreadable counts as no hint (the version keys are probed instead).
                try
                {
                    using JsonDocument json = JsonDocument.Parse(body);
                    return json.RootElement.ValueKind == JsonValueKind.Object && json.RootElement.TryGetProperty("version", out JsonElement v)
                        && v.TryGetInt32(out int version) && version > 0 ? version : 0;
                }
                catch (JsonException)
                {
                    return 0;
                }
            }).ConfigureAwait(false);
        }
        catch (InvalidDataException)
        {
            return 0; // only a hint: an oversized one is no hint either
        }
    }

    /// <summary>Writes the hint; a failure leaves it stale, which readers correct by probing, so it is not an error.</summary>
    private async ValueTask TryWriteHintAsync(ICouchbaseCollection collection, string ns, int version, CancellationToken cancellationToken)
    {
        byte[] body = JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object> { ["namespace"] = ns, ["version"] = version });
        try
        {
            await collection.UpsertAsync(HintKey(ns), (ReadOnlyMemory<byte>)body,
                new UpsertOptions().Transcoder(RawBodyTranscoder.Instance).CancellationToken(cancellationToken)).ConfigureAwait(false);
        }
        catch (global::Couchbase.CouchbaseException)
        {
            // only a hint
        }
    }
}
