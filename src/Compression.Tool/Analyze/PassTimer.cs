namespace Compression.Tool.Analyze;

/// <summary>
/// Times one pass of a measurement (compress or decompress every measured document once). The seam exists so tests can
/// hand <see cref="CorpusAnalyzer"/> scripted timings; every implementation must run <c>pass</c> at least once, since the
/// compress pass also produces the envelopes whose sizes give the ratio.
/// </summary>
internal abstract class PassTimer
{
    /// <summary>
    /// Seconds one run of <paramref name="pass"/> takes; <paramref name="label"/> names the setting and phase
    /// (<c>"zstd 3 dictionary compress"</c>). <paramref name="warmedUp"/>: the same code was timed before in this
    /// process (a later round), so one pass warms the caches and the compiler's warm-up is not waited for again.
    /// </summary>
    public abstract double SecondsPerPass(string label, Action pass, TimeSpan budget, bool warmedUp = false);

    /// <summary>
    /// The label <see cref="CorpusAnalyzer"/> gives a timing: codec, level, <c>dictionary</c> when one is used, <c>shapes</c>
    /// when its dictionary has a shape table (documents packed), then <c>compress</c> or <c>decompress</c>.
    /// </summary>
    public static string Label(string codec, int level, bool dictionary, bool decompress, bool shapes = false) =>
        $"{codec} {level}{(dictionary ? " dictionary" : "")}{(shapes ? " shapes" : "")} {(decompress ? "decompress" : "compress")}";
}

/// <summary>
/// Times passes on a clock, as an application runs the code: with the runtime's tiered compilation and dynamic PGO.
/// Warm-up first: passes until <see cref="WarmUpPerBudget"/> times the <c>budget</c> is spent (at least one pass), so the
/// just-in-time compiler has replaced the first code of the setting's methods by code optimized with what it saw them
/// do (it promotes a method about 100 ms after its first calls, in the background, and does so twice: instrumented,
/// then optimized); one pass when <c>warmedUp</c>. Then samples until <c>budget</c> is spent (at least <see cref="MinTimedPasses"/>): a sample is one
/// pass, or as many passes as take <see cref="SamplesPerBudget"/>th of the budget when passes are shorter (one tiny
/// document), divided by their number. The median sample is the measurement: another process taking the core for a
/// moment slows one sample, not the result. When the first pass alone takes <see cref="LongPass"/> or more (a large
/// corpus, a slow level), it is the measurement: compilation is then a small part of it, and more passes would multiply
/// a long wait for little.
/// </summary>
internal sealed class ClockPassTimer(TimeProvider time) : PassTimer
{
    /// <summary>A first pass this long is taken as the measurement.</summary>
    public static readonly TimeSpan LongPass = TimeSpan.FromSeconds(3);

    /// <summary>The fewest samples a median is taken of (when the first pass is shorter than <see cref="LongPass"/>).</summary>
    public const int MinTimedPasses = 3;

    /// <summary>The warm-up lasts this many budgets (500 ms for the default 300 ms budget).</summary>
    public const double WarmUpPerBudget = 5.0 / 3.0;

    /// <summary>A sample lasts at least the budget divided by this (so a budget gives about this many samples).</summary>
    public const int SamplesPerBudget = 30;

    public static ClockPassTimer System { get; } = new(TimeProvider.System);

    public override double SecondsPerPass(string label, Action pass, TimeSpan budget, bool warmedUp = false)
    {
        long start = time.GetTimestamp();
        pass();
        TimeSpan first = time.GetElapsedTime(start);
        if (first >= LongPass) return first.TotalSeconds;
        TimeSpan warmUp = warmedUp ? TimeSpan.Zero : budget * WarmUpPerBudget;
        while (time.GetElapsedTime(start) < warmUp) pass();

        TimeSpan sampleLength = budget / SamplesPerBudget;
        var seconds = new List<double>(SamplesPerBudget + MinTimedPasses);
        start = time.GetTimestamp();
        do
        {
            long sampleStart = time.GetTimestamp();
            int passes = 0;
            TimeSpan elapsed;
            do
            {
                pass();
                passes++;
                elapsed = time.GetElapsedTime(sampleStart);
            }
            while (elapsed < sampleLength);
            seconds.Add(elapsed.TotalSeconds / passes);
        }
        while (seconds.Count < MinTimedPasses || time.GetElapsedTime(start) < budget);
        seconds.Sort();
        int middle = seconds.Count / 2;
        return seconds.Count % 2 == 1 ? seconds[middle] : (seconds[middle - 1] + seconds[middle]) / 2;
    }
}
