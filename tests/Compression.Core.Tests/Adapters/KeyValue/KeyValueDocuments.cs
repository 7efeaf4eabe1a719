using Compression.Dictionaries;

namespace Compression.Core.Tests.Adapters.KeyValue;

/// <summary>
/// The key-value adapter's stored layout: a document's value is its envelope (magic 0xC5) or, written before
/// compression or with it off, the JSON itself (which never starts with 0xC5). No clear parts: the key is the id.
/// </summary>
internal sealed class KeyValueDocuments(KeyValueDatabase database, CompressionNamespace @namespace, bool compress = true)
{
    public static string Key(string key) => $"doc:{key}";

    public async Task PutAsync(string key, byte[] json) => await database.SetAsync(Key(key), compress ? @namespace.Compress(json) : json);

    public async Task<byte[]?> GetAsync(string key, CancellationToken cancellationToken = default)
    {
        byte[]? value = await database.GetAsync(Key(key));
        if (value is null) return null;
        return value is [0xC5, ..] ? await @namespace.DecompressAsync(value, cancellationToken) : value;
    }
}
