using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

internal sealed partial class CommandProcessor
{
    private static BsonDocument WriteError(int index, MongoServerException e)
    {
        var error = new BsonDocument { { "index", index }, { "code", e.Code }, { "codeName", e.CodeName }, { "errmsg", e.Message } };
        if (e.Details is not null)
        {
            error.AddRange(e.Details);
        }

        return error;
    }

    private static BsonDocument WriteReply(long n, BsonArray writeErrors, params BsonElement[] extra)
    {
        var reply = new BsonDocument("n", n <= int.MaxValue ? new BsonInt32((int)n) : new BsonInt64(n));
        foreach (var element in extra)
        {
            reply.Add(element);
        }

        if (writeErrors.Count > 0)
        {
            reply.Add("writeErrors", writeErrors);
        }

        reply.Add("ok", 1.0);
        return reply;
    }

    /// <summary>Puts <c>_id</c> first (adding an ObjectId when missing), as mongod does; the client's bytes are kept
    /// when they already start with <c>_id</c>.</summary>
    private static StoredDocument Prepare(byte[] bytes, BsonDocument parsed)
    {
        if (bytes.Length > MaxBsonObjectSize)
        {
            throw MongoServerException.TooLarge($"object to insert too large. size in bytes: {bytes.Length}, max size: {MaxBsonObjectSize}");
        }

        if (parsed.ElementCount > 0 && parsed.GetElement(0).Name == "_id")
        {
            ValidateId(parsed[0]);
            return new StoredDocument(bytes, parsed);
        }

        var reordered = new BsonDocument("_id", parsed.TryGetValue("_id", out var id) ? id : ObjectId.GenerateNewId());
        ValidateId(reordered[0]);
        foreach (var element in parsed.Where(e => e.Name != "_id"))
        {
            reordered.Add(element);
        }

        return new StoredDocument(Bson.ToBytes(reordered), reordered);
    }

    private static void ValidateId(BsonValue id)
    {
        if (id is BsonArray || id is BsonRegularExpression || id.IsBsonUndefined)
        {
            throw new MongoServerException(53, "InvalidIdField", $"The '_id' value cannot be of type {id.BsonType}");
        }
    }

    private BsonDocument Insert(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var documents = args.Sequence("documents");
        bool ordered = args.GetBool("ordered", true);
        args.EnsureAllUnderstood();
        if (documents.Count > MaxWriteBatchSize)
        {
            throw new MongoServerException(16, "InvalidLength", $"Write batch sizes must be between 1 and {MaxWriteBatchSize}. Got {documents.Count} operations.");
        }

        var errors = new BsonArray();
        long n = 0;
        lock (storage.Sync)
        {
            var collection = storage.GetOrCreate(args.Database, collectionName);
            for (int i = 0; i < documents.Count; i++)
            {
                try
                {
                    var stored = Prepare(documents[i], Bson.Parse(documents[i]));
                    collection.CheckUnique(stored.Parsed, null);
                    collection.Documents.Add(stored);
                    collection.AddEntries(stored);
                    n++;
                }
                catch (MongoServerException e)
                {
                    errors.Add(WriteError(i, e));
                    if (ordered)
                    {
                        break;
                    }
                }
            }
        }

        return WriteReply(n, errors);
    }

    private BsonDocument Update(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var statements = args.Sequence("updates");
        bool ordered = args.GetBool("ordered", true);
        args.EnsureAllUnderstood();
        var errors = new BsonArray();
        var upserted = new BsonArray();
        long n = 0, modified = 0;
        lock (storage.Sync)
        {
            for (int i = 0; i < statements.Count; i++)
            {
                try
                {
                    var statement = Bson.Parse(statements[i]);
                    CommandArguments.EnsureOnly(statement, "an update statement", "q", "u", "upsert", "multi", "collation");
                    CommandArguments.EnsureSimpleCollation(statement);
                    var query = statement.GetValue("q", null) as BsonDocument ?? throw MongoServerException.FailedToParse("BSON field 'update.updates.q' is missing but a required field");
                    var update = statement.GetValue("u", null) ?? throw MongoServerException.FailedToParse("BSON field 'update.updates.u' is missing but a required field");
                    bool multi = statement.GetValue("multi", false).ToBoolean();
                    bool upsert = statement.GetValue("upsert", false).ToBoolean();
                    UpdateApplier.Validate(update);
                    if (multi && !UpdateApplier.IsOperatorUpdate(update.AsBsonDocument))
                    {
                        throw MongoServerException.FailedToParse("multi update is not supported for replacement-style update");
                    }

                    var (matched, changed, upsertedId) = UpdateDocuments(args.Database, collectionName, query, update.AsBsonDocument, null, multi, upsert);
                    n += matched;
                    modified += changed;
                    if (upsertedId is not null)
                    {
                        n++;
                        upserted.Add(new BsonDocument { { "index", i }, { "_id", upsertedId } });
                    }
                }
                catch (MongoServerException e)
                {
                    errors.Add(WriteError(i, e));
                    if (ordered)
                    {
                        break;
                    }
                }
            }
        }

        var extra = new List<BsonElement> { new("nModified", modified <= int.MaxValue ? (int)modified : modified) };
        if (upserted.Count > 0)
        {
            extra.Add(new BsonElement("upserted", upserted));
        }

        return WriteReply(n, errors, [.. extra]);
    }

    /// <summary>Updates the documents matching <paramref name="query"/> (the first in <paramref name="sort"/> order
    /// unless <paramref name="multi"/>), or upserts. Caller holds the lock.</summary>
    private (long Matched, long Modified, BsonValue? UpsertedId) UpdateDocuments(
        string db, string collectionName, BsonDocument query, BsonDocument update, SortSpec? sort, bool multi, bool upsert,
        List<(BsonDocument Before, BsonDocument After)>? changes = null)
    {
        FilterMatcher.Validate(query);
        var collection = storage.Find(db, collectionName);
        var targets = Sorted(Matching(collection, query), sort);
        if (!multi && targets.Count > 1)
        {
            targets = [targets[0]];
        }

        long modified = 0;
        if (targets.Count > 0)
        {
            // Compute every new document first so that a failure (e.g. a duplicate key) changes nothing in this statement.
            foreach (var target in targets)
            {
                var after = UpdateApplier.Apply(target.Parsed, update, isInsert: false);
                byte[] bytes = Bson.ToBytes(after);
                changes?.Add((target.Parsed, after));
                if (bytes.AsSpan().SequenceEqual(target.Bytes))
                {
                    continue;
                }

                if (bytes.Length > MaxBsonObjectSize)
                {
                    throw MongoServerException.TooLarge($"Resulting document after update is larger than {MaxBsonObjectSize}");
                }

                collection!.RemoveEntries(target);
                try
                {
                    collection.CheckUnique(after, null);
                }
                catch
                {
                    collection.AddEntries(target);
                    throw;
                }

                var replacement = new StoredDocument(bytes, after);
                collection.Replace(target, replacement);
                collection.AddEntries(replacement);
                modified++;
            }

            return (targets.Count, modified, null);
        }

        if (!upsert)
        {
            return (0, 0, null);
        }

        var seed = UpdateApplier.UpsertSeed(query);
        if (!UpdateApplier.IsOperatorUpdate(update))
        {
            seed = seed.TryGetValue("_id", out var queryId) ? new BsonDocument("_id", queryId) : [];
        }

        var created = UpdateApplier.Apply(seed, update, isInsert: true);
        var stored = Prepare(Bson.ToBytes(created), created);
        var target2 = storage.GetOrCreate(db, collectionName);
        target2.CheckUnique(stored.Parsed, null);
        target2.Documents.Add(stored);
        target2.AddEntries(stored);
        changes?.Add((new BsonDocument(), stored.Parsed));
        return (0, 0, stored.Parsed["_id"]);
    }

    private BsonDocument Delete(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var statements = args.Sequence("deletes");
        bool ordered = args.GetBool("ordered", true);
        args.EnsureAllUnderstood();
        var errors = new BsonArray();
        long n = 0;
        lock (storage.Sync)
        {
            for (int i = 0; i < statements.Count; i++)
            {
                try
                {
                    var statement = Bson.Parse(statements[i]);
                    CommandArguments.EnsureOnly(statement, "a delete statement", "q", "limit");
                    var query = statement.GetValue("q", null) as BsonDocument ?? throw MongoServerException.FailedToParse("BSON field 'delete.deletes.q' is missing but a required field");
                    long limit = statement.GetValue("limit", 0).ToInt64();
                    if (limit is not (0 or 1))
                    {
                        throw MongoServerException.BadValue($"The limit field in delete objects must be 0 or 1. Got {limit}");
                    }

                    var collection = storage.Find(args.Database, collectionName);
                    var targets = Matching(collection, query);
                    if (limit == 1 && targets.Count > 1)
                    {
                        targets = [targets[0]];
                    }

                    Remove(collection, targets);
                    n += targets.Count;
                }
                catch (MongoServerException e)
                {
                    errors.Add(WriteError(i, e));
                    if (ordered)
                    {
                        break;
                    }
                }
            }
        }

        return WriteReply(n, errors);
    }

    private static void Remove(CollectionState? collection, List<StoredDocument> targets)
    {
        if (collection is null || targets.Count == 0)
        {
            return;
        }

        var set = new HashSet<StoredDocument>(targets, ReferenceEqualityComparer.Instance);
        foreach (var target in targets)
        {
            collection.RemoveEntries(target);
        }

        collection.Documents.RemoveAll(set.Contains);
    }

    private BsonDocument FindAndModify(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var query = args.GetDocument("query") ?? [];
        var sort = SortSpec.Create(args.GetDocument("sort"));
        bool remove = args.GetBool("remove", false);
        var update = args.Get("update");
        bool returnNew = args.GetBool("new", false);
        var projection = Projection.Create(args.GetDocument("fields"));
        bool upsert = args.GetBool("upsert", false);
        args.EnsureAllUnderstood();
        if (remove && update is not null)
        {
            throw MongoServerException.FailedToParse("Cannot specify both an update and remove=true");
        }

        if (!remove && update is null)
        {
            throw MongoServerException.FailedToParse("Either an update or remove=true must be specified");
        }

        if (remove && (upsert || returnNew))
        {
            throw MongoServerException.FailedToParse("Cannot specify both upsert=true and remove=true or new=true and remove=true");
        }

        FilterMatcher.Validate(query);
        string db = args.Database;
        var lastError = new BsonDocument();
        BsonValue value = BsonNull.Value;
        lock (storage.Sync)
        {
            Storage.ValidateNames(db, collectionName);
            if (remove)
            {
                var collection = storage.Find(db, collectionName);
                var target = Sorted(Matching(collection, query), sort).FirstOrDefault();
                lastError.Add("n", target is null ? 0 : 1);
                if (target is not null)
                {
                    Remove(collection, [target]);
                    value = projection is null ? new RawBsonDocument(target.Bytes) : projection.Apply(target.Parsed);
                }
            }
            else
            {
                UpdateApplier.Validate(update!);
                var changes = new List<(BsonDocument Before, BsonDocument After)>();
                var (matched, _, upsertedId) = UpdateDocuments(db, collectionName, query, update!.AsBsonDocument, sort, multi: false, upsert, changes);
                lastError.Add("n", matched + (upsertedId is null ? 0 : 1));
                lastError.Add("updatedExisting", matched > 0);
                if (upsertedId is not null)
                {
                    lastError.Add("upserted", upsertedId);
                }

                if (changes.Count > 0 && (returnNew || upsertedId is null))
                {
                    var doc = returnNew ? changes[0].After : changes[0].Before;
                    value = projection is null ? doc : projection.Apply(doc);
                }
            }
        }

        return new BsonDocument { { "lastErrorObject", lastError }, { "value", value }, { "ok", 1.0 } };
    }
}
