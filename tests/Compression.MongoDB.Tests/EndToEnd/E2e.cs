using Compression.Dictionaries;
using Microsoft.Extensions.Time.Testing;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Driver;

namespace Compression.MongoDB.Tests.EndToEnd;

/// <summary>
/// A movie-like document for the end-to-end suites. Generic over a tag type so that each suite and each independent
/// client gets a CLR type of its own (the driver's serializer registry is global per type and per process) while every
/// one of them stores the same BSON.
/// </summary>
public sealed class Film<TTag>
{
    public ObjectId Id { get; set; }

    public string Title { get; set; } = "";

    public int Year { get; set; }

    [global::MongoDB.Bson.Serialization.Attributes.BsonElement("genre")]
    public string Genre { get; set; } = "";

    public string Plot { get; set; } = "";

    public List<string> Cast { get; set; } = [];

    public double? Rating { get; set; }

    public int Writer { get; set; }
}

/// <summary>Engines, options and documents shared by the end-to-end suites.</summary>
internal static class E2e
{
    /// <summary>The clear fields of every end-to-end namespace: member names and an element name.</summary>
    public static readonly string[] ClearFields = ["Title", "Year", "genre", "Writer"];

    private static readonly string[] Titles = ["The Last Voyage", "Midnight Garden", "Iron Harbor", "Silent Rivers", "A Northern Tale", "Glass Mountain", "Paper Moon", "Red Desert"];
    private static readonly string[] Genres = ["Drama", "Comedy", "Thriller", "Documentary", "Action", "Romance"];
    private static readonly string[] People = ["Ana Lopez", "John Carter", "Mei Lin", "Pierre Dubois", "Olu Adebayo", "Sven Nilsson", "Grace Okafor", "Hiro Tanaka"];
    private static readonly string[] Phrases =
    [
        "a retired detective", "returns to the harbor town", "where she grew up", "to find the truth about", "her brother's disappearance",
        "while a storm gathers over the coast", "an unlikely friendship", "between two rival chefs", "threatens to expose", "the secrets of the old mill",
    ];

    /// <summary>Options that train early and often (small samples, no rate limit), for tests; no waits between store attempts.</summary>
    public static CompressionEngineOptions FastOptions()
    {
        var options = Compression.Core.Tests.Dictionaries.CompressionEngineOptionsBuilder.Fast();
        options.Defaults.AdapterSettings["ClearFields"] = [.. ClearFields];
        return options;
    }

    /// <summary>An engine over the database's own dictionary store (or <paramref name="store"/>), on a fake clock: nothing polls.</summary>
    public static CompressionEngine Engine(IMongoDatabase database, DictionaryStore? store = null, CompressionEngineOptions? options = null) =>
        new(store ?? new MongoDictionaryStore(database), options ?? FastOptions(), timeProvider: new FakeTimeProvider());

    public static Film<T> NewFilm<T>(Random random, int writer = 0)
    {
        var plot = new List<string>();
        for (int i = random.Next(4, 9); i > 0; i--) plot.Add(Phrases[random.Next(Phrases.Length)]);
        return new Film<T>
        {
            Id = ObjectId.GenerateNewId(),
            Title = $"{Titles[random.Next(Titles.Length)]} {random.Next(1, 99)}",
            Year = random.Next(1950, 2025),
            Genre = Genres[random.Next(Genres.Length)],
            Plot = string.Join(' ', plot) + ".",
            Cast = [.. Enumerable.Range(0, random.Next(2, 5)).Select(_ => People[random.Next(People.Length)])],
            Rating = random.Next(4) == 0 ? null : random.Next(10, 99) / 10.0,
            Writer = writer,
        };
    }

    /// <summary>The BSON the class map writes for a document: what every client must read back, byte for byte.</summary>
    public static byte[] PlainBson<T>(Film<T> film) => film.ToBson(new BsonClassMapSerializer<Film<T>>(BsonClassMap.LookupClassMap(typeof(Film<T>))));

    /// <summary>The envelope of a stored document, or null when it is stored plain.</summary>
    public static byte[]? Envelope(BsonDocument stored) =>
        stored.TryGetValue(CompressedDocumentSerializer<object>.CompressedElementName, out BsonValue z) ? z.AsBsonBinaryData.Bytes : null;
}
