using System.Buffers;

namespace Compression.Tool.Backends;

/// <summary>
/// Reads a JSON Lines file line by line from a byte offset, keeping the offset of the next line (what a checkpoint keeps)
/// and the line number. A line is returned without its <c>\n</c> (and <c>\r\n</c>), as a view of a pooled buffer that is
/// valid until the next read; a line longer than the buffer grows it. A UTF-8 byte order mark at the file's start is skipped.
/// </summary>
internal sealed class JsonLineReader : IDisposable
{
    private readonly Stream _stream;
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(64 * 1024);
    private int _start, _end;
    private bool _eof;

    /// <param name="stream">The file, positioned anywhere: it is read from <paramref name="offset"/>.</param>
    /// <param name="offset">Where the next line starts.</param>
    /// <param name="lines">The lines before <paramref name="offset"/>.</param>
    public JsonLineReader(Stream stream, long offset, long lines)
    {
        _stream = stream;
        _stream.Position = offset;
        Offset = offset;
        LineNumber = lines;
    }

    /// <summary>The offset after the last line read (where the next one starts).</summary>
    public long Offset { get; private set; }

    /// <summary>The number of the last line read (1 for the first line of the file).</summary>
    public long LineNumber { get; private set; }

    /// <summary>The next line (blank lines included), or null at the end of the file.</summary>
    public async ValueTask<ReadOnlyMemory<byte>?> ReadLineAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            int newLine = _buffer.AsSpan(_start, _end - _start).IndexOf((byte)'\n');
            if (newLine >= 0 || (_eof && _start < _end))
            {
                int length = newLine >= 0 ? newLine : _end - _start;
                ReadOnlyMemory<byte> line = _buffer.AsMemory(_start, length);
                int consumed = newLine >= 0 ? length + 1 : length;
                if (Offset == 0 && line.Span.StartsWith("\uFEFF"u8)) line = line[3..];
                _start += consumed;
                Offset += consumed;
                LineNumber++;
                return line.Span.EndsWith("\r"u8) ? line[..^1] : line;
            }
            if (_eof) return null;
            if (_start > 0)
            {
                _buffer.AsSpan(_start, _end - _start).CopyTo(_buffer);
                _end -= _start;
                _start = 0;
            }
            if (_end == _buffer.Length)
            {
                byte[] larger = ArrayPool<byte>.Shared.Rent(_buffer.Length * 2);
                _buffer.AsSpan(0, _end).CopyTo(larger);
                ArrayPool<byte>.Shared.Return(_buffer, clearArray: true);
                _buffer = larger;
            }
            int read = await _stream.ReadAsync(_buffer.AsMemory(_end), cancellationToken).ConfigureAwait(false);
            if (read == 0) _eof = true;
            else _end += read;
        }
    }

    public void Dispose()
    {
        ArrayPool<byte>.Shared.Return(_buffer, clearArray: true);
        _buffer = [];
    }
}
