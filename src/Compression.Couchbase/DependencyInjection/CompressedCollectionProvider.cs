using System.Collections.Concurrent;
using Compression.Dictionaries;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Microsoft.Extensions.Options;

namespace Compression.Couchbase;

/// <summary>
/// Hands out compressed collections by name (registered by <c>.AddCouchbase(...)</c> on the document compression builder):
/// the SDK's collection, opened through its <see cref="IBucketProvider"/> (the keyed one of <c>.AddKeyedCouchbase(serviceKey, ...)</c>),
/// decorated with the application's engine. Each collection is opened once and kept. Thread-safe. The SDK's own named
/// collection providers hand out compressed collections too, once given to <c>.CompressCollection&lt;T&gt;()</c>.
/// </summary>
public sealed class CompressedCollectionProvider
{
    private readonly IBucketProvider _buckets;
    private readonly CompressionEngine _engine;
    private readonly CouchbaseCompressionOptions _options;
    private readonly CompressionEngineOptions _engineOptions;
    private readonly ConcurrentDictionary<string, Lazy<Task<ICouchbaseCollection>>> _collections = new(StringComparer.Ordinal);
    // The SDK's collection instance -> its compressed form: a named provider asks on every GetCollectionAsync, and the SDK
    // hands out the same instance for a collection, so the common case is one lookup by reference, nothing allocated.
    private readonly ConcurrentDictionary<ICouchbaseCollection, ICouchbaseCollection> _byInstance = new(ReferenceEqualityComparer.Instance);

    internal CompressedCollectionProvider(IBucketProvider buckets, CompressionEngine engine, IOptions<CouchbaseCompressionOptions> options,
        IOptions<CompressionEngineOptions> engineOptions)
    {
        _buckets = buckets;
        _engine = engine;
        _options = options.Value;
        _engineOptions = engineOptions.Value;
    }

    /// <summary>The compressed collection <c>bucket.scope.collection</c>, opened on first use.</summary>
    /// <exception cref="InvalidOperationException">The bucket, scope or collection could not be opened; the message names it and its settings' configuration key.</exception>
    public async ValueTask<ICouchbaseCollection> GetCollectionAsync(string bucketName, string scopeName = "_default", string collectionName = "_default")
    {
        ArgumentException.ThrowIfNullOrEmpty(bucketName);
        ArgumentException.ThrowIfNullOrEmpty(scopeName);
        ArgumentException.ThrowIfNullOrEmpty(collectionName);
        string name = $"{bucketName}.{scopeName}.{collectionName}";
        Lazy<Task<ICouchbaseCollection>> entry = _collections.GetOrAdd(name, _ => new Lazy<Task<ICouchbaseCollection>>(() => OpenAsync(bucketName, scopeName, collectionName, name)));
        try
        {
            return await entry.Value.ConfigureAwait(false);
        }
        catch
        {
            _collections.TryRemove(new KeyValuePair<string, Lazy<Task<ICouchbaseCollection>>>(name, entry)); // the next call tries again
            throw;
        }
    }

    private async Task<ICouchbaseCollection> OpenAsync(string bucketName, string scopeName, string collectionName, string name)
    {
        ICouchbaseCollection collection;
        try
        {
            var bucket = await _buckets.GetBucketAsync(bucketName).ConfigureAwait(false);
            var scope = await bucket.ScopeAsync(scopeName).ConfigureAwait(false);
            collection = await scope.CollectionAsync(collectionName).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            throw new InvalidOperationException(
                $"Could not open the compressed collection '{name}' (bucket '{bucketName}', scope '{scopeName}', collection '{collectionName}'; " +
                $"its settings: {SettingsKey(name)}): {ex.Message}", ex);
        }
        return Decorate(collection);
    }

    private ICouchbaseCollection Decorate(ICouchbaseCollection collection) =>
        collection.WithCompression(_engine, new CompressedCollectionOptions { Compress = _options.Compress, JsonTranscoder = _options.JsonTranscoder });

    /// <summary>
    /// The compressed form of a collection the SDK opened (a named collection provider's): the one this provider already
    /// holds for its namespace, else <paramref name="collection"/> decorated and kept.
    /// </summary>
    internal ICouchbaseCollection Compress(ICouchbaseCollection collection)
    {
        if (_byInstance.TryGetValue(collection, out ICouchbaseCollection? known)) return known;
        ICouchbaseCollection compressed = CompressByName(collection, out bool kept);
        if (kept) _byInstance.TryAdd(collection, compressed);
        return compressed;
    }

    /// <param name="collection">The SDK's collection.</param>
    /// <param name="kept">Whether the result is the one kept for the namespace (else a stand-in while it opens).</param>
    private ICouchbaseCollection CompressByName(ICouchbaseCollection collection, out bool kept)
    {
        string name = CouchbaseCollectionCompressionExtensions.NamespaceName(collection);
        Lazy<Task<ICouchbaseCollection>> entry = _collections.GetOrAdd(name, _ => new Lazy<Task<ICouchbaseCollection>>(() => Task.FromResult(Decorate(collection))));
        Task<ICouchbaseCollection> opened = entry.Value;
        // One opened by name and still opening (or failed): decorate this one instead of waiting for it.
        kept = opened.IsCompletedSuccessfully;
        return kept ? opened.Result : Decorate(collection);
    }

    private string SettingsKey(string name) => _engineOptions.Namespaces.ContainsKey(name)
        ? $"{CompressionEngineOptions.SectionName}:Namespaces:{name}"
        : $"{CompressionEngineOptions.SectionName}:Defaults (there is no {CompressionEngineOptions.SectionName}:Namespaces:{name})";
}
