using MongoDB.Bson.IO;

namespace Compression.MongoDB;

/// <summary>
/// What a compressed serializer's class map is working on, on this thread: the class map hands an instance of a derived
/// type to the serializer registered for that type, a <see cref="CompressedDerivedSerializer{TDerived, TBase}"/>, which
/// looks here to tell that hand-over from a use of its own (and then writes or reads the value plainly, with its class map).
/// <see cref="CompressedDocumentSerializer{T}"/> and <see cref="MergedDocumentReader"/> set it around the class map's call.
/// </summary>
internal static class ClassMapInProgress
{
    /// <summary>
    /// The value a compressed serializer's class map is writing on this thread: the serializer of a derived type it hands
    /// the value to writes it plain instead of compressing it again.
    /// </summary>
    [ThreadStatic]
    internal static object? Writing;

    /// <summary>The reader over a plain (or merged) document whose root a compressed serializer's class map is reading on this thread.</summary>
    [ThreadStatic]
    internal static BsonBinaryReader? ReadingPlain;
}
