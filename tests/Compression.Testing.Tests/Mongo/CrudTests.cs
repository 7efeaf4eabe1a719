using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Testing.Tests.Mongo;

/// <summary>The driver's CRUD API against the server of <see cref="MongoFixture"/> (loopback unless a real one is given).</summary>
public sealed class CrudTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private static readonly FilterDefinitionBuilder<Person> F = Builders<Person>.Filter;

    [Fact]
    public async Task InsertOne_then_Find_returns_the_same_bytes()
    {
        await using var db = fixture.Server.CreateDatabase();
        var document = new BsonDocument
        {
            { "_id", ObjectId.GenerateNewId() }, { "s", "héllo" }, { "i", 42 }, { "l", 1L << 40 }, { "d", 0.1 },
            { "m", new Decimal128(12.5m) }, { "b", new BsonBinaryData([1, 2, 3], BsonBinarySubType.UserDefined) },
            { "t", new BsonDateTime(1_700_000_000_000) }, { "n", BsonNull.Value }, { "arr", new BsonArray { 1, "two", new BsonDocument("x", 3) } },
            { "sub", new BsonDocument { { "z", 1 }, { "a", 2 } } }, { "bool", true },
        };
        var collection = db.Database.GetCollection<BsonDocument>("docs");
        await collection.InsertOneAsync(document);

        var raw = await db.Database.GetCollection<RawBsonDocument>("docs").Find(FilterDefinition<RawBsonDocument>.Empty).SingleAsync();
        Assert.Equal(document.ToBson(), raw.Slice.AccessBackingBytes(0).Array!.AsSpan(raw.Slice.AccessBackingBytes(0).Offset, raw.Slice.Length).ToArray());
        Assert.Equal(document, await collection.Find(new BsonDocument("_id", document["_id"])).SingleAsync());
    }

    [Fact]
    public async Task InsertMany_of_pocos_then_Find_with_filter_sort_skip_limit_projection()
    {
        await using var db = fixture.Server.CreateDatabase();
        var people = db.Database.GetCollection<Person>("people");
        await people.InsertManyAsync(Person.Sample());

        var londoners = await people.Find(F.Eq(p => p.City, "London")).SortBy(p => p.Age).ToListAsync();
        Assert.Equal(["Ada", "Alan"], londoners.Select(p => p.Name));

        var page = await people.Find(FilterDefinition<Person>.Empty).SortByDescending(p => p.Age).Skip(1).Limit(2).ToListAsync();
        Assert.Equal(["Edsger", "Alan"], page.Select(p => p.Name));

        var names = await people.Find(F.Gte(p => p.Age, 41))
            .Project(Builders<Person>.Projection.Include(p => p.Name).Exclude(p => p.Id))
            .Sort(Builders<Person>.Sort.Ascending(p => p.Name))
            .ToListAsync();
        Assert.Equal(
            [new BsonDocument("Name", "Alan"), new BsonDocument("Name", "Edsger"), new BsonDocument("Name", "Grace")],
            names);

        var withoutTags = await people.Find(F.Eq(p => p.Name, "Ada")).Project(Builders<Person>.Projection.Exclude(p => p.Tags).Exclude("Address.Number")).SingleAsync();
        Assert.False(withoutTags.Contains("Tags"));
        Assert.Equal(new BsonDocument("Street", "Baker"), withoutTags["Address"]);
        Assert.True(withoutTags.Contains("_id"));
    }

    [Fact]
    public async Task Find_with_batch_size_iterates_a_multi_batch_cursor()
    {
        await using var db = fixture.Server.CreateDatabase();
        var collection = db.Database.GetCollection<BsonDocument>("many");
        await collection.InsertManyAsync(Enumerable.Range(0, 250).Select(i => new BsonDocument { { "_id", i }, { "v", i % 7 } }));
        fixture.Server.Loopback?.ResetCounters();

        var ids = new List<int>();
        using (var cursor = await collection.Find(FilterDefinition<BsonDocument>.Empty, new FindOptions { BatchSize = 40 }).ToCursorAsync())
        {
            int batches = 0;
            while (await cursor.MoveNextAsync())
            {
                Assert.True(cursor.Current.Count() <= 40);
                ids.AddRange(cursor.Current.Select(d => d["_id"].AsInt32));
                batches++;
            }

            Assert.Equal(7, batches); // 6 full batches of 40 and one of 10
        }

        Assert.Equal(Enumerable.Range(0, 250), ids);
        if (fixture.Server.Loopback is { } loopback)
        {
            Assert.Equal(6, loopback.CommandCounts["getMore"]);
            Assert.Equal(0, loopback.OpenCursors);
        }

        // default first batch (101) then getMore; a limit stops the cursor early
        Assert.Equal(250, (await collection.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync()).Count);
        Assert.Equal(130, (await collection.Find(FilterDefinition<BsonDocument>.Empty).Limit(130).ToListAsync()).Count);
        Assert.Equal(36, await collection.Find(new BsonDocument("v", 3)).CountDocumentsAsync());
    }

    [Fact]
    public async Task Disposing_a_cursor_early_kills_it()
    {
        await using var db = fixture.Server.CreateDatabase();
        var collection = db.Database.GetCollection<BsonDocument>("many");
        await collection.InsertManyAsync(Enumerable.Range(0, 50).Select(i => new BsonDocument("_id", i)));
        using (var cursor = await collection.Find(FilterDefinition<BsonDocument>.Empty, new FindOptions { BatchSize = 10 }).ToCursorAsync())
        {
            Assert.True(await cursor.MoveNextAsync());
            Assert.Equal(10, cursor.Current.Count());
        }

        if (fixture.Server.Loopback is { } loopback)
        {
            Assert.Equal(1, loopback.CommandCounts["killCursors"]);
            Assert.Equal(0, loopback.OpenCursors);
        }
    }

    [Fact]
    public async Task Filters_follow_MongoDB_semantics()
    {
        await using var db = fixture.Server.CreateDatabase();
        var c = db.Database.GetCollection<BsonDocument>("f");
        await c.InsertManyAsync(
        [
            new BsonDocument { { "_id", 1 }, { "n", 1 }, { "tags", new BsonArray { "a", "b" } }, { "sub", new BsonDocument("x", 10) } },
            new BsonDocument { { "_id", 2 }, { "n", 2L }, { "tags", new BsonArray { "b" } }, { "sub", new BsonDocument("x", 20) } },
            new BsonDocument { { "_id", 3 }, { "n", 2.5 }, { "items", new BsonArray { new BsonDocument("k", "p"), new BsonDocument("k", "q") } } },
            new BsonDocument { { "_id", 4 }, { "n", new Decimal128(4) }, { "s", "text" } },
            new BsonDocument { { "_id", 5 }, { "n", BsonNull.Value } },
        ]);

        async Task<int[]> Ids(FilterDefinition<BsonDocument> filter) =>
            (await c.Find(filter).SortBy(d => d["_id"]).ToListAsync()).Select(d => d["_id"].AsInt32).ToArray();
        var f = Builders<BsonDocument>.Filter;

        Assert.Equal(new[] { 1, 2 }, await Ids(f.Eq("tags", "b")));                       // array element match
        Assert.Equal(new[] { 1 }, await Ids(f.Eq("tags", new BsonArray { "a", "b" })));  // whole array
        Assert.Equal(new[] { 2 }, await Ids(f.Eq("sub.x", 20)));                          // dotted path
        Assert.Equal(new[] { 3 }, await Ids(f.Eq("items.k", "q")));                       // path across an array of documents
        Assert.Equal(new[] { 2 }, await Ids(f.Eq("n", 2.0)));                              // numbers compare across types
        Assert.Equal(new[] { 2, 3, 4 }, await Ids(f.Gt("n", 1)));                          // no null, no non-numbers
        Assert.Equal(new[] { 1, 2, 3 }, await Ids(f.Lte("n", new Decimal128(2.5m))));
        Assert.Equal(new[] { 1, 4 }, await Ids(f.In("n", new BsonValue[] { 1, 4.0 })));
        Assert.Equal(new[] { 2, 3, 5 }, await Ids(f.Nin("n", new BsonValue[] { 1, 4.0 })));
        Assert.Equal(new[] { 1, 3, 4, 5 }, await Ids(f.Ne("n", 2)));
        Assert.Equal(new[] { 4 }, await Ids(f.Exists("s")));
        Assert.Equal(new[] { 1, 2, 3, 5 }, await Ids(f.Exists("s", false)));
        Assert.Equal(new[] { 1, 2, 3, 4, 5 }, await Ids(f.Eq("missing", BsonNull.Value)));  // null matches missing
        Assert.Equal(new[] { 5 }, await Ids(f.Eq("n", BsonNull.Value)));
        Assert.Equal(new[] { 1, 4 }, await Ids(f.Or(f.Eq("_id", 1), f.Eq("s", "text"))));
        Assert.Equal(new[] { 2 }, await Ids(f.And(f.Eq("tags", "b"), f.Gt("n", 1))));
        Assert.Equal(new[] { 3, 4, 5 }, await Ids(new BsonDocument("$nor", new BsonArray { new BsonDocument("tags", "a"), new BsonDocument("tags", "b") })));
        Assert.Equal(new[] { 2, 3 }, await Ids(new BsonDocument("n", new BsonDocument { { "$gte", 2 }, { "$lt", 3 } })));
        Assert.Equal(new[] { 1, 2, 3 }, await Ids(f.Not(f.Gt("n", 2.5)) & f.Ne("n", BsonNull.Value) & f.Lt("n", 4)));
    }

    [Fact]
    public async Task Type_and_expr_filters_and_the_simple_collation_follow_MongoDB_semantics()
    {
        // What docz's compare-and-swap and resumed scans send: $type lists, $expr comparing $$ROOT with a $literal.
        await using var db = fixture.Server.CreateDatabase();
        var c = db.Database.GetCollection<BsonDocument>("t");
        BsonDocument first = new() { { "_id", 1 }, { "n", 1 }, { "tags", new BsonArray { "a" } }, { "sub", new BsonDocument { { "x", 10 }, { "y", 1 } } } };
        await c.InsertManyAsync(
        [
            first,
            new BsonDocument { { "_id", 2 }, { "n", 2L }, { "sub", new BsonDocument("x", 20) } },
            new BsonDocument { { "_id", 3 }, { "n", 2.5 } },
            new BsonDocument { { "_id", 4 }, { "n", new Decimal128(4) }, { "s", "text" } },
            new BsonDocument { { "_id", 5 }, { "n", BsonNull.Value } },
            new BsonDocument { { "_id", "six" }, { "n", "2" } },
        ]);

        async Task<string[]> Ids(BsonDocument filter) =>
            [.. (await c.Find(filter).ToListAsync()).Select(d => d["_id"].ToString()!).Order(StringComparer.Ordinal)];
        BsonDocument Type(string field, BsonValue types) => new(field, new BsonDocument("$type", types));
        BsonDocument Expr(BsonValue expression) => new("$expr", expression);

        Assert.Equal(["4", "six"], await Ids(new BsonDocument("$or", new BsonArray { Type("s", "string"), Type("n", "string") })));
        Assert.Equal(["2", "3"], await Ids(Type("n", new BsonArray { "long", "double" })));
        Assert.Equal(["1", "2", "3", "4"], await Ids(Type("n", "number")));
        Assert.Equal(["1", "2", "3", "4"], await Ids(Type("n", new BsonArray { 16, 18, 1, 19 }))); // the numeric codes
        Assert.Equal(["5"], await Ids(Type("n", "null")));
        Assert.Equal(["1"], await Ids(Type("tags", "array")));
        Assert.Equal(["six"], await Ids(Type("_id", new BsonArray { "string", "objectId", "maxKey" })));
        var unknown = await Assert.ThrowsAsync<MongoCommandException>(() => Ids(Type("n", "integer")));
        Assert.Equal(2, unknown.Code);

        // $$ROOT against a literal: the whole document, field order and embedded documents included, and nothing more.
        BsonDocument Root(BsonDocument document) => Expr(new BsonDocument("$eq", new BsonArray { "$$ROOT", new BsonDocument("$literal", document) }));
        Assert.Equal(["1"], await Ids(Root(first)));
        Assert.Empty(await Ids(Root(new BsonDocument(first) { { "added", 1 } })));
        Assert.Empty(await Ids(Root(new BsonDocument(first.Where(e => e.Name != "tags")))));
        Assert.Empty(await Ids(Root(new BsonDocument(first) { ["sub"] = new BsonDocument { { "y", 1 }, { "x", 10 } } })));
        // Comparisons in expressions order across types (a string is above every number) and reach paths.
        Assert.Equal(["3", "4", "six"], await Ids(Expr(new BsonDocument("$gt", new BsonArray { "$n", 2 }))));
        Assert.Equal(["2"], await Ids(Expr(new BsonDocument("$eq", new BsonArray { "$sub.x", 20 }))));
        Assert.Equal(["1", "2"], await Ids(Expr(new BsonDocument("$and", new BsonArray { "$sub", new BsonDocument("$lt", new BsonArray { "$n", 3 }) }))));

        // A replacement with the simple collation (binary string comparison) is applied as any other.
        var replaced = await c.ReplaceOneAsync(Root(first), new BsonDocument { { "_id", 1 }, { "n", 7 } }, new ReplaceOptions { Collation = Collation.Simple });
        Assert.Equal(1, replaced.ModifiedCount);
        Assert.Empty(await Ids(Root(first)));
    }

    [Fact]
    public async Task Updates_with_each_operator_and_upsert()
    {
        await using var db = fixture.Server.CreateDatabase();
        var c = db.Database.GetCollection<BsonDocument>("u");
        await c.InsertManyAsync([new BsonDocument { { "_id", 1 }, { "a", 1 }, { "gone", "x" } }, new BsonDocument { { "_id", 2 }, { "a", 2 } }]);
        var u = Builders<BsonDocument>.Update;
        var f = Builders<BsonDocument>.Filter;

        var r = await c.UpdateOneAsync(f.Eq("_id", 1), u.Set("b.c", "deep").Unset("gone").Inc("a", 10).SetOnInsert("never", true));
        Assert.Equal(1, r.MatchedCount);
        Assert.Equal(1, r.ModifiedCount);
        Assert.Equal(new BsonDocument { { "_id", 1 }, { "a", 11 }, { "b", new BsonDocument("c", "deep") } }, await c.Find(f.Eq("_id", 1)).SingleAsync());

        r = await c.UpdateOneAsync(f.Eq("_id", 1), u.Set("a", 11)); // no change
        Assert.Equal(1, r.MatchedCount);
        Assert.Equal(0, r.ModifiedCount);

        r = await c.UpdateManyAsync(FilterDefinition<BsonDocument>.Empty, u.Inc("a", 0.5).Inc("counter", 1L));
        Assert.Equal(2, r.MatchedCount);
        Assert.Equal(2, r.ModifiedCount);
        var two = await c.Find(f.Eq("_id", 2)).SingleAsync();
        Assert.Equal(new BsonDouble(2.5), two["a"]);
        Assert.Equal(new BsonInt64(1), two["counter"]);

        r = await c.UpdateOneAsync(f.Eq("key", "k1") & f.Eq("_id", 7), u.Set("v", 1).SetOnInsert("created", true), new UpdateOptions { IsUpsert = true });
        Assert.Equal(0, r.MatchedCount);
        Assert.Equal(new BsonInt32(7), r.UpsertedId);
        Assert.Equal(new BsonDocument { { "_id", 7 }, { "key", "k1" }, { "v", 1 }, { "created", true } }, await c.Find(f.Eq("_id", 7)).SingleAsync());

        r = await c.UpdateOneAsync(f.Eq("key", "k2"), u.Set("v", 2), new UpdateOptions { IsUpsert = true });
        Assert.True(r.UpsertedId.IsObjectId);
        var upserted = await c.Find(f.Eq("key", "k2")).SingleAsync();
        Assert.Equal("_id", upserted.GetElement(0).Name);

        var rr = await c.ReplaceOneAsync(f.Eq("_id", 2), new BsonDocument { { "whole", "new" } });
        Assert.Equal(1, rr.ModifiedCount);
        Assert.Equal(new BsonDocument { { "_id", 2 }, { "whole", "new" } }, await c.Find(f.Eq("_id", 2)).SingleAsync());

        rr = await c.ReplaceOneAsync(f.Eq("_id", 9), new BsonDocument("r", 1), new ReplaceOptions { IsUpsert = true });
        Assert.Equal(new BsonInt32(9), rr.UpsertedId);
        Assert.Equal(new BsonDocument { { "_id", 9 }, { "r", 1 } }, await c.Find(f.Eq("_id", 9)).SingleAsync());

        var immutable = await Assert.ThrowsAsync<MongoWriteException>(() => c.UpdateOneAsync(f.Eq("_id", 1), u.Set("_id", 99)));
        Assert.Equal(66, immutable.WriteError.Code);
    }

    [Fact]
    public async Task Deletes_one_and_many()
    {
        await using var db = fixture.Server.CreateDatabase();
        var c = db.Database.GetCollection<BsonDocument>("d");
        await c.InsertManyAsync(Enumerable.Range(0, 10).Select(i => new BsonDocument { { "_id", i }, { "even", i % 2 == 0 } }));
        Assert.Equal(1, (await c.DeleteOneAsync(new BsonDocument("even", true))).DeletedCount);
        Assert.Equal(4, (await c.DeleteManyAsync(new BsonDocument("even", true))).DeletedCount);
        Assert.Equal(0, (await c.DeleteManyAsync(new BsonDocument("even", true))).DeletedCount);
        Assert.Equal([1, 3, 5, 7, 9], (await c.Find(FilterDefinition<BsonDocument>.Empty).ToListAsync()).Select(d => d["_id"].AsInt32));
    }

    [Fact]
    public async Task FindOneAndUpdate_Replace_Delete()
    {
        await using var db = fixture.Server.CreateDatabase();
        var people = db.Database.GetCollection<Person>("people");
        await people.InsertManyAsync(Person.Sample());
        var u = Builders<Person>.Update;

        var before = await people.FindOneAndUpdateAsync(F.Eq(p => p.City, "London"), u.Inc(p => p.Age, 1),
            new FindOneAndUpdateOptions<Person> { Sort = Builders<Person>.Sort.Descending(p => p.Age) });
        Assert.Equal(("Alan", 41), (before.Name, before.Age));

        var after = await people.FindOneAndUpdateAsync(F.Eq(p => p.Name, "Alan"), u.Inc(p => p.Age, 1),
            new FindOneAndUpdateOptions<Person> { ReturnDocument = ReturnDocument.After });
        Assert.Equal(43, after.Age);

        var projected = await people.FindOneAndUpdateAsync(F.Eq(p => p.Name, "Ada"), u.Set(p => p.City, "Paris"),
            new FindOneAndUpdateOptions<Person, BsonDocument>
            {
                ReturnDocument = ReturnDocument.After,
                Projection = Builders<Person>.Projection.Include(p => p.City).Exclude(p => p.Id),
            });
        Assert.Equal(new BsonDocument("City", "Paris"), projected);

        var none = await people.FindOneAndUpdateAsync(F.Eq(p => p.Name, "Nobody"), u.Set(p => p.Age, 1));
        Assert.Null(none);

        var upserted = await people.FindOneAndUpdateAsync(F.Eq(p => p.Name, "Linus"), u.Set(p => p.Age, 55).SetOnInsert(p => p.City, "Portland"),
            new FindOneAndUpdateOptions<Person> { IsUpsert = true, ReturnDocument = ReturnDocument.After });
        Assert.Equal(("Linus", 55, "Portland"), (upserted.Name, upserted.Age, upserted.City));

        var replaced = await people.FindOneAndReplaceAsync(F.Eq(p => p.Name, "Grace"),
            new Person { Id = (await people.Find(F.Eq(p => p.Name, "Grace")).SingleAsync()).Id, Name = "Grace Hopper", Age = 85, City = "Arlington" },
            new FindOneAndReplaceOptions<Person> { ReturnDocument = ReturnDocument.After });
        Assert.Equal("Grace Hopper", replaced.Name);

        var deleted = await people.FindOneAndDeleteAsync(F.Eq(p => p.City, "London"), new FindOneAndDeleteOptions<Person> { Sort = Builders<Person>.Sort.Ascending(p => p.Age) });
        Assert.Equal("Alan", deleted.Name);
        Assert.Equal(5, await people.CountDocumentsAsync(FilterDefinition<Person>.Empty));
    }

    [Fact]
    public async Task CountDocuments_and_EstimatedDocumentCount()
    {
        await using var db = fixture.Server.CreateDatabase();
        var people = db.Database.GetCollection<Person>("people");
        Assert.Equal(0, await people.CountDocumentsAsync(FilterDefinition<Person>.Empty));
        Assert.Equal(0, await people.EstimatedDocumentCountAsync());
        await people.InsertManyAsync(Person.Sample());
        Assert.Equal(5, await people.CountDocumentsAsync(FilterDefinition<Person>.Empty));
        Assert.Equal(2, await people.CountDocumentsAsync(F.Eq(p => p.City, "London")));
        Assert.Equal(3, await people.CountDocumentsAsync(F.AnyEq(p => p.Tags, "code")));
        Assert.Equal(2, await people.CountDocumentsAsync(FilterDefinition<Person>.Empty, new CountOptions { Skip = 1, Limit = 2 }));
        Assert.Equal(1, await people.CountDocumentsAsync(FilterDefinition<Person>.Empty, new CountOptions { Skip = 4, Limit = 10 }));
        Assert.Equal(5, await people.EstimatedDocumentCountAsync());
    }

    [Fact]
    public async Task Collections_are_created_listed_and_dropped()
    {
        await using var db = fixture.Server.CreateDatabase();
        await db.Database.CreateCollectionAsync("alpha");
        await db.Database.GetCollection<BsonDocument>("beta").InsertOneAsync(new BsonDocument("x", 1));
        Assert.Equal(["alpha", "beta"], (await (await db.Database.ListCollectionNamesAsync()).ToListAsync()).Order());

        var exists = await Assert.ThrowsAsync<MongoCommandException>(() => db.Database.CreateCollectionAsync("alpha"));
        Assert.Equal(48, exists.Code);

        var filtered = await (await db.Database.ListCollectionNamesAsync(new ListCollectionNamesOptions { Filter = new BsonDocument("name", "beta") })).ToListAsync();
        Assert.Equal(["beta"], filtered);

        await db.Database.DropCollectionAsync("alpha");
        await db.Database.DropCollectionAsync("never-existed");
        Assert.Equal(new[] { "beta" }, await (await db.Database.ListCollectionNamesAsync()).ToListAsync());
        Assert.Contains(db.Name, await (await fixture.Server.Client.ListDatabaseNamesAsync()).ToListAsync());
    }

    [Fact]
    public async Task Unique_index_rejects_duplicates_with_11000()
    {
        await using var db = fixture.Server.CreateDatabase();
        var c = db.Database.GetCollection<BsonDocument>("users");
        string name = await c.Indexes.CreateOneAsync(new CreateIndexModel<BsonDocument>(
            Builders<BsonDocument>.IndexKeys.Ascending("email"), new CreateIndexOptions { Unique = true }));
        Assert.Equal("email_1", name);
        await c.Indexes.CreateOneAsync(new CreateIndexModel<BsonDocument>(Builders<BsonDocument>.IndexKeys.Descending("age")));

        var indexes = await (await c.Indexes.ListAsync()).ToListAsync();
        Assert.Equal(["_id_", "email_1", "age_-1"], indexes.Select(i => i["name"].AsString));
        Assert.True(indexes[1]["unique"].AsBoolean);
        Assert.Equal(new BsonDocument("_id", 1), indexes[0]["key"]);

        await c.InsertOneAsync(new BsonDocument { { "_id", 1 }, { "email", "ada@example.com" } });
        var dup = await Assert.ThrowsAsync<MongoWriteException>(() => c.InsertOneAsync(new BsonDocument { { "_id", 2 }, { "email", "ada@example.com" } }));
        Assert.Equal(11000, dup.WriteError.Code);
        Assert.Equal(ServerErrorCategory.DuplicateKey, dup.WriteError.Category);
        Assert.Contains($"E11000 duplicate key error collection: {db.Name}.users index: email_1 dup key: {{ email: \"ada@example.com\" }}", dup.WriteError.Message);

        var dupId = await Assert.ThrowsAsync<MongoWriteException>(() => c.InsertOneAsync(new BsonDocument { { "_id", 1 }, { "email", "other" } }));
        Assert.Contains("index: _id_ dup key: { _id: 1 }", dupId.WriteError.Message);

        await c.InsertOneAsync(new BsonDocument { { "_id", 3 }, { "email", "grace@example.com" } });
        var dupUpdate = await Assert.ThrowsAsync<MongoWriteException>(() =>
            c.UpdateOneAsync(new BsonDocument("_id", 3), Builders<BsonDocument>.Update.Set("email", "ada@example.com")));
        Assert.Equal(11000, dupUpdate.WriteError.Code);
        Assert.Equal("grace@example.com", (await c.Find(new BsonDocument("_id", 3)).SingleAsync())["email"].AsString);

        var bulk = await Assert.ThrowsAsync<MongoBulkWriteException<BsonDocument>>(() => c.InsertManyAsync(
            [new BsonDocument { { "_id", 4 }, { "email", "a" } }, new BsonDocument { { "_id", 5 }, { "email", "a" } }, new BsonDocument { { "_id", 6 }, { "email", "b" } }],
            new InsertManyOptions { IsOrdered = false }));
        Assert.Equal(1, bulk.WriteErrors.Single().Index);
        Assert.Equal(2, bulk.Result.InsertedCount);
        Assert.Equal(4, await c.CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty)); // 1, 3, 4, 6
    }

    [Fact]
    public async Task Linq_queries_run_as_aggregations()
    {
        await using var db = fixture.Server.CreateDatabase();
        var people = db.Database.GetCollection<Person>("people");
        await people.InsertManyAsync(Person.Sample());

        var londoners = people.AsQueryable().Where(p => p.City == "London" && p.Age > 40).ToList();
        Assert.Equal("Alan", Assert.Single(londoners).Name);

        var oldestFirst = people.AsQueryable().Where(p => p.Age >= 36).OrderByDescending(p => p.Age).Take(2).ToList();
        Assert.Equal(["Grace", "Edsger"], oldestFirst.Select(p => p.Name));

        Assert.Equal(3, people.AsQueryable().Count(p => p.Tags.Contains("code")));
        Assert.Equal("Barbara", people.AsQueryable().OrderBy(p => p.Age).First().Name);
    }

    [Fact]
    public async Task BulkWrite_of_10000_documents()
    {
        await using var db = fixture.Server.CreateDatabase();
        var c = db.Database.GetCollection<BsonDocument>("bulk");
        var inserts = Enumerable.Range(0, 10_000)
            .Select(i => (WriteModel<BsonDocument>)new InsertOneModel<BsonDocument>(new BsonDocument { { "_id", i }, { "group", i % 10 }, { "payload", new string('x', 100) } }))
            .ToList();
        var result = await c.BulkWriteAsync(inserts);
        Assert.Equal(10_000, result.InsertedCount);

        var mixed = await c.BulkWriteAsync(new WriteModel<BsonDocument>[]
        {
            new UpdateManyModel<BsonDocument>(new BsonDocument("group", 1), Builders<BsonDocument>.Update.Set("flag", true)),
            new DeleteManyModel<BsonDocument>(new BsonDocument("group", 2)),
            new ReplaceOneModel<BsonDocument>(new BsonDocument("_id", 5), new BsonDocument("replaced", true)),
            new DeleteOneModel<BsonDocument>(new BsonDocument("_id", 0)),
        });
        Assert.Equal(1_001, mixed.MatchedCount);
        Assert.Equal(1_001, mixed.ModifiedCount);
        Assert.Equal(1_001, mixed.DeletedCount);
        Assert.Equal(8_999, await c.CountDocumentsAsync(FilterDefinition<BsonDocument>.Empty));
        Assert.Equal(1_000, await c.CountDocumentsAsync(new BsonDocument("flag", true)));
    }
}
