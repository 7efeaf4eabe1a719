using System.Text;
using Compression.Dictionaries;

namespace Compression.Core.Tests.Envelope;

/// <summary>Generated documents (no files from outside the repository).</summary>
internal static class Corpus
{
    public static readonly CompressionCodec[] AllCodecs = Enum.GetValues<CompressionCodec>();

    /// <summary>JSON-like text of about <paramref name="size"/> bytes, exactly that many bytes.</summary>
    public static byte[] Json(int size, int seed)
    {
        var random = new Random(seed);
        var sb = new StringBuilder(size + 256);
        string[] keys = ["\"name\":", "\"city\":", "\"price\":", "\"tags\":", "\"active\":", "\"id\":"];
        string[] words = ["alpha", "beta", "gamma", "delta", "north", "south", "red", "blue"];
        sb.Append('[');
        while (sb.Length < size)
        {
            sb.Append('{').Append(keys[random.Next(keys.Length)]).Append('"').Append(words[random.Next(words.Length)]).Append(random.Next(100)).Append("\",")
              .Append(keys[random.Next(keys.Length)]).Append(random.Next(100000)).Append("},");
        }
        byte[] bytes = Encoding.UTF8.GetBytes(sb.ToString());
        return bytes[..size];
    }

    public static byte[] Random(int size, int seed)
    {
        var bytes = new byte[size];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    public static byte[] Zeros(int size) => new byte[size];

    public static IEnumerable<byte[]> Mixed(int count, int minSize, int maxSize, int seed)
    {
        var random = new Random(seed);
        for (int i = 0; i < count; i++)
        {
            int size = random.Next(minSize, maxSize);
            yield return (i % 5) switch
            {
                0 => Random(size, seed + i),
                1 => Zeros(size),
                _ => Json(size, seed + i),
            };
        }
    }

    private static ZstdDictionary? s_dictionary;

    /// <summary>A 16 KiB dictionary trained on generated JSON documents (id 4242).</summary>
    public static ZstdDictionary Dictionary => s_dictionary ??= ZstdDictionaryTrainer.TryTrain(
        [.. Enumerable.Range(0, 300).Select(i => Json(200 + i % 300, 1000 + i))], 16 * 1024, 4242)
        ?? throw new InvalidOperationException("training failed");
}
