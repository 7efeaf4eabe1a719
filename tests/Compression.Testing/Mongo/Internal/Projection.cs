using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>Find projections: inclusion (<c>{ a: 1, "b.c": 1 }</c>) or exclusion (<c>{ a: 0 }</c>) of dotted paths, with
/// <c>_id</c> included unless excluded. Projection operators and expressions (<c>$slice</c>, <c>$elemMatch</c>,
/// <c>"$field"</c>, literals) are refused by name.</summary>
internal sealed class Projection
{
    private readonly Node _root = new();
    private readonly bool _inclusion;
    private readonly bool _includeId = true;

    private Projection(BsonDocument spec)
    {
        bool? inclusion = null;
        foreach (var element in spec)
        {
            var value = element.Value;
            if (value is BsonDocument expression)
            {
                string op = expression.ElementCount > 0 ? expression.GetElement(0).Name : "{}";
                throw MongoServerException.NotImplemented($"the projection operator {op} (field '{element.Name}')");
            }

            if (!(value.IsBoolean || BsonOrder.IsNumber(value)))
            {
                throw MongoServerException.NotImplemented($"projection expressions (field '{element.Name}': {value.ToJson()})");
            }

            bool include = value.ToBoolean();
            if (element.Name == "_id")
            {
                _includeId = include;
                continue;
            }

            if (inclusion.HasValue && inclusion.Value != include)
            {
                throw new MongoServerException(31254, "Location31254",
                    $"Cannot do {(inclusion.Value ? "exclusion" : "inclusion")} on field {element.Name} in {(inclusion.Value ? "inclusion" : "exclusion")} projection");
            }

            inclusion = include;
            _root.Add(element.Name.Split('.'));
        }

        _inclusion = inclusion ?? _includeId;
        if (!_inclusion && !_includeId)
        {
            _root.Add(["_id"]);
        }
    }

    public static Projection? Create(BsonDocument? spec) => spec is null || spec.ElementCount == 0 ? null : new Projection(spec);

    public BsonDocument Apply(BsonDocument document) =>
        _inclusion ? Include(document, _root, top: true) : Exclude(document, _root);

    private BsonDocument Include(BsonDocument document, Node node, bool top)
    {
        var result = new BsonDocument();
        foreach (var element in document)
        {
            if (top && element.Name == "_id" && _includeId)
            {
                result.Add(element);
                continue;
            }

            if (!node.Children.TryGetValue(element.Name, out var child))
            {
                continue;
            }

            if (child.Children.Count == 0)
            {
                result.Add(element);
            }
            else if (element.Value is BsonDocument sub)
            {
                result.Add(element.Name, Include(sub, child, top: false));
            }
            else if (element.Value is BsonArray array)
            {
                result.Add(element.Name, new BsonArray(array.OfType<BsonDocument>().Select(d => Include(d, child, top: false))));
            }
        }

        return result;
    }

    private static BsonDocument Exclude(BsonDocument document, Node node)
    {
        var result = new BsonDocument();
        foreach (var element in document)
        {
            if (!node.Children.TryGetValue(element.Name, out var child))
            {
                result.Add(element);
            }
            else if (child.Children.Count > 0)
            {
                if (element.Value is BsonDocument sub)
                {
                    result.Add(element.Name, Exclude(sub, child));
                }
                else if (element.Value is BsonArray array)
                {
                    result.Add(element.Name, new BsonArray(array.Select(v => v is BsonDocument d ? Exclude(d, child) : v)));
                }
                else
                {
                    result.Add(element);
                }
            }
        }

        return result;
    }

    private sealed class Node
    {
        public Dictionary<string, Node> Children { get; } = new(StringComparer.Ordinal);

        public void Add(string[] parts)
        {
            var node = this;
            foreach (string part in parts)
            {
                if (!node.Children.TryGetValue(part, out var next))
                {
                    next = new Node();
                    node.Children[part] = next;
                }

                node = next;
            }

            node.Children.Clear(); // a shorter path wins over longer ones below it
        }
    }
}
