using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>
/// The aggregation expressions a query's <c>$expr</c> may hold, as far as this double goes: constants, field paths
/// (<c>"$a.b"</c>), the variables <c>$$ROOT</c> and <c>$$CURRENT</c> (with paths), <c>$literal</c>, the comparisons
/// <c>$eq $ne $gt $gte $lt $lte</c> (BSON order across types, no bracketing, as in MongoDB's expressions) and
/// <c>$and $or $not</c>. Every other operator or variable is refused with NotImplemented naming it.
/// </summary>
internal static class ExpressionEvaluator
{
    /// <summary>Whether <paramref name="expression"/> is true for <paramref name="document"/> (MongoDB's truthiness:
    /// false, null, a missing value and zero are false).</summary>
    public static bool IsTrue(BsonValue expression, BsonDocument document) => Truthy(Evaluate(expression, document));

    /// <summary>The value of an expression; <see langword="null"/> for a missing value (a path that reaches nothing).</summary>
    private static BsonValue? Evaluate(BsonValue expression, BsonDocument root)
    {
        switch (expression)
        {
            case BsonString { Value: var text } when text.StartsWith("$$", StringComparison.Ordinal):
                {
                    int dot = text.IndexOf('.');
                    string variable = dot < 0 ? text[2..] : text[2..dot];
                    if (variable is not ("ROOT" or "CURRENT"))
                    {
                        throw MongoServerException.NotImplemented($"the aggregation variable $${variable}");
                    }

                    return dot < 0 ? root : Path(root, text[(dot + 1)..].Split('.'), 0);
                }

            case BsonString { Value: var text } when text.StartsWith('$'):
                return Path(root, text[1..].Split('.'), 0);
            case BsonDocument operation when operation.ElementCount > 0 && operation.GetElement(0).Name.StartsWith('$'):
                if (operation.ElementCount != 1)
                {
                    throw new MongoServerException(15983, "Location15983",
                        $"an expression specification must contain exactly one field, the name of the expression. Found {operation.ElementCount} fields in {operation}");
                }

                return Operate(operation.GetElement(0).Name, operation.GetElement(0).Value, root);
            case BsonDocument literal:
                {
                    var result = new BsonDocument();
                    foreach (var element in literal)
                    {
                        if (Evaluate(element.Value, root) is { } value)
                        {
                            result.Add(element.Name, value);
                        }
                    }

                    return result;
                }

            case BsonArray array:
                return new BsonArray(array.Select(item => Evaluate(item, root) ?? BsonNull.Value));
            default:
                return expression;
        }
    }

    private static BsonValue? Operate(string name, BsonValue operand, BsonDocument root)
    {
        switch (name)
        {
            case "$literal":
                return operand;
            case "$eq" or "$ne" or "$gt" or "$gte" or "$lt" or "$lte":
                {
                    var (left, right) = Two(name, operand, root);
                    int c = Compare(left, right);
                    return (BsonBoolean)(name switch
                    {
                        "$eq" => c == 0,
                        "$ne" => c != 0,
                        "$gt" => c > 0,
                        "$gte" => c >= 0,
                        "$lt" => c < 0,
                        _ => c <= 0,
                    });
                }

            case "$and":
                return (BsonBoolean)Arguments(operand).All(argument => Truthy(Evaluate(argument, root)));
            case "$or":
                return (BsonBoolean)Arguments(operand).Any(argument => Truthy(Evaluate(argument, root)));
            case "$not":
                {
                    var arguments = Arguments(operand);
                    if (arguments.Count != 1)
                    {
                        throw new MongoServerException(16020, "Location16020", $"Expression $not takes exactly 1 arguments. {arguments.Count} were passed in.");
                    }

                    return (BsonBoolean)!Truthy(Evaluate(arguments[0], root));
                }

            default:
                throw MongoServerException.NotImplemented($"the aggregation expression {name}");
        }
    }

    private static List<BsonValue> Arguments(BsonValue operand) => operand is BsonArray array ? [.. array] : [operand];

    private static (BsonValue? Left, BsonValue? Right) Two(string name, BsonValue operand, BsonDocument root)
    {
        var arguments = Arguments(operand);
        if (arguments.Count != 2)
        {
            throw new MongoServerException(16020, "Location16020", $"Expression {name} takes exactly 2 arguments. {arguments.Count} were passed in.");
        }

        return (Evaluate(arguments[0], root), Evaluate(arguments[1], root));
    }

    /// <summary>BSON order; a missing value is below every value (null included), as in MongoDB's expressions.</summary>
    private static int Compare(BsonValue? left, BsonValue? right) => (left, right) switch
    {
        (null, null) => 0,
        (null, _) => -1,
        (_, null) => 1,
        _ => BsonOrder.Instance.Compare(left, right),
    };

    /// <summary>A field path: through embedded documents; across an array, the array of what each element reaches.</summary>
    private static BsonValue? Path(BsonValue current, string[] parts, int index)
    {
        if (index == parts.Length)
        {
            return current;
        }

        return current switch
        {
            BsonDocument document => document.TryGetValue(parts[index], out var next) ? Path(next, parts, index + 1) : null,
            BsonArray array => new BsonArray(array.Select(item => item is BsonDocument ? Path(item, parts, index) : null).OfType<BsonValue>()),
            _ => null,
        };
    }

    private static bool Truthy(BsonValue? value) => value switch
    {
        null or BsonNull or BsonUndefined => false,
        BsonBoolean b => b.Value,
        _ when BsonOrder.IsNumber(value) => BsonOrder.ToDouble(value) != 0,
        _ => true,
    };
}
