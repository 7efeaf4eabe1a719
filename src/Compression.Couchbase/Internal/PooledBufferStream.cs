using System.Buffers;

namespace Compression.Couchbase.Internal;

/// <summary>
/// A write-only stream and buffer writer over arrays rented from the shared pool (cleared when returned): where the inner
/// transcoder serializes a document before it is compressed, and where an envelope is decompressed before it is
/// deserialized. One per operation; dispose it to return the array.
/// </summary>
internal sealed class PooledBufferStream : Stream, IBufferWriter<byte>
{
    private byte[] _buffer;
    private int _written;

    public PooledBufferStream(int initialCapacity = 1024) => _buffer = ArrayPool<byte>.Shared.Rent(Math.Max(256, initialCapacity));

    public ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _written);

    public ReadOnlyMemory<byte> WrittenMemory => _buffer.AsMemory(0, _written);

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => _written;

    public override long Position
    {
        get => _written;
        set => throw new NotSupportedException();
    }

    public void Advance(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        if (count > _buffer.Length - _written) throw new InvalidOperationException("Advanced past the end of the buffer.");
        _written += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        Ensure(buffer.Length);
        buffer.CopyTo(_buffer.AsSpan(_written));
        _written += buffer.Length;
    }

    public override void WriteByte(byte value)
    {
        Ensure(1);
        _buffer[_written++] = value;
    }

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        byte[] buffer = _buffer;
        _buffer = [];
        _written = 0;
        if (buffer.Length > 0) ArrayPool<byte>.Shared.Return(buffer, clearArray: true);
        base.Dispose(disposing);
    }

    private void Ensure(int sizeHint)
    {
        ObjectDisposedException.ThrowIf(_buffer.Length == 0, this);
        int needed = Math.Max(sizeHint, 1);
        if (_buffer.Length - _written >= needed) return;
        long target = Math.Max((long)_buffer.Length * 2, (long)_written + needed);
        if (target > Array.MaxLength) target = Math.Max(Array.MaxLength, _written + needed);
        byte[] larger = ArrayPool<byte>.Shared.Rent((int)target);
        _buffer.AsSpan(0, _written).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(_buffer, clearArray: true);
        _buffer = larger;
    }
}
