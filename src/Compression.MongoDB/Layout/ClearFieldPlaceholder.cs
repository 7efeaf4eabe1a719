using System.Buffers;
using System.Buffers.Binary;

namespace Compression.MongoDB;

/// <summary>
/// The placeholder <c>docz migrate</c> leaves in the compressed part where a clear field that does not lead the document
/// stood, so that <c>docz migrate --decompress</c> puts the clear value back at its place: an element of the field's name
/// holding <c>BinData(0x82, "docz clear field")</c>. Readers drop it whatever the configuration says (the clear value, if
/// the document still has one, is read from the clear part). It names itself, so it is recognized after the field has
/// been taken out of <c>ClearFields</c> too. An application value that is exactly this is refused on write by the
/// serializer (it would be dropped on reading), and by docz's round-trip check.
/// </summary>
/// <remarks>
/// Documents migrated between 2026-11-24 and 2026-11-25 hold the older form, a MinKey element (no value,
/// <see cref="LegacyType"/>). It cannot be told from an application's own MinKey value, so readers take it for a value;
/// while the document holds the clear value of its name, that wins (as over any compressed value of the name), and
/// <c>docz migrate</c> rewrites such documents into this form. One whose clear value the application removed before
/// that rewrite reads a MinKey value of the field. (Until 2026-11-25 a MinKey of a field configured clear was dropped as
/// a placeholder: an application's MinKey in a field made clear later was lost.)
/// </remarks>
internal static class ClearFieldPlaceholder
{
    /// <summary>The binary subtype, in the user-defined range (the compressed part itself is 0x80 or 0x81).</summary>
    public const byte Subtype = 0x82;

    /// <summary>The type of the older placeholder: MinKey.</summary>
    public const byte LegacyType = 0xFF;

    private const byte BinaryType = 0x05;

    /// <summary>What the placeholder's binary value holds: 16 ASCII bytes no application value is likely to hold with that subtype.</summary>
    public static ReadOnlySpan<byte> Marker => "docz clear field"u8;

    /// <summary>Appends the placeholder of the field named <paramref name="name"/> (UTF-8, without its terminator).</summary>
    public static void Write(IBufferWriter<byte> destination, ReadOnlySpan<byte> name)
    {
        int length = 1 + name.Length + 1 + 4 + 1 + Marker.Length;
        Span<byte> target = destination.GetSpan(length);
        target[0] = BinaryType;
        name.CopyTo(target[1..]);
        int at = 1 + name.Length;
        target[at++] = 0;
        BinaryPrimitives.WriteInt32LittleEndian(target[at..], Marker.Length);
        at += 4;
        target[at++] = Subtype;
        Marker.CopyTo(target[at..]);
        destination.Advance(length);
    }

    /// <summary>Whether <paramref name="element"/> of <paramref name="document"/> is a placeholder (the current form).</summary>
    public static bool Is(RawBsonElement element, ReadOnlySpan<byte> document)
    {
        if (element.Type != BinaryType) return false;
        ReadOnlySpan<byte> value = element.Value(document);
        return value.Length == 5 + Marker.Length && value[4] == Subtype && value[5..].SequenceEqual(Marker);
    }
}
