using System.Runtime.CompilerServices;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;

// docz (Compression.Tool, in the csproj) reads and writes this layout with StoredDocumentCodec; its tests open the codec too.
[assembly: InternalsVisibleTo("Compression.Tool.Tests")]

namespace Compression.MongoDB;

/// <summary>
/// The stored layout of a compressed MongoDB document, defined once: <c>{ _id, &lt;clear fields&gt;, _z: BinData(0x81, envelope) }</c>
/// (envelope formats v2 and v3: the compressed elements without their document's length and terminator) or
/// <c>BinData(0x80, envelope)</c> (format v1: a whole BSON document). A document without <c>_z</c>, or whose <c>_z</c> is
/// not BinData 0x80 or 0x81 (the application's own field of that name), is plain. <c>_id</c>, the discriminator the
/// driver's conventions give (<c>_t</c> by default) and the configured clear fields are stored in the clear.
/// <see cref="CompressedDocumentSerializer{T}"/> reads and writes it through a class map; <c>StoredDocumentCodec</c>
/// (docz) reads and writes it on raw documents, without a CLR type. Both take every name, subtype and rule from here.
/// </summary>
internal static class StoredLayout
{
    /// <summary>The name of the element that holds the envelope.</summary>
    public const string CompressedName = "_z";

    /// <summary>BSON's element type of binary data.</summary>
    public const byte BinaryType = (byte)BsonType.Binary; // 0x05

    /// <summary>The BinData subtype of <c>_z</c> when the envelope holds a whole BSON document (envelope format v1).</summary>
    public const byte DocumentSubtype = (byte)BsonBinarySubType.UserDefined; // 0x80

    /// <summary>The BinData subtype of <c>_z</c> when the envelope holds the elements alone, without the document's int32 length and terminator (envelope formats v2 and v3).</summary>
    public const byte ElementsSubtype = 0x81;

    /// <summary>The UTF-8 bytes of <see cref="CompressedName"/>.</summary>
    public static ReadOnlySpan<byte> CompressedNameUtf8 => "_z"u8;

    /// <summary>Whether new documents of a namespace writing <paramref name="format"/> store the elements alone (subtype 0x81) rather than a whole document (0x80).</summary>
    public static bool ElementsOnly(EnvelopeFormat format) => format != EnvelopeFormat.V1;

    /// <summary>The BinData subtype <c>_z</c> is written with.</summary>
    public static byte Subtype(bool elementsOnly) => elementsOnly ? ElementsSubtype : DocumentSubtype;

    /// <summary>Whether <paramref name="element"/> (named <c>_z</c>) is a compressed part this library writes: BinData 0x80 or 0x81.</summary>
    public static bool IsEnvelope(RawBsonElement element, ReadOnlySpan<byte> document) =>
        element.Type == BinaryType && element.Value(document)[4] is DocumentSubtype or ElementsSubtype;

    /// <summary>
    /// The name of the discriminator element of <paramref name="type"/> as the driver's conventions give it (<c>_t</c> by
    /// default; null or empty when there is none). It stays in the clear: the driver adds it to the filters of
    /// <c>OfType&lt;TDerived&gt;()</c> and of type tests in LINQ without asking the serializer. Without a CLR type (docz),
    /// the one of <see cref="object"/>.
    /// </summary>
    public static string? DiscriminatorName(Type type) => BsonSerializer.LookupDiscriminatorConvention(type)?.ElementName;

    /// <summary>The element names stored in the clear, in this order: <c>_id</c>, the discriminator (when there is one), then the configured clear fields, each once.</summary>
    public static IReadOnlyList<string> ClearNames(string? discriminator, IEnumerable<string> clearFields)
    {
        var names = new List<string> { "_id" };
        if (!string.IsNullOrEmpty(discriminator)) names.Add(discriminator);
        foreach (string field in clearFields)
        {
            if (!names.Contains(field, StringComparer.Ordinal)) names.Add(field);
        }
        return names;
    }
}
