namespace Compression.Benchmarks;

/// <summary>Loads a JSON Lines corpus and splits it (seeded) into a 20% training set and an 80% measured set.</summary>
public sealed class Corpus
{
    public const string DirectoryVariable = "COMPRESSION_CORPUS_DIR";

    private Corpus(string name, byte[][] training, byte[][] measured)
    {
        Name = name;
        Training = training;
        Measured = measured;
        RawBytes = measured.Sum(d => (long)d.Length);
    }

    public string Name { get; }

    public byte[][] Training { get; }

    public byte[][] Measured { get; }

    public long RawBytes { get; }

    public int MaxDocument => Measured.Max(d => d.Length);

    /// <summary>The corpora a run measures: COMPRESSION_BENCH_CORPORA (comma-separated) or the given defaults.</summary>
    public static IEnumerable<string> Selected(params string[] defaults) =>
        Environment.GetEnvironmentVariable("COMPRESSION_BENCH_CORPORA") is { Length: > 0 } list ? list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) : defaults;

    public static Corpus Load(string name)
    {
        string directory = FindDirectory();
        string path = Path.Combine(directory, name + ".jsonl");
        if (!File.Exists(path)) throw new FileNotFoundException($"Corpus '{name}' not found at {path}.", path);
        byte[][] documents = [.. File.ReadLines(path).Where(l => l.Length > 0).Select(System.Text.Encoding.UTF8.GetBytes)];
        new Random(42).Shuffle(documents);
        int training = documents.Length / 5;
        return new Corpus(name, documents[..training], documents[training..]);
    }

    /// <summary>The corpus folder: COMPRESSION_CORPUS_DIR, else a folder shared/data beside an ancestor of the working directory.</summary>
    public static string FindDirectory()
    {
        string? configured = Environment.GetEnvironmentVariable(DirectoryVariable);
        if (!string.IsNullOrEmpty(configured)) return configured;
        for (string? dir = Directory.GetCurrentDirectory(); dir is not null; dir = Path.GetDirectoryName(dir))
        {
            string candidate = Path.Combine(dir, "shared", "data");
            if (File.Exists(Path.Combine(candidate, "movies.jsonl"))) return candidate;
        }
        throw new DirectoryNotFoundException($"No corpus folder: set {DirectoryVariable} to a folder of JSON Lines files (the reference corpora live in ../shared/data).");
    }
}
