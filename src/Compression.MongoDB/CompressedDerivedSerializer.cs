using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Serializers;

namespace Compression.MongoDB;

/// <summary>
/// The serializer of a type derived from a compressed type (<see cref="CompressedDocumentSerializer.Register{T}"/>
/// registers one for each derived type the class map knows). A collection obtained with <c>OfType&lt;TDerived&gt;()</c>
/// uses it: documents are written compressed, as the base type's collection writes them (with the discriminator);
/// compressed and plain documents are read; filters, sorts, projections and updates that name a compressed member fail,
/// naming it, as on the base type. Inside the base type's own serializer (whose class map hands derived instances to the
/// serializer of their type) it is the derived class map itself.
/// </summary>
/// <remarks>Before it existed, an <c>OfType&lt;TDerived&gt;()</c> collection used the plain class map of
/// <typeparamref name="TDerived"/>: an <c>$inc</c> or <c>$set</c> of a compressed member was applied to a field the
/// stored document did not hold, and on reading that partial clear value won over the compressed one.</remarks>
internal sealed class CompressedDerivedSerializer<TDerived, TBase> : SerializerBase<TDerived>, IBsonDocumentSerializer, IBsonIdProvider
    where TDerived : class, TBase
    where TBase : class
{
    private readonly CompressedDocumentSerializer<TBase> _base;
    private readonly BsonClassMapSerializer<TDerived> _classMap;

    public CompressedDerivedSerializer(CompressedDocumentSerializer<TBase> @base)
    {
        _base = @base;
        _classMap = new BsonClassMapSerializer<TDerived>(BsonClassMap.LookupClassMap(typeof(TDerived)));
    }

    public override void Serialize(BsonSerializationContext context, BsonSerializationArgs args, TDerived value)
    {
        if (value is null || ReferenceEquals(ClassMapInProgress.Writing, value))
        {
            _classMap.Serialize(context, args, value!); // the base type's serializer is compressing this very value
            return;
        }
        // As the base type's collection writes it: nominally the base type, so the discriminator is written.
        _base.Serialize(context, new BsonSerializationArgs(typeof(TBase), serializeAsNominalType: false, args.SerializeIdFirst), value);
    }

    /// <summary>A compressed document is decompressed and merged by the base type's serializer, then read by this type's class map.</summary>
    public override TDerived Deserialize(BsonDeserializationContext context, BsonDeserializationArgs args)
    {
        // Handed over by the base type's class map at the root of the plain document it is reading: read it as it is.
        if (context.Reader is global::MongoDB.Bson.IO.BsonBinaryReader reader && ReferenceEquals(ClassMapInProgress.ReadingPlain, reader)
            && reader.BsonStream.Position == 0)
            return _classMap.Deserialize(context, args);
        return _base.Read(context, _classMap);
    }

    public bool TryGetMemberSerializationInfo(string memberName, out BsonSerializationInfo serializationInfo)
    {
        _base.EnsureClear(memberName, typeof(TDerived));
        return _classMap.TryGetMemberSerializationInfo(memberName, out serializationInfo);
    }

    public bool GetDocumentId(object document, out object id, out Type idNominalType, out IIdGenerator idGenerator) =>
        _classMap.GetDocumentId(document, out id, out idNominalType, out idGenerator);

    public void SetDocumentId(object document, object id) => _classMap.SetDocumentId(document, id);
}
