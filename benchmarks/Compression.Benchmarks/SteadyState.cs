using System.Diagnostics;
using System.Globalization;

namespace Compression.Benchmarks;

/// <summary>
/// Runs a workload until the process has reached its steady state, before BenchmarkDotNet's own warm-up. The suites that
/// go through a driver or SDK (a batch of 1,000 operations, tens of milliseconds) need it: their batches keep getting
/// faster for 10-20 s on the 2-core machine, far longer than three warm-up iterations. Measured (the Couchbase upsert
/// batch of movies, plain and compressed alternating, 10 batches each per line): 104 and 193 ms a batch in the first 3 s
/// (1.85x), 49 and 72 ms at 6 s (1.47x), then 28-37 and 35-46 ms, 1.10-1.49x, from about 10 s on. The first seconds are
/// the JIT's (tiered compilation: unoptimized code first, then code optimized with what dynamic PGO saw): with
/// <c>DOTNET_TieredCompilation=0</c> the first batches took 57 and 80 ms. The rest of the settling happens with it off
/// too (57 → 35-41 ms over 13 s): the thread pool, the GC's budgets, the SDK's pools. A run that measures the first
/// seconds measures all that, more of it on the compressed side (more code to compile), which an application running
/// for hours never sees.
/// </summary>
public static class SteadyState
{
    /// <summary>Overrides the warm-up's length (seconds; 0 turns it off).</summary>
    public const string SecondsVariable = "COMPRESSION_BENCH_STEADY_SECONDS";

    /// <summary>The warm-up's length: <see cref="SecondsVariable"/>, or 20 s.</summary>
    public static TimeSpan Duration =>
        Environment.GetEnvironmentVariable(SecondsVariable) is { Length: > 0 } text
            ? TimeSpan.FromSeconds(double.Parse(text, CultureInfo.InvariantCulture))
            : TimeSpan.FromSeconds(20);

    /// <summary>Runs <paramref name="batch"/> over and over for <see cref="Duration"/>.</summary>
    public static async Task WarmUpAsync(Func<Task> batch)
    {
        TimeSpan duration = Duration;
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < duration) await batch().ConfigureAwait(false);
    }
}
