using System.Globalization;
using System.Text.Json;
using System.Text.Unicode;

namespace Compression.Tool.Analyze;

/// <summary>A line that is not a document: its number in the file (1-based, blank lines counted) and why.</summary>
internal sealed record SkippedLine(long Line, string Reason);

/// <summary>What a JSON Lines file held: the documents, how many non-blank lines it had, and the lines skipped (the first few named).</summary>
internal sealed record Corpus(List<byte[]> Documents, long Lines, long Skipped, IReadOnlyList<SkippedLine> FirstSkipped);

/// <summary>
/// Reads a JSON Lines file: one document per line, the bytes exactly as in the file (no re-encoding), without the line
/// ending (<c>\n</c> or <c>\r\n</c>). Lines of nothing but ASCII whitespace are skipped silently. A line that is not
/// one whole JSON value in UTF-8 is not a document: it is skipped, counted, and the first
/// <see cref="MaxNamedSkippedLines"/> are named with their line numbers. A file holding a NUL byte, or starting like a
/// gzip or zstd frame, is not JSON Lines at all (<see cref="FindBinary"/>).
/// </summary>
internal static class CorpusReader
{
    /// <summary>How many skipped lines are named (all are counted).</summary>
    public const int MaxNamedSkippedLines = 10;

    /// <summary>Nesting deeper than this is reported as a skipped line (MongoDB allows 100 levels).</summary>
    private const int MaxDepth = 1024;

    private static readonly CultureInfo C = CultureInfo.InvariantCulture;

    /// <summary>Why <paramref name="file"/> cannot be JSON Lines (a compressed or binary file), or null when it may be.</summary>
    public static string? FindBinary(ReadOnlySpan<byte> file)
    {
        if (file.StartsWith((ReadOnlySpan<byte>)[0x1F, 0x8B])) return "it is gzip-compressed (decompress it first)";
        if (file.StartsWith((ReadOnlySpan<byte>)[0x28, 0xB5, 0x2F, 0xFD])) return "it is zstd-compressed (decompress it first)";
        int nul = file.IndexOf((byte)0);
        return nul < 0 ? null : string.Create(C, $"it holds a NUL byte (at offset {nul:N0}), so it is a binary file, not JSON Lines");
    }

    /// <summary>The documents of <paramref name="file"/> and the lines skipped; <paramref name="progress"/> hears of every tenth of the bytes checked.</summary>
    public static Corpus Read(ReadOnlySpan<byte> file, AnalyzeProgress progress, CancellationToken cancellationToken = default)
    {
        var documents = new List<byte[]>();
        var named = new List<SkippedLine>();
        long lines = 0, skipped = 0, lineNumber = 0, total = file.Length, reported = 0;
        ReadOnlySpan<byte> rest = file;
        while (!rest.IsEmpty)
        {
            int end = rest.IndexOf((byte)'\n');
            ReadOnlySpan<byte> line = end < 0 ? rest : rest[..end];
            rest = end < 0 ? [] : rest[(end + 1)..];
            lineNumber++;
            if (!line.IsEmpty && line[^1] == (byte)'\r') line = line[..^1];
            if (line.IndexOfAnyExcept(" \t\r\f\v"u8) < 0) continue;

            lines++;
            string? problem = Check(line);
            if (problem is null)
            {
                documents.Add(line.ToArray());
            }
            else
            {
                skipped++;
                if (named.Count < MaxNamedSkippedLines) named.Add(new SkippedLine(lineNumber, problem));
            }

            long done = total - rest.Length;
            if (done - reported >= total / 10)
            {
                cancellationToken.ThrowIfCancellationRequested();
                progress.Report(done, total);
                reported = done;
            }
        }
        if (reported < total) progress.Report(total, total);
        return new Corpus(documents, lines, skipped, named);
    }

    /// <summary>
    /// Splits <paramref name="all"/> into its non-blank lines as opaque bytes, without checking them (the hidden
    /// <c>--sweep</c> and tests).
    /// </summary>
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

    /// <summary>Null when <paramref name="line"/> is one whole JSON value in UTF-8 (whitespace around it allowed); otherwise why not.</summary>
    internal static string? Check(ReadOnlySpan<byte> line)
    {
        if (!Utf8.IsValid(line)) return "not UTF-8 text";
        var reader = new Utf8JsonReader(line, new JsonReaderOptions { MaxDepth = MaxDepth });
        try
        {
            reader.Read();
            reader.Skip();
            if (reader.Read()) return "more than one JSON value";
            return null;
        }
        catch (JsonException ex)
        {
            // The reader's message ends with its own position (" LineNumber: 0 | BytePositionInLine: 12."): say it once, 1-based.
            string message = ex.Message;
            int cut = message.IndexOf(" LineNumber:", StringComparison.Ordinal);
            if (cut > 0) message = message[..cut];
            return string.Create(C, $"not JSON at byte {(ex.BytePositionInLine ?? 0) + 1:N0}: {message}");
        }
    }
}
