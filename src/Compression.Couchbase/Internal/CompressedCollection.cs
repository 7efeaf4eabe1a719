using System.Runtime.ExceptionServices;
using Compression.Dictionaries;
using Couchbase;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Operations.SubDocument;
using Couchbase.KeyValue;
using Couchbase.KeyValue.RangeScan;
using Couchbase.Management.Query;

namespace Compression.Couchbase.Internal;

/// <summary>
/// A collection whose documents are compressed: every key-value operation that carries a body gets the collection's
/// <see cref="CompressingTranscoder"/> in a copy of its options (it replaces any transcoder given there; the caller's
/// options object is left as it was, so passing the same one to a plain collection afterwards writes plain); reads fetch the body,
/// load the dictionary its envelope names if needed (asynchronously), and only then hand back a result whose
/// <c>ContentAs&lt;T&gt;</c> decodes synchronously. Operations that work inside a body fail with <see cref="NotSupportedException"/>;
/// those that leave it alone (exists, touch, unlock, remove, sub-document calls on extended attributes only) pass through.
/// Sub-document calls may also read and write the whole body beside xattrs (<c>GetFull</c> decoded in the result,
/// <c>SetDoc</c> compressed, <c>ReplaceBodyWithXattr</c> as it is): <c>CompressedCollection.SubDocument.cs</c>, which is
/// what the SDK's distributed transactions need.
/// </summary>
internal sealed partial class CompressedCollection : ICouchbaseCollection
{
    private readonly ICouchbaseCollection _inner;
    private readonly CompressingTranscoder _transcoder;
    private readonly GetOptions _get;
    private readonly UpsertOptions _upsert;
    private readonly InsertOptions _insert;
    private readonly ReplaceOptions _replace;

    public CompressedCollection(ICouchbaseCollection inner, CompressingTranscoder transcoder)
    {
        _inner = inner;
        _transcoder = transcoder;
        // Shared by every call that brings no options: the SDK only reads them (as it does its own Default instances).
        _get = new GetOptions().Transcoder(transcoder);
        _upsert = new UpsertOptions().Transcoder(transcoder);
        _insert = new InsertOptions().Transcoder(transcoder);
        _replace = new ReplaceOptions().Transcoder(transcoder);
        Binary = new CounterOnlyBinaryCollection(inner.Binary, this);
    }

    /// <summary><c>bucket.scope.collection</c>.</summary>
    public string FullName => _transcoder.Namespace.Name;

    public CompressingTranscoder Transcoder => _transcoder;

    public ICouchbaseCollection Inner => _inner;

    public uint? Cid => _inner.Cid;

    public string Name => _inner.Name;

    public IScope Scope => _inner.Scope;

    public IBinaryCollection Binary { get; }

    public bool IsDefaultCollection => _inner.IsDefaultCollection;

    public bool SubdocAccessDeleted => _inner.SubdocAccessDeleted;

    public ICollectionQueryIndexManager QueryIndexes => _inner.QueryIndexes;

    /// <summary>
    /// A shallow copy of an SDK options object: the SDK's options are mutable builders, and setting our transcoder on the
    /// caller's own would make every later use of that object (on a plain collection too) write envelopes. A member-wise
    /// copy keeps every setting, those later SDK versions add included, where copying setting by setting would drop them.
    /// </summary>
    private static readonly Func<object, object> ShallowCopy = typeof(object)
        .GetMethod(nameof(MemberwiseClone), System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic)!
        .CreateDelegate<Func<object, object>>();

    private static TOptions Copy<TOptions>(TOptions options) where TOptions : class => (TOptions)ShallowCopy(options);

    public async Task<IGetResult> GetAsync(string id, GetOptions? options = null)
    {
        CancellationToken token = default;
        if (options is not null)
        {
            GetOptions.ReadOnly read = options.AsReadOnly();
            if (read.ProjectList.Count > 0) throw Refused("Get with a projection", id);
            if (read.IncludeExpiry) throw Refused("Get with expiry", id);
            token = read.Token;
        }
        IGetResult result = await _inner.GetAsync(id, options is null ? _get : Copy(options).Transcoder(_transcoder)).ConfigureAwait(false);
        ValueTask<IGetResult> ready = ReadyAsync(result, id, token);
        return ready.IsCompletedSuccessfully ? ready.Result : await ready.ConfigureAwait(false);
    }

    public async Task<IGetResult> GetAndTouchAsync(string id, TimeSpan expiry, GetAndTouchOptions? options = null)
    {
        CancellationToken token = options?.AsReadOnly().Token ?? default;
        options = (options is null ? new GetAndTouchOptions() : Copy(options)).Transcoder(_transcoder);
        IGetResult result = await _inner.GetAndTouchAsync(id, expiry, options).ConfigureAwait(false);
        return await ReadyAsync(result, id, token).ConfigureAwait(false);
    }

    public async Task<IGetResult> GetAndLockAsync(string id, TimeSpan expiry, GetAndLockOptions? options = null)
    {
        CancellationToken token = options?.AsReadOnly().Token ?? default;
        options = (options is null ? new GetAndLockOptions() : Copy(options)).Transcoder(_transcoder);
        IGetResult result = await _inner.GetAndLockAsync(id, expiry, options).ConfigureAwait(false);
        return await ReadyAsync(result, id, token).ConfigureAwait(false);
    }

    public async Task<IGetReplicaResult> GetAnyReplicaAsync(string id, GetAnyReplicaOptions? options = null)
    {
        CancellationToken token = options?.AsReadOnly().Token ?? default;
        options = (options is null ? new GetAnyReplicaOptions() : Copy(options)).Transcoder(_transcoder);
        IGetReplicaResult result = await _inner.GetAnyReplicaAsync(id, options).ConfigureAwait(false);
        return (IGetReplicaResult)await ReadyAsync(result, id, token).ConfigureAwait(false);
    }

    public IEnumerable<Task<IGetReplicaResult>> GetAllReplicasAsync(string id, GetAllReplicasOptions? options = null)
    {
        CancellationToken token = options?.AsReadOnly().Token ?? default;
        options = (options is null ? new GetAllReplicasOptions() : Copy(options)).Transcoder(_transcoder);
        foreach (Task<IGetReplicaResult> replica in _inner.GetAllReplicasAsync(id, options))
        {
            yield return ReadyReplicaAsync(replica, id, token);
        }
    }

    public Task<IExistsResult> ExistsAsync(string id, ExistsOptions? options = null) => _inner.ExistsAsync(id, options);

    public Task<IMutationResult> UpsertAsync<T>(string id, T content, UpsertOptions? options = null) =>
        _inner.UpsertAsync(id, content, options is null ? _upsert : Copy(options).Transcoder(_transcoder));

    public Task<IMutationResult> InsertAsync<T>(string id, T content, InsertOptions? options = null) =>
        _inner.InsertAsync(id, content, options is null ? _insert : Copy(options).Transcoder(_transcoder));

    public Task<IMutationResult> ReplaceAsync<T>(string id, T content, ReplaceOptions? options = null) =>
        _inner.ReplaceAsync(id, content, options is null ? _replace : Copy(options).Transcoder(_transcoder));

    public Task RemoveAsync(string id, RemoveOptions? options = null) => _inner.RemoveAsync(id, options);

    [Obsolete("Use overload that does not have a Type parameter T.")]
    public Task UnlockAsync<T>(string id, ulong cas, UnlockOptions? options = null) => _inner.UnlockAsync(id, cas, options);

    public Task UnlockAsync(string id, ulong cas, UnlockOptions? options = null) => _inner.UnlockAsync(id, cas, options);

    public Task TouchAsync(string id, TimeSpan expiry, TouchOptions? options = null) => _inner.TouchAsync(id, expiry, options);

    public Task<IMutationResult?> TouchWithCasAsync(string id, TimeSpan expiry, TouchOptions? options = null) => _inner.TouchWithCasAsync(id, expiry, options);

    public IAsyncEnumerable<IScanResult> ScanAsync(IScanType scanType, ScanOptions? options = null) =>
        throw Refused("Scan (range and sampling scans return bodies undecoded)", id: null);

    public override string ToString() => $"compressed collection {FullName}";

    internal NotSupportedException Refused(string operation, string? id) => new(
        $"{operation} is not supported on the compressed collection '{FullName}'{(id is null ? "" : $" (document '{id}')")}: " +
        "compressed documents are opaque binary bodies to the server, so sub-document operations on body paths (those on xattrs and on the whole body pass through), " +
        "appends, scans, N1QL and Search cannot see into them. Read the whole document with GetAsync and write it back with ReplaceAsync.");

    /// <summary>
    /// Loads the dictionary the body's envelope names, so that <c>ContentAs</c> decodes synchronously. A body that cannot be
    /// pre-loaded (its header does not parse, or the dictionary it seems to name cannot be had) is not failed here: the
    /// collection cannot tell a damaged envelope from a raw binary document that starts with the envelope's magic byte (a
    /// <c>byte[]</c> written through a binary inner transcoder) until the caller names the type it reads. <c>ContentAs</c>
    /// then raises the error, naming the document, for every type that would be decoded, and gives raw types their bytes.
    /// </summary>
    /// <remarks>Synchronous when the dictionary is in memory (or the body names none): no state machine on the hot path.</remarks>
    private ValueTask<IGetResult> ReadyAsync(IGetResult result, string id, CancellationToken cancellationToken)
    {
        ValueTask<ZstdDictionary?> load;
        try
        {
            RawBody body = result.ContentAs<RawBody>()!;
            if (!body.IsEnvelope) return new(Ready(result, id, deferred: null, dictionary: null));
            load = _transcoder.Namespace.PreloadDictionaryAsync(body.Data.Span, cancellationToken);
        }
        catch (Exception ex) when (ex is DictionaryNotFoundException or InvalidDataException)
        {
            return new(Ready(result, id, ex, dictionary: null));
        }
        catch
        {
            result.Dispose();
            throw;
        }
        return load.IsCompletedSuccessfully ? new(Ready(result, id, deferred: null, load.Result)) : LoadThenReadyAsync(result, id, load);
    }

    private async ValueTask<IGetResult> LoadThenReadyAsync(IGetResult result, string id, ValueTask<ZstdDictionary?> load)
    {
        try
        {
            return Ready(result, id, deferred: null, await load.ConfigureAwait(false));
        }
        catch (Exception ex) when (ex is DictionaryNotFoundException or InvalidDataException)
        {
            return Ready(result, id, ex, dictionary: null);
        }
        catch
        {
            result.Dispose();
            throw;
        }
    }

    private CompressedGetResult Ready(IGetResult result, string id, Exception? deferred, ZstdDictionary? dictionary) =>
        result is IGetReplicaResult replica
            ? new CompressedGetReplicaResult(replica, this, id, deferred, dictionary)
            : new CompressedGetResult(result, this, id, deferred, dictionary);

    private async Task<IGetReplicaResult> ReadyReplicaAsync(Task<IGetReplicaResult> replica, string id, CancellationToken cancellationToken) =>
        (IGetReplicaResult)await ReadyAsync(await replica.ConfigureAwait(false), id, cancellationToken).ConfigureAwait(false);

    internal InvalidDataException Corrupt(string id, InvalidDataException inner) =>
        new($"Document '{id}' in the compressed collection '{FullName}' cannot be read: {inner.Message}", inner);
}

/// <summary>
/// A get result that names the document and collection when its body cannot be decoded; <paramref name="deferred"/> is the
/// error the dictionary's pre-load met, raised for every type the transcoder would decode. It holds the pre-loaded
/// <paramref name="dictionary"/> until it is disposed, so that the engine finds it for the synchronous decode even if other
/// reads evicted it from the bounded cache in between.
/// </summary>
internal class CompressedGetResult(IGetResult inner, CompressedCollection collection, string id, Exception? deferred = null, ZstdDictionary? dictionary = null) : IGetResult
{
    private ZstdDictionary? _dictionary = dictionary;

    public ulong Cas => inner.Cas;

    [Obsolete("This property is no longer supported; use ExpiryTime instead.")]
    public TimeSpan? Expiry => inner.Expiry;

    public DateTime? ExpiryTime => inner.ExpiryTime;

    public T? ContentAs<T>()
    {
        try
        {
            if (deferred is not null && !collection.Transcoder.ReadsRaw<T>()) ExceptionDispatchInfo.Throw(deferred);
            T? content = inner.ContentAs<T>();
            GC.KeepAlive(_dictionary); // held until here: see the remarks above
            return content;
        }
        catch (InvalidDataException ex)
        {
            throw collection.Corrupt(id, ex);
        }
        catch (DictionaryNotFoundException ex)
        {
            throw new DictionaryNotFoundException(ex.DictionaryId, ex.Namespace ?? collection.FullName,
                $"document '{id}' in collection '{collection.FullName}' names it ({ex.Message.TrimEnd('.')})", ex);
        }
    }

    public void Dispose()
    {
        _dictionary = null;
        inner.Dispose();
        GC.SuppressFinalize(this);
    }
}

/// <summary>The replica form of <see cref="CompressedGetResult"/>.</summary>
internal sealed class CompressedGetReplicaResult(IGetReplicaResult inner, CompressedCollection collection, string id, Exception? deferred = null,
    ZstdDictionary? dictionary = null)
    : CompressedGetResult(inner, collection, id, deferred, dictionary), IGetReplicaResult
{
    public bool IsActive => inner.IsActive;
}

/// <summary>
/// The binary operations of a compressed collection. Counters pass through: a counter is a number the server keeps as
/// ASCII digits (it creates it, with flags 0), never compressed, and readable through the compressed collection as any
/// plain document; on a document whose body is not a number (every compressed one: an envelope starts with 0xC5) the
/// server refuses, and that refusal becomes a <see cref="NotSupportedException"/> naming the operation. Append and prepend
/// are refused always, before anything is sent: spliced into an envelope the bytes would make it unreadable, and telling a
/// plain document from a compressed one would take a read that a concurrent write can make stale.
/// </summary>
internal sealed class CounterOnlyBinaryCollection(IBinaryCollection inner, CompressedCollection collection) : IBinaryCollection
{
    public Task<IMutationResult> AppendAsync(string id, byte[] value, AppendOptions? options = null) => throw collection.Refused("Append", id);

    public Task<IMutationResult> PrependAsync(string id, byte[] value, PrependOptions? options = null) => throw collection.Refused("Prepend", id);

    public async Task<ICounterResult> IncrementAsync(string id, IncrementOptions? options = null)
    {
        try
        {
            return await inner.IncrementAsync(id, options).ConfigureAwait(false);
        }
        catch (CouchbaseException ex) when (NotANumber(ex))
        {
            throw NotANumber("Increment", id, ex);
        }
    }

    public async Task<ICounterResult> DecrementAsync(string id, DecrementOptions? options = null)
    {
        try
        {
            return await inner.DecrementAsync(id, options).ConfigureAwait(false);
        }
        catch (CouchbaseException ex) when (NotANumber(ex))
        {
            throw NotANumber("Decrement", id, ex);
        }
    }

    /// <summary>The server's DELTA_BADVAL (0x06): the SDK raises it as a bare <see cref="CouchbaseException"/> with that status.</summary>
    private static bool NotANumber(CouchbaseException ex) =>
        ex is DeltaInvalidException
        || (ex.Context is KeyValueErrorContext { Status: ResponseStatus.IncrDecrOnNonNumericValue });

    private NotSupportedException NotANumber(string operation, string id, CouchbaseException ex) => new(
        $"{operation} is not supported on document '{id}' of the compressed collection '{collection.FullName}': the server says its body " +
        "is not a number (a counter is ASCII digits; a compressed document never is). Counters pass through the compressed collection " +
        "only for documents that are counters.", ex);
}
