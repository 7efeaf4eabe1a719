using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>Executes commands against <see cref="Storage"/>. Replies are documents whose stored documents are
/// <see cref="RawBsonDocument"/> values, written back byte for byte.</summary>
internal sealed partial class CommandProcessor(Storage storage, CursorStore cursors, MongoLoopbackServerOptions options)
{
    public const int MaxBsonObjectSize = 16 * 1024 * 1024;
    public const int MaxMessageSizeBytes = 48_000_000;
    public const int MaxWriteBatchSize = 100_000;

    // Real commands this double does not implement: refused as NotImplemented (naming them), not as unknown.
    private static readonly HashSet<string> KnownButNotImplemented = new(StringComparer.OrdinalIgnoreCase)
    {
        "distinct", "mapReduce", "collStats", "dbStats", "serverStatus", "renameCollection", "collMod", "explain",
        "bulkWrite", "getLastError", "saslStart", "saslContinue", "authenticate", "abortTransaction", "commitTransaction",
        "killAllSessions", "getParameter", "setParameter", "fsync", "validate", "currentOp", "killOp", "startSession",
        "refreshSessions", "shutdown", "createUser", "usersInfo", "getCmdLineOpts", "hostInfo", "connectionStatus",
        "reIndex", "compact", "replSetGetStatus", "getLog",
    };

    public static BsonDocument ErrorReply(MongoServerException e) =>
        new() { { "ok", 0.0 }, { "errmsg", e.Message }, { "code", e.Code }, { "codeName", e.CodeName } };

    public BsonDocument Hello(BsonDocument command, int connectionId)
    {
        string name = command.GetElement(0).Name;
        if (command.TryGetValue("loadBalanced", out var lb) && lb.ToBoolean())
        {
            throw MongoServerException.NotImplemented("load balanced mode (hello with loadBalanced: true)");
        }

        var reply = new BsonDocument();
        if (command.GetValue("helloOk", false).ToBoolean())
        {
            reply.Add("helloOk", true);
        }

        reply.Add(name == "hello" ? "isWritablePrimary" : "ismaster", true);
        reply.Add("maxBsonObjectSize", MaxBsonObjectSize);
        reply.Add("maxMessageSizeBytes", MaxMessageSizeBytes);
        reply.Add("maxWriteBatchSize", MaxWriteBatchSize);
        reply.Add("localTime", new BsonDateTime(DateTime.UtcNow));
        reply.Add("logicalSessionTimeoutMinutes", 30);
        reply.Add("connectionId", connectionId);
        reply.Add("minWireVersion", 0);
        reply.Add("maxWireVersion", options.MaxWireVersion);
        reply.Add("readOnly", false);
        reply.Add("ok", 1.0);
        return reply;
    }

    /// <summary>Runs one OP_MSG command. Failures become <c>{ ok: 0 }</c> replies here.</summary>
    public BsonDocument Execute(CommandArguments args, int connectionId)
    {
        try
        {
            return Dispatch(args, connectionId);
        }
        catch (MongoServerException e)
        {
            return ErrorReply(e);
        }
    }

    private BsonDocument Dispatch(CommandArguments args, int connectionId)
    {
        string name = args.CommandName;
        switch (name)
        {
            case "hello" or "isMaster" or "ismaster":
                return Hello(args.Body, connectionId);
            case "ping":
                return Ok();
            case "buildInfo" or "buildinfo":
                return new BsonDocument
                {
                    { "version", options.ReportedVersion }, { "gitVersion", "mongo-loopback-test-double" },
                    { "versionArray", new BsonArray(options.ReportedVersion.Split('.').Select(int.Parse).Append(0).Take(4)) },
                    { "bits", 64 }, { "maxBsonObjectSize", MaxBsonObjectSize }, { "storageEngines", new BsonArray { "inMemory" } },
                    { "ok", 1.0 },
                };
            case "endSessions":
                return Ok();
            case "insert":
                return Insert(args);
            case "update":
                return Update(args);
            case "delete":
                return Delete(args);
            case "find":
                return Find(args);
            case "getMore":
                return GetMore(args);
            case "killCursors":
                return KillCursors(args);
            case "aggregate":
                return Aggregate(args);
            case "count":
                return Count(args);
            case "findAndModify" or "findandmodify":
                return FindAndModify(args);
            case "create":
                return Create(args);
            case "drop":
                return Drop(args);
            case "dropDatabase":
                return DropDatabase(args);
            case "listCollections":
                return ListCollections(args);
            case "listDatabases":
                return ListDatabases(args);
            case "createIndexes":
                return CreateIndexes(args);
            case "listIndexes":
                return ListIndexes(args);
            case "dropIndexes" or "deleteIndexes":
                return DropIndexes(args);
            default:
                throw KnownButNotImplemented.Contains(name)
                    ? MongoServerException.NotImplemented($"the command '{name}'")
                    : MongoServerException.CommandNotFound(name);
        }
    }

    private static BsonDocument Ok() => new() { { "ok", 1.0 } };

    private static BsonDocument CursorReply(string ns, List<byte[]> batch, long id, string batchName) => new()
    {
        {
            "cursor", new BsonDocument
            {
                { batchName, new BsonArray(batch.Select(b => new RawBsonDocument(b))) },
                { "id", id },
                { "ns", ns },
            }
        },
        { "ok", 1.0 },
    };

    private static int? BatchSize(BsonValue? value, string what)
    {
        if (value is null || value.IsBsonNull)
        {
            return null;
        }

        long n = BsonOrder.IsNumber(value) ? value.ToInt64() : throw MongoServerException.TypeMismatch($"{what} must be a number");
        return n < 0 ? throw MongoServerException.BadValue($"{what} must be non-negative, but received: {n}") : (int)Math.Min(n, int.MaxValue);
    }

    // ---------------------------------------------------------------- reads

    private List<StoredDocument> Matching(CollectionState? collection, BsonDocument filter)
    {
        FilterMatcher.Validate(filter);
        if (collection is null)
        {
            return [];
        }

        if (filter.ElementCount == 0)
        {
            return [.. collection.Documents];
        }

        if (collection.TryFindById(filter, out StoredDocument? byId))
        {
            // Equality on _id: the _id_ index names the one document that can match; the whole filter still decides.
            return byId is not null && FilterMatcher.Matches(filter, byId.Parsed) ? [byId] : [];
        }

        return collection.Documents.Where(d => FilterMatcher.Matches(filter, d.Parsed)).ToList();
    }

    private static List<StoredDocument> Sorted(List<StoredDocument> documents, SortSpec? sort) =>
        sort is null ? documents : documents.Select(d => (Document: d, Keys: sort.KeysOf(d.Parsed))).OrderBy(e => e.Keys, sort.KeyComparer)
            .Select(e => e.Document).ToList();

    private BsonDocument Find(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var filter = args.GetDocument("filter") ?? [];
        var sort = SortSpec.Create(args.GetDocument("sort"));
        var projection = Projection.Create(args.GetDocument("projection"));
        long skip = args.GetLong("skip") ?? 0;
        long limit = args.GetLong("limit") ?? 0;
        int? batchSize = BatchSize(args.Get("batchSize"), "batchSize");
        bool singleBatch = args.GetBool("singleBatch", false);
        if (skip < 0)
        {
            throw MongoServerException.BadValue("skip value must be non-negative");
        }

        if (limit < 0)
        {
            limit = -limit;
            singleBatch = true;
        }

        args.EnsureAllUnderstood();
        string db = args.Database;
        string ns = $"{db}.{collectionName}";
        List<byte[]> results;
        lock (storage.Sync)
        {
            Storage.ValidateNames(db, collectionName);
            var documents = Sorted(Matching(storage.Find(db, collectionName), filter), sort);
            IEnumerable<StoredDocument> window = documents.Skip((int)Math.Min(skip, int.MaxValue));
            if (limit > 0)
            {
                window = window.Take((int)Math.Min(limit, int.MaxValue));
            }

            results = window.Select(d => projection is null ? d.Bytes : Bson.ToBytes(projection.Apply(d.Parsed))).ToList();
        }

        var (batch, id) = cursors.Open(ns, results, batchSize, singleBatch);
        return CursorReply(ns, batch, id, "firstBatch");
    }

    private BsonDocument GetMore(CommandArguments args)
    {
        var idValue = args.CommandValue;
        if (idValue.BsonType != BsonType.Int64)
        {
            throw MongoServerException.TypeMismatch($"getMore must be an int64 cursor id, not {idValue.BsonType}");
        }

        string collection = args.Get("collection")?.AsString ?? throw MongoServerException.FailedToParse("getMore needs 'collection'");
        int? batchSize = BatchSize(args.Get("batchSize"), "batchSize");
        args.EnsureAllUnderstood();
        var (batch, id, ns) = cursors.GetMore(idValue.AsInt64, $"{args.Database}.{collection}", batchSize is 0 ? null : batchSize);
        return CursorReply(ns, batch, id, "nextBatch");
    }

    private BsonDocument KillCursors(CommandArguments args)
    {
        var ids = args.Get("cursors") as BsonArray ?? throw MongoServerException.FailedToParse("killCursors needs 'cursors'");
        args.EnsureAllUnderstood();
        var killed = new BsonArray();
        var notFound = new BsonArray();
        foreach (var id in ids)
        {
            (cursors.Kill(id.ToInt64()) ? killed : notFound).Add(id);
        }

        return new BsonDocument
        {
            { "cursorsKilled", killed }, { "cursorsNotFound", notFound }, { "cursorsAlive", new BsonArray() },
            { "cursorsUnknown", new BsonArray() }, { "ok", 1.0 },
        };
    }

    private BsonDocument Count(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var query = args.GetDocument("query") ?? [];
        long skip = args.GetLong("skip") ?? 0;
        long limit = Math.Abs(args.GetLong("limit") ?? 0);
        args.EnsureAllUnderstood();
        long n;
        lock (storage.Sync)
        {
            n = Math.Max(0, Matching(storage.Find(args.Database, collectionName), query).Count - skip);
        }

        if (limit > 0)
        {
            n = Math.Min(n, limit);
        }

        return new BsonDocument { { "n", n <= int.MaxValue ? new BsonInt32((int)n) : new BsonInt64(n) }, { "ok", 1.0 } };
    }

    private BsonDocument Aggregate(CommandArguments args)
    {
        if (!args.CommandValue.IsString)
        {
            throw MongoServerException.NotImplemented("database-level aggregate ({aggregate: 1})");
        }

        string collectionName = args.CollectionName();
        var pipeline = args.Get("pipeline") as BsonArray ?? throw MongoServerException.FailedToParse("'pipeline' option must be specified as an array");
        var cursorOptions = args.GetDocument("cursor") ?? throw MongoServerException.FailedToParse("The 'cursor' option is required, except for aggregate with the explain argument");
        int? batchSize = BatchSize(cursorOptions.GetValue("batchSize", BsonNull.Value), "cursor.batchSize");
        foreach (var option in cursorOptions.Names.Where(n => n != "batchSize"))
        {
            throw MongoServerException.NotImplemented($"the cursor option '{option}' of aggregate");
        }

        args.EnsureAllUnderstood();
        var stages = pipeline.Select(s => s as BsonDocument is { ElementCount: 1 } d ? d.GetElement(0) : throw MongoServerException.FailedToParse("A pipeline stage specification object must contain exactly one field.")).ToList();
        foreach (var stage in stages)
        {
            if (stage.Name is not ("$match" or "$sort" or "$skip" or "$limit" or "$count" or "$group"))
            {
                throw MongoServerException.NotImplemented($"the aggregation stage {stage.Name}");
            }

            if (stage.Name == "$match")
            {
                FilterMatcher.Validate(stage.Value.AsBsonDocument);
            }
        }

        string db = args.Database;
        string ns = $"{db}.{collectionName}";
        List<byte[]> results;
        lock (storage.Sync)
        {
            Storage.ValidateNames(db, collectionName);
            var collection = storage.Find(db, collectionName);
            var rows = collection is null ? [] : collection.Documents.Select(d => (d.Parsed, (byte[]?)d.Bytes)).ToList();
            foreach (var stage in stages)
            {
                rows = ApplyStage(stage, rows);
            }

            results = rows.Select(r => r.Item2 ?? Bson.ToBytes(r.Item1)).ToList();
        }

        var (batch, id) = cursors.Open(ns, results, batchSize, singleBatch: false);
        return CursorReply(ns, batch, id, "firstBatch");
    }

    private static List<(BsonDocument, byte[]?)> ApplyStage(BsonElement stage, List<(BsonDocument Doc, byte[]? Raw)> rows)
    {
        switch (stage.Name)
        {
            case "$match":
                {
                    var filter = stage.Value.AsBsonDocument;
                    return rows.Where(r => FilterMatcher.Matches(filter, r.Doc)).ToList();
                }

            case "$sort":
                {
                    var sort = SortSpec.Create(stage.Value.AsBsonDocument) ?? throw MongoServerException.BadValue("$sort stage must have at least one sort key");
                    return rows.OrderBy(r => r.Doc, sort).ToList();
                }

            case "$skip":
                return rows.Skip((int)Math.Min(stage.Value.ToInt64(), int.MaxValue)).ToList();
            case "$limit":
                {
                    long limit = stage.Value.ToInt64();
                    return limit <= 0
                        ? throw MongoServerException.BadValue($"the limit must be positive, not {limit}")
                        : rows.Take((int)Math.Min(limit, int.MaxValue)).ToList();
                }

            case "$count":
                {
                    string field = stage.Value.IsString ? stage.Value.AsString : throw MongoServerException.BadValue("the count field must be a non-empty string");
                    return rows.Count == 0 ? [] : [(new BsonDocument(field, rows.Count), null)];
                }

            default: // $group
                {
                    var spec = stage.Value.AsBsonDocument;
                    var id = spec.GetValue("_id", BsonNull.Value);
                    if (id is BsonDocument || (id.IsString && id.AsString.StartsWith('$')))
                    {
                        throw MongoServerException.NotImplemented($"$group by an expression (_id: {id.ToJson()}); only a constant _id is implemented");
                    }

                    var output = new BsonDocument("_id", id);
                    foreach (var field in spec.Where(e => e.Name != "_id"))
                    {
                        if (field.Value is not BsonDocument { ElementCount: 1 } accumulator || accumulator.GetElement(0).Name != "$sum" ||
                            !BsonOrder.IsNumber(accumulator[0]))
                        {
                            throw MongoServerException.NotImplemented($"the $group accumulator {field.Name}: {field.Value.ToJson()}; only {{$sum: <number>}} is implemented");
                        }

                        var each = accumulator[0];
                        output.Add(field.Name, each.BsonType is BsonType.Int32 or BsonType.Int64
                            ? (BsonValue)(rows.Count * each.ToInt64() is var s && s is >= int.MinValue and <= int.MaxValue ? new BsonInt32((int)s) : new BsonInt64(s))
                            : new BsonDouble(rows.Count * each.ToDouble()));
                    }

                    return rows.Count == 0 ? [] : [(output, null)];
                }
        }
    }
}
