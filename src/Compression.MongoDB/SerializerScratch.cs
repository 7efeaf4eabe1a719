using System.Buffers;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;

namespace Compression.MongoDB;

/// <summary>
/// The reused buffers of one serializer call, cached per thread: the class map's BSON output (with its writer), two
/// buffer writers (the compressed part and its envelope on writes; on reads, the second holds the merged document, its compressed part decompressed in place),
/// and the reader of merged documents.
/// A nested call on the same thread (a compressed type inside another) finds the cache empty and gets its own.
/// Buffers grown past <see cref="MaxRetainedBytes"/> by a huge document are not kept.
/// </summary>
internal sealed class SerializerScratch
{
    private const int MaxRetainedBytes = 1 << 20;

    [ThreadStatic]
    private static SerializerScratch? t_cached;

    private SerializerScratch()
    {
        Writer = new BsonBinaryWriter(Bson);
        WriterContext = BsonSerializationContext.CreateRoot(Writer);
    }

    public MemoryStream Bson { get; } = new(1024);

    public BsonBinaryWriter Writer { get; }

    public BsonSerializationContext WriterContext { get; }

    public ArrayBufferWriter<byte> First { get; } = new(1024);

    public ArrayBufferWriter<byte> Second { get; private set; } = new(1024);

    /// <summary>
    /// Gives <see cref="Second"/>'s array away (to raw BSON slices that the read document holds) and starts a new one, so
    /// that the next document is never written over bytes a caller still reads.
    /// </summary>
    public void GiveAwaySecond() => Second = new ArrayBufferWriter<byte>(1024);

    private MergedDocumentReader? _reader;

    /// <summary>The reader of merged documents (<see cref="MergedDocumentReader"/>), made on first use.</summary>
    public MergedDocumentReader RentReader()
    {
        MergedDocumentReader reader = _reader ?? new MergedDocumentReader();
        _reader = null;
        return reader;
    }

    /// <summary>Keeps <paramref name="reader"/> for the next document when it finished this one cleanly; otherwise drops it.</summary>
    public void ReturnReader(MergedDocumentReader reader, bool reusable) => _reader = reusable ? reader : null;

    public static SerializerScratch Rent()
    {
        SerializerScratch? scratch = t_cached;
        t_cached = null;
        return scratch ?? new SerializerScratch();
    }

    public static void Return(SerializerScratch scratch)
    {
        if (scratch.Bson.Capacity > MaxRetainedBytes || scratch.First.Capacity > MaxRetainedBytes || scratch.Second.Capacity > MaxRetainedBytes)
            return;
        scratch.First.ResetWrittenCount();
        scratch.Second.ResetWrittenCount();
        t_cached = scratch;
    }
}
