namespace Compression.Internal;

/// <summary>
/// A small lock-free pool of reusable objects (zstd contexts). Holds at most a fixed number of idle objects;
/// extra returns are disposed. Rent never blocks: when the pool is empty a new object is created.
/// </summary>
internal sealed class BoundedPool<T> where T : class, IDisposable
{
    private readonly T?[] _items;
    private readonly Func<T> _factory;
    private T? _fast;

    public BoundedPool(Func<T> factory, int capacity = 0)
    {
        _factory = factory;
        _items = new T?[capacity > 0 ? capacity : Math.Max(2, Environment.ProcessorCount * 2)];
    }

    public T Rent()
    {
        T? item = Interlocked.Exchange(ref _fast, null);
        if (item is not null) return item;
        T?[] items = _items;
        for (int i = 0; i < items.Length; i++)
        {
            item = Interlocked.Exchange(ref items[i], null);
            if (item is not null) return item;
        }
        return _factory();
    }

    public void Return(T item)
    {
        if (Interlocked.CompareExchange(ref _fast, item, null) is null) return;
        T?[] items = _items;
        for (int i = 0; i < items.Length; i++)
        {
            if (Interlocked.CompareExchange(ref items[i], item, null) is null) return;
        }
        item.Dispose();
    }
}
