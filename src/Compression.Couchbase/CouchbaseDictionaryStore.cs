using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

/// <summary>
/// A <see cref="DictionaryStore"/> in a Couchbase collection (with <c>AddCouchbase(...)</c>, <c>compression.dictionaries</c>
/// unless configured: docs/couchbase.md, "Where the dictionaries live"), as
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
public sealed partial class CouchbaseDictionaryStore : DictionaryStore
{
    /// <summary>The prefix of every key the store writes, unless a test gives its own.</summary>
    internal const string DefaultKeyPrefix = "_compression::";

    private const int MaxSmallDocumentBytes = 64 * 1024;
    private readonly Func<CancellationToken, ValueTask<ICouchbaseCollection>> _collection;
    private readonly long _maxRecordBytes;
    private readonly int _maxDictionaryBytes;
    private readonly ConcurrentDictionary<string, int> _lastKnown = new(StringComparer.Ordinal);
    private readonly CouchbaseDictionaryKeys _keys;
    private readonly CouchbaseDictionaryJson _json;

    /// <summary>Creates the store in <paramref name="collection"/>.</summary>
    /// <param name="collection">Where the dictionaries live: a collection whose documents never expire (<see cref="CheckLocationAsync"/>), apart from application data.</param>
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
        _maxDictionaryBytes = maxDictionaryBytes;
        _maxRecordBytes = DictionaryRecordCodec.MaxRecordBytes(maxDictionaryBytes, base64: true);
    }

    /// <summary>The prefix of the store's keys (tests against a shared real cluster use one of their own).</summary>
    internal string KeyPrefix => _keys.KeyPrefix;

    /// <summary>The collection the records are in: <c>bucket.scope.collection</c>.</summary>
    internal string CollectionName { get; }

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
    /// How records, version pointers and the index are written: with durability <see cref="DurabilityLevel.Majority"/>,
    /// so that a failover before replication cannot lose a dictionary while documents that name it survive (documents
    /// an application writes with durability of their own would). The hints are caches, written without.
    /// </summary>
    private static InsertOptions DurableInsert(CancellationToken cancellationToken) =>
        new InsertOptions().Transcoder(RawBodyTranscoder.Instance).Durability(DurabilityLevel.Majority).CancellationToken(cancellationToken);

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
                DurableInsert(cancellationToken)).ConfigureAwait(false);
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
                DurableInsert(cancellationToken)).ConfigureAwait(false);
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

    private async ValueTask<DictionaryRecord?> ReadRecordAsync(ICouchbaseCollection collection, uint id, CancellationToken cancellationToken)
    {
        string key = RecordKey(id);
        DictionaryRecord? record = await ReadAsync(collection, key, _maxRecordBytes, cancellationToken, (body, store) => store._json.ParseRecord(key, body, store._maxDictionaryBytes), withCas: false)
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
}
