using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Unicode;

namespace Compression.Tool.Analyze;

/// <summary>
/// An item that is not a document and why: in a JSON Lines file a line, numbered in the file (1-based, blank lines
/// counted); in a JSON array an element, numbered in the array (1-based), its line in the file given in the reason.
/// </summary>
internal sealed record SkippedLine(long Line, string Reason);

/// <summary>How the file was read: one document per line, or the elements of one top-level JSON array.</summary>
[JsonConverter(typeof(JsonStringEnumConverter<CorpusFormat>))]
internal enum CorpusFormat
{
    /// <summary>One JSON document per line.</summary>
    [JsonStringEnumMemberName("jsonLines")]
    JsonLines,

    /// <summary>One JSON array whose elements are the documents (<c>mongoexport --jsonArray</c>, <c>JSON.stringify</c>).</summary>
    [JsonStringEnumMemberName("jsonArray")]
    JsonArray,
}

/// <summary>
/// What a file held: the documents, how many items it had (non-blank lines of a JSON Lines file, elements of a JSON
/// array) and the items skipped (the first few named).
/// </summary>
internal sealed record Corpus(List<byte[]> Documents, long Lines, long Skipped, IReadOnlyList<SkippedLine> FirstSkipped, CorpusFormat Format = CorpusFormat.JsonLines);

/// <summary>
/// Reads a JSON Lines file, or a file holding one JSON array of documents (<see cref="IsJsonArray"/>). JSON Lines: one document per line, the bytes exactly as in the file (no re-encoding), without the line
/// ending (<c>\n</c> or <c>\r\n</c>). Lines of nothing but ASCII whitespace are skipped silently. A line that is not
/// one whole JSON value in UTF-8 is not a document: it is skipped, counted, and the first
/// <see cref="MaxNamedSkippedLines"/> are named with their line numbers. A file holding a NUL byte, or starting like a
/// gzip or zstd frame, is not JSON Lines at all (<see cref="FindBinary"/>); nor is pretty-printed JSON that is no
/// array (<see cref="FindPrettyPrintedObject"/>). A JSON array: its elements are the documents, each as
/// <c>jq -c '.[]'</c> writes it (<see cref="ReadJsonArray"/>).
/// </summary>
internal static class CorpusReader
{
    /// <summary>How many skipped lines are named (all are counted).</summary>
    public const int MaxNamedSkippedLines = 10;

    /// <summary>Nesting deeper than this is reported as a skipped line (MongoDB allows 100 levels).</summary>
    private const int MaxDepth = 1024;

    private static readonly CultureInfo C = CultureInfo.InvariantCulture;

    /// <summary>JSON's whitespace (RFC 8259: space, tab, line feed, carriage return).</summary>
    private static ReadOnlySpan<byte> Whitespace => " \t\n\r"u8;

    /// <summary>Why <paramref name="file"/> cannot be JSON Lines (a compressed or binary file), or null when it may be.</summary>
    public static string? FindBinary(ReadOnlySpan<byte> file)
    {
        if (file.StartsWith((ReadOnlySpan<byte>)[0x1F, 0x8B])) return "it is gzip-compressed (decompress it first)";
        if (file.StartsWith((ReadOnlySpan<byte>)[0x28, 0xB5, 0x2F, 0xFD])) return "it is zstd-compressed (decompress it first)";
        int nul = file.IndexOf((byte)0);
        return nul < 0 ? null : string.Create(C, $"it holds a NUL byte (at offset {nul:N0}), so it is a binary file, not JSON Lines");
    }

    /// <summary>
    /// Why <paramref name="file"/> is neither JSON Lines nor a JSON array (its first non-blank line is a lone <c>{</c>:
    /// pretty-printed objects), or null when it may be either.
    /// </summary>
    public static string? FindPrettyPrintedObject(ReadOnlySpan<byte> file)
    {
        ReadOnlySpan<byte> rest = file;
        while (!rest.IsEmpty)
        {
            int end = rest.IndexOf((byte)'\n');
            ReadOnlySpan<byte> line = (end < 0 ? rest : rest[..end]).Trim(Whitespace);
            rest = end < 0 ? [] : rest[(end + 1)..];
            if (line.IsEmpty) continue;
            return line.SequenceEqual("{"u8)
                ? "its first line is a lone '{', so it is pretty-printed JSON (a document over several lines), not one document per line; convert it with `jq -c . in.json > out.jsonl`"
                : null;
        }
        return null;
    }

    /// <summary>
    /// Whether <paramref name="file"/> is one top-level JSON array rather than JSON Lines: its first non-whitespace byte
    /// is <c>[</c>, and its first line is either the whole file (a one-line array) or not one whole JSON value (a
    /// pretty-printed array). A file of several lines each holding an array is JSON Lines.
    /// </summary>
    public static bool IsJsonArray(ReadOnlySpan<byte> file)
    {
        int start = file.IndexOfAnyExcept(Whitespace);
        if (start < 0 || file[start] != (byte)'[') return false;
        ReadOnlySpan<byte> rest = file[start..];
        int end = rest.IndexOf((byte)'\n');
        if (end < 0 || rest[(end + 1)..].IndexOfAnyExcept(Whitespace) < 0) return true;
        return Check(rest[..end]) is not null;
    }

    /// <summary>
    /// The documents of <paramref name="file"/> (a JSON array when <see cref="IsJsonArray"/> says so, JSON Lines
    /// otherwise) and the items skipped; <paramref name="progress"/> hears of every tenth of the bytes checked.
    /// </summary>
    public static Corpus Read(ReadOnlySpan<byte> file, AnalyzeProgress progress, CancellationToken cancellationToken = default) =>
        IsJsonArray(file) ? ReadJsonArray(file, progress, cancellationToken) : ReadJsonLines(file, progress, cancellationToken);

    /// <summary>
    /// The elements of the JSON array <paramref name="file"/>, read with one <see cref="Utf8JsonReader"/> over the
    /// bytes. Each object is a document, without the whitespace between its tokens (as <c>jq -c '.[]'</c> writes it;
    /// strings and numbers kept byte for byte), so a pretty-printed array measures as its JSON Lines conversion would.
    /// An element that is not an object is skipped and named, as a line that is not JSON is. Where the array stops being
    /// JSON (a truncated file, text after its end), one more item is skipped, naming the line and byte, and nothing
    /// after it is read.
    /// </summary>
    internal static Corpus ReadJsonArray(ReadOnlySpan<byte> file, AnalyzeProgress progress, CancellationToken cancellationToken = default)
    {
        var documents = new List<byte[]>();
        var named = new List<SkippedLine>();
        long elements = 0, skipped = 0, total = file.Length, reported = 0, line = 1, counted = 0;
        bool inElement = false;
        var reader = new Utf8JsonReader(file, new JsonReaderOptions { MaxDepth = MaxDepth });
        try
        {
            reader.Read(); // the array's '['
            while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
            {
                elements++;
                inElement = true;
                int start = checked((int)reader.TokenStartIndex);
                line += file[(int)counted..start].Count((byte)'\n');
                counted = start;
                JsonTokenType type = reader.TokenType;
                reader.Skip();
                inElement = false;
                ReadOnlySpan<byte> element = file[start..checked((int)reader.BytesConsumed)];
                string? problem = type != JsonTokenType.StartObject ? $"{Kind(type)}, not a JSON object"
                    : !Utf8.IsValid(element) ? "not UTF-8 text"
                    : null;
                if (problem is null)
                {
                    documents.Add(Compact(element));
                }
                else
                {
                    skipped++;
                    if (named.Count < MaxNamedSkippedLines) named.Add(new SkippedLine(elements, string.Create(C, $"{problem} (line {line:N0})")));
                }

                if (reader.BytesConsumed - reported >= total / 10)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    progress.Report(reader.BytesConsumed, total);
                    reported = reader.BytesConsumed;
                }
            }
            reader.Read(); // nothing but whitespace may follow the array: anything else throws
        }
        catch (JsonException ex)
        {
            if (!inElement) elements++;
            skipped++;
            if (named.Count < MaxNamedSkippedLines)
            {
                string where = ex.LineNumber is { } at ? string.Create(C, $" at line {at + 1:N0}, byte {(ex.BytePositionInLine ?? 0) + 1:N0}") : "";
                named.Add(new SkippedLine(elements, $"not JSON{where}: {WithoutPosition(ex).TrimEnd('.')}; nothing after it is read"));
            }
        }
        if (reported < total) progress.Report(total, total);
        return new Corpus(documents, elements, skipped, named, CorpusFormat.JsonArray);
    }

    /// <summary>The documents of the JSON Lines file <paramref name="file"/> and the lines skipped.</summary>
    private static Corpus ReadJsonLines(ReadOnlySpan<byte> file, AnalyzeProgress progress, CancellationToken cancellationToken)
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
            return string.Create(C, $"not JSON at byte {(ex.BytePositionInLine ?? 0) + 1:N0}: {WithoutPosition(ex)}");
        }
    }

    /// <summary>The reader's message without its own position (" LineNumber: 0 | BytePositionInLine: 12."), which the caller says once, 1-based.</summary>
    private static string WithoutPosition(JsonException ex)
    {
        string message = ex.Message;
        int cut = message.IndexOf(" LineNumber:", StringComparison.Ordinal);
        return cut > 0 ? message[..cut] : message;
    }

    /// <summary>What an element that is not an object is, in words.</summary>
    private static string Kind(JsonTokenType type) => type switch
    {
        JsonTokenType.StartArray => "an array",
        JsonTokenType.String => "a string",
        JsonTokenType.Number => "a number",
        JsonTokenType.True or JsonTokenType.False => "a boolean",
        _ => "null",
    };

    /// <summary>
    /// <paramref name="json"/> (one valid JSON value) without the whitespace between its tokens; the bytes of strings,
    /// escapes included, and of numbers are kept.
    /// </summary>
    private static byte[] Compact(ReadOnlySpan<byte> json)
    {
        if (json.IndexOfAny(Whitespace) < 0) return json.ToArray();
        var compact = new byte[json.Length];
        int length = 0;
        bool inString = false, escaped = false;
        foreach (byte b in json)
        {
            if (inString)
            {
                if (escaped) escaped = false;
                else if (b == (byte)'\\') escaped = true;
                else if (b == (byte)'"') inString = false;
            }
            else if (b is (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\r')
            {
                continue;
            }
            else if (b == (byte)'"')
            {
                inString = true;
            }
            compact[length++] = b;
        }
        return compact[..length];
    }
}
