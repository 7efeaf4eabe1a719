using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

namespace Compression.Couchbase.Benchmarks;

/// <summary>
/// The same cases as the BenchmarkDotNet suites, timed with a stopwatch in alternating rounds: plain, then compressed,
/// then compressed, then plain, and so on, each round timing a few operations of each. BenchmarkDotNet runs one case
/// after another, so on a shared machine whose load changes by the minute a ratio of two rows compares two different
/// machines; here both sides of a ratio see the same minutes. Reported: the median time of each side and the median of
/// the per-round ratios (with their quartiles). Not a replacement for the BenchmarkDotNet report (no allocations, no
/// statistics beyond these), a check on its ratios. Besides wall time, the process's CPU time (every thread: the SDK,
/// the engine and the in-process server; <c>CLOCK_PROCESS_CPUTIME_ID</c>) per operation: what a batch costs the machine,
/// and much less sensitive than wall time to other processes' load.
/// </summary>
internal static partial class AlternatingRun
{
    /// <summary>Two ways of doing one thing: the baseline ("plain") and the case measured against it ("compressed").</summary>
    private sealed record Pair(string Corpus, string Operation, Func<Task> Plain, Func<Task> Compressed);

    public static int Run(string[] args)
    {
        int rounds = Option(args, "--rounds", 15);
        int operations = Option(args, "--operations", 3);
        bool sdkOnly = args.Contains("--sdk"); // only the two pairs through the SDK (what a link's rate changes)
        var corpora = global::Compression.Benchmarks.Corpus.Selected("movies", "flights").ToList();
        var lines = new List<string>
        {
            $"Alternating rounds: {rounds} rounds of {operations} operations per side, order swapped every round; median of per-round ratios (quartiles).",
            "",
            "| Corpus | Operation | Wall plain | Wall compressed | Wall ratio (Q1-Q3) | CPU plain | CPU compressed | CPU ratio (Q1-Q3) |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        };
        foreach (string corpus in corpora)
        {
            var plain = new CouchbaseSdkBenchmarks { Corpus = corpus };
            var compressed = new CouchbaseSdkBenchmarks { Corpus = corpus };
            var transcoder = new TranscoderOverheadBenchmarks { Corpus = corpus };
            plain.SetupPlain();
            compressed.SetupCompressed();
            if (!sdkOnly) transcoder.Setup();
            try
            {
                Pair[] pairs =
                [
                    new(corpus, "upsert 1,000 (SDK, loopback)", plain.UpsertPlain, compressed.UpsertCompressed),
                    new(corpus, "get 1,000 (SDK, loopback)", plain.GetPlain, compressed.GetCompressed),
                    new(corpus, "encode 1,000 (transcoder only)", () => Sync(transcoder.EncodeJson), () => Sync(transcoder.EncodeCompressed)),
                    new(corpus, "decode 1,000 (transcoder only)", () => Sync(transcoder.DecodeJson), () => Sync(transcoder.DecodeCompressed)),
                    new(corpus, "encode 1,000: JSON + engine by hand / transcoder", () => Sync(transcoder.EncodeThenCompressByHand), () => Sync(transcoder.EncodeCompressed)),
                    new(corpus, "decode 1,000: engine + JSON by hand / transcoder", () => Sync(transcoder.DecompressThenDecodeByHand), () => Sync(transcoder.DecodeCompressed)),
                ];
                foreach (Pair pair in sdkOnly ? pairs[..2] : pairs) lines.Add(Measure(pair, rounds, operations));
            }
            finally
            {
                plain.Cleanup();
                compressed.Cleanup();
                if (!sdkOnly) transcoder.Cleanup();
            }
        }
        foreach (string line in lines) Console.WriteLine(line);
        return 0;
    }

    private static Task Sync(Func<long> action)
    {
        action();
        return Task.CompletedTask;
    }

    private static Task Sync(Func<int> action)
    {
        action();
        return Task.CompletedTask;
    }

    private static string Measure(Pair pair, int rounds, int operations)
    {
        for (int i = 0; i < 3; i++)
        {
            pair.Plain().GetAwaiter().GetResult();
            pair.Compressed().GetAwaiter().GetResult();
        }
        var wall = (Plain: new List<double>(), Compressed: new List<double>(), Ratio: new List<double>());
        var cpu = (Plain: new List<double>(), Compressed: new List<double>(), Ratio: new List<double>());
        for (int round = 0; round < rounds; round++)
        {
            (double Wall, double Cpu) p, c;
            if (round % 2 == 0)
            {
                p = Time(pair.Plain, operations);
                c = Time(pair.Compressed, operations);
            }
            else
            {
                c = Time(pair.Compressed, operations);
                p = Time(pair.Plain, operations);
            }
            wall.Plain.Add(p.Wall);
            wall.Compressed.Add(c.Wall);
            wall.Ratio.Add(c.Wall / p.Wall);
            cpu.Plain.Add(p.Cpu);
            cpu.Compressed.Add(c.Cpu);
            cpu.Ratio.Add(c.Cpu / p.Cpu);
        }
        foreach (List<double> list in (List<double>[])[wall.Plain, wall.Compressed, wall.Ratio, cpu.Plain, cpu.Compressed, cpu.Ratio]) list.Sort();
        string line = string.Create(CultureInfo.InvariantCulture,
            $"| {pair.Corpus} | {pair.Operation} | {Median(wall.Plain):F1} ms | {Median(wall.Compressed):F1} ms | **{Median(wall.Ratio):F2}** ({Quantile(wall.Ratio, 0.25):F2}-{Quantile(wall.Ratio, 0.75):F2}) | {Median(cpu.Plain):F1} ms | {Median(cpu.Compressed):F1} ms | **{Median(cpu.Ratio):F2}** ({Quantile(cpu.Ratio, 0.25):F2}-{Quantile(cpu.Ratio, 0.75):F2}) |");
        Console.Error.WriteLine(line);
        return line;
    }

    private static (double Wall, double Cpu) Time(Func<Task> operation, int count)
    {
        double cpu = ProcessCpuMilliseconds();
        var watch = Stopwatch.StartNew();
        for (int i = 0; i < count; i++) operation().GetAwaiter().GetResult();
        double wall = watch.Elapsed.TotalMilliseconds;
        return (wall / count, (ProcessCpuMilliseconds() - cpu) / count);
    }

    /// <summary>CPU time of the whole process (all threads), in milliseconds, with nanosecond resolution on Linux.</summary>
    private static double ProcessCpuMilliseconds()
    {
        if (OperatingSystem.IsLinux() && ClockGetTime(ClockProcessCpuTimeId, out Timespec now) == 0) return (now.Seconds * 1e3) + (now.Nanoseconds / 1e6);
        return Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds;
    }

    private const int ClockProcessCpuTimeId = 2;

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, out Timespec time);

    private static double Median(List<double> sorted) => Quantile(sorted, 0.5);

    private static double Quantile(List<double> sorted, double q)
    {
        double position = (sorted.Count - 1) * q;
        int below = (int)Math.Floor(position);
        int above = Math.Min(below + 1, sorted.Count - 1);
        return sorted[below] + ((sorted[above] - sorted[below]) * (position - below));
    }

    private static int Option(string[] args, string name, int fallback)
    {
        int index = Array.IndexOf(args, name);
        return index >= 0 && index + 1 < args.Length && int.TryParse(args[index + 1], NumberStyles.Integer, CultureInfo.InvariantCulture, out int value) ? value : fallback;
    }
}
