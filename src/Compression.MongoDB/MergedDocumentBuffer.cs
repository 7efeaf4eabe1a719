using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;

namespace Compression.MongoDB;

/// <summary>
/// The merged document the class map reads, over the serializer's reused per-thread array, noting whether the reader
/// took a slice of it. Members of type <c>RawBsonDocument</c> and <c>RawBsonArray</c> (and any serializer that calls
/// <c>ReadRawBsonDocument</c> or <c>ReadRawBsonArray</c> and keeps the result) are slices that share the array: when
/// <see cref="Sliced"/> is set, the caller gives the array away to them instead of reusing it for the next document,
/// which would change those members under the application. Re-targeted at each document (<see cref="Reset"/>) by the
/// <see cref="MergedDocumentReader"/> that owns it. Every write throws; <see cref="IsReadOnly"/> is false only so that
/// <see cref="ByteBufferStream.SetLength"/> accepts the next document's length.
/// </summary>
internal sealed class MergedDocumentBuffer : IByteBuffer
{
    private byte[] _bytes = [];
    private int _length;

    /// <summary>Whether a slice of the array was handed out since the last <see cref="Reset"/> (it may still be referenced).</summary>
    public bool Sliced { get; private set; }

    /// <summary>The whole array, so that the stream over this buffer can be set to any document that fits in it.</summary>
    public int Capacity => _bytes.Length;

    public bool IsReadOnly => false;

    public int Length
    {
        get => _length;
        set => throw ReadOnly();
    }

    /// <summary>Points the buffer at the first <paramref name="length"/> bytes of <paramref name="bytes"/>.</summary>
    public void Reset(byte[] bytes, int length)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(length, bytes.Length);
        _bytes = bytes;
        _length = length;
        Sliced = false;
    }

    public ArraySegment<byte> AccessBackingBytes(int position)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(position, _length);
        return new ArraySegment<byte>(_bytes, position, _length - position);
    }

    public byte GetByte(int position)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(position, _length);
        return _bytes[position];
    }

    public void GetBytes(int position, byte[] destination, int offset, int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _length - position);
        Buffer.BlockCopy(_bytes, position, destination, offset, count);
    }

    /// <summary>A slice sharing the array, as <see cref="ByteArrayBuffer.GetSlice"/> gives one (which checks the range).</summary>
    public IByteBuffer GetSlice(int position, int length)
    {
        Sliced = true;
        return new ByteArrayBuffer(_bytes, _length, isReadOnly: true).GetSlice(position, length);
    }

    public void Clear(int position, int count) => throw ReadOnly();

    /// <summary>Called by <see cref="ByteBufferStream.SetLength"/>: a length within the array is accepted, nothing grows.</summary>
    public void EnsureCapacity(int minimumCapacity)
    {
        if (minimumCapacity > _bytes.Length) throw ReadOnly();
    }

    public void MakeReadOnly()
    {
    }

    public void SetByte(int position, byte value) => throw ReadOnly();

    public void SetBytes(int position, byte[] source, int offset, int count) => throw ReadOnly();

    public void Dispose()
    {
    }

    private static InvalidOperationException ReadOnly() => new("The merged document is read-only.");
}

/// <summary>
/// A reader of merged documents kept for the next one: the buffer, its stream, the driver's <see cref="BsonBinaryReader"/>
/// and the deserialization context are made once per thread (in <see cref="SerializerScratch"/>) instead of once per
/// document. The driver's reader reads top-level documents one after another (its state goes back to <c>Initial</c>,
/// or <c>Done</c> in older versions, after each); this one is rewound to the start of the next. A read that throws, or that leaves the reader anywhere but at the
/// end of the document, is not reusable (<see cref="Read"/> says so), so no state carries over into the next document.
/// </summary>
internal sealed class MergedDocumentReader
{
    private readonly MergedDocumentBuffer _buffer = new();
    private readonly ByteBufferStream _stream;
    private readonly BsonBinaryReader _reader;
    private readonly BsonDeserializationContext _context;

    public MergedDocumentReader()
    {
        _stream = new ByteBufferStream(_buffer);
        _reader = new BsonBinaryReader(_stream);
        _context = BsonDeserializationContext.CreateRoot(_reader);
    }

    /// <summary>Whether the last document's reader handed out a slice of its array (<see cref="MergedDocumentBuffer.Sliced"/>).</summary>
    public bool Sliced => _buffer.Sliced;

    /// <summary>
    /// Has <paramref name="classMap"/> read the document in the first <paramref name="length"/> bytes of <paramref name="bytes"/>.
    /// <paramref name="reusable"/> says whether this reader can read the next document (the class map read this one to
    /// its end without throwing).
    /// </summary>
    public TResult Read<TResult>(byte[] bytes, int length, IBsonSerializer<TResult> classMap, out bool reusable)
    {
        reusable = false;
        _buffer.Reset(bytes, length);
        _stream.SetLength(length);
        _stream.Position = 0;
        _reader.ReadBsonType(); // at the top level (a new reader, or one after its last document): the implied document
        // The class map hands a derived instance to the serializer of its type, at the start of this reader: that one
        // reads it with its class map straight away (CompressedDerivedSerializer.Deserialize), the document being plain here.
        BsonBinaryReader? outer = ClassMapInProgress.ReadingPlain;
        ClassMapInProgress.ReadingPlain = _reader;
        try
        {
            TResult result = classMap.Deserialize(_context);
            reusable = _reader.State is (BsonReaderState.Initial or BsonReaderState.Done) && _stream.Position == length;
            return result;
        }
        finally
        {
            ClassMapInProgress.ReadingPlain = outer;
        }
    }
}
