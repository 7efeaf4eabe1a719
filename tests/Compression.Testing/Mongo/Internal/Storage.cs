using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;

namespace Compression.Testing.Mongo.Internal;

/// <summary>A document as the client sent it: its bytes are returned unchanged; the parsed form (for filters,
/// sorts and updates) is made on first use and never mutated.</summary>
internal sealed class StoredDocument(byte[] bytes, BsonDocument? parsed = null)
{
    private BsonDocument? _parsed = parsed;

    public byte[] Bytes { get; } = bytes;

    public BsonDocument Parsed => _parsed ??= Bson.Parse(Bytes);
}

internal static class Bson
{
    private static readonly BsonBinaryReaderSettings ReaderSettings = new() { MaxDocumentSize = 64 * 1024 * 1024 };
    private static readonly BsonBinaryWriterSettings WriterSettings = new() { MaxDocumentSize = 64 * 1024 * 1024 };

    public static BsonDocument Parse(byte[] bytes)
    {
        using var stream = new MemoryStream(bytes, writable: false);
        using var reader = new BsonBinaryReader(stream, ReaderSettings);
        var document = BsonSerializer.Deserialize<BsonDocument>(reader);
        if (stream.Position != bytes.Length)
        {
            throw new FormatException($"BSON document of {bytes.Length} bytes ended at {stream.Position}");
        }

        return document;
    }

    public static byte[] ToBytes(BsonDocument document)
    {
        using var stream = new MemoryStream();
        WriteTo(stream, document);
        return stream.ToArray();
    }

    /// <summary>Appends a document's bytes to <paramref name="stream"/>, which stays open.</summary>
    public static void WriteTo(Stream stream, BsonDocument document)
    {
        using var writer = new BsonBinaryWriter(stream, WriterSettings);
        Write(writer, document);
    }

    /// <summary>Writes a document; <see cref="RawBsonDocument"/> values inside it are copied byte for byte.</summary>
    public static void Write(BsonBinaryWriter writer, BsonValue value)
    {
        switch (value)
        {
            case RawBsonDocument raw:
                writer.WriteRawBsonDocument(raw.Slice);
                break;
            case BsonDocument document:
                writer.WriteStartDocument();
                foreach (var element in document)
                {
                    writer.WriteName(element.Name);
                    Write(writer, element.Value);
                }

                writer.WriteEndDocument();
                break;
            case BsonArray array:
                writer.WriteStartArray();
                foreach (var item in array)
                {
                    Write(writer, item);
                }

                writer.WriteEndArray();
                break;
            default:
                BsonSerializer.Serialize(writer, typeof(BsonValue), value);
                break;
        }
    }

}

internal sealed class IndexSpec
{
    public required string Name { get; init; }

    public required BsonDocument Key { get; init; }

    public bool Unique { get; init; }

    public bool Sparse { get; init; }

    public BsonDocument ToDocument()
    {
        var doc = new BsonDocument { { "v", 2 }, { "key", Key }, { "name", Name } };
        if (Unique && Name != "_id_")
        {
            doc.Add("unique", true);
        }

        if (Sparse)
        {
            doc.Add("sparse", true);
        }

        return doc;
    }

    /// <summary>The index keys of a document (several for an array field: multikey); none for a sparse index when every
    /// key field is missing.</summary>
    public List<BsonArray> KeysOf(BsonDocument document)
    {
        var perField = new List<List<BsonValue>>();
        bool allMissing = true;
        foreach (var field in Key)
        {
            var (values, _) = DocumentPath.Resolve(document, field.Name);
            var expanded = new List<BsonValue>();
            foreach (var value in values)
            {
                if (value is BsonArray array)
                {
                    expanded.AddRange(array.Count == 0 ? [BsonUndefined.Value] : array);
                }
                else
                {
                    expanded.Add(value);
                }
            }

            if (expanded.Count == 0)
            {
                expanded.Add(BsonNull.Value);
            }
            else
            {
                allMissing = false;
            }

            perField.Add(expanded.Distinct(BsonOrder.Instance).ToList());
        }

        if (Sparse && allMissing)
        {
            return [];
        }

        var keys = new List<BsonArray> { new() };
        foreach (var options in perField)
        {
            keys = keys.SelectMany(prefix => options.Select(v => new BsonArray(prefix) { v })).ToList();
        }

        return keys;
    }
}

internal sealed class CollectionState(string database, string name)
{
    public string Database { get; } = database;

    public string Name { get; } = name;

    public string Namespace => $"{Database}.{Name}";

    public Guid Uuid { get; } = Guid.NewGuid();

    /// <summary>Natural (insertion) order.</summary>
    public List<StoredDocument> Documents { get; } = [];

    public List<IndexSpec> Indexes { get; } = [new IndexSpec { Name = "_id_", Key = new BsonDocument("_id", 1), Unique = true }];

    /// <summary>Entries of each unique index (by index name).</summary>
    public Dictionary<string, Dictionary<BsonArray, StoredDocument>> UniqueEntries { get; } = new(StringComparer.Ordinal)
    {
        ["_id_"] = new Dictionary<BsonArray, StoredDocument>(BsonOrder.Instance),
    };

    private readonly Dictionary<StoredDocument, int> _positions = new(ReferenceEqualityComparer.Instance);

    /// <summary>
    /// When <paramref name="filter"/> holds a plain equality on <c>_id</c> (or <c>$eq</c> alone), the one document the <c>_id_</c> index gives for it
    /// (or null when none); false when the filter has no such equality and every document must be scanned.
    /// </summary>
    public bool TryFindById(BsonDocument filter, out StoredDocument? document)
    {
        document = null;
        if (filter.TryGetValue("_id", out BsonValue value) && value is BsonDocument { ElementCount: 1 } eq && eq.GetElement(0).Name == "$eq")
        {
            value = eq[0]; // { _id: { $eq: v } } is the same equality
        }

        if (!filter.Contains("_id")
            || value is BsonArray or BsonRegularExpression
            || (value is BsonDocument operators && operators.ElementCount > 0 && operators.GetElement(0).Name.StartsWith('$')))
        {
            return false;
        }

        document = UniqueEntries["_id_"].TryGetValue(new BsonArray { value }, out StoredDocument? found) ? found : null;
        return true;
    }

    /// <summary>Puts <paramref name="replacement"/> in <paramref name="target"/>'s place (natural order is kept). The places
    /// are cached and each is checked before it is used, so inserts and deletes elsewhere never make one wrong.</summary>
    public void Replace(StoredDocument target, StoredDocument replacement)
    {
        if (!_positions.TryGetValue(target, out int position) || position >= Documents.Count || !ReferenceEquals(Documents[position], target))
        {
            _positions.Clear();
            for (int p = 0; p < Documents.Count; p++)
            {
                _positions[Documents[p]] = p;
            }

            position = _positions[target];
        }

        _positions.Remove(target);
        Documents[position] = replacement;
        _positions[replacement] = position;
    }

    /// <summary>Throws DuplicateKey when <paramref name="document"/> would collide with another document than
    /// <paramref name="self"/> in a unique index.</summary>
    public void CheckUnique(BsonDocument document, StoredDocument? self)
    {
        foreach (var index in Indexes.Where(i => i.Unique))
        {
            var entries = UniqueEntries[index.Name];
            foreach (var key in index.KeysOf(document))
            {
                if (entries.TryGetValue(key, out var other) && !ReferenceEquals(other, self))
                {
                    throw DuplicateKey(index, key);
                }
            }
        }
    }

    public void AddEntries(StoredDocument document)
    {
        foreach (var index in Indexes.Where(i => i.Unique))
        {
            var entries = UniqueEntries[index.Name];
            foreach (var key in index.KeysOf(document.Parsed))
            {
                entries[key] = document;
            }
        }
    }

    public void RemoveEntries(StoredDocument document)
    {
        foreach (var index in Indexes.Where(i => i.Unique))
        {
            var entries = UniqueEntries[index.Name];
            foreach (var key in index.KeysOf(document.Parsed))
            {
                if (entries.TryGetValue(key, out var owner) && ReferenceEquals(owner, document))
                {
                    entries.Remove(key);
                }
            }
        }
    }

    public MongoServerException DuplicateKey(IndexSpec index, BsonArray key)
    {
        var keyPattern = new BsonDocument();
        var keyValue = new BsonDocument();
        var shown = new List<string>();
        int i = 0;
        foreach (var field in index.Key)
        {
            keyPattern.Add(field.Name, field.Value);
            keyValue.Add(field.Name, key[i]);
            shown.Add($"{field.Name}: {key[i].ToJson(new MongoDB.Bson.IO.JsonWriterSettings { OutputMode = JsonOutputMode.Shell })}");
            i++;
        }

        return new MongoServerException(11000, "DuplicateKey",
            $"E11000 duplicate key error collection: {Namespace} index: {index.Name} dup key: {{ {string.Join(", ", shown)} }}")
        {
            Details = new BsonDocument { { "keyPattern", keyPattern }, { "keyValue", keyValue } },
        };
    }
}

internal sealed class DatabaseState(string name)
{
    public string Name { get; } = name;

    public Dictionary<string, CollectionState> Collections { get; } = new(StringComparer.Ordinal);
}

/// <summary>All databases. One lock guards everything: simple, and plenty for tests on two cores.</summary>
internal sealed class Storage
{
    public object Sync { get; } = new();

    public Dictionary<string, DatabaseState> Databases { get; } = new(StringComparer.Ordinal);

    public CollectionState? Find(string database, string collection) =>
        Databases.TryGetValue(database, out var db) && db.Collections.TryGetValue(collection, out var c) ? c : null;

    public CollectionState GetOrCreate(string database, string collection)
    {
        ValidateNames(database, collection);
        if (!Databases.TryGetValue(database, out var db))
        {
            db = new DatabaseState(database);
            Databases[database] = db;
        }

        if (!db.Collections.TryGetValue(collection, out var c))
        {
            c = new CollectionState(database, collection);
            db.Collections[collection] = c;
        }

        return c;
    }

    public static void ValidateNames(string database, string collection)
    {
        if (database.Length == 0 || database.IndexOfAny(['/', '\\', '.', ' ', '"', '$', '\0']) >= 0)
        {
            throw new MongoServerException(73, "InvalidNamespace", $"Invalid database name: '{database}'");
        }

        if (collection.Length == 0 || collection.Contains('$') || collection.Contains('\0'))
        {
            throw new MongoServerException(73, "InvalidNamespace", $"Invalid collection name: '{collection}'");
        }
    }
}
