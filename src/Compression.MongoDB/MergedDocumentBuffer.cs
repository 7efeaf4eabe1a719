using MongoDB.Bson.IO;

namespace Compression.MongoDB;

/// <summary>
/// The merged document the class map reads, over the serializer's reused per-thread array, noting whether the reader
/// took a slice of it. Members of type <c>RawBsonDocument</c> and <c>RawBsonArray</c> (and any serializer that calls
/// <c>ReadRawBsonDocument</c> or <c>ReadRawBsonArray</c> and keeps the result) are slices that share the array: when
/// <see cref="Sliced"/> is set, the caller gives the array away to them instead of reusing it for the next document,
/// which would change those members under the application.
/// </summary>
internal sealed class MergedDocumentBuffer(byte[] bytes, int length) : IByteBuffer
{
    private readonly ByteArrayBuffer _inner = new(bytes, length, isReadOnly: true);

    /// <summary>Whether a slice of the array was handed out (it may still be referenced).</summary>
    public bool Sliced { get; private set; }

    public int Capacity => _inner.Capacity;

    public bool IsReadOnly => _inner.IsReadOnly;

    public int Length
    {
        get => _inner.Length;
        set => _inner.Length = value;
    }

    public ArraySegment<byte> AccessBackingBytes(int position) => _inner.AccessBackingBytes(position);

    public void Clear(int position, int count) => _inner.Clear(position, count);

    public void Dispose() => _inner.Dispose();

    public void EnsureCapacity(int minimumCapacity) => _inner.EnsureCapacity(minimumCapacity);

    public byte GetByte(int position) => _inner.GetByte(position);

    public void GetBytes(int position, byte[] destination, int offset, int count) => _inner.GetBytes(position, destination, offset, count);

    public IByteBuffer GetSlice(int position, int length)
    {
        Sliced = true;
        return _inner.GetSlice(position, length);
    }

    public void MakeReadOnly() => _inner.MakeReadOnly();

    public void SetByte(int position, byte value) => _inner.SetByte(position, value);

    public void SetBytes(int position, byte[] source, int offset, int count) => _inner.SetBytes(position, source, offset, count);
}
