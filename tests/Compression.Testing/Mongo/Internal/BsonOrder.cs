using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>MongoDB's comparison order for BSON values: types in canonical order (MinKey, null, numbers, strings,
/// objects, arrays, binary, ObjectId, bool, date, timestamp, regex, ..., MaxKey); numbers compared by value across
/// int32, int64, double and decimal128; strings by UTF-8 bytes (no collation).</summary>
internal sealed class BsonOrder : IComparer<BsonValue>, IEqualityComparer<BsonValue>
{
    public static readonly BsonOrder Instance = new();

    private BsonOrder()
    {
    }

    public static int CanonicalType(BsonValue value) => value.BsonType switch
    {
        BsonType.MinKey => -1,
        BsonType.Undefined => 0,
        BsonType.Null => 5,
        BsonType.Double or BsonType.Int32 or BsonType.Int64 or BsonType.Decimal128 => 10,
        BsonType.String or BsonType.Symbol => 15,
        BsonType.Document => 20,
        BsonType.Array => 25,
        BsonType.Binary => 30,
        BsonType.ObjectId => 35,
        BsonType.Boolean => 40,
        BsonType.DateTime => 45,
        BsonType.Timestamp => 47,
        BsonType.RegularExpression => 50,
        BsonType.JavaScript => 60,
        BsonType.JavaScriptWithScope => 65,
        BsonType.MaxKey => 127,
        _ => 100,
    };

    public static bool IsNumber(BsonValue value) =>
        value.BsonType is BsonType.Double or BsonType.Int32 or BsonType.Int64 or BsonType.Decimal128;

    public int Compare(BsonValue? x, BsonValue? y)
    {
        x ??= BsonNull.Value;
        y ??= BsonNull.Value;
        int tx = CanonicalType(x), ty = CanonicalType(y);
        if (tx != ty)
        {
            return tx.CompareTo(ty);
        }

        switch (x.BsonType)
        {
            case BsonType.Double or BsonType.Int32 or BsonType.Int64 or BsonType.Decimal128:
                return CompareNumbers(x, y);
            case BsonType.String or BsonType.Symbol:
                return string.CompareOrdinal(StringOf(x), StringOf(y)) switch { < 0 => -1, > 0 => 1, _ => 0 };
            case BsonType.Document:
                return CompareDocuments(x.AsBsonDocument, y.AsBsonDocument);
            case BsonType.Array:
                return CompareArrays(x.AsBsonArray, y.AsBsonArray);
            case BsonType.Binary:
                {
                    var bx = x.AsBsonBinaryData;
                    var by = y.AsBsonBinaryData;
                    int c = bx.Bytes.Length.CompareTo(by.Bytes.Length);
                    if (c == 0)
                    {
                        c = ((byte)bx.SubType).CompareTo((byte)by.SubType);
                    }

                    return c != 0 ? c : bx.Bytes.AsSpan().SequenceCompareTo(by.Bytes);
                }

            case BsonType.ObjectId:
                return x.AsObjectId.CompareTo(y.AsObjectId);
            case BsonType.Boolean:
                return x.AsBoolean.CompareTo(y.AsBoolean);
            case BsonType.DateTime:
                return x.AsBsonDateTime.MillisecondsSinceEpoch.CompareTo(y.AsBsonDateTime.MillisecondsSinceEpoch);
            case BsonType.Timestamp:
                return x.AsBsonTimestamp.Value.CompareTo(y.AsBsonTimestamp.Value);
            case BsonType.RegularExpression:
                {
                    var rx = x.AsBsonRegularExpression;
                    var ry = y.AsBsonRegularExpression;
                    int c = string.CompareOrdinal(rx.Pattern, ry.Pattern);
                    return c != 0 ? c : string.CompareOrdinal(rx.Options, ry.Options);
                }

            case BsonType.JavaScript:
                return string.CompareOrdinal(x.AsBsonJavaScript.Code, y.AsBsonJavaScript.Code);
            default:
                return 0; // MinKey, MaxKey, null, undefined: equal within their type
        }
    }

    public bool Equals(BsonValue? x, BsonValue? y) => Compare(x, y) == 0;

    public int GetHashCode(BsonValue value)
    {
        switch (value.BsonType)
        {
            case BsonType.Double or BsonType.Int32 or BsonType.Int64 or BsonType.Decimal128:
                double d = ToDouble(value);
                return double.IsNaN(d) ? 0x7FF8 : d.GetHashCode();
            case BsonType.String or BsonType.Symbol:
                return StringComparer.Ordinal.GetHashCode(StringOf(value));
            case BsonType.Document:
                {
                    var hash = new HashCode();
                    foreach (var element in value.AsBsonDocument)
                    {
                        hash.Add(StringComparer.Ordinal.GetHashCode(element.Name));
                        hash.Add(GetHashCode(element.Value));
                    }

                    return hash.ToHashCode();
                }

            case BsonType.Array:
                {
                    var hash = new HashCode();
                    foreach (var item in value.AsBsonArray)
                    {
                        hash.Add(GetHashCode(item));
                    }

                    return hash.ToHashCode();
                }

            default:
                return HashCode.Combine(CanonicalType(value), value.GetHashCode());
        }
    }

    public static double ToDouble(BsonValue value) => value.BsonType switch
    {
        BsonType.Int32 => value.AsInt32,
        BsonType.Int64 => value.AsInt64,
        BsonType.Double => value.AsDouble,
        BsonType.Decimal128 => Decimal128.ToDouble(value.AsDecimal128),
        _ => double.NaN,
    };

    private static string StringOf(BsonValue value) => value.BsonType == BsonType.Symbol ? value.AsBsonSymbol.Name : value.AsString;

    private int CompareDocuments(BsonDocument x, BsonDocument y)
    {
        int n = Math.Min(x.ElementCount, y.ElementCount);
        for (int i = 0; i < n; i++)
        {
            var ex = x.GetElement(i);
            var ey = y.GetElement(i);
            int c = CanonicalType(ex.Value).CompareTo(CanonicalType(ey.Value));
            if (c != 0)
            {
                return c;
            }

            c = string.CompareOrdinal(ex.Name, ey.Name);
            if (c != 0)
            {
                return c < 0 ? -1 : 1;
            }

            c = Compare(ex.Value, ey.Value);
            if (c != 0)
            {
                return c;
            }
        }

        return x.ElementCount.CompareTo(y.ElementCount);
    }

    private int CompareArrays(BsonArray x, BsonArray y)
    {
        int n = Math.Min(x.Count, y.Count);
        for (int i = 0; i < n; i++)
        {
            int c = Compare(x[i], y[i]);
            if (c != 0)
            {
                return c;
            }
        }

        return x.Count.CompareTo(y.Count);
    }

    private static int CompareNumbers(BsonValue x, BsonValue y)
    {
        if (x.BsonType is BsonType.Int32 or BsonType.Int64 && y.BsonType is BsonType.Int32 or BsonType.Int64)
        {
            return x.ToInt64().CompareTo(y.ToInt64());
        }

        if (x.BsonType == BsonType.Decimal128 || y.BsonType == BsonType.Decimal128)
        {
            if (TryToDecimal(x, out decimal dx) && TryToDecimal(y, out decimal dy))
            {
                return dx.CompareTo(dy);
            }

            return CompareDoubles(ToDouble(x), ToDouble(y));
        }

        if (x.BsonType == BsonType.Double && y.BsonType == BsonType.Double)
        {
            return CompareDoubles(x.AsDouble, y.AsDouble);
        }

        // one long (or int), one double
        return x.BsonType == BsonType.Double ? -CompareLongDouble(y.ToInt64(), x.AsDouble) : CompareLongDouble(x.ToInt64(), y.AsDouble);
    }

    // NaN sorts below every other number and equals itself, as in MongoDB.
    private static int CompareDoubles(double x, double y) =>
        double.IsNaN(x) ? (double.IsNaN(y) ? 0 : -1) : double.IsNaN(y) ? 1 : x.CompareTo(y);

    private static int CompareLongDouble(long l, double d)
    {
        if (double.IsNaN(d))
        {
            return 1;
        }

        if (d >= 9.2233720368547758E18)
        {
            return -1;
        }

        if (d < -9.2233720368547758E18)
        {
            return 1;
        }

        double floor = Math.Floor(d);
        long whole = (long)floor;
        if (l != whole)
        {
            return l < whole ? -1 : 1;
        }

        return d > floor ? -1 : 0;
    }

    private static bool TryToDecimal(BsonValue value, out decimal result)
    {
        try
        {
            switch (value.BsonType)
            {
                case BsonType.Int32:
                    result = value.AsInt32;
                    return true;
                case BsonType.Int64:
                    result = value.AsInt64;
                    return true;
                case BsonType.Double when double.IsFinite(value.AsDouble) && Math.Abs(value.AsDouble) < 7.9e28:
                    result = (decimal)value.AsDouble;
                    return true;
                case BsonType.Decimal128 when !Decimal128.IsNaN(value.AsDecimal128) && !Decimal128.IsInfinity(value.AsDecimal128):
                    result = Decimal128.ToDecimal(value.AsDecimal128);
                    return true;
                default:
                    result = 0;
                    return false;
            }
        }
        catch (OverflowException)
        {
            result = 0;
            return false;
        }
    }
}
