using System.Text;
using System.Text.Json;
using Compression;
using Compression.Dictionaries;
using Compression.MongoDB;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;

// Starts the loopback server, writes 40 documents through the .NET serializer (format v3, a dictionary with a shape table
// and a field model: codec 8), prints one JSON line { connectionString, database, collection, expected } and serves until
// standard input closes. `expected` is a file of the documents' BSON, in insertion order.
await using var server = await MongoLoopbackServer.StartAsync();
using var client = new MongoClient(server.ConnectionString);
IMongoDatabase database = client.GetDatabase("live");
string ns = "live.readings";
var options = new CompressionEngineOptions();
options.Defaults.AdapterSettings["ClearFields"] = ["Station"];
options.Defaults.Dictionary.MinSampleCount = 400;
options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.Zero;
await using var engine = new CompressionEngine(new MongoDictionaryStore(database), options);
CompressionNamespace @namespace = engine.GetNamespace(ns);
CompressedDocumentSerializer.Register<Reading>(@namespace);
var random = new Random(7);
for (int i = 0; i < 400; i++) @namespace.Compress(Reading.Next(random).Body.ToBson()[4..^1]); // samples: what the serializer compresses
for (int i = 0; i < 600 && @namespace.CurrentDictionary is null; i++)
{
    await Task.Delay(100);
    await @namespace.RefreshAsync();
}
if (@namespace.CurrentDictionary is null) throw new InvalidOperationException("no dictionary was trained");
var documents = Enumerable.Range(0, 40).Select(_ => Reading.Next(random)).ToList();
await database.GetCollection<Reading>("readings").InsertManyAsync(documents);
string expected = Path.Combine(Path.GetTempPath(), $"docz-live-{Guid.NewGuid():N}.bson");
await using (var file = File.Create(expected))
{
    foreach (Reading r in documents)
    {
        var plain = new BsonDocument { { "_id", r.Id }, { "Station", r.Station } };
        foreach (BsonElement e in r.Body) plain.Add(e);
        file.Write(plain.ToBson());
    }
}
Console.WriteLine(JsonSerializer.Serialize(new { connectionString = server.ConnectionString, database = "live", collection = "readings", expected }));
Console.Out.Flush();
await Console.In.ReadToEndAsync();
File.Delete(expected);
if (server.Failures.Count > 0)
{
    Console.Error.WriteLine("loopback server failures: " + string.Join("; ", server.Failures));
    return 1;
}
return 0;

/// <summary>A reading: its station in the clear, the rest compressed.</summary>
public sealed class Reading
{
    public ObjectId Id { get; set; }

    public string Station { get; set; } = "";

    [BsonExtraElements]
    public BsonDocument Body { get; set; } = [];

    private static readonly string[] Stations = ["north-gate", "river-bank", "hill-top", "airport"];

    public static Reading Next(Random random) => new()
    {
        Id = ObjectId.GenerateNewId(),
        Station = Stations[random.Next(Stations.Length)],
        Body = BsonDocument.Parse(Encoding.UTF8.GetString(Encoding.UTF8.GetBytes(
            $$"""{"date":"2001/{{random.Next(1, 13):00}}/{{random.Next(1, 29):00}} {{random.Next(0, 24):00}}:{{random.Next(0, 60):00}}","delay":{{random.Next(-20, 200)}},"ok":{{(random.Next(2) == 0 ? "true" : "false")}},"tags":["a","b"],"value":{{random.Next(0, 1000) / 10.0}}}"""))),
    };
}
