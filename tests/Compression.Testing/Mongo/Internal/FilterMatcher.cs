using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>Query filters: equality on dotted paths (an array matches when it holds the value), <c>$eq $ne $gt $gte
/// $lt $lte $in $nin $exists $type $not</c>, <c>$and $or $nor</c>, <c>$expr</c> (the expressions of
/// <see cref="ExpressionEvaluator"/>) and implicit AND. Every other operator is refused with BadValue naming it (a real
/// server knows more; this double says what it does not know).</summary>
internal static class FilterMatcher
{
    public static void Validate(BsonDocument filter) => Matches(filter, new BsonDocument());

    public static bool Matches(BsonDocument filter, BsonDocument document)
    {
        // Every clause is evaluated (no short circuit) so an unknown operator fails even when an earlier clause is false.
        bool result = true;
        foreach (var element in filter)
        {
            result &= MatchesElement(element, document);
        }

        return result;
    }

    private static bool MatchesElement(BsonElement element, BsonDocument document)
    {
        string name = element.Name;
        if (name.StartsWith('$'))
        {
            return name switch
            {
                "$and" => Clauses(element).Aggregate(true, (acc, f) => Matches(f, document) & acc),
                "$or" => Clauses(element).Aggregate(false, (acc, f) => Matches(f, document) | acc),
                "$nor" => !Clauses(element).Aggregate(false, (acc, f) => Matches(f, document) | acc),
                "$comment" => true,
                "$expr" => ExpressionEvaluator.IsTrue(element.Value, document),
                _ => throw MongoServerException.BadValue($"unknown top level operator: {name}"),
            };
        }

        var value = element.Value;
        if (value is BsonDocument operators && operators.ElementCount > 0 && operators.GetElement(0).Name.StartsWith('$'))
        {
            bool result = true;
            foreach (var op in operators)
            {
                result &= MatchesOperator(name, op.Name, op.Value, document);
            }

            return result;
        }

        return MatchesEquality(document, name, value);
    }

    private static IEnumerable<BsonDocument> Clauses(BsonElement element)
    {
        if (element.Value is not BsonArray array || array.Count == 0)
        {
            throw MongoServerException.BadValue($"{element.Name} must be a nonempty array");
        }

        return array.Select(item => item as BsonDocument
            ?? throw MongoServerException.BadValue($"{element.Name} argument's entries must be objects")).ToList();
    }

    private static bool MatchesOperator(string path, string op, BsonValue operand, BsonDocument document)
    {
        switch (op)
        {
            case "$eq":
                return MatchesEquality(document, path, operand);
            case "$ne":
                return !MatchesEquality(document, path, operand);
            case "$gt":
                return MatchesComparison(document, path, operand, c => c > 0);
            case "$gte":
                return MatchesComparison(document, path, operand, c => c >= 0);
            case "$lt":
                return MatchesComparison(document, path, operand, c => c < 0);
            case "$lte":
                return MatchesComparison(document, path, operand, c => c <= 0);
            case "$in":
                return InList(op, operand).Aggregate(false, (acc, v) => MatchesEquality(document, path, v) | acc);
            case "$nin":
                return !InList(op, operand).Aggregate(false, (acc, v) => MatchesEquality(document, path, v) | acc);
            case "$exists":
                {
                    var (values, _) = DocumentPath.Resolve(document, path);
                    return values.Count > 0 == operand.ToBoolean();
                }

            case "$type":
                {
                    var types = TypeSet(operand);
                    var (values, _) = DocumentPath.Resolve(document, path);
                    return values.Any(v => types.Contains(v.BsonType) || (v is BsonArray array && array.Any(item => types.Contains(item.BsonType))));
                }

            case "$not":
                if (operand is BsonDocument inner && inner.ElementCount > 0 && inner.GetElement(0).Name.StartsWith('$'))
                {
                    bool result = true;
                    foreach (var innerOp in inner)
                    {
                        result &= MatchesOperator(path, innerOp.Name, innerOp.Value, document);
                    }

                    return !result;
                }

                throw operand is BsonRegularExpression
                    ? MongoServerException.BadValue("unknown operator: $regex (a regular expression in $not)")
                    : MongoServerException.BadValue("$not needs a regex or a document");
            default:
                throw MongoServerException.BadValue($"unknown operator: {op}");
        }
    }

    // The $type aliases and codes (BSON's type numbers; "number" is every numeric type).
    private static readonly Dictionary<string, BsonType[]> TypeAliases = new(StringComparer.Ordinal)
    {
        ["double"] = [BsonType.Double], ["string"] = [BsonType.String], ["object"] = [BsonType.Document], ["array"] = [BsonType.Array],
        ["binData"] = [BsonType.Binary], ["undefined"] = [BsonType.Undefined], ["objectId"] = [BsonType.ObjectId],
        ["bool"] = [BsonType.Boolean], ["date"] = [BsonType.DateTime], ["null"] = [BsonType.Null], ["regex"] = [BsonType.RegularExpression],
        ["dbPointer"] = [], ["javascript"] = [BsonType.JavaScript], ["symbol"] = [BsonType.Symbol],
        ["javascriptWithScope"] = [BsonType.JavaScriptWithScope], ["int"] = [BsonType.Int32], ["timestamp"] = [BsonType.Timestamp],
        ["long"] = [BsonType.Int64], ["decimal"] = [BsonType.Decimal128], ["minKey"] = [BsonType.MinKey], ["maxKey"] = [BsonType.MaxKey],
        ["number"] = [BsonType.Double, BsonType.Int32, BsonType.Int64, BsonType.Decimal128],
    };

    private static HashSet<BsonType> TypeSet(BsonValue operand)
    {
        var types = new HashSet<BsonType>();
        foreach (var item in operand is BsonArray list ? [.. list] : new[] { operand })
        {
            if (item.IsString)
            {
                types.UnionWith(TypeAliases.TryGetValue(item.AsString, out var aliased)
                    ? aliased
                    : throw MongoServerException.BadValue($"Unknown type name alias: {item.AsString}"));
            }
            else if (BsonOrder.IsNumber(item))
            {
                int code = (int)BsonOrder.ToDouble(item);
                BsonType type = code == -1 ? BsonType.MinKey : (BsonType)code;
                types.Add(code is (>= 1 and <= 19 and not 12) or (-1) or 127
                    ? type
                    : throw MongoServerException.BadValue($"Invalid numerical type code: {item}"));
            }
            else
            {
                throw MongoServerException.TypeMismatch("type must be represented as a number or a string");
            }
        }

        return types;
    }

    private static BsonArray InList(string op, BsonValue operand)
    {
        if (operand is not BsonArray list)
        {
            throw MongoServerException.BadValue($"{op} needs an array");
        }

        foreach (var item in list)
        {
            if (item is BsonDocument d && d.ElementCount > 0 && d.GetElement(0).Name.StartsWith('$'))
            {
                throw MongoServerException.BadValue($"cannot nest $ under {op}");
            }

            RejectRegex(item);
        }

        return list;
    }

    private static void RejectRegex(BsonValue value)
    {
        if (value is BsonRegularExpression)
        {
            throw MongoServerException.BadValue("unknown operator: $regex (regular expression values are not implemented)");
        }
    }

    public static bool MatchesEquality(BsonDocument document, string path, BsonValue target)
    {
        RejectRegex(target);
        var (values, anyMissing) = DocumentPath.Resolve(document, path);
        if (target.IsBsonNull && (anyMissing || values.Count == 0))
        {
            return true;
        }

        foreach (var value in values)
        {
            if (BsonOrder.Instance.Equals(value, target))
            {
                return true;
            }

            if (value is BsonArray array && array.Any(item => BsonOrder.Instance.Equals(item, target)))
            {
                return true;
            }
        }

        return false;
    }

    private static bool MatchesComparison(BsonDocument document, string path, BsonValue operand, Func<int, bool> accept)
    {
        RejectRegex(operand);
        var (values, anyMissing) = DocumentPath.Resolve(document, path);
        int operandType = BsonOrder.CanonicalType(operand);
        bool Test(BsonValue v) =>
            BsonOrder.CanonicalType(v) == operandType && accept(BsonOrder.Instance.Compare(v, operand));

        if (operand.IsBsonNull && (anyMissing || values.Count == 0) && accept(0))
        {
            return true; // { a: { $gte: null } } matches a missing a, as in MongoDB
        }

        foreach (var value in values)
        {
            if (Test(value))
            {
                return true;
            }

            if (value is BsonArray array && array.Any(Test))
            {
                return true;
            }
        }

        return false;
    }
}
