using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>A command's arguments: the body (kind 0 section) and document sequences (kind 1). Every argument a handler
/// does not read must be one of the generic ones that need no behaviour here, or the command fails naming it.</summary>
internal sealed class CommandArguments(BsonDocument body, IReadOnlyDictionary<string, List<byte[]>> sequences)
{
    // Arguments that need no behaviour from a single in-memory node.
    private static readonly HashSet<string> Ignorable = new(StringComparer.Ordinal)
    {
        "$db", "lsid", "$readPreference", "txnNumber", "$clusterTime", "apiVersion", "apiStrict", "apiDeprecationErrors",
        "comment", "maxTimeMS", "writeConcern", "readConcern", "$audit", "$client", "mayBypassWriteBlocking",
        "bypassDocumentValidation", "allowDiskUse", "noCursorTimeout", "allowPartialResults", "authorizedCollections",
        "authorizedDatabases", "commitQuorum", "$queryOptions",
    };

    private readonly HashSet<string> _read = new(StringComparer.Ordinal);

    public BsonDocument Body { get; } = body;

    public string CommandName => Body.GetElement(0).Name;

    public BsonValue CommandValue => Body.GetElement(0).Value;

    public string Database => Body.TryGetValue("$db", out var db) && db.IsString
        ? db.AsString
        : throw MongoServerException.BadValue("OP_MSG requests require a $db argument");

    public BsonValue? Get(string name)
    {
        _read.Add(name);
        return Body.TryGetValue(name, out var value) ? value : null;
    }

    public BsonDocument? GetDocument(string name) => Get(name) switch
    {
        null or BsonNull => null,
        BsonDocument d => d,
        var other => throw MongoServerException.TypeMismatch($"'{name}' must be a document, not {other.BsonType}"),
    };

    public bool GetBool(string name, bool defaultValue) => Get(name) switch
    {
        null or BsonNull => defaultValue,
        var v => v.ToBoolean(),
    };

    public long? GetLong(string name) => Get(name) switch
    {
        null or BsonNull => null,
        var v when BsonOrder.IsNumber(v) => v.ToInt64(),
        var other => throw MongoServerException.TypeMismatch($"'{name}' must be a number, not {other.BsonType}"),
    };

    public string CollectionName()
    {
        var value = CommandValue;
        return value.IsString
            ? value.AsString
            : throw new MongoServerException(73, "InvalidNamespace", $"collection name has invalid type {value.BsonType}");
    }

    /// <summary>The documents of a kind 1 sequence or, failing that, of the body array of the same name.</summary>
    public List<byte[]> Sequence(string name)
    {
        _read.Add(name);
        if (sequences.TryGetValue(name, out var documents))
        {
            return documents;
        }

        if (Body.TryGetValue(name, out var value) && value is BsonArray array)
        {
            return array.Select(item => item is BsonDocument d
                ? Bson.ToBytes(d)
                : throw MongoServerException.TypeMismatch($"'{name}' entries must be documents")).ToList();
        }

        throw MongoServerException.FailedToParse($"BSON field '{CommandName}.{name}' is missing but a required field");
    }

    /// <summary>Fails, naming the argument, when the command carries one this server does not implement.</summary>
    public void EnsureAllUnderstood()
    {
        _read.Add(CommandName);
        foreach (var element in Body)
        {
            if (!_read.Contains(element.Name) && !Ignorable.Contains(element.Name))
            {
                throw MongoServerException.NotImplemented($"the '{element.Name}' argument of the {CommandName} command");
            }
        }

        foreach (string name in sequences.Keys)
        {
            if (!_read.Contains(name))
            {
                throw MongoServerException.NotImplemented($"the '{name}' document sequence of the {CommandName} command");
            }
        }

        if (Body.TryGetValue("readConcern", out var rc) && rc is BsonDocument readConcern &&
            (readConcern.Contains("atClusterTime") || readConcern.GetValue("level", "local").AsString is "snapshot"))
        {
            throw MongoServerException.NotImplemented($"readConcern {readConcern.ToJson()}");
        }

        if (Body.Contains("startTransaction") || Body.Contains("autocommit"))
        {
            throw MongoServerException.NotImplemented("transactions");
        }
    }

    /// <summary>Fields of one statement (an update or delete entry) that this server does not implement.</summary>
    public static void EnsureOnly(BsonDocument statement, string what, params string[] allowed)
    {
        foreach (var element in statement)
        {
            if (Array.IndexOf(allowed, element.Name) < 0)
            {
                throw MongoServerException.NotImplemented($"the '{element.Name}' field of {what}");
            }
        }
    }

    /// <summary>A statement's <c>collation</c>: only <c>{ locale: "simple" }</c>, the binary comparison this double always
    /// uses, is accepted; any other is refused naming it.</summary>
    public static void EnsureSimpleCollation(BsonDocument statement)
    {
        if (statement.TryGetValue("collation", out var collation)
            && !(collation is BsonDocument { ElementCount: 1 } spec && spec.GetValue("locale", BsonNull.Value) == "simple"))
        {
            throw MongoServerException.NotImplemented($"the collation {collation} (only {{ locale: \"simple\" }})");
        }
    }
}
