using System.Text;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>Generated JSON documents of two distinct shapes, so tests need no corpus files.</summary>
internal static class TestDocuments
{
    private static readonly string[] Titles = ["The Last Voyage", "Midnight Garden", "Iron Harbor", "Silent Rivers", "A Northern Tale", "Glass Mountain", "Paper Moon", "Red Desert"];
    private static readonly string[] Genres = ["Drama", "Comedy", "Thriller", "Documentary", "Action", "Romance", "Horror", "Adventure"];
    private static readonly string[] Directors = ["Ana Lopez", "John Carter", "Mei Lin", "Pierre Dubois", "Olu Adebayo", "Sven Nilsson", null!];
    private static readonly string[] Stations = ["north-gate", "river-bank", "hill-top", "airport", "harbor", "old-town"];
    private static readonly string[] Units = ["celsius", "percent", "hpa", "m/s"];

    /// <summary>Movie-like flat records (shape A).</summary>
    public static byte[] Movie(Random random)
    {
        var sb = new StringBuilder(400);
        string? director = Directors[random.Next(Directors.Length)];
        sb.Append("{\"Title\":\"").Append(Titles[random.Next(Titles.Length)]).Append(' ').Append(random.Next(1, 99))
          .Append("\",\"US Gross\":").Append(random.Next(10_000, 90_000_000))
          .Append(",\"Worldwide Gross\":").Append(random.Next(10_000, 300_000_000))
          .Append(",\"US DVD Sales\":").Append(random.Next(3) == 0 ? "null" : random.Next(1000, 9_000_000).ToString(System.Globalization.CultureInfo.InvariantCulture))
          .Append(",\"Production Budget\":").Append(random.Next(100, 200) * 100_000)
          .Append(",\"Release Date\":\"").Append(random.Next(1970, 2024)).Append('-').Append(random.Next(1, 13).ToString("00", System.Globalization.CultureInfo.InvariantCulture)).Append("-01\"")
          .Append(",\"MPAA Rating\":\"").Append(random.Next(2) == 0 ? "PG-13" : "R").Append('"')
          .Append(",\"Running Time min\":").Append(random.Next(80, 180))
          .Append(",\"Distributor\":\"").Append(random.Next(2) == 0 ? "Warner Bros." : "Universal").Append('"')
          .Append(",\"Source\":\"Original Screenplay\",\"Major Genre\":\"").Append(Genres[random.Next(Genres.Length)]).Append('"')
          .Append(",\"Creative Type\":\"Contemporary Fiction\",\"Director\":").Append(director is null ? "null" : $"\"{director}\"")
          .Append(",\"Rotten Tomatoes Rating\":").Append(random.Next(0, 100))
          .Append(",\"IMDB Rating\":").Append((random.Next(10, 99) / 10.0).ToString(System.Globalization.CultureInfo.InvariantCulture))
          .Append(",\"IMDB Votes\":").Append(random.Next(100, 500_000)).Append('}');
        return Encoding.UTF8.GetBytes(sb.ToString());
    }

    /// <summary>Sensor readings with nested arrays (shape B), sharing nothing with <see cref="Movie"/>.</summary>
    public static byte[] Sensor(Random random)
    {
        var sb = new StringBuilder(500);
        sb.Append("{\"type\":\"Feature\",\"properties\":{\"station\":\"").Append(Stations[random.Next(Stations.Length)])
          .Append("\",\"timestamp\":").Append(1_700_000_000_000L + random.Next())
          .Append(",\"status\":\"").Append(random.Next(5) == 0 ? "degraded" : "nominal").Append("\",\"readings\":[");
        int n = random.Next(2, 6);
        for (int i = 0; i < n; i++)
        {
            if (i > 0) sb.Append(',');
            sb.Append("{\"unit\":\"").Append(Units[random.Next(Units.Length)]).Append("\",\"value\":")
              .Append((random.NextDouble() * 100).ToString("F3", System.Globalization.CultureInfo.InvariantCulture))
              .Append(",\"quality\":").Append(random.Next(1, 4)).Append('}');
        }
        sb.Append("]},\"geometry\":{\"type\":\"Point\",\"coordinates\":[")
          .Append((random.NextDouble() * 360 - 180).ToString("F4", System.Globalization.CultureInfo.InvariantCulture)).Append(',')
          .Append((random.NextDouble() * 180 - 90).ToString("F4", System.Globalization.CultureInfo.InvariantCulture)).Append("]}}");
        return Encoding.UTF8.GetBytes(sb.ToString());
    }
}

internal static class CompressionEngineOptionsBuilder
{
    /// <summary>Options that train early and often (small samples, no rate limit), for tests.</summary>
    public static Compression.Dictionaries.CompressionEngineOptions Fast(TimeSpan? poll = null)
    {
        var options = new Compression.Dictionaries.CompressionEngineOptions { PollInterval = poll ?? TimeSpan.FromSeconds(1), StoreRetryDelay = TimeSpan.Zero };
        var d = options.Defaults.Dictionary;
        d.DictionarySize = 8 * 1024;
        d.MinSampleCount = 100;
        d.MinSampleBytes = 16 * 1024;
        d.MaxSampleCount = 1000;
        d.MaxSampleBytes = 1024 * 1024;
        d.MinTrainingInterval = TimeSpan.Zero;
        d.DriftMinDocuments = 200;
        return options;
    }

    /// <summary>
    /// <see cref="Fast"/>, with the first training run waiting for <paramref name="samples"/> documents: a test that writes
    /// that many gets one run, started by its last write, on all of them. A run started earlier saw however many samples
    /// the writes had reached when it took them, so what it learned (a shape table or none) changed from run to run.
    /// </summary>
    public static Compression.Dictionaries.CompressionEngineOptions TrainOnceAt(int samples)
    {
        var options = Fast();
        options.Defaults.Dictionary.MinSampleCount = samples;
        return options;
    }
}

/// <summary>Engines for tests: on a fake clock unless a test says otherwise, so nothing waits on wall time.</summary>
internal static class TestEngine
{
    public static Compression.Dictionaries.CompressionEngine Create(Compression.Dictionaries.DictionaryStore store,
        Compression.Dictionaries.CompressionEngineOptions? options = null, TimeProvider? time = null) =>
        new(store, options ?? CompressionEngineOptionsBuilder.Fast(), timeProvider: time ?? new Microsoft.Extensions.Time.Testing.FakeTimeProvider());
}
