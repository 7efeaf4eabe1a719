namespace Compression.Core.Tests.Adapters.KeyValue;

/// <summary>
/// The "database" of the in-memory key-value adapter: keys to byte values, with the few operations a key-value store
/// offers (get, set, set-if-absent, delete, keys by prefix). Thread-safe; asynchronous as a networked client would be.
/// </summary>
internal sealed class KeyValueDatabase(string name)
{
    private readonly Dictionary<string, byte[]> _values = new(StringComparer.Ordinal);

    public string Name { get; } = name;

    public ValueTask<byte[]?> GetAsync(string key)
    {
        lock (_values) return ValueTask.FromResult(_values.TryGetValue(key, out byte[]? value) ? value : null);
    }

    public byte[]? Get(string key)
    {
        lock (_values) return _values.TryGetValue(key, out byte[]? value) ? value : null;
    }

    public ValueTask SetAsync(string key, byte[] value)
    {
        lock (_values) _values[key] = value;
        return ValueTask.CompletedTask;
    }

    /// <summary>Sets the key only when it has no value: whether it was set.</summary>
    public ValueTask<bool> SetIfAbsentAsync(string key, byte[] value)
    {
        lock (_values) return ValueTask.FromResult(_values.TryAdd(key, value));
    }

    public ValueTask DeleteAsync(string key)
    {
        lock (_values) _values.Remove(key);
        return ValueTask.CompletedTask;
    }

    public ValueTask<string[]> KeysAsync(string prefix)
    {
        lock (_values) return ValueTask.FromResult(_values.Keys.Where(k => k.StartsWith(prefix, StringComparison.Ordinal)).ToArray());
    }
}
