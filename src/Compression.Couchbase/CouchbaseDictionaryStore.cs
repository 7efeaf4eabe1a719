using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Text.Json;
using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Couchbase.Core.Exceptions;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

/// <summary>
/// A <see cref="DictionaryStore"/> in a Couchbase collection (the bucket's default collection unless told otherwise), as
/// JSON documents under versioned keys, insert-only:
/// <c>_compression::dict::{id}</c> holds a record (the dictionary in base64), and <c>_compression::ns::{namespace}::v{version}</c>
/// says which id won that version of a namespace. Both are created with the KV insert, which fails when the key exists:
/// of two clients publishing the same version, one wins and the other reads and returns the winner.
/// <c>_compression::ns::{namespace}::current</c> is only a hint (the newest version some client saw), checked against the
/// version keys; <c>_compression::namespaces</c> lists the namespaces, for <see cref="ListAsync"/> over all of them.
/// </summary>
/// <remarks>
/// Records are checked when read: the body's size before it is parsed, every field, and the id, namespace and version
/// against the keys that name them. The SDK is asynchronous only, so <see cref="DictionaryStore.CanGetSynchronously"/> is
/// false: the compressed collection loads dictionaries before it decodes. Nothing is ever deleted, except a record
/// whose version another client won, which no envelope can name.
/// </remarks>
public sealed class CouchbaseDictionaryStore : DictionaryStore
{
    /// <summary>The prefix of every key the store writes, unless a test gives its own.</summary>
    internal const string DefaultKeyPrefix = "_compression::";

    private const int MaxSmallDocumentBytes = 64 * 1024;
    private readonly Func<CancellationToken, ValueTask<ICouchbaseCollection>> _collection;
    private readonly long _maxRecordBytes;
    private readonly ConcurrentDictionary<string, int> _lastKnown = new(StringComparer.Ordinal);
    private readonly CouchbaseDictionaryKeys _keys;
    private readonly CouchbaseDictionaryJson _json;

    /// <summary>Creates the store in <paramref name="collection"/>.</summary>
    /// <param name="collection">Where the dictionaries live: usually the bucket's default collection.</param>
    /// <param name="maxDictionaryBytes">The largest dictionary a record may hold; larger records are refused before they are parsed.</param>
    public CouchbaseDictionaryStore(ICouchbaseCollection collection, int maxDictionaryBytes = ZstdDictionary.DefaultMaximumSize)
        : this(_ => ValueTask.FromResult(collection ?? throw new ArgumentNullException(nameof(collection))),
            CouchbaseCollectionCompressionExtensions.NamespaceName(collection), maxDictionaryBytes)
    {
    }

    /// <summary>Creates the store over a collection opened when first needed (dependency injection: buckets open asynchronously).</summary>
    internal CouchbaseDictionaryStore(Func<CancellationToken, ValueTask<ICouchbaseCollection>> collection, string collectionName, int maxDictionaryBytes,
        string keyPrefix = DefaultKeyPrefix)
    {
        _keys = new CouchbaseDictionaryKeys(keyPrefix);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDictionaryBytes, ZstdDictionary.MinimumSize);
        _collection = collection;
        CollectionName = collectionName;
        _json = new CouchbaseDictionaryJson(this);
        // Base64 takes 4 bytes for every 3, plus the record's other fields.
        _maxRecordBytes = (maxDictionaryBytes + 2L) / 3 * 4 + (CouchbaseDictionaryJson.MaxShapesBytes + 2L) / 3 * 4 + 4096; // base64 of the content and the shape table, and the fields
    }

    /// <summary>The prefix of the store's keys (tests against a shared real cluster use one of their own).</summary>
    internal string KeyPrefix => _keys.KeyPrefix;

    /// <summary>The collection the records are in: <c>bucket.scope.collection</c>.</summary>
    public string CollectionName { get; }

    /// <inheritdoc/>
    public override string Location => $"the Couchbase collection '{CollectionName}' (keys {KeyPrefix}*)";

    /// <inheritdoc/>
    public override async ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        return await ReadRecordAsync(collection, id, cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public override async ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        (int version, _) = await FindNewestAsync(collection, @namespace, cancellationToken).ConfigureAwait(false);
        return await NewestReadableAsync(collection, @namespace, version, cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public override async ValueTask<DictionaryRecord?> GetNewestBelowAsync(string @namespace, int version, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        (int newest, _) = await FindNewestAsync(collection, @namespace, cancellationToken).ConfigureAwait(false);
        return await NewestReadableAsync(collection, @namespace, Math.Min(newest, version - 1), cancellationToken).ConfigureAwait(false);
    }

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

    /// <inheritdoc/>
    public override async ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        ArgumentException.ThrowIfNullOrEmpty(candidate.Namespace, nameof(candidate));
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        string ns = candidate.Namespace;
        (int newest, _) = await FindNewestAsync(collection, ns, cancellationToken).ConfigureAwait(false);
        if (candidate.Version <= newest) return await ReadVersionAsync(collection, ns, candidate.Version, cancellationToken).ConfigureAwait(false); // published meanwhile
        if (candidate.Version != newest + 1)
            throw new ArgumentException($"Version {candidate.Version} does not follow the newest version ({newest}) of '{ns}' in {Location}.", nameof(candidate));

        // 1. The record, under its id: an id another dictionary holds is a conflict (the engine draws another id).
        ulong recordCas = 0;
        try
        {
            IMutationResult inserted = await collection.InsertAsync(RecordKey(candidate.Id), (ReadOnlyMemory<byte>)CouchbaseDictionaryJson.WriteRecord(candidate),
                new InsertOptions().Transcoder(RawBodyTranscoder.Instance).CancellationToken(cancellationToken)).ConfigureAwait(false);
            recordCas = inserted.Cas;
        }
        catch (DocumentExistsException)
        {
            DictionaryRecord? existing = await ReadRecordAsync(collection, candidate.Id, cancellationToken).ConfigureAwait(false);
            // The same record: an earlier attempt of this publication got in before its reply was lost.
            if (existing is null || !SameDictionary(existing, candidate)) throw new DictionaryIdConflictException(candidate.Id);
        }

        // 2. The version, insert-only: the first client to claim it wins.
        try
        {
            await collection.InsertAsync(VersionKey(ns, candidate.Version), (ReadOnlyMemory<byte>)CouchbaseDictionaryJson.WritePointer(ns, candidate.Version, candidate.Id),
                new InsertOptions().Transcoder(RawBodyTranscoder.Instance).CancellationToken(cancellationToken)).ConfigureAwait(false);
        }
        catch (DocumentExistsException)
        {
            DictionaryRecord winner = await ReadVersionAsync(collection, ns, candidate.Version, cancellationToken).ConfigureAwait(false);
            if (winner.Id != candidate.Id && recordCas != 0) await TryRemoveLoserAsync(collection, candidate.Id, recordCas).ConfigureAwait(false);
            return winner;
        }

        Remember(ns, candidate.Version);
        await TryWriteHintAsync(collection, ns, candidate.Version, cancellationToken).ConfigureAwait(false);
        if (candidate.Version == 1) await AddToIndexAsync(collection, ns, cancellationToken).ConfigureAwait(false);
        return candidate;
    }

    /// <inheritdoc/>
    public override async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        IEnumerable<string> namespaces = @namespace is not null ? [@namespace]
            : (await ReadIndexAsync(collection, cancellationToken).ConfigureAwait(false)).Names.Order(StringComparer.Ordinal);
        foreach (string ns in namespaces)
        {
            for (int version = 1; ; version++)
            {
                uint? id = await ReadPointerAsync(collection, ns, version, cancellationToken).ConfigureAwait(false);
                if (id is not uint found) break;
                yield return await ReadVersionRecordAsync(collection, ns, version, found, cancellationToken).ConfigureAwait(false);
            }
        }
    }

    /// <inheritdoc cref="CouchbaseDictionaryKeys.RecordKey"/>
    internal string RecordKey(uint id) => _keys.RecordKey(id);

    /// <inheritdoc cref="CouchbaseDictionaryKeys.VersionKey"/>
    internal string VersionKey(string @namespace, int version) => _keys.VersionKey(@namespace, version);

    /// <inheritdoc cref="CouchbaseDictionaryKeys.HintKey"/>
    internal string HintKey(string @namespace) => _keys.HintKey(@namespace);

    /// <inheritdoc cref="CouchbaseDictionaryKeys.IndexKey"/>
    internal string IndexKey => _keys.IndexKey;

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

    /// <summary>The loser of a version race removes its record (nothing can name it), only if it is still the one it wrote.</summary>
    private async ValueTask TryRemoveLoserAsync(ICouchbaseCollection collection, uint id, ulong cas)
    {
        try
        {
            await collection.RemoveAsync(RecordKey(id), new RemoveOptions().Cas(cas)).ConfigureAwait(false);
        }
        catch (global::Couchbase.CouchbaseException)
        {
            // An orphan record is harmless: no version key names it.
        }
    }

    private async ValueTask<NamespaceIndex> ReadIndexAsync(ICouchbaseCollection collection, CancellationToken cancellationToken)
    {
        return await ReadSmallAsync(collection, IndexKey, cancellationToken, (body, store) =>
        {
            using JsonDocument json = store._json.Parse(IndexKey, body);
            if (!json.RootElement.TryGetProperty("namespaces", out JsonElement list) || list.ValueKind != JsonValueKind.Array)
                throw new InvalidDataException($"{IndexKey} in {store.Location} has no 'namespaces' array.");
            var names = new List<string>();
            foreach (JsonElement item in list.EnumerateArray())
            {
                names.Add(item.ValueKind == JsonValueKind.String ? item.GetString()! : throw new InvalidDataException($"{IndexKey} in {store.Location} lists a namespace that is not a string."));
            }
            return new NamespaceIndex(names, 0);
        }, withCas: true).ConfigureAwait(false) ?? new NamespaceIndex([], 0);
    }

    /// <summary>Adds a namespace to the index document, with CAS so that concurrent first publications all get in.</summary>
    private async ValueTask AddToIndexAsync(ICouchbaseCollection collection, string ns, CancellationToken cancellationToken)
    {
        for (int attempt = 0; attempt < 16; attempt++)
        {
            NamespaceIndex index = await ReadIndexAsync(collection, cancellationToken).ConfigureAwait(false);
            if (index.Names.Contains(ns, StringComparer.Ordinal)) return;
            ReadOnlyMemory<byte> body = JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object> { ["namespaces"] = index.Names.Append(ns).ToArray() });
            try
            {
                if (index.Cas == 0)
                    await collection.InsertAsync(IndexKey, body, new InsertOptions().Transcoder(RawBodyTranscoder.Instance).CancellationToken(cancellationToken)).ConfigureAwait(false);
                else
                    await collection.ReplaceAsync(IndexKey, body, new ReplaceOptions().Transcoder(RawBodyTranscoder.Instance).Cas(index.Cas).CancellationToken(cancellationToken)).ConfigureAwait(false);
                return;
            }
            catch (Exception ex) when (ex is DocumentExistsException or CasMismatchException)
            {
                // another client changed it: read again
            }
        }
        throw new IOException($"Could not add '{ns}' to {IndexKey} in {Location}: it kept changing.");
    }

    private async ValueTask<DictionaryRecord?> ReadRecordAsync(ICouchbaseCollection collection, uint id, CancellationToken cancellationToken)
    {
        string key = RecordKey(id);
        DictionaryRecord? record = await ReadAsync(collection, key, _maxRecordBytes, cancellationToken, (body, store) => store._json.ParseRecord(key, body), withCas: false)
            .ConfigureAwait(false);
        if (record is not null && record.Id != id)
            throw new InvalidDataException($"Dictionary record {key} in {Location} says it is dictionary {record.Id}.");
        return record;
    }

    private ValueTask<T?> ReadSmallAsync<T>(ICouchbaseCollection collection, string key, CancellationToken cancellationToken,
        Func<ReadOnlyMemory<byte>, CouchbaseDictionaryStore, T> parse, bool withCas = false) =>
        ReadAsync(collection, key, MaxSmallDocumentBytes, cancellationToken, parse, withCas);

    /// <summary>Reads a document's body without decoding it, refuses it when larger than <paramref name="limit"/>, then parses it.</summary>
    private async ValueTask<T?> ReadAsync<T>(ICouchbaseCollection collection, string key, long limit, CancellationToken cancellationToken,
        Func<ReadOnlyMemory<byte>, CouchbaseDictionaryStore, T> parse, bool withCas)
    {
        IGetResult result;
        try
        {
            result = await collection.GetAsync(key, new GetOptions().Transcoder(RawBodyTranscoder.Instance).CancellationToken(cancellationToken)).ConfigureAwait(false);
        }
        catch (DocumentNotFoundException)
        {
            return default;
        }
        using (result)
        {
            RawBody body = result.ContentAs<RawBody>()!;
            if (body.Data.Length > limit)
                throw new InvalidDataException($"{key} in {Location} has {body.Data.Length} bytes, over the {limit} a valid document can have; it was not parsed.");
            T parsed = parse(body.Data, this);
            return withCas && parsed is NamespaceIndex index ? (T)(object)(index with { Cas = result.Cas }) : parsed;
        }
    }

    private static bool SameDictionary(DictionaryRecord a, DictionaryRecord b) =>
        a.Id == b.Id && a.Version == b.Version && a.ContentHash == b.ContentHash && a.ShapesHash == b.ShapesHash && string.Equals(a.Namespace, b.Namespace, StringComparison.Ordinal);

    private sealed record NamespaceIndex(List<string> Names, ulong Cas);
}
