using System.Text;

namespace Compression.Tool.Tests;

/// <summary>Generated JSON Lines corpora and an in-process runner of the command line (no files from outside the repository).</summary>
internal static class TestCorpus
{
    /// <summary><paramref name="count"/> small order records, one per line, repetitive enough for a dictionary to pay.</summary>
    public static string Orders(int count, int seed = 1)
    {
        var random = new Random(seed);
        string[] cities = ["Lisbon", "Oslo", "Nairobi", "Lima", "Osaka", "Perth"];
        var sb = new StringBuilder();
        for (int i = 0; i < count; i++)
        {
            sb.Append("{\"orderId\":").Append(100000 + i)
              .Append(",\"customer\":{\"name\":\"Customer ").Append(random.Next(500)).Append("\",\"city\":\"").Append(cities[random.Next(cities.Length)])
              .Append("\"},\"status\":\"").Append(random.Next(3) switch { 0 => "shipped", 1 => "pending", _ => "delivered" })
              .Append("\",\"items\":[{\"sku\":\"SKU-").Append(random.Next(100)).Append("\",\"quantity\":").Append(random.Next(1, 5)).Append("}]}\n");
        }
        return sb.ToString();
    }

    public static (int Exit, string Output, string Error) Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run(args, output, error);
        return (exit, output.ToString(), error.ToString());
    }
}
