namespace Compression.Dictionaries;

/// <summary>
/// A bounded reservoir of recently written documents (Vitter's algorithm R over the documents seen since the last
/// training, so new shapes displace old ones). Bounded by count, total bytes and per-document size. Thread-safe;
/// a write that is not sampled costs one interlocked increment and one random draw.
/// </summary>
internal sealed class SampleReservoir
{
    private readonly object _gate = new();
    private readonly List<byte[]> _items;
    private readonly int _maxCount;
    private readonly long _maxBytes;
    private readonly int _maxDocumentSize;
    private readonly Random _random;
    private long _seen;
    private long _bytes;

    public SampleReservoir(int maxCount, long maxBytes, int maxDocumentSize, Random? random = null)
    {
        _random = random ?? Random.Shared;
        _maxCount = maxCount;
        _maxBytes = maxBytes;
        _maxDocumentSize = maxDocumentSize;
        _items = []; // grows with the samples: an idle namespace costs a few hundred bytes, not the reservoir's capacity
    }

    private volatile int _count;

    public int Count => _count;

    public long Bytes => Interlocked.Read(ref _bytes);

    public void Offer(ReadOnlySpan<byte> document)
    {
        if (document.IsEmpty || document.Length > _maxDocumentSize || document.Length > _maxBytes) return;
        long n = Interlocked.Increment(ref _seen);
        long slot = n <= _maxCount ? -1 : _random.NextInt64(n);
        if (slot >= _maxCount) return; // not sampled: the common case once the reservoir is full

        byte[] copy = document.ToArray();
        lock (_gate)
        {
            if (slot < 0 && _items.Count < _maxCount && _bytes + copy.Length <= _maxBytes)
            {
                _items.Add(copy);
                _bytes += copy.Length;
                _count = _items.Count;
                return;
            }
            if (_items.Count == 0) return;
            int index = (int)(slot < 0 ? _random.Next(_items.Count) : slot % _items.Count);
            long bytes = _bytes - _items[index].Length + copy.Length;
            if (bytes > _maxBytes) return;
            _items[index] = copy;
            _bytes = bytes;
        }
    }

    /// <summary>The current samples (shared, immutable arrays), and a fresh start of the recency window.</summary>
    public byte[][] TakeSnapshot()
    {
        lock (_gate)
        {
            Interlocked.Exchange(ref _seen, _items.Count);
            return [.. _items];
        }
    }
}
