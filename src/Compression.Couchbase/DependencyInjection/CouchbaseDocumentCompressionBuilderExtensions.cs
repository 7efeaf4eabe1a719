using Compression.Couchbase;
using Compression.Dictionaries;
using Couchbase.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Adds the Couchbase adapter to document compression.</summary>
public static class CouchbaseDocumentCompressionBuilderExtensions
{
    /// <summary>
    /// Keeps the dictionaries in <paramref name="bucketName"/> (<see cref="CouchbaseDictionaryStore"/>, default collection
    /// unless configured) and registers <see cref="CompressedCollectionProvider"/>, which hands out compressed collections.
    /// Builds on the SDK's own registration: call <c>services.AddCouchbase(...)</c> (Couchbase.Extensions.DependencyInjection)
    /// too; buckets are opened through its <see cref="IBucketProvider"/>. Each collection's settings are the namespace
    /// <c>Compression:Namespaces:{bucket.scope.collection}</c>, else <c>Compression:Defaults</c>.
    /// </summary>
    /// <param name="builder">What <c>AddDocumentCompression(...)</c> returned.</param>
    /// <param name="bucketName">The bucket the dictionaries live in.</param>
    /// <param name="configure">Changes to the defaults (store scope and collection, compression on or off, JSON transcoder).</param>
    public static DocumentCompressionBuilder AddCouchbase(this DocumentCompressionBuilder builder, string bucketName, Action<CouchbaseCompressionOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentException.ThrowIfNullOrEmpty(bucketName);
        IServiceCollection services = builder.Services;
        services.AddOptions<CouchbaseCompressionOptions>().Configure(o => o.BucketName = bucketName).ValidateOnStart();
        if (configure is not null) services.Configure(configure);
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<CouchbaseCompressionOptions>, CouchbaseCompressionOptionsValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<CompressionEngineOptions>, CouchbaseNamespacesValidator>());
        // MongoDB's ClearFields, accepted and ignored here (a Couchbase document's body is stored whole), as before the key
        // became the MongoDB adapter's own: a configuration shared by both, or copied from docs/appsettings.example.json,
        // keeps starting.
        builder.AddNamespaceSetting("ClearFields");
        builder.UseStore(sp =>
        {
            CouchbaseCompressionOptions options = sp.GetRequiredService<IOptions<CouchbaseCompressionOptions>>().Value;
            IBucketProvider buckets = BucketProvider(sp);
            string name = $"{options.BucketName}.{options.StoreScopeName}.{options.StoreCollectionName}";
            return new CouchbaseDictionaryStore(async _ =>
            {
                try
                {
                    var bucket = await buckets.GetBucketAsync(options.BucketName).ConfigureAwait(false);
                    var scope = await bucket.ScopeAsync(options.StoreScopeName).ConfigureAwait(false);
                    return await scope.CollectionAsync(options.StoreCollectionName).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is not OutOfMemoryException)
                {
                    // IOException: the engine's retry policy treats it as the store being unreachable.
                    throw new IOException($"Could not open the dictionary store's collection '{name}' (AddCouchbase(\"{options.BucketName}\"), " +
                        $"StoreScopeName '{options.StoreScopeName}', StoreCollectionName '{options.StoreCollectionName}'): {ex.Message}", ex);
                }
            }, name, sp.GetRequiredService<IOptions<CompressionEngineOptions>>().Value.MaxDictionaryBytes);
        });
        services.TryAddSingleton(sp => new CompressedCollectionProvider(BucketProvider(sp), sp.GetRequiredService<CompressionEngine>(),
            sp.GetRequiredService<IOptions<CouchbaseCompressionOptions>>(), sp.GetRequiredService<IOptions<CompressionEngineOptions>>()));
        return builder;
    }

    private static IBucketProvider BucketProvider(IServiceProvider sp) => sp.GetService<IBucketProvider>() ?? throw new InvalidOperationException(
        "Document compression's AddCouchbase(...) needs the Couchbase SDK's services: call services.AddCouchbase(...) from Couchbase.Extensions.DependencyInjection too.");

    private sealed class CouchbaseCompressionOptionsValidator : IValidateOptions<CouchbaseCompressionOptions>
    {
        public ValidateOptionsResult Validate(string? name, CouchbaseCompressionOptions options)
        {
            List<string> failures = [];
            if (string.IsNullOrWhiteSpace(options.BucketName)) failures.Add("AddCouchbase: BucketName is empty; allowed: the name of the bucket the dictionaries live in.");
            if (string.IsNullOrWhiteSpace(options.StoreScopeName)) failures.Add("AddCouchbase: StoreScopeName is empty; allowed: a scope name (_default by default).");
            if (string.IsNullOrWhiteSpace(options.StoreCollectionName)) failures.Add("AddCouchbase: StoreCollectionName is empty; allowed: a collection name (_default by default).");
            return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
        }
    }

    /// <summary>Namespaces of the store's bucket must be <c>bucket.scope.collection</c>: anything else could never match a collection.</summary>
    private sealed class CouchbaseNamespacesValidator(IOptions<CouchbaseCompressionOptions> couchbase) : IValidateOptions<CompressionEngineOptions>
    {
        public ValidateOptionsResult Validate(string? name, CompressionEngineOptions options)
        {
            string bucket = couchbase.Value.BucketName;
            List<string> failures = [];
            foreach (string key in options.Namespaces.Keys)
            {
                string[] parts = key.Split('.');
                if (parts[0] == bucket && (parts.Length != 3 || parts.Any(string.IsNullOrEmpty)))
                {
                    failures.Add($"{CompressionEngineOptions.SectionName}:Namespaces:{key}: a Couchbase namespace is bucket.scope.collection " +
                        $"(e.g. {bucket}._default._default or {bucket}.inventory.hotels).");
                }
            }
            return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
        }
    }
}
