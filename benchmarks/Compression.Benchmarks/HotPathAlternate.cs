using System.Diagnostics;
using System.Globalization;

namespace Compression.Benchmarks;

/// <summary>
/// <c>dotnet run -c Release -- alternate [--rounds N] [CORPUS...]</c>: the rows of <see cref="EngineHotPathBenchmarks"/>
/// timed in interleaved rounds (each round runs every row once, in a rotating order), reporting each row's minimum and
/// median over the rounds and its ratio to the bare zstd frame call of the same round kind. BenchmarkDotNet runs rows
/// one after another, so on a shared machine a change of load between two rows shows up as a ratio; interleaving puts
/// every row under the same load. The same setup (corpora, split, dictionary) as the benchmark class.
/// </summary>
internal static class HotPathAlternate
{
    public static int Run(string[] args)
    {
        int rounds = 60;
        var corpora = new List<string>();
        for (int i = 1; i < args.Length; i++)
        {
            if (args[i] == "--rounds" && i + 1 < args.Length) rounds = int.Parse(args[++i], CultureInfo.InvariantCulture);
            else corpora.Add(args[i]);
        }
        if (corpora.Count == 0) corpora.AddRange(EngineHotPathBenchmarks.Corpora());

        Console.WriteLine($"Engine hot path, interleaved: {rounds} rounds, the first 5 not counted; ms per pass over the measured documents");
        Console.WriteLine();
        Console.WriteLine("| corpus | row | min ms | median ms | min / bare frame | median / bare frame |");
        Console.WriteLine("|---|---|---:|---:|---:|---:|");
        foreach (string corpus in corpora)
        {
            var b = new EngineHotPathBenchmarks { Corpus = corpus };
            b.Setup();
            try
            {
                Report(corpus, rounds, [
                    ("bare zstd compress (frame)", b.CompressBare), ("bare zstd block compress", b.CompressBareBlock),
                    ("bare zstd compress, zstd checksum", b.CompressBareChecked),
                    ("engine compress", b.CompressEngine), ("engine compress, no checksum", b.CompressEngineNoChecksum)]);
                Report(corpus, rounds, [
                    ("bare zstd decompress (frame)", b.DecompressBare), ("bare zstd block decompress", b.DecompressBareBlock),
                    ("bare zstd decompress, zstd checksum", b.DecompressBareChecked),
                    ("engine decompress", b.DecompressEngine), ("engine decompress, no checksum", b.DecompressEngineNoChecksum)]);
            }
            finally
            {
                b.Cleanup();
            }
        }
        return 0;
    }

    private static void Report(string corpus, int rounds, (string Name, Func<long> Run)[] rows)
    {
        var times = rows.Select(_ => new List<double>(rounds)).ToArray();
        for (int round = 0; round < rounds; round++)
        {
            for (int s = 0; s < rows.Length; s++)
            {
                int k = (s + round) % rows.Length;
                long start = Stopwatch.GetTimestamp();
                rows[k].Run();
                double ms = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
                if (round >= 5) times[k].Add(ms);
            }
        }
        double baseMin = times[0].Min(), baseMedian = Median(times[0]);
        for (int k = 0; k < rows.Length; k++)
        {
            double min = times[k].Min(), median = Median(times[k]);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {corpus} | {rows[k].Name} | {min:F3} | {median:F3} | {min / baseMin:F2} | {median / baseMedian:F2} |"));
        }
    }

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
    }
}
