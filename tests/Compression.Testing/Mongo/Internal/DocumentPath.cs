using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>Resolves a dotted path the way MongoDB queries do: through embedded documents, into arrays by numeric
/// position, and across arrays of documents (each element's field).</summary>
internal static class DocumentPath
{
    /// <summary>The values the path reaches (arrays at the leaf are returned whole; the matcher looks inside them),
    /// and whether some branch of the path is missing.</summary>
    public static (List<BsonValue> Values, bool AnyMissing) Resolve(BsonDocument document, string path)
    {
        var values = new List<BsonValue>();
        bool anyMissing = false;
        Walk(document, path.Split('.'), 0, values, ref anyMissing);
        return (values, anyMissing);
    }

    private static void Walk(BsonValue current, string[] parts, int index, List<BsonValue> values, ref bool anyMissing)
    {
        if (index == parts.Length)
        {
            values.Add(current);
            return;
        }

        string part = parts[index];
        if (current is BsonDocument doc)
        {
            if (doc.TryGetValue(part, out var next))
            {
                Walk(next, parts, index + 1, values, ref anyMissing);
            }
            else
            {
                anyMissing = true;
            }
        }
        else if (current is BsonArray array)
        {
            bool found = false;
            if (int.TryParse(part, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int position))
            {
                if (position < array.Count)
                {
                    found = true;
                    Walk(array[position], parts, index + 1, values, ref anyMissing);
                }
            }

            foreach (var item in array)
            {
                if (item is BsonDocument)
                {
                    found = true;
                    Walk(item, parts, index, values, ref anyMissing);
                }
            }

            if (!found)
            {
                anyMissing = true;
            }
        }
        else
        {
            anyMissing = true;
        }
    }
}
