using Couchbase.Core.IO.Operations;

namespace Compression.Couchbase.Internal;

/// <summary>
/// What a stored body is, from its bytes and flags: the one rule the compressed collection, its transcoder and docz share.
/// </summary>
internal static class BodyForm
{
    /// <summary>
    /// Whether the body is an envelope: binary flags and the magic byte 0xC5; or JSON or no flags and a whole envelope
    /// header (no JSON text starts with 0xC5), which is what a whole body written by a sub-document <c>SetDoc</c> keeps
    /// when the SDK sends the server no new flags with it (a server before the binary-xattr feature).
    /// </summary>
    public static bool IsEnvelope(ReadOnlySpan<byte> body, Flags flags) => flags.DataFormat switch
    {
        DataFormat.Binary => DocumentEnvelope.IsEnvelope(body),
        DataFormat.Json or DataFormat.Reserved => DocumentEnvelope.IsEnvelope(body) && DocumentEnvelope.TryReadHeader(body, out _),
        _ => false,
    };

    /// <summary>
    /// Whether the body is one whole JSON value, nesting no deeper than a compressed collection writes: under binary flags,
    /// what <c>ReplaceBodyWithXattr</c> (distributed transactions' commit) leaves on a server that keeps the old flags.
    /// </summary>
    public static bool IsJsonText(ReadOnlySpan<byte> body)
    {
        if (body.IsEmpty || !DocumentLimits.IsJsonDepthWithinLimit(body)) return false;
        var reader = new System.Text.Json.Utf8JsonReader(body, new System.Text.Json.JsonReaderOptions { MaxDepth = DocumentLimits.MaxJsonDepth + 1 });
        try
        {
            while (reader.Read()) { }
            return true;
        }
        catch (System.Text.Json.JsonException)
        {
            return false;
        }
    }
}
