using MongoDB.Bson;
using MongoDB.Bson.Serialization.Attributes;

namespace MongoSample;

/// <summary>
/// One corpus document, whatever its fields: the <c>_id</c>, then every element of the JSON line in its order. The class
/// map writes <c>{ _id, ...fields }</c>, the same document as the plain collection holds, so no POCO of the corpus is needed.
/// </summary>
public sealed class CorpusDocument
{
    /// <summary>The document's <c>_id</c> (its line number in the corpus).</summary>
    [BsonId]
    public int Id { get; set; }

    /// <summary>Every other element, in order.</summary>
    [BsonExtraElements]
    public BsonDocument Fields { get; set; } = [];
}
