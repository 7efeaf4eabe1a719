using System.Buffers;

namespace Compression.Dictionaries;

/// <summary>
/// A bounded reservoir of recently written documents (Vitter's algorithm R over the documents seen since the last
/// training, so new shapes displace old ones). Bounded by count, total bytes and per-document size. Thread-safe;
/// a write that is not sampled costs one interlocked increment and one random draw.
/// </summary>
internal sealed class SampleReservoir
{
    private readonly object _gate = new();
    private readonly List<Sample> _items;
    private readonly int _maxCount;
    private readonly long _maxBytes;
    private readonly int _maxDocumentSize;
    private readonly Random _random;
    private long _offered;
    private long _windowStart; // the sequence number before the recency window's first document, less the samples kept
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
        long sequence = Interlocked.Increment(ref _offered);
        long n = sequence - Volatile.Read(ref _windowStart); // the document's number in the recency window
        long slot = n <= _maxCount ? -1 : _random.NextInt64(n);
        if (slot >= _maxCount) return; // not sampled: the common case once the reservoir is full

        // Samples live in pooled buffers: a sampled write rents one and returns the one it displaces, so the write path
        // allocates nothing in the steady state. Buffers are cleared when they go back (they held documents).
        byte[] buffer = ArrayPool<byte>.Shared.Rent(document.Length);
        document.CopyTo(buffer);
        var sample = new Sample(buffer, document.Length, sequence);
        byte[]? displaced = buffer;
        lock (_gate)
        {
            if (slot < 0 && _items.Count < _maxCount && _bytes + sample.Length <= _maxBytes)
            {
                _items.Add(sample);
                _bytes += sample.Length;
                _count = _items.Count;
                displaced = null;
            }
            else if (_items.Count > 0)
            {
                int index = (int)(slot < 0 ? _random.Next(_items.Count) : slot % _items.Count);
                long bytes = _bytes - _items[index].Length + sample.Length;
                if (bytes <= _maxBytes)
                {
                    displaced = _items[index].Buffer;
                    _items[index] = sample;
                    _bytes = bytes;
                }
            }
        }
        if (displaced is not null) ArrayPool<byte>.Shared.Return(displaced, clearArray: true);
    }

    /// <summary>How many documents were offered since the reservoir was made: the sequence number of the last one.</summary>
    public long Offered => Interlocked.Read(ref _offered);

    /// <summary>Copies of the current samples (for a training run), and a fresh start of the recency window.</summary>
    public byte[][] TakeSnapshot() => [.. TakeSequencedSnapshot().Select(s => s.Document)];

    /// <summary>
    /// Copies of the current samples with the sequence number each was offered under (1 for the first document offered),
    /// and a fresh start of the recency window. The sequence tells a training run which samples an earlier training saw.
    /// </summary>
    public (byte[] Document, long Sequence)[] TakeSequencedSnapshot()
    {
        lock (_gate)
        {
            Volatile.Write(ref _windowStart, Interlocked.Read(ref _offered) - _items.Count); // the next document is number Count + 1
            return [.. _items.Select(s => (s.Buffer.AsSpan(0, s.Length).ToArray(), s.Sequence))];
        }
    }

    private readonly record struct Sample(byte[] Buffer, int Length, long Sequence);
}
