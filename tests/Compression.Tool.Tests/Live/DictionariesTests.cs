using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Driver;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// <c>dictionaries list|export|import</c> on MongoDB: a lost dictionary is lost data, so every version goes to one file
/// and back into an empty store, after which every document reads again; conflicts and damaged files import nothing.
/// </summary>
public sealed class DictionariesTests(MongoFixture fixture) : IClassFixture<MongoFixture>, IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("docz-dicts-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task Export_then_import_into_an_empty_store_makes_every_document_readable_again()
    {
        await using var db = fixture.Server.CreateDatabase("dicts");
        string ns = $"{db.Name}.movies";
        (string config, Dictionary<ObjectId, byte[]> originals) = await TwoVersionsAsync(db.Database, ns);
        string file = Path.Combine(_directory, "dictionaries.jsonl");

        // list: both versions, the second current.
        JsonElement listed = Json(Docz.Run("dictionaries", "list", "--config", config, "--format", "json"), 0);
        JsonElement namespaceListing = listed.GetProperty("stores")[0].GetProperty("namespaces")[0];
        Assert.Equal(ns, namespaceListing.GetProperty("namespace").GetString());
        Assert.Equal(2, namespaceListing.GetProperty("currentVersion").GetInt32());
        JsonElement[] versions = [.. namespaceListing.GetProperty("dictionaries").EnumerateArray()];
        Assert.Equal([1, 2], versions.Select(v => v.GetProperty("version").GetInt32()));
        Assert.Equal([false, true], versions.Select(v => v.GetProperty("current").GetBoolean()));
        Assert.All(versions, v => Assert.True(v.GetProperty("bytes").GetInt32() > 0 && v.GetProperty("samples").GetInt32() > 0));
        var table = Docz.Run("dictionaries", "list", "--config", config);
        Assert.Equal(0, table.Exit);
        Assert.Contains($"{ns}: 2 version(s), current version 2", table.Output, StringComparison.Ordinal);

        JsonElement exported = Json(Docz.Run("dictionaries", "export", "--config", config, "--to", file, "--format", "json"), 0);
        Assert.Equal(2, exported.GetProperty("records").GetInt32());
        List<DictionaryRecord> before = await ListAsync(db.Database);
        string[] lines = File.ReadAllLines(file);
        Assert.Equal(4, lines.Length); // header, two records, end
        Assert.Contains("\"format\":\"docz-dictionaries\"", lines[0], StringComparison.Ordinal);

        // The store is lost: nothing compressed reads any more.
        await db.Database.DropCollectionAsync(MongoDictionaryStore.CollectionName);
        JsonElement broken = Json(Docz.Run("verify", "--config", config, "--format", "json"), 1);
        Assert.Equal(originals.Count, broken.GetProperty("failed").GetInt64());
        await using (var cold = new AdapterReader(fixture.Server.ConnectionString, db.Name, ns))
        {
            byte[] any = (await LiveData.ReadAllAsync(db.Database, "movies")).Values.First();
            Assert.Throws<DictionaryNotFoundException>(() => cold.Read(any));
        }

        // Imported into the empty store: every version with its own id, the newest current, every document readable.
        JsonElement imported = Json(Docz.Run("dictionaries", "import", "--config", config, "--from", file, "--format", "json"), 0);
        Assert.Equal(2, imported.GetProperty("imported").GetInt32());
        Assert.Equal(2, imported.GetProperty("namespaces")[0].GetProperty("currentVersion").GetInt32());
        List<DictionaryRecord> after = await ListAsync(db.Database);
        Assert.Equal(before.Select(Identity), after.Select(Identity));
        Assert.Equal(before.Select(r => r.Created), after.Select(r => r.Created));

        JsonElement verified = Json(Docz.Run("verify", "--config", config, "--format", "json"), 0);
        Assert.Equal(originals.Count, verified.GetProperty("namespaces")[0].GetProperty("compressed").GetInt64());
        Dictionary<BsonValue, byte[]> stored = await LiveData.ReadAllAsync(db.Database, "movies");
        await using (var reader = new AdapterReader(fixture.Server.ConnectionString, db.Name, ns))
        {
            foreach ((ObjectId id, byte[] original) in originals) Assert.Equal(original, reader.Read(stored[id]).ToPlainBson());
        }

        // Again: both present, nothing written.
        JsonElement again = Json(Docz.Run("dictionaries", "import", "--config", config, "--from", file, "--format", "json"), 0);
        Assert.Equal(0, again.GetProperty("imported").GetInt32());
        Assert.Equal(2, again.GetProperty("present").GetInt32());
        Assert.Equal(2, (await ListAsync(db.Database)).Count);
    }

    [Fact]
    public async Task Import_refuses_a_record_whose_version_or_id_the_store_holds_for_another_dictionary_and_overwrites_nothing()
    {
        await using var db = fixture.Server.CreateDatabase("dictsconflict");
        string ns = $"{db.Name}.movies";
        (string config, _) = await TwoVersionsAsync(db.Database, ns);
        string file = Path.Combine(_directory, "conflict.jsonl");
        Json(Docz.Run("dictionaries", "export", "--config", config, "--to", file, "--format", "json"), 0);
        List<DictionaryRecord> exported = await ListAsync(db.Database);
        var store = new MongoDictionaryStore(db.Database);

        // Version 1 is held by another dictionary (another id): v1 is a conflict, v2 is not tried (it would follow a v1 not its own).
        await db.Database.DropCollectionAsync(MongoDictionaryStore.CollectionName);
        uint otherId = Enumerable.Range(1, 200).Select(i => (uint)i).First(i => exported.All(r => r.Id != i));
        DictionaryRecord squatter = exported[0] with { Id = otherId };
        await store.PublishAsync(squatter);
        var (exit, output, error) = Docz.Run("dictionaries", "import", "--config", config, "--from", file, "--format", "json");
        JsonElement report = Json((exit, output, error), 1);
        JsonElement[] records = [.. report.GetProperty("namespaces")[0].GetProperty("records").EnumerateArray()];
        Assert.Equal(["conflict", "not-imported"], records.Select(r => r.GetProperty("outcome").GetString()));
        Assert.Contains($"held in MongoDB collection {db.Name}._compression.dictionaries by another dictionary (id {otherId})",
            records[0].GetProperty("message").GetString(), StringComparison.Ordinal);
        Assert.Equal([Identity(squatter)], (await ListAsync(db.Database)).Select(Identity));

        // Version 1's id is held by a dictionary of another namespace.
        await db.Database.DropCollectionAsync(MongoDictionaryStore.CollectionName);
        DictionaryRecord other = exported[0] with { Namespace = $"{db.Name}.other" };
        await store.PublishAsync(other);
        var table = Docz.Run("dictionaries", "import", "--config", config, "--from", file);
        Assert.Equal(1, table.Exit);
        Assert.Contains($"CONFLICT, not imported: id {exported[0].Id} is taken", table.Output, StringComparison.Ordinal);
        Assert.Contains($"version 1 of '{db.Name}.other'", table.Output, StringComparison.Ordinal);
        Assert.Contains("0 imported, 0 already present, 2 not imported", table.Output, StringComparison.Ordinal);
        Assert.Equal([Identity(other)], (await ListAsync(db.Database)).Select(Identity));
    }

    [Fact]
    public async Task Import_of_a_changed_truncated_or_foreign_file_names_the_line_and_imports_nothing()
    {
        await using var db = fixture.Server.CreateDatabase("dictstamper");
        string ns = $"{db.Name}.movies";
        (string config, _) = await TwoVersionsAsync(db.Database, ns);
        string file = Path.Combine(_directory, "good.jsonl");
        Json(Docz.Run("dictionaries", "export", "--config", config, "--to", file, "--format", "json"), 0);
        await db.Database.DropCollectionAsync(MongoDictionaryStore.CollectionName);
        string[] lines = File.ReadAllLines(file);

        // One byte of the second version's content changed (line 3).
        JsonObject second = JsonNode.Parse(lines[2])!.AsObject();
        byte[] content = Convert.FromBase64String(second["content"]!.GetValue<string>());
        content[content.Length / 2] ^= 0x20;
        second["content"] = Convert.ToBase64String(content);
        AssertRefused(config, Write("content.jsonl", lines[0], lines[1], second.ToJsonString(), lines[3]), "line 3", "does not match its hash");

        // The first version's version number changed (line 2): its recordHash no longer matches.
        JsonObject first = JsonNode.Parse(lines[1])!.AsObject();
        first["version"] = 7;
        AssertRefused(config, Write("version.jsonl", lines[0], first.ToJsonString(), lines[2], lines[3]), "line 2", "does not match its recordHash");

        AssertRefused(config, Write("truncated.jsonl", lines[0], lines[1], lines[2]), "ends at line 3 without its end line", "truncated");
        AssertRefused(config, Write("garbage.jsonl", lines[0], lines[1], "{\"id\": 5, \"namespace\"", lines[2], lines[3]), "line 3: not a JSON object");
        AssertRefused(config, Write("foreign.jsonl", "{\"movies\": 1}", lines[1]), "line 1: not a docz dictionaries file");
        AssertRefused(config, Write("duplicate.jsonl", lines[0], lines[1], lines[1], lines[2], "{\"end\":true,\"records\":3}"), "line 3: dictionary id");
        Assert.Empty(await ListAsync(db.Database));

        var missing = Docz.Run("dictionaries", "import", "--config", config, "--from", Path.Combine(_directory, "none.jsonl"));
        Assert.Equal(2, missing.Exit);
        Assert.Contains("file not found", missing.Error, StringComparison.Ordinal);
        var exists = Docz.Run("dictionaries", "export", "--config", config, "--to", file);
        Assert.Equal(2, exists.Exit);
        Assert.Contains("never overwrites", exists.Error, StringComparison.Ordinal);
        Assert.Equal(lines, File.ReadAllLines(file));
    }

    [Fact]
    public async Task List_and_export_report_an_unreadable_record_and_keep_every_readable_one()
    {
        await using var db = fixture.Server.CreateDatabase("dictsbroken");
        string ns = $"{db.Name}.movies";
        (string config, _) = await TwoVersionsAsync(db.Database, ns);
        // A peer's broken record between them (another namespace, so the versions stay as they were) and a third
        // version whose content is not its hash's.
        DictionaryRecord v2 = (await ListAsync(db.Database)).Single(r => r.Version == 2);
        var raw = db.Database.GetCollection<BsonDocument>(MongoDictionaryStore.CollectionName);
        await raw.InsertOneAsync(new BsonDocument { { "_id", 250L }, { "ns", $"{db.Name}.a" }, { "v", 1 }, { "content", "not binary" } });
        BsonDocument third = MongoDictionaryStore.ToDocument(v2 with { Id = 251, Version = 3 });
        third["hash"] = 12345L;
        await raw.InsertOneAsync(third);

        JsonElement listed = Json(Docz.Run("dictionaries", "list", "--config", config, "--format", "json"), 1);
        JsonElement store = listed.GetProperty("stores")[0];
        JsonElement movies = store.GetProperty("namespaces").EnumerateArray().Single(n => n.GetProperty("namespace").GetString() == ns);
        Assert.Equal([1, 2], movies.GetProperty("dictionaries").EnumerateArray().Select(d => d.GetProperty("version").GetInt32()));
        Assert.Equal(2, movies.GetProperty("currentVersion").GetInt32());
        string[] unreadable = [.. store.GetProperty("unreadable").EnumerateArray().Select(u => u.GetString()!)];
        Assert.Equal(2, unreadable.Length);
        Assert.Contains(unreadable, u => u.Contains("_id 250", StringComparison.Ordinal));
        Assert.Contains(unreadable, u => u.Contains("Dictionary record 251", StringComparison.Ordinal) && u.Contains("does not match its hash", StringComparison.Ordinal));
        var table = Docz.Run("dictionaries", "list", "--config", config);
        Assert.Equal(1, table.Exit);
        Assert.Contains("2 record(s) cannot be read", table.Output, StringComparison.Ordinal);

        string file = Path.Combine(_directory, "partial.jsonl");
        JsonElement exported = Json(Docz.Run("dictionaries", "export", "--config", config, "--to", file, "--format", "json"), 1);
        Assert.Equal(2, exported.GetProperty("records").GetInt32());
        Assert.Equal(2, exported.GetProperty("unreadable").GetArrayLength());
        Assert.Equal(4, File.ReadAllLines(file).Length);

        // With --namespace, that namespace only.
        JsonElement only = Json(Docz.Run("dictionaries", "list", "--config", config, "--namespace", ns, "--format", "json"), 1);
        Assert.Equal([ns], only.GetProperty("stores")[0].GetProperty("namespaces").EnumerateArray().Select(n => n.GetProperty("namespace").GetString()));
        Assert.Single(only.GetProperty("stores")[0].GetProperty("unreadable").EnumerateArray());
    }

    [Fact]
    public void Dictionaries_run_on_the_loopback_double()
    {
        var (exit, output, error) = Docz.Run("dictionaries", "list", "--loopback", "--namespace", "app.movies");
        Assert.True(exit == 0, error + output);
        Assert.Contains("NOT MongoDB", output, StringComparison.Ordinal);
        Assert.Contains("app.movies: 0 version(s), current version none", output, StringComparison.Ordinal);
    }

    /// <summary>
    /// Movies compressed with two dictionary versions: the first small (1 KiB), the second larger and adopted over it,
    /// then more movies compressed with it. Returns the configuration (the second's) and every document's plain bytes.
    /// </summary>
    private async Task<(string Config, Dictionary<ObjectId, byte[]> Originals)> TwoVersionsAsync(IMongoDatabase database, string ns)
    {
        Dictionary<ObjectId, byte[]> originals = await LiveData.InsertMoviesAsync(database, "movies", 1000);
        string small = WriteConfig(ns, dictionarySize: 1024);
        Json(Docz.Run("migrate", "--config", small, "--format", "json"), 0);
        string config = WriteConfig(ns, dictionarySize: 8192);
        JsonElement trained = Json(Docz.Run("train", "--config", config, "--format", "json"), 0);
        Assert.Equal(2, trained.GetProperty("namespaces")[0].GetProperty("dictionary").GetProperty("version").GetInt32());
        var random = new Random(11);
        var raw = database.GetCollection<RawBsonDocument>("movies");
        for (int i = 1000; i < 1500; i++)
        {
            LiveMovie movie = LiveMovie.Make(i, random);
            byte[] bytes = movie.ToPlainBson();
            originals.Add(movie.Id, bytes);
            await raw.InsertOneAsync(new RawBsonDocument(bytes));
        }
        Json(Docz.Run("migrate", "--config", config, "--format", "json"), 0);
        return (config, originals);
    }

    private string WriteConfig(string ns, int dictionarySize)
    {
        string path = Path.Combine(Directory.CreateDirectory(Path.Combine(_directory, $"cfg-{dictionarySize}")).FullName, "appsettings.json");
        File.WriteAllText(path, $$"""
            {
              "MongoDB": { "ConnectionString": "{{fixture.Server.ConnectionString}}" },
              "Compression": {
                "Defaults": { "Codec": "Zstd" },
                "Namespaces": {
                  "{{ns}}": {
                    "ClearFields": [ "year" ],
                    "Dictionary": { "DictionarySize": {{dictionarySize}}, "MinSampleCount": 32, "MaxSampleCount": 2000, "AdoptionThreshold": 1.0 }
                  }
                }
              }
            }
            """);
        return path;
    }

    private string Write(string name, params string[] lines)
    {
        string path = Path.Combine(_directory, name);
        File.WriteAllText(path, string.Join('\n', lines) + "\n", new UTF8Encoding(false));
        return path;
    }

    private static void AssertRefused(string config, string file, params string[] expected)
    {
        var (exit, output, error) = Docz.Run("dictionaries", "import", "--config", config, "--from", file);
        Assert.True(exit == 1, error + output);
        foreach (string text in expected) Assert.Contains(text, output, StringComparison.Ordinal);
        Assert.Contains("the file is refused; nothing was imported", output, StringComparison.Ordinal);
    }

    private static JsonElement Json((int Exit, string Output, string Error) run, int exit)
    {
        Assert.True(run.Exit == exit, $"exit {run.Exit}: {run.Error}{run.Output}");
        return JsonDocument.Parse(run.Output).RootElement.Clone();
    }

    private static async Task<List<DictionaryRecord>> ListAsync(IMongoDatabase database)
    {
        var records = new List<DictionaryRecord>();
        await foreach (DictionaryRecord record in new MongoDictionaryStore(database).ListAsync()) records.Add(record);
        return records;
    }

    private static string Identity(DictionaryRecord r) =>
        $"{r.Id} {r.Namespace} v{r.Version} {r.ContentHash:X16} {r.ShapesHash:X16} {Convert.ToHexString(r.Content.Span)} {Convert.ToHexString(r.Shapes.Span)}";
}
