using Compression.Dictionaries;

namespace Compression.MongoDB;

/// <summary>
/// What the adapter's document serializers (the class-map one and the schemaless one) share beyond the driver's
/// contract: their namespace, and the bytes they compress for a document, which is what training samples.
/// </summary>
internal interface ICompressedDocumentSerializer<in TDocument>
{
    /// <summary>The namespace the documents are compressed in.</summary>
    CompressionNamespace CompressionNamespace { get; }

    /// <summary>The part of <paramref name="document"/> the serializer compresses, as it gives it to the namespace.</summary>
    byte[] CompressedPart(TDocument document);
}
