using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>Updates: a replacement document, or the operators <c>$set $unset $inc $setOnInsert</c> on dotted paths
/// (intermediate documents created, array positions by number). Other operators, pipelines and positional paths
/// (<c>$</c>, <c>$[]</c>) are refused by name.</summary>
internal static class UpdateApplier
{
    public static bool IsOperatorUpdate(BsonDocument update) =>
        update.ElementCount > 0 && update.GetElement(0).Name.StartsWith('$');

    /// <summary>Validates an update before any document is touched, so a bad one fails even when nothing matches.</summary>
    public static void Validate(BsonValue update)
    {
        if (update is BsonArray)
        {
            throw MongoServerException.NotImplemented("pipeline-style updates (an array as the update)");
        }

        if (update is not BsonDocument doc)
        {
            throw MongoServerException.FailedToParse("Update argument must be either an object or an array");
        }

        if (!IsOperatorUpdate(doc))
        {
            foreach (var element in doc)
            {
                if (element.Name.StartsWith('$'))
                {
                    throw MongoServerException.BadValue($"The dollar ($) prefixed field '{element.Name}' in '{element.Name}' is not allowed in a replacement document");
                }
            }

            return;
        }

        foreach (var element in doc)
        {
            switch (element.Name)
            {
                case "$set" or "$unset" or "$inc" or "$setOnInsert":
                    if (element.Value is not BsonDocument fields)
                    {
                        throw MongoServerException.FailedToParse($"Modifiers operate on fields but we found type {element.Value.BsonType} instead");
                    }

                    foreach (var field in fields)
                    {
                        if (field.Name.Split('.').Any(p => p.StartsWith('$')))
                        {
                            throw MongoServerException.NotImplemented($"positional update paths ('{field.Name}' in {element.Name})");
                        }

                        if (element.Name == "$inc" && !BsonOrder.IsNumber(field.Value))
                        {
                            throw MongoServerException.TypeMismatch($"Cannot increment with non-numeric argument: {{{field.Name}: {field.Value.ToJson()}}}");
                        }
                    }

                    break;
                default:
                    throw MongoServerException.FailedToParse(
                        $"Unknown modifier: {element.Name}. Expected a valid update modifier or pipeline-style update specified as an array " +
                        $"(MongoLoopbackServer implements $set, $unset, $inc and $setOnInsert)");
            }
        }
    }

    /// <summary>Applies <paramref name="update"/> to a copy of <paramref name="original"/>; <c>_id</c> must not change.</summary>
    public static BsonDocument Apply(BsonDocument original, BsonDocument update, bool isInsert)
    {
        BsonDocument result;
        if (!IsOperatorUpdate(update))
        {
            result = new BsonDocument();
            if (original.TryGetValue("_id", out var id))
            {
                result.Add("_id", id);
            }

            foreach (var element in update)
            {
                if (element.Name == "_id")
                {
                    if (id is not null && !BsonOrder.Instance.Equals(id, element.Value))
                    {
                        throw ImmutableId(id);
                    }

                    if (id is null)
                    {
                        result.InsertAt(0, element);
                    }

                    continue;
                }

                result.Add(element);
            }

            return result;
        }

        result = original.DeepClone().AsBsonDocument;
        foreach (var element in update)
        {
            var fields = element.Value.AsBsonDocument;
            foreach (var field in fields)
            {
                switch (element.Name)
                {
                    case "$set":
                        Set(result, field.Name, field.Value);
                        break;
                    case "$setOnInsert":
                        if (isInsert)
                        {
                            Set(result, field.Name, field.Value);
                        }

                        break;
                    case "$unset":
                        Unset(result, field.Name);
                        break;
                    case "$inc":
                        Increment(result, field.Name, field.Value);
                        break;
                }
            }
        }

        if (original.TryGetValue("_id", out var originalId) &&
            (!result.TryGetValue("_id", out var newId) || !BsonOrder.Instance.Equals(originalId, newId)))
        {
            throw ImmutableId(originalId);
        }

        return result;
    }

    /// <summary>The document an upsert starts from: the equality conditions of the query (top level, <c>$eq</c>, and
    /// inside <c>$and</c>), dotted paths expanded.</summary>
    public static BsonDocument UpsertSeed(BsonDocument query)
    {
        var seed = new BsonDocument();
        AddEqualities(seed, query);
        return seed;
    }

    private static void AddEqualities(BsonDocument seed, BsonDocument query)
    {
        foreach (var element in query)
        {
            if (element.Name == "$and" && element.Value is BsonArray clauses)
            {
                foreach (var clause in clauses.OfType<BsonDocument>())
                {
                    AddEqualities(seed, clause);
                }
            }
            else if (element.Name.StartsWith('$'))
            {
                continue;
            }
            else if (element.Value is BsonDocument ops && IsOperatorUpdate(ops))
            {
                if (ops.TryGetValue("$eq", out var eq))
                {
                    Set(seed, element.Name, eq);
                }
            }
            else
            {
                Set(seed, element.Name, element.Value);
            }
        }
    }

    private static MongoServerException ImmutableId(BsonValue id) =>
        MongoServerException.ImmutableField(
            $"Performing an update on the path '_id' would modify the immutable field '_id' (was {id.ToJson()})");

    private static void Set(BsonDocument root, string path, BsonValue value)
    {
        var (parent, last) = Navigate(root, path, create: true);
        SetChild(parent!, last, value, path);
    }

    private static void Unset(BsonDocument root, string path)
    {
        var (parent, last) = Navigate(root, path, create: false);
        if (parent is BsonDocument doc)
        {
            doc.Remove(last);
        }
        else if (parent is BsonArray array && TryIndex(last, out int i) && i < array.Count)
        {
            array[i] = BsonNull.Value; // $unset on an array element sets it to null, as in MongoDB
        }
    }

    private static void Increment(BsonDocument root, string path, BsonValue by)
    {
        var (parent, last) = Navigate(root, path, create: true);
        BsonValue? current = parent switch
        {
            BsonDocument doc => doc.TryGetValue(last, out var v) ? v : null,
            BsonArray array when TryIndex(last, out int i) && i < array.Count => array[i],
            _ => null,
        };

        if (current is null)
        {
            SetChild(parent!, last, by, path);
            return;
        }

        if (!BsonOrder.IsNumber(current))
        {
            throw MongoServerException.TypeMismatch($"Cannot apply $inc to a value of non-numeric type. {{_id: ...}} has the field '{last}' of non-numeric type {current.BsonType}");
        }

        SetChild(parent!, last, Add(current, by), path);
    }

    private static BsonValue Add(BsonValue a, BsonValue b)
    {
        if (a.BsonType == BsonType.Decimal128 || b.BsonType == BsonType.Decimal128)
        {
            return new BsonDecimal128(new Decimal128(ToDecimal(a) + ToDecimal(b)));
        }

        if (a.BsonType == BsonType.Double || b.BsonType == BsonType.Double)
        {
            return new BsonDouble(a.ToDouble() + b.ToDouble());
        }

        if (a.BsonType == BsonType.Int32 && b.BsonType == BsonType.Int32)
        {
            long sum = (long)a.AsInt32 + b.AsInt32;
            return sum is >= int.MinValue and <= int.MaxValue ? new BsonInt32((int)sum) : new BsonInt64(sum);
        }

        long x = a.ToInt64(), y = b.ToInt64();
        long r = unchecked(x + y);
        if (((x ^ r) & (y ^ r)) < 0)
        {
            throw new MongoServerException(2, "BadValue", "Failed to apply $inc operations: overflow");
        }

        return new BsonInt64(r);
    }

    private static decimal ToDecimal(BsonValue v) => v.BsonType switch
    {
        BsonType.Decimal128 => Decimal128.ToDecimal(v.AsDecimal128),
        BsonType.Double => (decimal)v.AsDouble,
        _ => v.ToInt64(),
    };

    private static (BsonValue? Parent, string Last) Navigate(BsonDocument root, string path, bool create)
    {
        string[] parts = path.Split('.');
        BsonValue current = root;
        for (int i = 0; i < parts.Length - 1; i++)
        {
            string part = parts[i];
            BsonValue? next = current switch
            {
                BsonDocument doc => doc.TryGetValue(part, out var v) ? v : null,
                BsonArray array when TryIndex(part, out int index) => index < array.Count ? array[index] : null,
                _ => throw MongoServerException.PathNotViable($"Cannot create field '{part}' in element {{{parts[i - 1 < 0 ? 0 : i - 1]}: {current.ToJson()}}}"),
            };

            if (next is null)
            {
                if (!create)
                {
                    return (null, parts[^1]);
                }

                next = new BsonDocument();
                SetChild(current, part, next, path);
            }
            else if (next is not BsonDocument && next is not BsonArray)
            {
                if (!create)
                {
                    return (null, parts[^1]);
                }

                throw MongoServerException.PathNotViable($"Cannot create field '{parts[i + 1]}' in element {{{part}: {next.ToJson()}}}");
            }

            current = next;
        }

        return (current, parts[^1]);
    }

    private static void SetChild(BsonValue parent, string name, BsonValue value, string path)
    {
        if (parent is BsonDocument doc)
        {
            doc[name] = value;
        }
        else if (parent is BsonArray array)
        {
            if (!TryIndex(name, out int index))
            {
                throw MongoServerException.PathNotViable($"Cannot create field '{name}' in an array (path '{path}')");
            }

            while (array.Count <= index)
            {
                array.Add(BsonNull.Value);
            }

            array[index] = value;
        }
    }

    private static bool TryIndex(string part, out int index) =>
        int.TryParse(part, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out index);
}
