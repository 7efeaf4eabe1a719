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

    /// <summary>
    /// Whether <paramref name="json"/> nests at most <see cref="MaxDepth"/> levels. Malformed text is not judged here
    /// (the parser after it refuses it); an unterminated string ends the scan.
    /// </summary>
    /// <remarks>
    /// Most documents are settled by a count: depth cannot exceed the number of <c>{</c> and <c>[</c> bytes (two
    /// vectorized counts). Only a document with more of them than the limit is scanned byte by byte, strings skipped.
    /// </remarks>
    public static bool IsWithinLimit(ReadOnlySpan<byte> json)
    {
        if (json.Length <= 2 * MaxDepth || json.Count((byte)'{') + json.Count((byte)'[') <= MaxDepth) return true;
        int depth = 0;
        bool inString = false;
        for (int i = 0; i < json.Length; i++)
        {
            byte b = json[i];
            if (inString)
            {
                if (b == (byte)'\\') i++;
                else if (b == (byte)'"') inString = false;
            }
            else if (b == (byte)'"') inString = true;
            else if (b is (byte)'{' or (byte)'[')
            {
                if (++depth > MaxDepth) return false;
            }
            else if (b is (byte)'}' or (byte)']') depth--;
        }
        return true;
    }
}
