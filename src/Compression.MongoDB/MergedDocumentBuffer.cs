using MongoDB.Bson.IO;

namespace Compression.MongoDB;

/// <summary>
/// The merged document the class map reads, read-only over the serializer's reused per-thread array, noting whether the
/// reader took a slice of it. Members of type <c>RawBsonDocument</c> and <c>RawBsonArray</c> (and any serializer that calls
/// <c>ReadRawBsonDocument</c> or <c>ReadRawBsonArray</c> and keeps the result) are slices that share the array: when
/// <see cref="Sliced"/> is set, the caller gives the array away to them instead of reusing it for the next document,
/// which would change those members under the application. One object per document, as a <see cref="ByteArrayBuffer"/> was.
/// </summary>
internal sealed class MergedDocumentBuffer(byte[] bytes, int documentLength) : IByteBuffer
{
    /// <summary>Whether a slice of the array was handed out (it may still be referenced).</summary>
    public bool Sliced { get; private set; }

    public int Capacity => documentLength;

    public bool IsReadOnly => true;

    public int Length
    {
        get => documentLength;
        set => throw ReadOnly();
    }

    public ArraySegment<byte> AccessBackingBytes(int position)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(position, documentLength);
        return new ArraySegment<byte>(bytes, position, documentLength - position);
    }

    public byte GetByte(int position)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(position, documentLength);
        return bytes[position];
    }

    public void GetBytes(int position, byte[] destination, int offset, int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(position);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, documentLength - position);
        Buffer.BlockCopy(bytes, position, destination, offset, count);
    }

    /// <summary>A slice sharing the array, as <see cref="ByteArrayBuffer.GetSlice"/> gives one (which checks the range).</summary>
    public IByteBuffer GetSlice(int position, int length)
    {
        Sliced = true;
        return new ByteArrayBuffer(bytes, documentLength, isReadOnly: true).GetSlice(position, length);
    }

    public void Clear(int position, int count) => throw ReadOnly();

    public void EnsureCapacity(int minimumCapacity) => throw ReadOnly();

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
