using Compression.Dictionaries;
using Couchbase.Management.Buckets;
using Couchbase.Management.Collections;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

public sealed partial class CouchbaseDictionaryStore
{
    /// <summary>
    /// Checks that the store's collection keeps what is written to it for ever, as a dictionary must outlive every
    /// document that names it: refused are a collection whose documents expire (its own maximum TTL, or the bucket's
    /// when it has none), an ephemeral bucket that evicts (<c>nruEviction</c>) and a memcached bucket; and records
    /// already written with an expiry (under a maximum TTL since lifted, or set by hand) are named. Asks the cluster's
    /// management service (the SDK's bucket and collection managers), so the user needs a role that can read the bucket's
    /// settings and scopes. <c>AddCouchbase(...)</c> runs it at start-up unless <see cref="CouchbaseCompressionOptions.CheckStoreLocation"/>
    /// is off; without dependency injection, call it before the engine's first write.
    /// </summary>
    /// <exception cref="InvalidOperationException">The location would lose dictionaries, does not exist, or could not be checked; the message says which and why.</exception>
    public async Task CheckLocationAsync(CancellationToken cancellationToken = default)
    {
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        string? problem;
        try
        {
            problem = await LocationProblemAsync(collection, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not (OperationCanceledException or OutOfMemoryException))
        {
            throw new InvalidOperationException($"Could not check that the dictionary store's collection '{CollectionName}' keeps dictionaries for ever " +
                $"(bucket type, eviction and maximum TTL, from the cluster's management service): {ex.Message}", ex);
        }

        problem ??= await ExpiringRecordsAsync(collection, cancellationToken).ConfigureAwait(false);
        if (problem is not null)
        {
            throw new InvalidOperationException($"The dictionary store's collection '{CollectionName}' cannot keep dictionaries: {problem}. A dictionary must " +
                "outlive every document that names it, or those documents become unreadable. Keep the dictionaries in a collection whose documents never " +
                "expire, in a Couchbase bucket (or an ephemeral one with noEviction).");
        }
    }

    /// <summary>
    /// The records that carry an expiry (their <c>$document.exptime</c>, one sub-document lookup each), or null when none
    /// does: a maximum TTL applies when a document is written, so records written under one keep its expiry after it is lifted.
    /// </summary>
    private async Task<string?> ExpiringRecordsAsync(ICouchbaseCollection collection, CancellationToken cancellationToken)
    {
        List<string> expiring = [];
        try
        {
            await foreach (DictionaryRecord record in ListAsync(cancellationToken: cancellationToken).ConfigureAwait(false))
            {
                using ILookupInResult meta = await collection.LookupInAsync(_keys.RecordKey(record.Id),
                    [LookupInSpec.Get("$document.exptime", isXattr: true)], new LookupInOptions().CancellationToken(cancellationToken)).ConfigureAwait(false);
                long expiry = meta.ContentAs<long>(0);
                if (expiry != 0) expiring.Add($"{record.Namespace} version {record.Version} (id {record.Id}) at {DateTimeOffset.FromUnixTimeSeconds(expiry):u}");
            }
        }
        catch (Exception ex) when (ex is not (OperationCanceledException or OutOfMemoryException))
        {
            throw new InvalidOperationException($"Could not check the expiry of the dictionary records in '{CollectionName}': {ex.Message}", ex);
        }

        return expiring.Count == 0 ? null
            : $"{expiring.Count} record(s) already carry an expiry and will be deleted: {string.Join("; ", expiring.Take(8))}{(expiring.Count > 8 ? "; ..." : "")}. " +
              "Export them now (docz dictionaries export) and remove their expiry (a KV touch with no expiry on each, as `cbc touch KEY -e 0` or " +
              "ICouchbaseCollection.TouchAsync(key, TimeSpan.Zero))";
    }

    /// <summary>Why documents written to <paramref name="collection"/> may not last for ever, or null when they do.</summary>
    internal static async Task<string?> LocationProblemAsync(ICouchbaseCollection collection, CancellationToken cancellationToken)
    {
        var bucket = collection.Scope.Bucket;
        BucketSettings settings = await bucket.Cluster.Buckets.GetBucketAsync(bucket.Name, new GetBucketOptions().CancellationToken(cancellationToken))
            .ConfigureAwait(false);
        if (settings.BucketType == BucketType.Memcached) return $"bucket '{bucket.Name}' is a memcached bucket (no persistence, evicts)";
        if (settings.BucketType == BucketType.Ephemeral && settings.EvictionPolicy == EvictionPolicyType.NotRecentlyUsed)
            return $"bucket '{bucket.Name}' is ephemeral with eviction (nruEviction): records can be evicted when memory is short";
        IEnumerable<ScopeSpec> scopes = await bucket.Collections.GetAllScopesAsync(new GetAllScopesOptions().CancellationToken(cancellationToken)).ConfigureAwait(false);
        CollectionSpec? spec = scopes.FirstOrDefault(s => s.Name == collection.Scope.Name)?.Collections.FirstOrDefault(c => c.Name == collection.Name);
        if (spec is null) return $"bucket '{bucket.Name}' has no collection {collection.Scope.Name}.{collection.Name}";
        // A collection's maxTTL: positive its own, 0 (or none) the bucket's, -1 never (Couchbase Server 7.6).
        if (spec.MaxExpiry is TimeSpan own && own > TimeSpan.Zero) return $"its documents expire {Seconds(own)} after they are written (the collection's maxTTL)";
        if (spec.MaxExpiry is TimeSpan never && never < TimeSpan.Zero) return null;
        if (settings.MaxTtl > 0) return $"its documents expire {Seconds(TimeSpan.FromSeconds(settings.MaxTtl))} after they are written (bucket '{bucket.Name}''s maxTTL)";
        return null;

        static string Seconds(TimeSpan ttl) => $"{(long)ttl.TotalSeconds} s";
    }
}
