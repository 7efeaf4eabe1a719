using System.Reflection;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Operations.SubDocument;
using Couchbase.KeyValue;

namespace Compression.Couchbase.Internal;

/// <summary>
/// Sub-document calls through the compressed collection. The server cannot see into a compressed body, so a call passes
/// through only when what it touches is beside the body:
/// <list type="bullet">
/// <item>extended attributes (<see cref="SubdocPathFlags.Xattr"/>, virtual ones such as <c>$document</c> included);</item>
/// <item>in a lookup, the whole body (<c>GetFull</c>): the envelope the server returns is decoded in the result before the
/// caller sees it, so <c>ContentAs&lt;T&gt;</c> of that spec reads the document, through any transcoder;</item>
/// <item>in a mutation, the whole body written with <c>SetDoc</c>: the call gets the collection's transcoder (in a copy
/// of its options), which the SDK encodes a whole body with, so the body is an envelope. The SDK cannot send new flags
/// with it to a server without its binary-xattr feature, so the document may keep the JSON flags it had: an envelope is
/// known by its first byte (0xC5, which no JSON text starts with) under any flags.</item>
/// <item>in a mutation, <c>ReplaceBodyWithXattr</c>, which makes an xattr the new body: that body is whatever the xattr
/// held (plain JSON, when the SDK's distributed transactions commit), so the document is stored uncompressed, readable
/// by every client, and compressed again by its next write through this collection (or <c>docz migrate</c>).</item>
/// </list>
/// A whole-document delete (<c>Remove("")</c>) passes through as <c>RemoveAsync</c> does. A body path is refused with
/// <see cref="NotSupportedException"/> before anything is sent.
/// </summary>
internal sealed partial class CompressedCollection
{
    /// <summary>Passes through (see the class remarks); a whole-body spec is decoded in the result.</summary>
    public Task<ILookupInResult> LookupInAsync(string id, IEnumerable<LookupInSpec> specs, LookupInOptions? options = null)
    {
        List<LookupInSpec> list = Lookups(specs, "LookupIn", id, allowWholeBody: true, out int wholeBody);
        Task<ILookupInResult> lookup = _inner.LookupInAsync(id, list, options);
        return wholeBody < 0 ? lookup : DecodeWholeBodyAsync(lookup, list[wholeBody], wholeBody, id);
    }

    /// <summary>As <see cref="LookupInAsync"/>, from the first copy that answers.</summary>
    public Task<ILookupInReplicaResult> LookupInAnyReplicaAsync(string id, IEnumerable<LookupInSpec> specs, LookupInAnyReplicaOptions? options = null)
    {
        List<LookupInSpec> list = Lookups(specs, "LookupInAnyReplica", id, allowWholeBody: true, out int wholeBody);
        Task<ILookupInReplicaResult> lookup = _inner.LookupInAnyReplicaAsync(id, list, options);
        return wholeBody < 0 ? lookup : DecodeWholeBodyAsync(lookup, list[wholeBody], wholeBody, id);
    }

    /// <summary>
    /// Xattrs only: the SDK reads every copy into the same spec objects at once, so a body decoded in one result would be
    /// overwritten by the next copy's reply.
    /// </summary>
    public IAsyncEnumerable<ILookupInReplicaResult> LookupInAllReplicasAsync(string id, IEnumerable<LookupInSpec> specs, LookupInAllReplicasOptions? options = null) =>
        _inner.LookupInAllReplicasAsync(id, Lookups(specs, "LookupInAllReplicas", id, allowWholeBody: false, out _), options);

    /// <summary>
    /// Passes through when every spec is on an xattr or replaces the body from one; a whole body (<c>SetDoc</c>) is written
    /// compressed (see the class remarks).
    /// </summary>
    public Task<IMutateInResult> MutateInAsync(string id, IEnumerable<MutateInSpec> specs, MutateInOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(specs);
        List<MutateInSpec> list = [.. specs];
        bool wholeBody = false;
        foreach (MutateInSpec spec in list)
        {
            // Beside the body, or the whole document deleted (as RemoveAsync): nothing of an envelope is read or written.
            if (spec.OpCode == OpCode.SubReplaceBodyWithXattr || spec.PathFlags.HasFlag(SubdocPathFlags.Xattr)
                || spec is { OpCode: OpCode.Delete, Path.Length: 0 }) continue;
            if (spec is { OpCode: OpCode.Set, Path.Length: 0 })
            {
                wholeBody = true;
                continue;
            }
            throw Refused($"MutateIn (sub-document) on the body path '{spec.Path}'", id);
        }
        // The SDK writes a whole body through the options' transcoder (and xattr values through its serializer, the inner one's).
        return _inner.MutateInAsync(id, list, wholeBody ? (options is null ? new MutateInOptions() : Copy(options)).Transcoder(_transcoder) : options);
    }

    /// <summary>
    /// The specs, listed once, when each one is on an xattr or (when <paramref name="allowWholeBody"/>) is the one whole-body
    /// get; otherwise a <see cref="NotSupportedException"/> naming the operation and the first body path, before anything is sent.
    /// </summary>
    private List<LookupInSpec> Lookups(IEnumerable<LookupInSpec> specs, string operation, string id, bool allowWholeBody, out int wholeBody)
    {
        ArgumentNullException.ThrowIfNull(specs);
        List<LookupInSpec> list = [.. specs];
        wholeBody = -1;
        for (int i = 0; i < list.Count; i++)
        {
            LookupInSpec spec = list[i];
            if (spec.PathFlags.HasFlag(SubdocPathFlags.Xattr)) continue;
            if (spec is { OpCode: OpCode.Get, Path.Length: 0 } && allowWholeBody && wholeBody < 0)
            {
                wholeBody = i;
                continue;
            }
            throw Refused(spec.Path.Length == 0
                ? $"{operation} (sub-document) on the whole body{(allowWholeBody ? " twice" : " of every copy")}"
                : $"{operation} (sub-document) on the body path '{spec.Path}'", id);
        }
        return list;
    }

    /// <summary>
    /// Replaces, in the result, the whole-body spec's bytes by the document the envelope holds (a plain body is left as it
    /// is). The SDK keeps a spec's reply in the spec object itself (<c>OperationSpec.Bytes</c>, internal), and its
    /// transactions read it from there, past any public API: that property is the one internal member of the SDK this
    /// library touches, checked by a test for the SDK range the package allows.
    /// </summary>
    private async Task<TResult> DecodeWholeBodyAsync<TResult>(Task<TResult> lookup, LookupInSpec spec, int index, string id) where TResult : ILookupInResult
    {
        TResult result = await lookup.ConfigureAwait(false);
        try
        {
            if (!result.Exists(index)) return result;
            ReadOnlyMemory<byte> body = SpecBytes.Get(spec);
            if (!DocumentEnvelope.IsEnvelope(body.Span)) return result;
            byte[] json;
            try
            {
                json = await _transcoder.Namespace.DecompressAsync(body).ConfigureAwait(false);
            }
            catch (InvalidDataException ex)
            {
                throw Corrupt(id, ex);
            }
            if (!DocumentLimits.IsJsonDepthWithinLimit(json))
                throw Corrupt(id, new InvalidDataException($"The document nests deeper than {DocumentLimits.MaxJsonDepth} levels of objects and arrays (the most a compressed collection writes)."));
            SpecBytes.Set(spec, json);
            return result;
        }
        catch
        {
            result.Dispose();
            throw;
        }
    }

    /// <summary>The SDK's internal <c>OperationSpec.Bytes</c>: a spec's reply, as its results and transactions read it.</summary>
    internal static class SpecBytes
    {
        private static readonly PropertyInfo? Property =
            typeof(OperationSpec).GetProperty("Bytes", BindingFlags.Instance | BindingFlags.NonPublic, null, typeof(ReadOnlyMemory<byte>), [], null);

        private static readonly Func<OperationSpec, ReadOnlyMemory<byte>>? Getter =
            Property?.GetMethod?.CreateDelegate<Func<OperationSpec, ReadOnlyMemory<byte>>>();

        private static readonly Action<OperationSpec, ReadOnlyMemory<byte>>? Setter =
            Property?.SetMethod?.CreateDelegate<Action<OperationSpec, ReadOnlyMemory<byte>>>();

        /// <summary>Whether this SDK has the member (a test holds it for every SDK version the package allows).</summary>
        public static bool IsAvailable => Getter is not null && Setter is not null;

        public static ReadOnlyMemory<byte> Get(OperationSpec spec) => (Getter ?? throw Missing())(spec);

        public static void Set(OperationSpec spec, ReadOnlyMemory<byte> bytes) => (Setter ?? throw Missing())(spec, bytes);

        private static NotSupportedException Missing() => new(
            $"This version of CouchbaseNetClient ({typeof(OperationSpec).Assembly.GetName().Version}) has no OperationSpec.Bytes, which the compressed " +
            "collection needs to decode a whole-body sub-document lookup (GetFull, as distributed transactions use it). Use an SDK version the package supports.");
    }
}
