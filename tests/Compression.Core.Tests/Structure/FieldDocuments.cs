using System.Globalization;
using System.Text;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// Generated movie-like records for the field model tests (codec 8, docs/field-model.md): categorical fields with
/// skewed frequencies (source, creative type, genre, distributor, MPAA rating, tags), numbers in narrow ranges (year,
/// running time, votes, gross), date strings a field model codes with templates (a release date as movies' "Jun 12
/// 1998", an update time as flights' "2001/01/01 00:47": literals around digit runs of fixed widths, the day of one or
/// two digits) and unique text (titles) that stays with zstd. Compact JSON and BSON with the same values. Seeded: the
/// same seed gives the same documents.
/// </summary>
internal static class FieldDocuments
{
    private static readonly string[] Sources =
    [
        "Original Screenplay", "Based on Book/Short Story", "Remake", "Based on Comic/Graphic Novel", "Based on Real Life Events",
        "Based on TV", "Based on Play", "Spin-Off", "Based on Game", "Based on Factual Book/Article", "Traditional/Legend/Fairytale",
        "Based on Short Film", "Based on Musical/Opera", "Compilation",
    ];

    private static readonly string[] CreativeTypes =
    [
        "Contemporary Fiction", "Historical Fiction", "Science Fiction", "Fantasy", "Kids Fiction", "Dramatization", "Factual",
        "Super Hero", "Multiple Creative Types",
    ];

    private static readonly string[] Genres =
    [
        "Drama", "Comedy", "Action", "Adventure", "Thriller/Suspense", "Horror", "Romantic Comedy", "Musical", "Documentary",
        "Black Comedy", "Western", "Concert/Performance",
    ];

    private static readonly string[] Ratings = ["R", "PG-13", "PG", "G", "Not Rated", "NC-17"];

    private static readonly string[] Distributors = CreateDistributors();

    private static readonly string[] Adjectives = ["Silent", "Crimson", "Last", "Hidden", "Broken", "Golden", "Dark", "Lost", "Wild", "Frozen", "Electric", "Quiet"];

    private static readonly string[] Nouns = ["River", "Empire", "Night", "Garden", "Signal", "Harbor", "Witness", "Machine", "Summer", "Kingdom", "Stranger", "Voyage"];

    private static string[] CreateDistributors()
    {
        string[] first = ["Warner", "Universal", "Paramount", "Sony", "Fox", "Lionsgate", "Miramax", "MGM", "Focus", "Summit", "Dimension", "Orion", "New Line", "Weinstein"];
        string[] second = ["Pictures", "Features", "Classics"];
        return [.. first.SelectMany(f => second.Select(s => $"{f} {s}")).Take(41)];
    }

    /// <summary>An index into <paramref name="count"/> values, the first ones most likely (a Zipf-like skew).</summary>
    private static int Skewed(Random random, int count) => (int)(count * Math.Pow(random.NextDouble(), 2.5));

    private sealed record Movie(
        string Title, string Source, string CreativeType, string Genre, string Distributor, string Rating, int Year,
        int RunningTime, int Votes, long Gross, int Imdb, string[] Tags, bool Sequel, string? Director)
    {
        /// <summary>"Jun 12 1998": month, day (1 or 2 digits), year.</summary>
        public string ReleaseDate { get; init; } = "";

        /// <summary>"2001/01/01 00:47": year, month, day, hour, minute, zero-padded.</summary>
        public string Updated { get; init; } = "";
    }

    private static readonly string[] Months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

    private static Movie Next(Random random, int i)
    {
        string[] tags = [.. Enumerable.Range(0, Skewed(random, 4)).Select(_ => Genres[Skewed(random, Genres.Length)])];
        var movie = new Movie(
            Title: $"{Adjectives[random.Next(Adjectives.Length)]} {Nouns[random.Next(Nouns.Length)]} {random.Next(1, 400)}",
            Source: Sources[Skewed(random, Sources.Length)],
            CreativeType: CreativeTypes[Skewed(random, CreativeTypes.Length)],
            Genre: Genres[Skewed(random, Genres.Length)],
            Distributor: Distributors[Skewed(random, Distributors.Length)],
            Rating: Ratings[Skewed(random, Ratings.Length)],
            Year: 1990 + random.Next(30),
            RunningTime: 85 + Skewed(random, 60),
            Votes: random.Next(50, 250_000),
            Gross: random.NextInt64(100_000, 800_000_000),
            Imdb: 30 + Skewed(random, 60) + random.Next(5),
            Tags: tags,
            Sequel: random.Next(6) == 0,
            Director: i % 3 == 0 ? null : $"{Adjectives[random.Next(Adjectives.Length)]} {Nouns[random.Next(Nouns.Length)]}");
        return movie with
        {
            ReleaseDate = $"{Months[random.Next(12)]} {random.Next(1, 29)} {movie.Year}",
            Updated = $"{2001 + random.Next(3)}/{random.Next(1, 13):D2}/{random.Next(1, 29):D2} {random.Next(24):D2}:{random.Next(60):D2}",
        };
    }

    /// <summary><paramref name="count"/> compact JSON records (two shapes: with and without a director).</summary>
    public static List<byte[]> JsonRecords(int count, int seed)
    {
        var random = new Random(seed);
        var documents = new List<byte[]>(count);
        for (int i = 0; i < count; i++)
        {
            Movie m = Next(random, i);
            var s = new StringBuilder("{");
            s.Append("\"Title\":\"").Append(m.Title).Append("\",");
            s.Append("\"Source\":\"").Append(m.Source).Append("\",");
            s.Append("\"Creative Type\":\"").Append(m.CreativeType).Append("\",");
            s.Append("\"Major Genre\":\"").Append(m.Genre).Append("\",");
            s.Append("\"Distributor\":\"").Append(m.Distributor).Append("\",");
            s.Append("\"MPAA Rating\":\"").Append(m.Rating).Append("\",");
            s.Append("\"Release Year\":").Append(m.Year).Append(',');
            s.Append("\"Release Date\":\"").Append(m.ReleaseDate).Append("\",");
            s.Append("\"Updated\":\"").Append(m.Updated).Append("\",");
            s.Append("\"Running Time min\":").Append(m.RunningTime).Append(',');
            s.Append("\"IMDB Rating\":").Append((m.Imdb / 10.0).ToString("0.0", CultureInfo.InvariantCulture)).Append(',');
            s.Append("\"IMDB Votes\":").Append(m.Votes).Append(',');
            s.Append("\"US Gross\":").Append(m.Gross).Append(',');
            s.Append("\"Sequel\":").Append(m.Sequel ? "true" : "false").Append(',');
            s.Append("\"Tags\":[").Append(string.Join(",", m.Tags.Select(t => $"\"{t}\""))).Append(']');
            if (m.Director is not null) s.Append(",\"Director\":\"").Append(m.Director).Append('"');
            s.Append('}');
            documents.Add(Encoding.UTF8.GetBytes(s.ToString()));
        }
        return documents;
    }

    /// <summary><paramref name="count"/> BSON documents with the same values (int32, int64, double, bool, datetime, arrays).</summary>
    public static List<byte[]> BsonRecords(int count, int seed)
    {
        var random = new Random(seed);
        var documents = new List<byte[]>(count);
        for (int i = 0; i < count; i++)
        {
            Movie m = Next(random, i);
            var d = new Bson.Document();
            d.Add("Title", Bson.String(m.Title));
            d.Add("Source", Bson.String(m.Source));
            d.Add("CreativeType", Bson.String(m.CreativeType));
            d.Add("MajorGenre", Bson.String(m.Genre));
            d.Add("Distributor", Bson.String(m.Distributor));
            d.Add("MpaaRating", Bson.String(m.Rating));
            d.Add("ReleaseYear", Bson.Int32(m.Year));
            d.Add("ReleaseDate", Bson.String(m.ReleaseDate));
            d.Add("Updated", Bson.String(m.Updated));
            d.Add("RunningTime", Bson.Int32(m.RunningTime));
            d.Add("ImdbRating", Bson.Double(m.Imdb / 10.0));
            d.Add("ImdbVotes", Bson.Int32(m.Votes));
            d.Add("UsGross", (0x12, StructureDocuments.Int64Bytes(m.Gross)));
            d.Add("Released", (0x09, StructureDocuments.Int64Bytes(new DateTimeOffset(m.Year, 1, 1, 0, 0, 0, TimeSpan.Zero).ToUnixTimeMilliseconds() + random.Next(365) * 86_400_000L)));
            d.Add("Sequel", Bson.Bool(m.Sequel));
            d.Add("Tags", Bson.Array([.. m.Tags.Select(Bson.String)]));
            if (m.Director is not null) d.Add("Director", Bson.String(m.Director));
            documents.Add(d.Value().Value);
        }
        return documents;
    }
}
