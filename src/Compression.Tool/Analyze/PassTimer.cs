namespace Compression.Tool.Analyze;

/// <summary>
/// Times one pass of a measurement (compress or decompress every measured document once). The seam exists so tests can
/// hand <see cref="CorpusAnalyzer"/> scripted timings; every implementation must run <c>pass</c> at least once, since the
/// compress pass also produces the envelopes whose sizes give the ratio.
/// </summary>
internal abstract class PassTimer
{
    /// <summary>Seconds one run of <paramref name="pass"/> takes; <paramref name="label"/> names the setting and phase (<c>"zstd 3 dictionary compress"</c>).</summary>
    public abstract double SecondsPerPass(string label, Action pass, TimeSpan budget);

    /// <summary>
    /// The label <see cref="CorpusAnalyzer"/> gives a timing: codec, level, <c>dictionary</c> when one is used, <c>shapes</c>
    /// when its dictionary has a shape table (documents packed), then <c>compress</c> or <c>decompress</c>.
    /// </summary>
    public static string Label(string codec, int level, bool dictionary, bool decompress, bool shapes = false) =>
        $"{codec} {level}{(dictionary ? " dictionary" : "")}{(shapes ? " shapes" : "")} {(decompress ? "decompress" : "compress")}";
}

/// <summary>
/// Times passes on a clock. Warm-up first: passes until half the <c>budget</c> is spent (at least one), so the
/// just-in-time compiler has replaced most of the first, unoptimized code of the setting's methods (it starts about
/// 100 ms after they were first called, in the background) and the timings are of the code an application runs. Then samples until
/// <c>budget</c> is spent again (at least <see cref="MinTimedPasses"/>): a sample is one pass, or as many passes as take
/// <see cref="SamplesPerBudget"/>th of the budget when passes are shorter (one tiny document), divided by their number.
/// The median sample is the measurement: another process taking the core for a moment slows one sample, not the result. When the first warm-up
/// pass alone takes <see cref="LongPass"/> or more (a large corpus, a slow level), it is the measurement: compilation
/// is then a small part of it, and more passes would multiply a long wait for little.
/// </summary>
internal sealed class ClockPassTimer(TimeProvider time) : PassTimer
{
    /// <summary>A first pass this long is taken as the measurement.</summary>
    public static readonly TimeSpan LongPass = TimeSpan.FromSeconds(3);

    /// <summary>The fewest samples a median is taken of (when the first pass is shorter than <see cref="LongPass"/>).</summary>
    public const int MinTimedPasses = 3;

    /// <summary>A sample lasts at least the budget divided by this (so a budget gives about this many samples).</summary>
    public const int SamplesPerBudget = 30;

    public static ClockPassTimer System { get; } = new(TimeProvider.System);

    public override double SecondsPerPass(string label, Action pass, TimeSpan budget)
    {
        long start = time.GetTimestamp();
        pass();
        TimeSpan first = time.GetElapsedTime(start);
        if (first >= LongPass) return first.TotalSeconds;
        while (time.GetElapsedTime(start) < budget / 2) pass();

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
