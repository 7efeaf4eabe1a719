using Compression.Couchbase;
using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Microsoft.Extensions.Configuration;
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
    public static DocumentCompressionBuilder AddCouchbase(this DocumentCompressionBuilder builder, string bucketName, Action<CouchbaseCompressionOptions>? configure = null) =>
        builder.AddKeyedCouchbase(serviceKey: null, bucketName, configure);

    /// <summary>
    /// As <see cref="AddCouchbase"/>, on the cluster the SDK registered under <paramref name="serviceKey"/>
    /// (<c>services.AddKeyedCouchbase(serviceKey, ...)</c>): the store's bucket and every compressed collection are opened
    /// through that cluster's <see cref="IBucketProvider"/>. One cluster per application holds the dictionaries: call
    /// <see cref="AddCouchbase"/> or this once.
    /// </summary>
    /// <param name="builder">What <c>AddDocumentCompression(...)</c> returned.</param>
    /// <param name="serviceKey">The SDK's service key of the cluster; <see langword="null"/>: the cluster of <c>services.AddCouchbase(...)</c>.</param>
    /// <param name="bucketName">The bucket the dictionaries live in.</param>
    /// <param name="configure">Changes to the defaults (store scope and collection, compression on or off, JSON transcoder).</param>
    /// <exception cref="InvalidOperationException">The Couchbase adapter is already added to this application.</exception>
    public static DocumentCompressionBuilder AddKeyedCouchbase(this DocumentCompressionBuilder builder, string? serviceKey, string bucketName,
        Action<CouchbaseCompressionOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentException.ThrowIfNullOrEmpty(bucketName);
        IServiceCollection services = builder.Services;
        if (Registration(services) is { } added)
        {
            throw new InvalidOperationException($"Document compression's Couchbase adapter is already added ({added}): one cluster and bucket hold an " +
                "application's dictionaries, and every compressed collection uses them. Call AddCouchbase(...) or AddKeyedCouchbase(...) once.");
        }
        services.AddSingleton(new CouchbaseRegistration(serviceKey, bucketName));
        services.AddOptions<CouchbaseCompressionOptions>().Configure(o => o.BucketName = bucketName).ValidateOnStart();
        // Compression:Couchbase of the configuration, then the code's changes.
        builder.AddAdapterSection(CouchbaseCompressionOptions.SectionName);
        if (builder.Section?.GetSection(CouchbaseCompressionOptions.SectionName) is { } section && section.Exists())
            services.AddSingleton<IConfigureOptions<CouchbaseCompressionOptions>>(new CouchbaseCompressionOptions.ConfigureFromSection(section));
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
            IBucketProvider buckets = BucketProvider(sp, serviceKey);
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
        services.AddHostedService(sp => new CouchbaseStoreStartup(() => BucketProvider(sp, serviceKey),
            sp.GetRequiredService<IOptions<CouchbaseCompressionOptions>>(), sp.GetRequiredService<CompressionEngine>()));
        services.TryAddSingleton(sp => new CompressedCollectionProvider(BucketProvider(sp, serviceKey), sp.GetRequiredService<CompressionEngine>(),
            sp.GetRequiredService<IOptions<CouchbaseCompressionOptions>>(), sp.GetRequiredService<IOptions<CompressionEngineOptions>>()));
        return builder;
    }

    /// <summary>
    /// Makes the SDK's named collection provider <typeparamref name="T"/> hand out its collection compressed: registered
    /// with <c>services.AddCouchbaseBucket&lt;TBucket&gt;(bucket, b =&gt; b.AddScope(scope).AddCollection&lt;T&gt;(collection))</c>
    /// on the cluster of <see cref="AddCouchbase"/> (or <see cref="AddKeyedCouchbase"/>'s service key), it then resolves to
    /// a provider whose <see cref="INamedCollectionProvider.GetCollectionAsync"/> returns the collection decorated as
    /// <see cref="CompressedCollectionProvider"/> does (the same instance for the same collection). Call it after the SDK's
    /// registration of <typeparamref name="T"/> and after <see cref="AddCouchbase"/>. Like the SDK's proxies, it generates
    /// code at run time.
    /// </summary>
    /// <typeparam name="T">The interface the SDK registered (deriving <see cref="INamedCollectionProvider"/>, no members of its own).</typeparam>
    /// <param name="builder">What <c>AddDocumentCompression(...).AddCouchbase(...)</c> returned.</param>
    /// <exception cref="InvalidOperationException">The Couchbase adapter is not added yet, or <typeparamref name="T"/> is not registered on its cluster; the message says what to call.</exception>
    [System.Diagnostics.CodeAnalysis.RequiresDynamicCode("Implements T at run time (System.Reflection.DispatchProxy), as the SDK's named providers do.")]
    public static DocumentCompressionBuilder CompressCollection<T>(this DocumentCompressionBuilder builder) where T : class, INamedCollectionProvider
    {
        ArgumentNullException.ThrowIfNull(builder);
        IServiceCollection services = builder.Services;
        CouchbaseRegistration registration = Registration(services) ?? throw new InvalidOperationException(
            $"CompressCollection<{typeof(T).Name}>(): call AddCouchbase(...) (or AddKeyedCouchbase(...)) on the document compression builder first.");
        if (!typeof(T).IsInterface) throw new InvalidOperationException($"CompressCollection<{typeof(T).Name}>(): T must be the interface the SDK registered (deriving INamedCollectionProvider).");
        object? serviceKey = registration.ServiceKey;
        var innerKey = new InnerProvider(typeof(T), serviceKey);
        if (services.Any(d => d.IsKeyedService && Equals(d.ServiceKey, innerKey))) return builder; // already compressed
        int[] registered = [.. Enumerable.Range(0, services.Count).Where(i => services[i].ServiceType == typeof(T) && Equals(services[i].ServiceKey, serviceKey))];
        foreach (int i in registered)
        {
            // The SDK's registration stays, under a key of ours; T itself resolves to the compressing proxy around it.
            ServiceDescriptor original = services[i];
            services.Add(Rekeyed(original, innerKey));
            services[i] = ServiceDescriptor.DescribeKeyed(typeof(T), serviceKey, (sp, _) => CompressedNamedCollectionProxy.Create(typeof(T),
                (INamedCollectionProvider)sp.GetRequiredKeyedService(typeof(T), innerKey), sp.GetRequiredService<CompressedCollectionProvider>()), original.Lifetime);
        }
        if (registered.Length == 0)
        {
            string key = serviceKey is null ? "" : "Keyed";
            string keyArgument = serviceKey is null ? "" : $"\"{serviceKey}\", ";
            throw new InvalidOperationException($"CompressCollection<{typeof(T).Name}>(): {typeof(T).Name} is not registered on the cluster of {registration}. " +
                $"Register it first: services.Add{key}CouchbaseBucket<IYourBucketProvider>({keyArgument}\"bucket\", b => b.AddScope(\"scope\").AddCollection<{typeof(T).Name}>(\"collection\")).");
        }
        return builder;
    }

    /// <summary>The SDK's registration of a named collection provider, moved under <paramref name="key"/>.</summary>
    private static ServiceDescriptor Rekeyed(ServiceDescriptor original, object key)
    {
        if (original.IsKeyedService)
        {
            object? originalKey = original.ServiceKey;
            if (original.KeyedImplementationInstance is { } instance) return ServiceDescriptor.KeyedSingleton(original.ServiceType, key, instance);
            if (original.KeyedImplementationFactory is { } factory)
                return ServiceDescriptor.DescribeKeyed(original.ServiceType, key, (sp, _) => factory(sp, originalKey), original.Lifetime);
            return ServiceDescriptor.DescribeKeyed(original.ServiceType, key, original.KeyedImplementationType!, original.Lifetime);
        }
        if (original.ImplementationInstance is { } plain) return ServiceDescriptor.KeyedSingleton(original.ServiceType, key, plain);
        if (original.ImplementationFactory is { } plainFactory)
            return ServiceDescriptor.DescribeKeyed(original.ServiceType, key, (sp, _) => plainFactory(sp), original.Lifetime);
        return ServiceDescriptor.DescribeKeyed(original.ServiceType, key, original.ImplementationType!, original.Lifetime);
    }

    private static CouchbaseRegistration? Registration(IServiceCollection services) =>
        services.Select(d => d.IsKeyedService ? null : d.ImplementationInstance).OfType<CouchbaseRegistration>().FirstOrDefault();

    private static IBucketProvider BucketProvider(IServiceProvider sp, string? serviceKey) => (serviceKey is null
        ? sp.GetService<IBucketProvider>()
        : sp.GetKeyedService<IBucketProvider>(serviceKey)) ?? throw new InvalidOperationException(serviceKey is null
            ? "Document compression's AddCouchbase(...) needs the Couchbase SDK's services: call services.AddCouchbase(...) from Couchbase.Extensions.DependencyInjection too."
            : $"Document compression's AddKeyedCouchbase(\"{serviceKey}\", ...) needs the Couchbase SDK's cluster of that key: call services.AddKeyedCouchbase(\"{serviceKey}\", ...) from Couchbase.Extensions.DependencyInjection too.");

    /// <summary>What <see cref="AddKeyedCouchbase"/> was given (one per application).</summary>
    private sealed record CouchbaseRegistration(string? ServiceKey, string BucketName)
    {
        public override string ToString() => ServiceKey is null ? $"AddCouchbase(\"{BucketName}\")" : $"AddKeyedCouchbase(\"{ServiceKey}\", \"{BucketName}\")";
    }

    /// <summary>The key the SDK's own registration of a compressed named collection provider moves to.</summary>
    private sealed record InnerProvider(Type ProviderType, object? ServiceKey);

    private sealed class CouchbaseCompressionOptionsValidator : IValidateOptions<CouchbaseCompressionOptions>
    {
        public ValidateOptionsResult Validate(string? name, CouchbaseCompressionOptions options)
        {
            List<string> failures = [.. options.BindingErrors];
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
