using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

internal sealed partial class CommandProcessor
{
    private BsonDocument Create(CommandArguments args)
    {
        string name = args.CollectionName();
        args.EnsureAllUnderstood(); // options (capped, validator, timeseries, ...) are refused by name
        lock (storage.Sync)
        {
            if (storage.Find(args.Database, name) is not null)
            {
                throw MongoServerException.NamespaceExists($"Collection {args.Database}.{name} already exists.");
            }

            storage.GetOrCreate(args.Database, name);
        }

        return Ok();
    }

    private BsonDocument Drop(CommandArguments args)
    {
        string name = args.CollectionName();
        args.EnsureAllUnderstood();
        string ns = $"{args.Database}.{name}";
        lock (storage.Sync)
        {
            var collection = storage.Find(args.Database, name);
            if (collection is null)
            {
                return Ok(); // MongoDB 7.0 and later: dropping a missing collection succeeds
            }

            storage.Databases[args.Database].Collections.Remove(name);
            cursors.KillNamespace(n => n == ns);
            return new BsonDocument { { "nIndexesWas", collection.Indexes.Count }, { "ns", ns }, { "ok", 1.0 } };
        }
    }

    private BsonDocument DropDatabase(CommandArguments args)
    {
        args.EnsureAllUnderstood();
        string db = args.Database;
        lock (storage.Sync)
        {
            storage.Databases.Remove(db);
            cursors.KillNamespace(n => n.StartsWith(db + ".", StringComparison.Ordinal));
        }

        return new BsonDocument { { "dropped", db }, { "ok", 1.0 } };
    }

    private BsonDocument ListCollections(CommandArguments args)
    {
        var filter = args.GetDocument("filter") ?? [];
        bool nameOnly = args.GetBool("nameOnly", false);
        var cursorOptions = args.GetDocument("cursor");
        int? batchSize = BatchSize(cursorOptions?.GetValue("batchSize", BsonNull.Value), "cursor.batchSize");
        args.EnsureAllUnderstood();
        FilterMatcher.Validate(filter);
        string db = args.Database;
        List<byte[]> results;
        lock (storage.Sync)
        {
            var collections = storage.Databases.TryGetValue(db, out var state) ? state.Collections.Values.ToList() : [];
            results = collections
                .Select(c => new BsonDocument
                {
                    { "name", c.Name },
                    { "type", "collection" },
                    { "options", new BsonDocument() },
                    { "info", new BsonDocument { { "readOnly", false }, { "uuid", new BsonBinaryData(c.Uuid, GuidRepresentation.Standard) } } },
                    { "idIndex", c.Indexes[0].ToDocument() },
                })
                .Where(d => FilterMatcher.Matches(filter, d))
                .Select(d => Bson.ToBytes(nameOnly ? new BsonDocument { { "name", d["name"] }, { "type", d["type"] } } : d))
                .ToList();
        }

        string ns = $"{db}.$cmd.listCollections";
        var (batch, id) = cursors.Open(ns, results, batchSize ?? int.MaxValue, singleBatch: false);
        return CursorReply(ns, batch, id, "firstBatch");
    }

    private BsonDocument ListDatabases(CommandArguments args)
    {
        var filter = args.GetDocument("filter") ?? [];
        bool nameOnly = args.GetBool("nameOnly", false);
        args.EnsureAllUnderstood();
        if (args.Database != "admin")
        {
            throw new MongoServerException(13, "Unauthorized", "listDatabases may only be run against the admin database.");
        }

        FilterMatcher.Validate(filter);
        var databases = new BsonArray();
        long total = 0;
        lock (storage.Sync)
        {
            foreach (var db in storage.Databases.Values.Where(d => d.Collections.Count > 0))
            {
                long size = db.Collections.Values.Sum(c => c.Documents.Sum(d => (long)d.Bytes.Length));
                total += size;
                var entry = nameOnly
                    ? new BsonDocument("name", db.Name)
                    : new BsonDocument { { "name", db.Name }, { "sizeOnDisk", size }, { "empty", size == 0 } };
                if (FilterMatcher.Matches(filter, entry))
                {
                    databases.Add(entry);
                }
            }
        }

        var reply = new BsonDocument("databases", databases);
        if (!nameOnly)
        {
            reply.Add("totalSize", total);
            reply.Add("totalSizeMb", total / (1024 * 1024));
        }

        reply.Add("ok", 1.0);
        return reply;
    }

    private BsonDocument CreateIndexes(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var indexes = args.Get("indexes") as BsonArray ?? throw MongoServerException.FailedToParse("BSON field 'createIndexes.indexes' is missing but a required field");
        args.EnsureAllUnderstood();
        var specs = indexes.Select(ParseIndex).ToList();
        lock (storage.Sync)
        {
            bool created = storage.Find(args.Database, collectionName) is null;
            var collection = storage.GetOrCreate(args.Database, collectionName);
            int before = collection.Indexes.Count;
            foreach (var spec in specs)
            {
                var sameName = collection.Indexes.FirstOrDefault(i => i.Name == spec.Name);
                var sameKey = collection.Indexes.FirstOrDefault(i => BsonOrder.Instance.Equals(i.Key, spec.Key));
                if (sameName is not null || sameKey is not null)
                {
                    var existing = sameName ?? sameKey!;
                    if (existing.Name == spec.Name && BsonOrder.Instance.Equals(existing.Key, spec.Key) &&
                        existing.Unique == spec.Unique && existing.Sparse == spec.Sparse)
                    {
                        continue; // already there
                    }

                    throw sameName is not null && !BsonOrder.Instance.Equals(sameName.Key, spec.Key)
                        ? MongoServerException.IndexKeySpecsConflict($"An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: {spec.ToDocument()}, existing index: {sameName.ToDocument()}")
                        : MongoServerException.IndexOptionsConflict($"An equivalent index already exists with a different name and/or options. Requested index: {spec.ToDocument()}, existing index: {existing.ToDocument()}");
                }

                if (spec.Unique)
                {
                    var entries = new Dictionary<BsonArray, StoredDocument>(BsonOrder.Instance);
                    foreach (var document in collection.Documents)
                    {
                        foreach (var key in spec.KeysOf(document.Parsed))
                        {
                            if (entries.TryGetValue(key, out var other) && !ReferenceEquals(other, document))
                            {
                                throw collection.DuplicateKey(spec, key);
                            }

                            entries[key] = document;
                        }
                    }

                    collection.UniqueEntries[spec.Name] = entries;
                }

                collection.Indexes.Add(spec);
            }

            var reply = new BsonDocument
            {
                { "numIndexesBefore", before },
                { "numIndexesAfter", collection.Indexes.Count },
                { "createdCollectionAutomatically", created },
            };
            if (before == collection.Indexes.Count)
            {
                reply.Add("note", "all indexes already exist");
            }

            reply.Add("ok", 1.0);
            return reply;
        }
    }

    private static IndexSpec ParseIndex(BsonValue value)
    {
        var doc = value as BsonDocument ?? throw MongoServerException.TypeMismatch("index specifications must be documents");
        CommandArguments.EnsureOnly(doc, "an index specification", "key", "name", "unique", "sparse", "background", "v");
        var key = doc.GetValue("key", null) as BsonDocument ?? throw MongoServerException.FailedToParse("The 'key' field is a required property of an index specification");
        if (key.ElementCount == 0)
        {
            throw new MongoServerException(67, "CannotCreateIndex", "Index keys cannot be empty.");
        }

        foreach (var field in key)
        {
            if (!BsonOrder.IsNumber(field.Value) || field.Value.ToDouble() == 0)
            {
                throw MongoServerException.NotImplemented($"index type {field.Value.ToJson()} (field '{field.Name}'); only ascending/descending keys");
            }
        }

        string name = doc.GetValue("name", null)?.AsString ?? string.Join("_", key.Select(e => $"{e.Name}_{e.Value.ToInt32()}"));
        return new IndexSpec
        {
            Name = name,
            Key = key,
            Unique = doc.GetValue("unique", false).ToBoolean(),
            Sparse = doc.GetValue("sparse", false).ToBoolean(),
        };
    }

    private BsonDocument ListIndexes(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var cursorOptions = args.GetDocument("cursor");
        int? batchSize = BatchSize(cursorOptions?.GetValue("batchSize", BsonNull.Value), "cursor.batchSize");
        args.EnsureAllUnderstood();
        string ns = $"{args.Database}.{collectionName}";
        List<byte[]> results;
        lock (storage.Sync)
        {
            var collection = storage.Find(args.Database, collectionName) ?? throw MongoServerException.NamespaceNotFound($"ns does not exist: {ns}");
            results = collection.Indexes.Select(i => Bson.ToBytes(i.ToDocument())).ToList();
        }

        var (batch, id) = cursors.Open(ns, results, batchSize ?? int.MaxValue, singleBatch: false);
        return CursorReply(ns, batch, id, "firstBatch");
    }

    private BsonDocument DropIndexes(CommandArguments args)
    {
        string collectionName = args.CollectionName();
        var index = args.Get("index") ?? throw MongoServerException.FailedToParse("BSON field 'dropIndexes.index' is missing but a required field");
        args.EnsureAllUnderstood();
        string ns = $"{args.Database}.{collectionName}";
        lock (storage.Sync)
        {
            var collection = storage.Find(args.Database, collectionName) ?? throw MongoServerException.NamespaceNotFound($"ns not found {ns}");
            int before = collection.Indexes.Count;
            List<IndexSpec> doomed = index switch
            {
                BsonString { Value: "*" } => collection.Indexes.Skip(1).ToList(),
                BsonString s => collection.Indexes.Where(i => i.Name == s.Value).ToList(),
                BsonDocument key => collection.Indexes.Where(i => BsonOrder.Instance.Equals(i.Key, key)).ToList(),
                BsonArray names => collection.Indexes.Where(i => names.Contains(i.Name)).ToList(),
                _ => throw MongoServerException.TypeMismatch("index must be a string, a document or an array of strings"),
            };
            if (doomed.Count == 0)
            {
                throw MongoServerException.IndexNotFound($"index not found with name [{index}]");
            }

            if (doomed.Any(i => i.Name == "_id_"))
            {
                throw MongoServerException.InvalidOptions("cannot drop _id index");
            }

            foreach (var spec in doomed)
            {
                collection.Indexes.Remove(spec);
                collection.UniqueEntries.Remove(spec.Name);
            }

            return new BsonDocument { { "nIndexesWas", before }, { "ok", 1.0 } };
        }
    }
}
