using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>A sort specification <c>{ a: 1, "b.c": -1 }</c> in BSON order; an array sorts by its smallest element
/// ascending and its largest descending, a missing field as null. Stable: ties keep natural order.
/// <c>{ $meta: ... }</c> sorts are refused by name.</summary>
internal sealed class SortSpec : IComparer<BsonDocument>
{
    private readonly List<(string Path, int Direction)> _keys = [];

    private SortSpec(BsonDocument spec)
    {
        foreach (var element in spec)
        {
            if (element.Value is BsonDocument meta)
            {
                throw MongoServerException.NotImplemented($"sorting by {meta.ToJson()} (field '{element.Name}')");
            }

            if (!BsonOrder.IsNumber(element.Value) || (element.Value.ToDouble() != 1 && element.Value.ToDouble() != -1))
            {
                throw MongoServerException.BadValue($"$sort key ordering must be 1 (for ascending) or -1 (for descending), field '{element.Name}'");
            }

            _keys.Add((element.Name, element.Value.ToDouble() > 0 ? 1 : -1));
        }
    }

    public static SortSpec? Create(BsonDocument? spec) => spec is null || spec.ElementCount == 0 ? null : new SortSpec(spec);

    public int Compare(BsonDocument? x, BsonDocument? y)
    {
        foreach (var (path, direction) in _keys)
        {
            int c = BsonOrder.Instance.Compare(KeyOf(x!, path, direction), KeyOf(y!, path, direction));
            if (c != 0)
            {
                return c * direction;
            }
        }

        return 0;
    }

    /// <summary>A document's sort key, one value per field (compare them with <see cref="KeyComparer"/>): resolved once per
    /// document rather than at every comparison.</summary>
    public BsonValue[] KeysOf(BsonDocument document) => [.. _keys.Select(k => KeyOf(document, k.Path, k.Direction))];

    /// <summary>Orders the keys <see cref="KeysOf"/> gives as <see cref="Compare"/> orders their documents.</summary>
    public IComparer<BsonValue[]> KeyComparer => Comparer<BsonValue[]>.Create((x, y) =>
    {
        for (int i = 0; i < _keys.Count; i++)
        {
            int c = BsonOrder.Instance.Compare(x[i], y[i]);
            if (c != 0)
            {
                return c * _keys[i].Direction;
            }
        }

        return 0;
    });

    private static BsonValue KeyOf(BsonDocument document, string path, int direction)
    {
        var (values, _) = DocumentPath.Resolve(document, path);
        var flat = new List<BsonValue>();
        foreach (var value in values)
        {
            if (value is BsonArray array)
            {
                flat.AddRange(array);
            }
            else
            {
                flat.Add(value);
            }
        }

        if (flat.Count == 0)
        {
            return BsonNull.Value;
        }

        var best = flat[0];
        foreach (var value in flat)
        {
            int c = BsonOrder.Instance.Compare(value, best);
            if ((direction > 0 && c < 0) || (direction < 0 && c > 0))
            {
                best = value;
            }
        }

        return best;
    }
}
