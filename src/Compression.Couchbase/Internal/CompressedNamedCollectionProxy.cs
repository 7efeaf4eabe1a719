using System.Reflection;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;

namespace Compression.Couchbase.Internal;

/// <summary>
/// What <c>CompressCollection&lt;T&gt;()</c> registers in place of the SDK's named collection provider <c>T</c> (an
/// interface deriving <see cref="INamedCollectionProvider"/> with no members of its own, as the SDK requires): a proxy
/// implementing <c>T</c> that forwards to the SDK's own provider and hands out its collection compressed, through the
/// application's <see cref="CompressedCollectionProvider"/> (one compressed collection per namespace, shared).
/// </summary>
internal class CompressedNamedCollectionProxy : DispatchProxy
{
    private static readonly MethodInfo GetCollection = typeof(INamedCollectionProvider).GetMethod(nameof(INamedCollectionProvider.GetCollectionAsync))!;

    private INamedCollectionProvider _inner = null!;
    private CompressedCollectionProvider _compressed = null!;

    /// <summary>A proxy implementing <paramref name="providerType"/> around <paramref name="inner"/>.</summary>
    public static object Create(Type providerType, INamedCollectionProvider inner, CompressedCollectionProvider compressed)
    {
        var proxy = (CompressedNamedCollectionProxy)Create(providerType, typeof(CompressedNamedCollectionProxy));
        proxy._inner = inner;
        proxy._compressed = compressed;
        return proxy;
    }

    /// <inheritdoc/>
    protected override object? Invoke(MethodInfo? targetMethod, object?[]? args)
    {
        ArgumentNullException.ThrowIfNull(targetMethod);
        if (targetMethod == GetCollection) return GetCollectionAsync();
        // ScopeName, CollectionName: the SDK's provider answers (T declares nothing else).
        try
        {
            return targetMethod.Invoke(_inner, args);
        }
        catch (TargetInvocationException ex) when (ex.InnerException is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(ex.InnerException);
            throw;
        }
    }

    private ValueTask<ICouchbaseCollection> GetCollectionAsync()
    {
        ValueTask<ICouchbaseCollection> inner = _inner.GetCollectionAsync();
        return inner.IsCompletedSuccessfully
            ? new ValueTask<ICouchbaseCollection>(_compressed.Compress(inner.Result))
            : new ValueTask<ICouchbaseCollection>(CompressAsync(inner));
    }

    private async Task<ICouchbaseCollection> CompressAsync(ValueTask<ICouchbaseCollection> inner) =>
        _compressed.Compress(await inner.ConfigureAwait(false));
}
