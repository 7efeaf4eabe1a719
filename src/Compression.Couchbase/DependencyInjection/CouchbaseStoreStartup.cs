using Couchbase;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Couchbase.Management.Collections;
using Compression.Dictionaries;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Compression.Couchbase;

/// <summary>
/// At start-up (<c>AddCouchbase(...)</c>'s hosted service): the store's default location, <c>compression.dictionaries</c>,
/// created when missing; start refused when dictionaries of an earlier version sit in <c>_default._default</c> instead;
/// then <see cref="CouchbaseDictionaryStore.CheckLocationAsync"/>. All skipped when
/// <see cref="CouchbaseCompressionOptions.CheckStoreLocation"/> is off. A failure fails the host's start with its reason.
/// </summary>
internal sealed class CouchbaseStoreStartup(Func<IBucketProvider> buckets, IOptions<CouchbaseCompressionOptions> options, CompressionEngine engine) : IHostedService
{
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        CouchbaseCompressionOptions o = options.Value;
        if (!o.CheckStoreLocation || engine.Store is not CouchbaseDictionaryStore store) return;
        if (o.StoreScopeName == CouchbaseCompressionOptions.DefaultStoreScopeName && o.StoreCollectionName == CouchbaseCompressionOptions.DefaultStoreCollectionName)
        {
            IBucket bucket = await buckets().GetBucketAsync(o.BucketName).ConfigureAwait(false);
            await EnsureDefaultLocationAsync(bucket, store.KeyPrefix + "namespaces", cancellationToken).ConfigureAwait(false);
        }

        await store.CheckLocationAsync(cancellationToken).ConfigureAwait(false);
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    private static async Task EnsureDefaultLocationAsync(IBucket bucket, string indexKey, CancellationToken cancellationToken)
    {
        const string Scope = CouchbaseCompressionOptions.DefaultStoreScopeName, Collection = CouchbaseCompressionOptions.DefaultStoreCollectionName;
        string location = $"{bucket.Name}.{Scope}.{Collection}";
        IEnumerable<ScopeSpec> scopes;
        try
        {
            scopes = await bucket.Collections.GetAllScopesAsync(new GetAllScopesOptions().CancellationToken(cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not (OperationCanceledException or OutOfMemoryException))
        {
            throw new InvalidOperationException($"Could not list the scopes of bucket '{bucket.Name}' to find the dictionary store's collection {location} " +
                $"({ex.Message}). {Advice(bucket.Name)}", ex);
        }

        bool exists = scopes.Any(s => s.Name == Scope && s.Collections.Any(c => c.Name == Collection));
        bool legacy = (await bucket.DefaultCollection().ExistsAsync(indexKey, new ExistsOptions().CancellationToken(cancellationToken)).ConfigureAwait(false)).Exists;
        if (legacy && (!exists || !(await (await bucket.ScopeAsync(Scope).ConfigureAwait(false)).Collection(Collection)
                .ExistsAsync(indexKey, new ExistsOptions().CancellationToken(cancellationToken)).ConfigureAwait(false)).Exists))
        {
            throw new InvalidOperationException($"Dictionaries are in {bucket.Name}._default._default, where versions before the store's own collection kept them, " +
                $"and {location} has none: documents naming them would not be read. Keep them there with AddCouchbase(\"{bucket.Name}\", o => {{ " +
                "o.StoreScopeName = \"_default\"; o.StoreCollectionName = \"_default\"; }), or move them: docz dictionaries export, then import with the new location.");
        }

        if (exists) return;
        try
        {
            try
            {
                await bucket.Collections.CreateScopeAsync(Scope, new CreateScopeOptions().CancellationToken(cancellationToken)).ConfigureAwait(false);
            }
            catch (ScopeExistsException)
            {
                // another client made it first
            }

            // No maxTTL: documents in it never expire (unless the bucket has one, which CheckLocationAsync then refuses).
            await bucket.Collections.CreateCollectionAsync(Scope, Collection, new CreateCollectionSettings(), new CreateCollectionOptions().CancellationToken(cancellationToken))
                .ConfigureAwait(false);
        }
        catch (CollectionExistsException)
        {
            // another client made it first
        }
        catch (Exception ex) when (ex is not (OperationCanceledException or OutOfMemoryException))
        {
            throw new InvalidOperationException($"The dictionary store's collection {location} does not exist and could not be created ({ex.Message}). {Advice(bucket.Name)}", ex);
        }
    }

    private static string Advice(string bucket) =>
        $"Create it with a user that may (couchbase-cli collection-manage --bucket {bucket} --create-scope {CouchbaseCompressionOptions.DefaultStoreScopeName}, then " +
        $"--create-collection {CouchbaseCompressionOptions.DefaultStoreScopeName}.{CouchbaseCompressionOptions.DefaultStoreCollectionName}), or keep the dictionaries " +
        $"elsewhere: AddCouchbase(\"{bucket}\", o => {{ o.StoreScopeName = ...; o.StoreCollectionName = ...; }}) (docs/couchbase.md, \"Where the dictionaries live\").";
}
