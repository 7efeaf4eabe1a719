using System.Globalization;
using System.Text;
using Compression.Codecs;
using Compression.Dictionaries;

namespace Compression.Core.Tests.Envelope;

/// <summary>Generated documents, all from seeded <see cref="System.Random"/> (no files from outside the repository).</summary>
internal static class Corpus
{
    /// <summary>
    /// Every codec a setting can name, in id order: the registry's application codecs (packed and field zstd are chosen
    /// by the engine, and tested in PackedEnvelopeTests and FieldModelTests).
    /// </summary>
    public static readonly CompressionCodec[] AllCodecs = [.. CodecRegistry.Settable.Select(c => c.Id)];

    /// <summary><see cref="AllCodecs"/> but stored: the codecs that compress.</summary>
    public static readonly CompressionCodec[] CompressingCodecs = [.. AllCodecs.Where(c => c != CompressionCodec.Stored)];

    /// <summary>Every codec a setting can name, in the registry's order (the zlib family together).</summary>
    /// <summary>Codec 8 or 9: a field-coded envelope (9 is 8 with the checksum in its stream, written in format v3).</summary>
    public static bool IsFieldCoded(CompressionCodec codec) => codec is CompressionCodec.FieldZstd or CompressionCodec.FieldZstdFoldedChecksum;

    /// <summary>Codecs 7-9, written by the engine with a dictionary's shape table.</summary>
    public static bool IsStructured(CompressionCodec codec) => CodecRegistry.Find(codec) is { IsStructured: true };

    public static readonly CompressionCodec[] AllCodecsInRegistryOrder = [.. CodecRegistry.All.Where(c => !c.IsStructured).Select(c => c.Id)];

    /// <summary>The id of <see cref="Dictionary"/>.</summary>
    public const uint DictionaryId = 4242;

    private static readonly string[] FirstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Niklaus"];
    private static readonly string[] LastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton", "Wirth"];
    private static readonly string[] Cities = ["London", "New York", "Amsterdam", "Zürich", "São Paulo", "Tokyo", "Nairobi", "Oslo"];
    private static readonly string[] Tags = ["new", "sale", "priority", "gift", "backorder", "fragile", "eco", "bulk"];
    private static readonly string[] Statuses = ["pending", "paid", "shipped", "delivered", "cancelled"];

    /// <summary>
    /// Realistic JSON of exactly <paramref name="size"/> bytes: an array of order records with repeated keys, nested
    /// objects, numbers, decimals, booleans, nulls and non-ASCII strings (cut at <paramref name="size"/>, so the tail of a
    /// large document is not closed: the codecs do not care).
    /// </summary>
    public static byte[] Json(int size, int seed)
    {
        var random = new Random(seed);
        var document = new List<byte>(size + 512) { (byte)'[' };
        var record = new StringBuilder(512);
        while (document.Count <= size)
        {
            if (document.Count > 1) document.Add((byte)',');
            record.Clear();
            AppendRecord(record, random);
            document.AddRange(Encoding.UTF8.GetBytes(record.ToString()));
        }
        document.Add((byte)']');
        return [.. document.GetRange(0, size)];
    }

    /// <summary>One complete JSON record (an object) of varying length, about 150-450 bytes.</summary>
    public static byte[] JsonRecord(Random random)
    {
        var sb = new StringBuilder(512);
        AppendRecord(sb, random);
        return Encoding.UTF8.GetBytes(sb.ToString());
    }

    private static void AppendRecord(StringBuilder sb, Random random)
    {
        CultureInfo c = CultureInfo.InvariantCulture;
        string first = FirstNames[random.Next(FirstNames.Length)], last = LastNames[random.Next(LastNames.Length)];
        sb.Append("{\"_id\":\"").Append(random.NextInt64(0x1000_0000_0000, 0xFFFF_FFFF_FFFF).ToString("x12", c)).Append('"')
          .Append(",\"orderNumber\":").Append(random.Next(100_000, 999_999))
          .Append(",\"status\":\"").Append(Statuses[random.Next(Statuses.Length)]).Append('"')
          .Append(",\"customer\":{\"name\":\"").Append(first).Append(' ').Append(last)
          .Append("\",\"email\":\"").Append(first.ToLowerInvariant()).Append('.').Append(last.ToLowerInvariant()).Append("@example.com\"")
          .Append(",\"city\":\"").Append(Cities[random.Next(Cities.Length)]).Append("\",\"vip\":").Append(random.Next(4) == 0 ? "true" : "false").Append('}')
          .Append(",\"items\":[");
        int items = random.Next(1, 4);
        for (int i = 0; i < items; i++)
        {
            if (i > 0) sb.Append(',');
            sb.Append("{\"sku\":\"SKU-").Append(random.Next(1000, 9999)).Append("\",\"qty\":").Append(random.Next(1, 10))
              .Append(",\"price\":").Append((random.Next(100, 100_000) / 100.0).ToString("0.00", c)).Append('}');
        }
        sb.Append("],\"tags\":[");
        int tags = random.Next(0, 4);
        for (int i = 0; i < tags; i++)
        {
            if (i > 0) sb.Append(',');
            sb.Append('"').Append(Tags[random.Next(Tags.Length)]).Append('"');
        }
        sb.Append("],\"note\":").Append(random.Next(3) == 0 ? "null" : $"\"Please deliver before {random.Next(8, 18)}:00 \\\"back door\\\"\"")
          .Append(",\"createdAt\":\"2025-").Append(random.Next(1, 13).ToString("00", c)).Append('-').Append(random.Next(1, 29).ToString("00", c))
          .Append('T').Append(random.Next(0, 24).ToString("00", c)).Append(':').Append(random.Next(0, 60).ToString("00", c)).Append(":00Z\"}");
    }

    public static byte[] Random(int size, int seed)
    {
        var bytes = new byte[size];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    public static byte[] Zeros(int size) => new byte[size];

    /// <summary><paramref name="count"/> documents of <paramref name="minSize"/> to <paramref name="maxSize"/> bytes: 60% JSON, 20% random, 20% zeros.</summary>
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

    private static readonly Lazy<ZstdDictionary> s_dictionary = new(() =>
    {
        var random = new Random(20_251_122);
        byte[][] samples = [.. Enumerable.Range(0, 200).Select(_ => JsonRecord(random))];
        return ZstdDictionaryTrainer.TryTrain(samples, 16 * 1024, DictionaryId) ?? throw new InvalidOperationException("Dictionary training failed.");
    });

    /// <summary>A dictionary of at most 16 KiB trained on 200 generated JSON records (id <see cref="DictionaryId"/>).</summary>
    public static ZstdDictionary Dictionary => s_dictionary.Value;

    /// <summary>The same dictionary bytes under another id.</summary>
    public static ZstdDictionary DictionaryWithId(uint id) => ZstdDictionary.Create(id, Dictionary.Content.Span);
}
