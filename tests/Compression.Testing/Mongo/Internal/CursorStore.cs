using System.Collections.Concurrent;
using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>Open cursors. A cursor holds the results computed when it was opened (a snapshot: later writes are not
/// seen, unlike a real server), handed out in batches of at most <c>batchSize</c> documents and 16 MiB.</summary>
internal sealed class CursorStore
{
    public const int DefaultFirstBatchSize = 101;
    public const int MaxBatchBytes = 16 * 1024 * 1024;

    private readonly ConcurrentDictionary<long, Cursor> _cursors = new();
    private long _nextId = 0x1000_0000L;

    public int Count => _cursors.Count;

    /// <summary>Opens a cursor over <paramref name="results"/> and returns the first batch and the cursor id (0 when
    /// the first batch holds everything or <paramref name="singleBatch"/> is set).</summary>
    public (List<byte[]> Batch, long CursorId) Open(string ns, List<byte[]> results, int? batchSize, bool singleBatch)
    {
        var cursor = new Cursor(ns, results);
        var batch = cursor.Take(batchSize ?? DefaultFirstBatchSize);
        if (singleBatch || cursor.Exhausted)
        {
            return (batch, 0);
        }

        long id = Interlocked.Increment(ref _nextId);
        _cursors[id] = cursor;
        return (batch, id);
    }

    public (List<byte[]> Batch, long CursorId, string Namespace) GetMore(long id, string ns, int? batchSize)
    {
        if (!_cursors.TryGetValue(id, out var cursor))
        {
            throw MongoServerException.CursorNotFound(id);
        }

        if (cursor.Namespace != ns)
        {
            throw new MongoServerException(13, "Unauthorized",
                $"Requested getMore on namespace '{ns}', but cursor belongs to a different namespace {cursor.Namespace}");
        }

        List<byte[]> batch;
        lock (cursor)
        {
            batch = cursor.Take(batchSize);
        }

        if (cursor.Exhausted)
        {
            _cursors.TryRemove(id, out _);
            return (batch, 0, cursor.Namespace);
        }

        return (batch, id, cursor.Namespace);
    }

    public bool Kill(long id) => _cursors.TryRemove(id, out _);

    public void KillNamespace(Func<string, bool> predicate)
    {
        foreach (var (id, cursor) in _cursors)
        {
            if (predicate(cursor.Namespace))
            {
                _cursors.TryRemove(id, out _);
            }
        }
    }

    public void Clear() => _cursors.Clear();

    private sealed class Cursor(string ns, List<byte[]> results)
    {
        private int _position;

        public string Namespace { get; } = ns;

        public bool Exhausted => _position >= results.Count;

        public List<byte[]> Take(int? batchSize)
        {
            var batch = new List<byte[]>();
            long bytes = 0;
            while (_position < results.Count && (batchSize is null || batch.Count < batchSize.Value))
            {
                var doc = results[_position];
                if (batch.Count > 0 && bytes + doc.Length > MaxBatchBytes)
                {
                    break;
                }

                batch.Add(doc);
                bytes += doc.Length;
                _position++;
            }

            return batch;
        }
    }
}
