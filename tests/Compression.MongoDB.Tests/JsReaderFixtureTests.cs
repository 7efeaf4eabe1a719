using System.Text.Json;
using Compression.Core.Tests.Dictionaries;
using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>A document of the JavaScript reader's fixture: its id and kind in the clear, everything else compressed.</summary>
public sealed class JsFixtureDocument<TPhase>
{
    public ObjectId Id { get; set; }

    public string Kind { get; set; } = "";

    [BsonExtraElements]
    public BsonDocument Body { get; set; } = [];
}

#pragma warning disable CA1812 // phase tags: one CLR type per engine (the serializer registry is global per type)
internal sealed class PhaseStored;
internal sealed class PhaseZstd;
internal sealed class PhaseLz4;
internal sealed class PhaseSnappy;
internal sealed class PhaseDeflate;
internal sealed class PhaseBrotli;
internal sealed class PhaseGzip;
internal sealed class PhasePlain;
internal sealed class PhaseShapes;
internal sealed class PhaseFields;
internal sealed class PhaseTableOnly;
internal sealed class PhaseSources;
#pragma warning restore CA1812

/// <summary>
/// Writes the fixture the JavaScript reader (clients/js) decodes: documents stored by <see cref="CompressedDocumentSerializer{T}"/>
/// through the real <c>MongoClient</c> into one collection, by engines of every setting in turn, sharing one dictionary store:
/// every codec without a dictionary, format v1 with a plain dictionary (BinData 0x80), format v2 with a shape table
/// (codec 7), format v3 with a field model (codec 9: codec 8 with the checksum in its stream), and the same record written as codec 7 by a client with
/// <c>ModelFields</c> off, then records whose field model has sources (field model version 2); four dictionary versions. Then dumps the stored raw documents, what each must decode to (the
/// document's own BSON, which the serializer reads back as it), the dictionary documents of
/// <c>_compression.dictionaries</c>, and the same records in a <see cref="FileDictionaryStore"/> folder. The folder is
/// <c>COMPRESSION_JS_FIXTURE</c>, or clients/js/test/fixtures/generated in the repository (ignored by git); the JS tests
/// read it (clients/js/README.md).
/// </summary>
public sealed class JsReaderFixtureTests(MongoFixture fixture) : IClassFixture<MongoFixture>
{
    private const string Collection = "docs";

    private static readonly string[] Codecs = ["Stored", "Zstd", "Lz4", "Snappy", "Deflate", "Brotli", "Gzip"];

    [Fact]
    public async Task WriteFixture_EveryCodecFormatFieldModelVersionAndFourDictionaryVersions_DumpedForTheJavaScriptReader()
    {
        string folder = Environment.GetEnvironmentVariable("COMPRESSION_JS_FIXTURE") is { Length: > 0 } configured
            ? Path.GetFullPath(configured)
            : Path.Combine(FindRepositoryRoot(), "clients", "js", "test", "fixtures", "generated");
        if (Directory.Exists(folder)) Directory.Delete(folder, recursive: true);
        Directory.CreateDirectory(folder);

        await using var db = fixture.Server.CreateDatabase("js-fixture");
        string ns = $"{db.Name}.{Collection}";
        var store = new MongoDictionaryStore(db.Database);
        var written = new List<BsonDocument>();
        var random = new Random(41);

        // Every codec without a dictionary (format v3; the small ones stored), then plain zstd.
        Task WriteCodec<TPhase>(string codec) => WriteAsync<TPhase>(db.Database, store, ns, written, random, 4, o =>
        {
            o.Codec = Enum.Parse<CompressionCodec>(codec);
            o.Dictionary.Enabled = false;
        }, (r, i) => i % 2 == 0 ? TestDocuments.Movie(r) : TestDocuments.Sensor(r), train: false, tag: codec);
        await WriteCodec<PhaseStored>("Stored");
        await WriteCodec<PhaseZstd>("Zstd");
        await WriteCodec<PhaseLz4>("Lz4");
        await WriteCodec<PhaseSnappy>("Snappy");
        await WriteCodec<PhaseDeflate>("Deflate");
        await WriteCodec<PhaseBrotli>("Brotli");
        await WriteCodec<PhaseGzip>("Gzip");
        // Format v1, a plain dictionary (version 1): BinData 0x80, codec 1 with a dictionary.
        await WriteAsync<PhasePlain>(db.Database, store, ns, written, random, 30, o =>
        {
            o.Format = EnvelopeFormat.V1;
            o.Dictionary.PackDocuments = false;
            o.Dictionary.ModelFields = false;
        }, (r, _) => TestDocuments.Sensor(r), train: true, tag: "v1-plain");
        // Format v2, a shape table (version 2, trained on other documents): codec 7.
        await WriteAsync<PhaseShapes>(db.Database, store, ns, written, random, 30, o =>
        {
            o.Format = EnvelopeFormat.V2;
            o.Dictionary.ModelFields = false;
        }, (r, _) => TestDocuments.Movie(r), train: true, tag: "v2-shapes");
        // Format v3, a field model (version 3): codec 8.
        await WriteAsync<PhaseFields>(db.Database, store, ns, written, random, 30, _ => { }, (r, _) => FieldDocument(r), train: true, tag: "v3-fields");
        // The same record by a client with ModelFields off: codec 7 with version 3's table.
        await WriteAsync<PhaseTableOnly>(db.Database, store, ns, written, random, 20, o => o.Dictionary.ModelFields = false,
            (r, _) => FieldDocument(r), train: false, tag: "v3-table-only");

        // Records whose fields copy and count from others (a title holding the place, an update time near the event's):
        // a field model of version 2, with sources (version 4).
        await WriteAsync<PhaseSources>(db.Database, store, ns, written, random, 30, _ => { }, (r, _) => QuakeDocument(r), train: true, tag: "v3-sources");

        // The stored documents, as the server holds them, and the plain documents they must decode to.
        var raw = db.Database.GetCollection<RawBsonDocument>(Collection);
        var stored = await raw.Find(FilterDefinition<RawBsonDocument>.Empty).ToListAsync();
        Assert.Equal(written.Count, stored.Count);
        var codecs = new SortedDictionary<string, int>(StringComparer.Ordinal);
        await using (var storedFile = File.Create(Path.Combine(folder, "stored.bson")))
        await using (var expectedFile = File.Create(Path.Combine(folder, "expected.bson")))
        {
            var byId = written.ToDictionary(d => d["_id"].AsObjectId);
            foreach (RawBsonDocument document in stored)
            {
                storedFile.Write(document.Slice.AccessBackingBytes(0).AsSpan(0, document.Slice.Length));
                expectedFile.Write(byId[document["_id"].AsObjectId].ToBson());
                BsonBinaryData z = document["_z"].AsBsonBinaryData;
                Assert.True(DocumentEnvelope.TryReadHeader(z.Bytes, out EnvelopeHeader header));
                string key = $"{header.Format}/{header.Codec}/0x{(byte)z.SubType:x2}" + (header.DictionaryId is null ? "" : "/dictionary");
                codecs[key] = codecs.GetValueOrDefault(key) + 1;
            }
        }

        // The dictionary documents, raw, and the same records in a file store's folder.
        var dictionaries = await db.Database.GetCollection<RawBsonDocument>(MongoDictionaryStore.CollectionName)
            .Find(FilterDefinition<RawBsonDocument>.Empty).ToListAsync();
        await using (var dictionaryFile = File.Create(Path.Combine(folder, "dictionaries.bson")))
        {
            foreach (RawBsonDocument document in dictionaries) dictionaryFile.Write(document.Slice.AccessBackingBytes(0).AsSpan(0, document.Slice.Length));
        }
        var files = new FileDictionaryStore(Path.Combine(folder, "files"));
        var versions = new List<int>();
        var modelVersions = new List<int>();
        await foreach (DictionaryRecord record in store.ListAsync(ns))
        {
            await files.PublishAsync(record);
            versions.Add(record.Version);
            int model = record.Shapes.Span.IndexOf("FLDM"u8);
            modelVersions.Add(model < 0 ? 0 : record.Shapes.Span[model + 4]);
        }
        await File.WriteAllTextAsync(Path.Combine(folder, "manifest.json"), JsonSerializer.Serialize(new
        {
            @namespace = ns,
            documents = stored.Count,
            dictionaryVersions = versions,
            fieldModelVersions = modelVersions,
            envelopes = codecs,
        }, new JsonSerializerOptions { WriteIndented = true }));

        // What the fixture must hold for the JavaScript tests to mean something.
        Assert.Equal([1, 2, 3, 4], versions);
        Assert.Equal([0, 0, 1, 2], modelVersions); // none, a table alone, a field model, a field model with sources
        foreach (string codec in Codecs.Skip(1)) Assert.Contains(codecs.Keys, k => k.StartsWith($"V3/{codec}/0x81", StringComparison.Ordinal));
        Assert.Contains(codecs.Keys, k => k.StartsWith("V1/Zstd/0x80/dictionary", StringComparison.Ordinal));
        Assert.Contains(codecs.Keys, k => k.StartsWith("V2/PackedZstd/0x81", StringComparison.Ordinal));
        Assert.Contains(codecs.Keys, k => k.StartsWith("V3/FieldZstdFoldedChecksum/0x81", StringComparison.Ordinal)); // v3 writes codec 9; the vectors keep codec 8
        Assert.Contains(codecs.Keys, k => k.StartsWith("V3/PackedZstd/0x81", StringComparison.Ordinal));

        // And the .NET reader reads every one of them back as written.
        await using var reader = new CompressionEngine(store, CompressionEngineOptionsBuilder.Fast(), timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        CompressedDocumentSerializer.Register<JsFixtureDocument<JsReaderFixtureTests>>(reader.GetNamespace(ns), new CompressedDocumentOptions { ClearFields = ["Kind"] });
        var typed = await db.Database.GetCollection<JsFixtureDocument<JsReaderFixtureTests>>(Collection).Find(FilterDefinition<JsFixtureDocument<JsReaderFixtureTests>>.Empty).ToListAsync();
        Assert.Equal(written.Count, typed.Count);
        foreach (var document in typed) Assert.Equal(written.Single(w => w["_id"].AsObjectId == document.Id), Plain(document));
    }

    private async Task WriteAsync<TPhase>(IMongoDatabase database, DictionaryStore store, string ns, List<BsonDocument> written, Random random, int count,
        Action<NamespaceOptions> configure, Func<Random, int, byte[]> next, bool train, string tag)
    {
        CompressionEngineOptions options = CompressionEngineOptionsBuilder.TrainOnceAt(300); // once, on the samples below
        options.Defaults.AdapterSettings["ClearFields"] = ["Kind"];
        options.Defaults.Dictionary.AdoptionThreshold = 1.0;
        configure(options.Defaults);
        await using var engine = new CompressionEngine(store, options, timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
        CompressionNamespace @namespace = engine.GetNamespace(ns);
        await @namespace.RefreshAsync();
        CompressedDocumentSerializer.Register<JsFixtureDocument<TPhase>>(@namespace, new CompressedDocumentOptions { ClearFields = ["Kind"] });
        var collection = database.GetCollection<JsFixtureDocument<TPhase>>(Collection);
        if (train)
        {
            // Samples for the training: what the serializer compresses (the elements that are not clear: the body), compressed
            // and not stored.
            for (int i = 0; i < 400; i++)
            {
                byte[] body = Document<TPhase>(next(random, i), tag).Body.ToBson();
                @namespace.Compress(@namespace.Format == EnvelopeFormat.V1 ? body : body[4..^1]);
            }
            int before = @namespace.CurrentDictionary?.Version ?? 0;
            await engine.WhenIdleAsync();
            await @namespace.RefreshAsync();
            if ((@namespace.CurrentDictionary?.Version ?? 0) == before)
            {
                TrainingResult result = await @namespace.TrainAsync();
                Assert.True(result.Dictionary is not null, $"{tag}: a dictionary was trained ({result})");
                await @namespace.RefreshAsync();
            }
            Assert.Equal(before + 1, @namespace.CurrentDictionary?.Version);
        }
        var batch = Enumerable.Range(0, count).Select(i => Document<TPhase>(next(random, i), tag)).ToList();
        await collection.InsertManyAsync(batch);
        written.AddRange(batch.Select(Plain));
    }

    private static JsFixtureDocument<TPhase> Document<TPhase>(byte[] json, string kind) => new()
    {
        Id = ObjectId.GenerateNewId(),
        Kind = kind,
        Body = BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(json)),
    };

    private static BsonDocument Plain<TPhase>(JsFixtureDocument<TPhase> document)
    {
        var plain = new BsonDocument { { "_id", document.Id }, { "Kind", document.Kind } };
        foreach (BsonElement element in document.Body) plain.Add(element);
        return plain;
    }

    /// <summary>Records whose values repeat and follow patterns (a field model codes them): a station, a date string, a reading.</summary>
    private static byte[] FieldDocument(Random random)
    {
        string[] stations = ["north-gate", "river-bank", "hill-top", "airport"];
        string json = $$"""{"station":"{{stations[random.Next(stations.Length)]}}","date":"2001/{{random.Next(1, 13):00}}/{{random.Next(1, 29):00}} {{random.Next(0, 24):00}}:{{random.Next(0, 60):00}}","delay":{{random.Next(-20, 200)}},"ok":{{(random.Next(2) == 0 ? "true" : "false")}},"tags":["a","b"]}""";
        return System.Text.Encoding.UTF8.GetBytes(json);
    }

    /// <summary>Earthquake-like records: the title repeats the place, the update time follows the event's time.</summary>
    private static byte[] QuakeDocument(Random random)
    {
        string[] towns = ["Ridgecrest, CA", "Anza, CA", "Petrolia, CA", "Pahala, HI", "Cantwell, Alaska"];
        string[] directions = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];
        long time = 1_700_000_000_000L + random.Next(0, 1_000_000_000);
        string place = $"{random.Next(1, 60)}km {directions[random.Next(directions.Length)]} of {towns[random.Next(towns.Length)]}";
        string mag = (random.Next(5, 60) / 10.0).ToString("0.0", System.Globalization.CultureInfo.InvariantCulture);
        long updated = time + random.Next(60_000, 5_000_000);
        string json = "{\"mag\":" + mag + ",\"place\":\"" + place + "\",\"time\":" + time.ToString(System.Globalization.CultureInfo.InvariantCulture)
            + ",\"updated\":" + updated.ToString(System.Globalization.CultureInfo.InvariantCulture) + ",\"title\":\"M " + mag + " - " + place + "\"}";
        return System.Text.Encoding.UTF8.GetBytes(json);
    }

    private static string FindRepositoryRoot()
    {
        string? directory = AppContext.BaseDirectory;
        while (directory is not null && !File.Exists(Path.Combine(directory, "Compression.sln"))) directory = Path.GetDirectoryName(directory);
        Assert.NotNull(directory);
        return directory;
    }
}
