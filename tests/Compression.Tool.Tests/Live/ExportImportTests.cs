using System.Text;
using System.Text.Json;
using Compression.MongoDB;
using Compression.Testing.Mongo;
using Compression.Tool.Backends.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>docz cat</c>, <c>export</c> and <c>import</c> on MongoDB (the in-process wire-protocol double): a compressed
/// collection exported and imported into an empty one reads back through the serializer byte for byte; <c>cat</c>
/// selects on clear fields with a limit and names what it cannot read; <c>export</c> resumes after a crash with each
/// document once; <c>import</c> names bad lines by number and resumes from its checkpoint.
/// </summary>
public sealed class ExportImportTests(MongoFixture fixture) : IClassFixture<MongoFixture>, IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-export-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private string Config(string ns) => Docz.WriteConfig(Directory.CreateTempSubdirectory("cfg-").FullName, fixture.Server.ConnectionString, ns);

    private string PathOf(string name) => Path.Combine(_directory, name);

    /// <summary>A plain document with a value of every BSON type the driver writes, and numbers that only canonical Extended JSON keeps apart.</summary>
    private static BsonDocument Exotic() => new()
    {
        { "_id", "exotic" },
        { "year", 1999 },
        { "int", 1 }, { "long", 1L }, { "double", 1.0 }, { "big", 1L << 40 }, { "dec", Decimal128.Parse("1234.5678") },
        { "neg0", -0.0 }, { "nan", double.NaN }, { "inf", double.NegativeInfinity }, { "tiny", 5e-324 }, { "pi", Math.PI },
        { "bin", new BsonBinaryData([1, 2, 3, 250], BsonBinarySubType.Binary) }, { "custom", new BsonBinaryData([9, 9], (BsonBinarySubType)0x85) },
        { "date", new BsonDateTime(1_234_567_890_123) }, { "re", new BsonRegularExpression("a.*b", "i") }, { "ts", new BsonTimestamp(42, 7) },
        { "min", BsonMinKey.Value }, { "max", BsonMaxKey.Value }, { "js", new BsonJavaScript("x = 1") },
        { "jsScope", new BsonJavaScriptWithScope("y", new BsonDocument("a", 1)) }, { "sym", BsonSymbol.Create("s") },
        { "undefined", BsonUndefined.Value }, { "null", BsonNull.Value },
        { "nested", new BsonDocument { { "a", new BsonArray { 1, "two", new BsonDocument("b", 3.0), new BsonArray() } }, { "empty", new BsonDocument() } } },
        { "text", "line\nbreak, \"quoted\", tab\t, \u0001, ünïcödé, 🎬" },
    };

    [Fact]
    public async Task ExportThenImport_IntoEmptyCollection_ReadsBackThroughTheSerializerByteForByte()
    {
        await using var source = fixture.Server.CreateDatabase("export_src");
        await using var target = fixture.Server.CreateDatabase("export_dst");
        string sourceNs = $"{source.Name}.movies", targetNs = $"{target.Name}.copy";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(source.Database, "movies", 1500);
        byte[] exotic = Exotic().ToBson();
        await source.Database.GetCollection<RawBsonDocument>("movies").InsertOneAsync(new RawBsonDocument(exotic));
        string sourceConfig = Config(sourceNs), targetConfig = Config(targetNs);
        var migrated = Docz.Run("migrate", "--config", sourceConfig, "--format", "json");
        Assert.True(migrated.Exit == 0, migrated.Error + migrated.Output);

        string file = PathOf("movies.jsonl");
        var export = Docz.Run("export", "--config", sourceConfig, "--to", file, "--format", "json", "--batch-size", "200");
        Assert.True(export.Exit == 0, export.Error + export.Output);
        using (JsonDocument report = JsonDocument.Parse(export.Output))
        {
            Assert.Equal(1501, report.RootElement.GetProperty("documents").GetInt64());
            Assert.Equal(0, report.RootElement.GetProperty("failed").GetInt64());
        }
        string[] lines = File.ReadAllLines(file);
        Assert.Equal(1501, lines.Length);
        Assert.False(File.Exists(file + ".docz-checkpoint")); // removed once done
        // Each line is the decoded document (no _z), and parses back to its very bytes.
        Assert.Equal(exotic, BsonDocument.Parse(lines[0]).ToBson()); // a string _id sorts before ObjectIds
        Assert.DoesNotContain("\"_z\"", lines[1], StringComparison.Ordinal);

        Assert.Empty(await LiveData.ReadAllAsync(target.Database, "copy"));
        var import = Docz.Run("import", "--config", targetConfig, "--from", file, "--format", "json", "--batch-size", "300");
        Assert.True(import.Exit == 0, import.Error + import.Output);
        using (JsonDocument report = JsonDocument.Parse(import.Output))
        {
            Assert.Equal(1501, report.RootElement.GetProperty("documents").GetInt64());
            Assert.Equal("adopted", report.RootElement.GetProperty("trained")[0].GetProperty("outcome").GetString()); // the first dictionary, from the file
        }

        // Every document is there once, compressed with the target's own dictionary; each movie reads back through the
        // application's serializer as its original plain bytes, and the exotic one decodes to its very bytes.
        Dictionary<BsonValue, byte[]> after = await LiveData.ReadAllAsync(target.Database, "copy");
        Assert.Equal(1501, after.Count);
        Assert.All(after.Values, stored => Assert.True(LiveData.IsCompressed(stored)));
        await using (var movies = new AdapterReader(fixture.Server.ConnectionString, target.Name, targetNs))
        {
            foreach ((ObjectId id, byte[] original) in originals) Assert.Equal(original, movies.Read(after[id]).ToPlainBson());
        }
        var cat = Docz.Run("cat", "--config", targetConfig, "--filter", "{\"_id\": \"exotic\"}");
        Assert.True(cat.Exit == 0, cat.Error + cat.Output);
        Assert.Equal(exotic, BsonDocument.Parse(cat.Output).ToBson());

        // And the copy exports to the same file, byte for byte.
        string again = PathOf("copy.jsonl");
        var second = Docz.Run("export", "--config", targetConfig, "--to", again);
        Assert.True(second.Exit == 0, second.Error + second.Output);
        Assert.Equal(File.ReadAllBytes(file), File.ReadAllBytes(again));

        // Importing the file again changes nothing (an upsert by _id).
        var twice = Docz.Run("import", "--config", targetConfig, "--from", file);
        Assert.True(twice.Exit == 0, twice.Error + twice.Output);
        Dictionary<BsonValue, byte[]> afterTwice = await LiveData.ReadAllAsync(target.Database, "copy");
        Assert.Equal(1501, afterTwice.Count);
        foreach ((BsonValue id, byte[] copy) in after) Assert.Equal(copy, afterTwice[id]); // the same dictionary, the same bytes
    }

    [Fact]
    public async Task Cat_FilterOnClearFieldWithLimit_PrintsTheFirstMatchingDecodedDocumentsInIdOrder()
    {
        await using var db = fixture.Server.CreateDatabase("cat");
        string ns = $"{db.Name}.movies";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(db.Database, "movies", 300);
        string config = Config(ns);
        Assert.Equal(0, Docz.Run("migrate", "--config", config).Exit);

        var (exit, output, error) = Docz.Run("cat", "--config", config, "--filter", "{\"year\": {\"$gte\": 2000}}", "--limit", "7");
        Assert.True(exit == 0, error + output);
        string[] lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        byte[][] expected = [.. originals.OrderBy(o => o.Key)
            .Select(o => o.Value).Where(bytes => BsonSerializer.Deserialize<BsonDocument>(bytes)["year"].AsInt32 >= 2000).Take(7)];
        Assert.Equal(7, expected.Length);
        Assert.Equal(expected.Length, lines.Length);
        for (int i = 0; i < lines.Length; i++) Assert.Equal(expected[i], BsonDocument.Parse(lines[i]).ToBson());
        Assert.Equal("", error);

        // On _id, without a limit: exactly that document.
        ObjectId one = originals.Keys.OrderBy(k => k).ElementAt(42);
        (exit, output, error) = Docz.Run("cat", "--config", config, "--filter", $"{{\"_id\": {{\"$oid\": \"{one}\"}}}}");
        Assert.True(exit == 0, error + output);
        Assert.Equal(originals[one], BsonDocument.Parse(Assert.Single(output.Split('\n', StringSplitOptions.RemoveEmptyEntries))).ToBson());

        // A field inside _z cannot be matched by the server: refused as bad usage, nothing printed.
        (exit, output, error) = Docz.Run("cat", "--config", config, "--filter", "{\"$or\": [{\"year\": 1999}, {\"title\": \"x\"}]}");
        Assert.Equal(2, exit);
        Assert.Equal("", output);
        Assert.Contains("'title'", error, StringComparison.Ordinal);
        (exit, _, error) = Docz.Run("cat", "--config", config, "--id", "doc::1");
        Assert.Equal(2, exit);
        Assert.Contains("--filter", error, StringComparison.Ordinal);
        (exit, _, error) = Docz.Run("cat", "--config", config, "--filter", "{not json");
        Assert.Equal(2, exit);
        Assert.StartsWith("cat: --filter is not a JSON document", error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Cat_UnreadableDocument_NamedOnStderr_OthersPrinted_Exit1()
    {
        await using var db = fixture.Server.CreateDatabase("cat_bad");
        string ns = $"{db.Name}.movies";
        await LiveData.InsertMoviesAsync(db.Database, "movies", 100);
        string config = Config(ns);
        Assert.Equal(0, Docz.Run("migrate", "--config", config).Exit);
        var movies = db.Database.GetCollection<BsonDocument>("movies");
        BsonDocument damaged = (await movies.Find(FilterDefinition<BsonDocument>.Empty).Sort(new BsonDocument("_id", 1)).Skip(10).Limit(1).ToListAsync())[0];
        byte[] envelope = damaged["_z"].AsBsonBinaryData.Bytes;
        envelope[envelope.Length / 2] ^= 0x5A;
        damaged["_z"] = new BsonBinaryData(envelope, damaged["_z"].AsBsonBinaryData.SubType);
        await movies.ReplaceOneAsync(new BsonDocument("_id", damaged["_id"]), damaged);

        var (exit, output, error) = Docz.Run("cat", "--config", config);
        Assert.Equal(1, exit);
        Assert.Equal(99, output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length);
        Assert.Contains($"cat: ObjectId(\"{damaged["_id"].AsObjectId}\") cannot be read: ", error, StringComparison.Ordinal);
        Assert.Contains("1 of 100 document(s) cannot be read", error, StringComparison.Ordinal);
        Assert.DoesNotContain(damaged["_id"].AsObjectId.ToString(), output, StringComparison.Ordinal);

        // export skips it too, names it, and says so with exit 1.
        string file = PathOf("bad.jsonl");
        var export = Docz.Run("export", "--config", config, "--to", file, "--format", "json");
        Assert.Equal(1, export.Exit);
        using JsonDocument report = JsonDocument.Parse(export.Output);
        Assert.Equal(99, report.RootElement.GetProperty("documents").GetInt64());
        Assert.Equal($"ObjectId(\"{damaged["_id"].AsObjectId}\")", report.RootElement.GetProperty("failures")[0].GetProperty("id").GetString());
        Assert.Equal(99, File.ReadAllLines(file).Length);
    }

    [Fact]
    public async Task Export_CrashedAfterWritingABatch_ResumesFromItsCheckpoint_EachDocumentOnce()
    {
        await using var db = fixture.Server.CreateDatabase("export_crash");
        string ns = $"{db.Name}.movies";
        await LiveData.InsertMoviesAsync(db.Database, "movies", 1000);
        string config = Config(ns);
        Assert.Equal(0, Docz.Run("migrate", "--config", config).Exit);
        string clean = PathOf("clean.jsonl"), file = PathOf("crashed.jsonl");
        Assert.Equal(0, Docz.Run("export", "--config", config, "--to", clean).Exit);

        // A run that dies after its third batch is written and flushed, before that batch's checkpoint: the file holds
        // lines past the checkpoint, and then half a line, as a crash in the middle of a write leaves it.
        var settings = new LiveSettings { ConfigPath = config, BatchSize = 100 };
        var options = new TransferOptions
        {
            File = file,
            BeforeCheckpoint = checkpoint => checkpoint.Documents == 300 ? throw new IOException("crashed (test)") : Task.CompletedTask,
        };
        await Assert.ThrowsAsync<IOException>(() => MongoBackend.Instance.ExportAsync(settings, options, new LiveOutput(TextWriter.Null, TextWriter.Null, settings),
            CancellationToken.None));
        await File.AppendAllTextAsync(file, "{ \"_id\" : { \"$oid\" : \"5e0bd2");
        Assert.Equal(301, File.ReadAllLines(file).Length);
        Assert.True(File.Exists(file + ".docz-checkpoint"));

        var resumed = Docz.Run("export", "--config", config, "--to", file, "--format", "json", "--batch-size", "100");
        Assert.True(resumed.Exit == 0, resumed.Error + resumed.Output);
        using (JsonDocument report = JsonDocument.Parse(resumed.Output))
        {
            Assert.True(report.RootElement.GetProperty("resumed").GetBoolean());
            Assert.Equal(2, report.RootElement.GetProperty("runs").GetInt32());
            Assert.Equal(1000, report.RootElement.GetProperty("documents").GetInt64());
        }
        Assert.Equal(File.ReadAllBytes(clean), File.ReadAllBytes(file)); // each document once, in _id order, no torn line
        Assert.False(File.Exists(file + ".docz-checkpoint"));

        // Done: a next run does not overwrite the file unless told to.
        var refused = Docz.Run("export", "--config", config, "--to", file);
        Assert.Equal(2, refused.Exit);
        Assert.Contains("--restart", refused.Error, StringComparison.Ordinal);
        Assert.Equal(0, Docz.Run("export", "--config", config, "--to", file, "--restart").Exit);
        Assert.Equal(File.ReadAllBytes(clean), File.ReadAllBytes(file));
    }

    [Fact]
    public async Task Import_BadLines_NamedByLineNumber_OthersWritten_Exit1()
    {
        await using var db = fixture.Server.CreateDatabase("import_bad");
        string ns = $"{db.Name}.movies";
        string config = Config(ns);
        var random = new Random(3);
        var good = Enumerable.Range(0, 5).Select(i => LiveMovie.Make(i, random)).ToList();
        string Line(LiveMovie movie) => BsonSerializer.Deserialize<BsonDocument>(movie.ToPlainBson()).ToJson(new JsonWriterSettings { OutputMode = JsonOutputMode.CanonicalExtendedJson });
        string file = PathOf("bad.jsonl");
        await File.WriteAllLinesAsync(file,
        [
            Line(good[0]),
            "not json",
            Line(good[1]),
            "{\"title\": \"no id\"}",
            "",
            Line(good[2]) + " {\"_id\": 2}",
            Line(good[3]),
            "[1, 2]",
            Line(good[4]),
        ]);

        var (exit, output, error) = Docz.Run("import", "--config", config, "--from", file, "--format", "json", "--batch-size", "3", "--no-train");
        Assert.True(exit == 1, error + output);
        using JsonDocument report = JsonDocument.Parse(output);
        Assert.Equal(9, report.RootElement.GetProperty("lines").GetInt64());
        Assert.Equal(4, report.RootElement.GetProperty("documents").GetInt64());
        Assert.Equal(4, report.RootElement.GetProperty("failed").GetInt64());
        var failures = report.RootElement.GetProperty("failures").EnumerateArray().Select(f => (f.GetProperty("id").GetString(), f.GetProperty("error").GetString()!)).ToList();
        Assert.Equal(["line 2", "line 4", "line 6", "line 8"], failures.Select(f => f.Item1));
        Assert.StartsWith("not a JSON document", failures[0].Item2, StringComparison.Ordinal);
        Assert.Contains("no _id", failures[1].Item2, StringComparison.Ordinal);
        Assert.Contains("more than one JSON value", failures[2].Item2, StringComparison.Ordinal);

        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        Assert.Equal([good[0].Id, good[1].Id, good[3].Id, good[4].Id], stored.Keys.Select(k => k.AsObjectId).Order());
        await using var reader = new AdapterReader(fixture.Server.ConnectionString, db.Name, ns);
        foreach (LiveMovie movie in new[] { good[0], good[1], good[3], good[4] })
        {
            Assert.True(LiveData.IsCompressed(stored[movie.Id]));
            Assert.Equal(movie.ToPlainBson(), reader.Read(stored[movie.Id]).ToPlainBson());
        }

        var table = Docz.Run("import", "--config", config, "--from", file);
        Assert.Equal(1, table.Exit);
        Assert.Contains("  line 2: not a JSON document", table.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Import_CrashedAfterABatch_ResumesFromItsCheckpoint()
    {
        await using var source = fixture.Server.CreateDatabase("import_src");
        await using var target = fixture.Server.CreateDatabase("import_dst");
        string sourceNs = $"{source.Name}.movies", targetNs = $"{target.Name}.movies";
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(source.Database, "movies", 600);
        string file = PathOf("movies.jsonl"), targetConfig = Config(targetNs);
        Assert.Equal(0, Docz.Run("export", "--config", Config(sourceNs), "--to", file).Exit); // plain documents export as they are

        var settings = new LiveSettings { ConfigPath = targetConfig, BatchSize = 100 };
        var options = new TransferOptions
        {
            File = file,
            BeforeCheckpoint = checkpoint => checkpoint.Lines == 300 ? throw new IOException("crashed (test)") : Task.CompletedTask,
        };
        await Assert.ThrowsAsync<IOException>(() => MongoBackend.Instance.ImportAsync(settings, options, new LiveOutput(TextWriter.Null, TextWriter.Null, settings),
            CancellationToken.None));
        Assert.Equal(300, (await LiveData.ReadAllAsync(target.Database, "movies")).Count); // the third batch was written, its checkpoint was not

        var resumed = Docz.Run("import", "--config", targetConfig, "--from", file, "--format", "json", "--batch-size", "100");
        Assert.True(resumed.Exit == 0, resumed.Error + resumed.Output);
        using (JsonDocument report = JsonDocument.Parse(resumed.Output))
        {
            Assert.True(report.RootElement.GetProperty("resumed").GetBoolean());
            Assert.Equal(600, report.RootElement.GetProperty("lines").GetInt64());
            Assert.Equal(600, report.RootElement.GetProperty("documents").GetInt64()); // 200 before the crash's checkpoint, 400 since (the third batch again)
            Assert.Empty(report.RootElement.GetProperty("trained").EnumerateArray()); // the first run trained; the dictionary is there
        }
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(target.Database, "movies");
        Assert.Equal(600, stored.Count);
        await using var reader = new AdapterReader(fixture.Server.ConnectionString, target.Name, targetNs);
        foreach ((ObjectId id, byte[] original) in originals)
        {
            Assert.True(LiveData.IsCompressed(stored[id]));
            Assert.Equal(original, reader.Read(stored[id]).ToPlainBson());
        }
        Assert.False(File.Exists(Backends.LiveBackend<MongoSession, MongoNamespace, ScannedDocument>.ImportCheckpointPath(file, targetNs)));
    }
}
