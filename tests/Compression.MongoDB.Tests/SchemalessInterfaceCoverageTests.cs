using System.Reflection;
using Compression.MongoDB.Schemaless;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>
/// The schemaless collection wrapper implements every member of <see cref="IMongoCollection{TDocument}"/> itself: a
/// member a later driver adds with a default body would otherwise run the driver's default, not the wrapper's
/// delegation to the collection that compresses. (One added without a body breaks the build.)
/// </summary>
public sealed class SchemalessInterfaceCoverageTests
{
    [Theory]
    [InlineData(typeof(BsonDocument))]
    [InlineData(typeof(RawBsonDocument))]
    public void Every_collection_member_is_the_wrappers_own(Type document)
    {
        Type contract = typeof(IMongoCollection<>).MakeGenericType(document);
        Type wrapper = typeof(CompressedCollection<>).MakeGenericType(document);
        InterfaceMapping map = wrapper.GetInterfaceMap(contract);
        Assert.NotEmpty(map.InterfaceMethods);
        string[] notOwn = [.. map.InterfaceMethods.Where((_, i) => map.TargetMethods[i].DeclaringType != wrapper).Select(m => m.ToString()!)];
        Assert.True(notOwn.Length == 0, $"left to default bodies: {string.Join("; ", notOwn)}");
    }
}
