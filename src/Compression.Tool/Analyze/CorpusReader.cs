namespace Compression.Tool.Analyze;

/// <summary>
/// Reads a JSON Lines file as opaque documents: one per line, the bytes exactly as in the file (no decoding, no
/// validation), without the line ending (<c>\n</c> or <c>\r\n</c>). Lines of nothing but ASCII whitespace are skipped.
/// </summary>
internal static class CorpusReader
{
    public static async Task<List<byte[]>> ReadJsonLinesAsync(string path, CancellationToken cancellationToken)
    {
        byte[] all = await File.ReadAllBytesAsync(path, cancellationToken).ConfigureAwait(false);
        return Split(all);
    }

    internal static List<byte[]> Split(ReadOnlySpan<byte> all)
    {
        var documents = new List<byte[]>();
        while (!all.IsEmpty)
        {
            int end = all.IndexOf((byte)'\n');
            ReadOnlySpan<byte> line = end < 0 ? all : all[..end];
            all = end < 0 ? [] : all[(end + 1)..];
            if (!line.IsEmpty && line[^1] == (byte)'\r') line = line[..^1];
            if (line.IndexOfAnyExcept(" \t\r\f\v"u8) >= 0) documents.Add(line.ToArray());
        }
        return documents;
    }
}
