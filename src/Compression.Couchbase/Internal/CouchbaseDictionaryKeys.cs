using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace Compression.Couchbase.Internal;

/// <summary>
/// The key layout of a <see cref="CouchbaseDictionaryStore"/>, every key under one prefix (<c>_compression::</c> unless a
/// test gives its own): <c>dict::{id}</c> a record, <c>ns::{namespace}::v{version}</c> the id that won a version,
/// <c>ns::{namespace}::current</c> the hint of the newest version, <c>namespaces</c> the index of namespaces.
/// </summary>
internal sealed class CouchbaseDictionaryKeys(string keyPrefix)
{
    private const int MaxKeyBytes = 250;

    /// <summary>The prefix of the store's keys (tests against a shared real cluster use one of their own).</summary>
    public string KeyPrefix { get; } = keyPrefix;

    /// <summary>The key of a dictionary record.</summary>
    internal string RecordKey(uint id) => $"{KeyPrefix}dict::{id.ToString(CultureInfo.InvariantCulture)}";

    /// <summary>The key that says which id won a version of a namespace.</summary>
    internal string VersionKey(string @namespace, int version) => $"{NamespaceKey(@namespace)}::v{version.ToString(CultureInfo.InvariantCulture)}";

    /// <summary>The key of a namespace's hint of its newest version.</summary>
    internal string HintKey(string @namespace) => $"{NamespaceKey(@namespace)}::current";

    /// <summary>The key of the index of namespaces.</summary>
    internal string IndexKey => KeyPrefix + "namespaces";

    /// <summary>
    /// <c>_compression::ns::{namespace}</c>; a namespace too long for Couchbase's 250-byte keys is cut and suffixed with a
    /// hash of the whole name (the documents hold the full name, checked on every read).
    /// </summary>
    private string NamespaceKey(string @namespace)
    {
        string key = $"{KeyPrefix}ns::{@namespace}";
        if (Encoding.UTF8.GetByteCount(key) + 16 <= MaxKeyBytes) return key;
        string hash = Convert.ToHexString(SHA256.HashData(Encoding.UTF8.GetBytes(@namespace)), 0, 16);
        string prefix = @namespace.Length > 100 ? @namespace[..100] : @namespace;
        while (Encoding.UTF8.GetByteCount(prefix) > 100) prefix = prefix[..^1];
        return $"{KeyPrefix}ns::{prefix}~{hash}";
    }
}
