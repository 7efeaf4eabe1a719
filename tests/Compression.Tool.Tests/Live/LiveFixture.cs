using Compression.Tool.Backends.MongoDB;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>Runs <c>docz</c> in-process, as <c>Program.Main</c> would, capturing stdout and stderr.</summary>
internal static class Docz
{
    public static (int Exit, string Output, string Error) Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run(args, output, error);
        return (exit, output.ToString(), error.ToString());
    }

    /// <summary>An appsettings.json for the tests' namespaces: small dictionaries trained from few samples, a clear field.</summary>
    public static string WriteConfig(string directory, string connection, string ns, string clearField = "year", int? level = null)
    {
        string path = Path.Combine(directory, "appsettings.json");
        File.WriteAllText(path, $$"""
            {
              "MongoDB": { "ConnectionString": "{{connection}}" },
              "Compression": {
                "Defaults": { "Codec": "Zstd"{{(level is int l ? $", \"Level\": {l}" : "")}} },
                "Namespaces": {
                  "{{ns}}": {
                    "ClearFields": [ "{{clearField}}" ],
                    "Dictionary": { "DictionarySize": 8192, "MinSampleCount": 32, "MaxSampleCount": 2000 }
                  }
                }
              }
            }
            """);
        return path;
    }
}

/// <summary>A movie-like document, as an application's class map writes it (plain).</summary>
public sealed class LiveMovie
{
    [BsonId] public ObjectId Id { get; set; }

    [BsonElement("title")] public string Title { get; set; } = "";

    // A clear field that is not next to _id: its place is kept in the compressed part (StoredDocumentCodec).
    [BsonElement("year")] public int Year { get; set; }

    [BsonElement("genres")] public List<string> Genres { get; set; } = [];

    [BsonElement("cast")] public List<string> Cast { get; set; } = [];

    [BsonElement("rating")] public double Rating { get; set; }

    [BsonElement("runtime")] public int Runtime { get; set; }

    [BsonElement("studio")] public LiveStudio Studio { get; set; } = new();

    [BsonElement("plot")] public string Plot { get; set; } = "";

    private static readonly string[] Genres1 = ["Drama", "Comedy", "Action", "Thriller", "Romance", "Horror", "Documentary", "Animation", "Western"];
    private static readonly string[] Names = ["Ana Souza", "Kenji Watanabe", "Ola Nordmann", "Amara Okafor", "Luis Romero", "Mia Keller", "Ravi Patel", "Chen Wei"];
    private static readonly string[] Words = ["a", "young", "detective", "returns", "to", "the", "small", "town", "where", "her", "family", "hides", "old", "secret",
        "while", "storm", "gathers", "over", "harbour", "and", "nobody", "is", "what", "they", "seem"];

    /// <summary>Document <paramref name="i"/> of a seeded corpus; ObjectIds increase with i (one second per 100 documents from 2020-01-01).</summary>
    public static LiveMovie Make(int i, Random random)
    {
        byte[] id = new byte[12];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(id, 1_577_836_800u + (uint)(i / 100));
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(id.AsSpan(8), (uint)i);
        id[4] = 0x5e;
        return new LiveMovie
        {
            Id = new ObjectId(id),
            Title = $"The {Words[random.Next(Words.Length)]} {Words[random.Next(Words.Length)]} {i}",
            Year = 1950 + random.Next(75),
            Genres = [.. Enumerable.Range(0, 1 + random.Next(3)).Select(_ => Genres1[random.Next(Genres1.Length)])],
            Cast = [.. Enumerable.Range(0, 2 + random.Next(4)).Select(_ => Names[random.Next(Names.Length)])],
            Rating = Math.Round(random.NextDouble() * 10, 1),
            Runtime = 70 + random.Next(120),
            Studio = new LiveStudio { Name = $"Studio {random.Next(40)}", Country = random.Next(2) == 0 ? "US" : "FR" },
            Plot = string.Join(' ', Enumerable.Range(0, 12 + random.Next(20)).Select(_ => Words[random.Next(Words.Length)])),
        };
    }

    /// <summary>The plain BSON the class map writes.</summary>
    public byte[] ToPlainBson()
    {
        using var stream = new MemoryStream();
        using (var writer = new BsonBinaryWriter(stream))
        {
            new BsonClassMapSerializer<LiveMovie>(BsonClassMap.LookupClassMap(typeof(LiveMovie)))
                .Serialize(BsonSerializationContext.CreateRoot(writer), this);
        }
        return stream.ToArray();
    }
}

public sealed class LiveStudio
{
    [BsonElement("name")] public string Name { get; set; } = "";

    [BsonElement("country")] public string Country { get; set; } = "";
}

/// <summary>Writing and reading test collections as raw bytes.</summary>
internal static class LiveData
{
    /// <summary>Inserts <paramref name="count"/> plain movies; returns their bytes by _id.</summary>
    public static async Task<Dictionary<ObjectId, byte[]>> InsertMoviesAsync(IMongoDatabase database, string collection, int count, int seed = 7)
    {
        var random = new Random(seed);
        var originals = new Dictionary<ObjectId, byte[]>(count);
        var raw = database.GetCollection<RawBsonDocument>(collection);
        var batch = new List<RawBsonDocument>();
        for (int i = 0; i < count; i++)
        {
            LiveMovie movie = LiveMovie.Make(i, random);
            byte[] bytes = movie.ToPlainBson();
            originals.Add(movie.Id, bytes);
            batch.Add(new RawBsonDocument(bytes));
            if (batch.Count == 5000 || i == count - 1)
            {
                await raw.InsertManyAsync(batch);
                batch.ForEach(d => d.Dispose());
                batch.Clear();
            }
        }
        return originals;
    }

    /// <summary>Every stored document's exact bytes, by _id (a duplicate _id fails the test).</summary>
    public static async Task<Dictionary<BsonValue, byte[]>> ReadAllAsync(IMongoDatabase database, string collection)
    {
        var result = new Dictionary<BsonValue, byte[]>();
        var raw = database.GetCollection<RawBsonDocument>(collection);
        using var cursor = await raw.FindAsync(FilterDefinition<RawBsonDocument>.Empty, new FindOptions<RawBsonDocument> { BatchSize = 5000 });
        while (await cursor.MoveNextAsync())
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                var slice = document.Slice;
                byte[] bytes = new byte[slice.Length];
                slice.GetBytes(0, bytes, 0, bytes.Length);
                result.Add(DocumentScan.IdOf(bytes), bytes); // not document["_id"]: a document-valued _id would be disposed with its parent
                document.Dispose();
            }
        }
        return result;
    }

    public static bool IsCompressed(byte[] stored)
    {
        var document = BsonSerializer.Deserialize<BsonDocument>(stored);
        // 0x81 (envelope formats v2 and v3, v3 the default: the elements alone) or 0x80 (format v1: a whole document).
        return document.TryGetValue("_z", out BsonValue z) && z is BsonBinaryData { SubType: BsonBinarySubType.UserDefined or (BsonBinarySubType)0x81 };
    }
}
