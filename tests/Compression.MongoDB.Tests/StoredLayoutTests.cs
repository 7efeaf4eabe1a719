using Compression.Dictionaries;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>
/// The serializer and docz (<see cref="StoredDocumentCodec"/>) share one stored layout (<see cref="StoredLayout"/>): what one
/// writes, the other reads to the same bytes, in both envelope layouts (subtype 0x80 for format v1, 0x81 after).
/// </summary>
public sealed class StoredLayoutTests
{
    private static readonly BsonClassMapSerializer<Movie> PlainSerializer = new(BsonClassMap.LookupClassMap(typeof(Movie)));

    [Fact]
    public void Docz_keeps_in_the_clear_the_discriminator_the_drivers_conventions_give_documents_without_a_type() =>
        Assert.Equal("_t", StoredLayout.DiscriminatorName(typeof(object)));

    [Theory]
    [InlineData(EnvelopeFormat.V1, StoredLayout.DocumentSubtype)]
    [InlineData(EnvelopeFormat.V2, StoredLayout.ElementsSubtype)]
    [InlineData(EnvelopeFormat.V3, StoredLayout.ElementsSubtype)]
    public async Task The_serializer_and_docz_write_the_same_bytes_and_read_each_others(EnvelopeFormat format, byte subtype)
    {
        var options = new CompressionEngineOptions();
        options.Defaults.Format = format;
        options.Defaults.AdapterSettings["ClearFields"] = ["Title"];
        await using var engine = new CompressionEngine(new InMemoryDictionaryStore(), options);
        CompressionNamespace ns = engine.GetNamespace("shop.movies");
        var serializer = new CompressedDocumentSerializer<Movie>(ns);
        var codec = new StoredDocumentCodec(ns);
        Movie movie = CompressedDocumentSerializerTests.NewMovie(new Random(5));
        byte[] plain = movie.ToBson(PlainSerializer);

        byte[] stored = movie.ToBson(serializer);
        Assert.Equal(StoredKind.Compressed, StoredDocumentCodec.Classify(stored));
        Assert.Equal(StoredKind.Plain, StoredDocumentCodec.Classify(plain));
        Assert.Equal((BsonBinarySubType)subtype, BsonSerializer.Deserialize<BsonDocument>(stored)[StoredLayout.CompressedName].AsBsonBinaryData.SubType);
        Assert.Equal(plain, codec.Decode(stored)); // docz reads what the serializer wrote

        byte[] migrated = codec.Compress(plain);
        Assert.Equal(stored, migrated); // docz writes what the serializer writes
        using var reader = new BsonBinaryReader(new MemoryStream(migrated));
        Assert.Equal(plain, serializer.Deserialize(BsonDeserializationContext.CreateRoot(reader)).ToBson(PlainSerializer)); // and the serializer reads it
    }
}
