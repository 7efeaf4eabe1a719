using Compression.Testing.Mongo.Internal;
using MongoDB.Bson;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

public sealed class BsonOrderTests
{
    public static TheoryData<BsonValue, BsonValue, int> Pairs => new()
    {
        { 1, 1.0, 0 },
        { 1, 1L, 0 },
        { new Decimal128(1.5m), 1.5, 0 },
        { long.MaxValue, 9.2233720368547758E18, -1 },      // 2^63 - 1 < 2^63 (a double cannot hold 2^63 - 1)
        { (1L << 53) + 1, 9007199254740992.0, 1 },        // beyond double precision, still ordered exactly
        { 2, 2.5, -1 },
        { double.NaN, int.MinValue, -1 },                 // NaN sorts below every number
        { BsonNull.Value, 0, -1 },                        // null < numbers < strings < documents < arrays < ...
        { 0, "", -1 },
        { "b", "ab", 1 },
        { "z", new BsonDocument(), -1 },
        { new BsonDocument("a", 1), new BsonArray(), -1 },
        { ObjectId.Empty, false, -1 },
        { true, new BsonDateTime(0), -1 },
        { BsonMinKey.Value, BsonNull.Value, -1 },
        { BsonMaxKey.Value, new BsonRegularExpression("x"), 1 },
        { new BsonDocument("a", 1), new BsonDocument("a", 1.0), 0 },
        { new BsonArray { 1, 2 }, new BsonArray { 1, 2, 0 }, -1 },
    };

    [Theory]
    [MemberData(nameof(Pairs))]
    public void Compares_in_MongoDB_order(BsonValue x, BsonValue y, int expected)
    {
        Assert.Equal(expected, Math.Sign(BsonOrder.Instance.Compare(x, y)));
        Assert.Equal(-expected, Math.Sign(BsonOrder.Instance.Compare(y, x)));
        if (expected == 0)
        {
            Assert.Equal(BsonOrder.Instance.GetHashCode(x), BsonOrder.Instance.GetHashCode(y));
        }
    }
}
