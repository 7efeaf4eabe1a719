using System.Buffers;

namespace Compression.Structure;

/// <summary>
/// The nesting depth of JSON text, measured without recursion and without parsing values: objects and arrays are counted
/// outside strings (escapes skipped). For the readers after us, which recurse once per level (Newtonsoft's deserializer
/// with <c>MaxDepth</c> turned off, a class map): a compressed body is opaque to the server, so nothing else stops a body
/// a peer wrote 20,000 levels deep from overflowing a reader's stack, which no handler can catch.
/// </summary>
internal static class JsonNesting
{
    /// <summary>
    /// The most levels of objects and arrays a compressed JSON document may have (the root is level 1): twice Newtonsoft's
    /// and System.Text.Json's default <c>MaxDepth</c> (64), and what the packed form reads (docs/structure.md).
    /// </summary>
    public const int MaxDepth = 128;

    private static readonly SearchValues<byte> Structural = SearchValues.Create("{}[]\""u8);
    private static readonly SearchValues<byte> StringEnd = SearchValues.Create("\"\\"u8);

    /// <summary>
    /// Whether <paramref name="json"/> nests at most <see cref="MaxDepth"/> levels. Malformed text is not judged here
    /// (the parser after it refuses it); an unterminated string ends the scan.
    /// </summary>
    public static bool IsWithinLimit(ReadOnlySpan<byte> json)
    {
        int depth = 0;
        while (true)
        {
            int at = json.IndexOfAny(Structural);
            if (at < 0) return true;
            byte b = json[at];
            json = json[(at + 1)..];
            switch (b)
            {
                case (byte)'{':
                case (byte)'[':
                    if (++depth > MaxDepth) return false;
                    break;
                case (byte)'}':
                case (byte)']':
                    depth--;
                    break;
                default: // a string: to its closing quote, each backslash taking the byte after it
                    while (true)
                    {
                        int end = json.IndexOfAny(StringEnd);
                        if (end < 0) return true;
                        if (json[end] == (byte)'"')
                        {
                            json = json[(end + 1)..];
                            break;
                        }
                        if (end + 2 > json.Length) return true;
                        json = json[(end + 2)..];
                    }
                    break;
            }
        }
    }
}
