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
/// Times passes on a clock: one warm-up pass, then passes until <c>budget</c> is spent (at least one), and returns the
/// mean. When the warm-up pass alone takes <see cref="LongPass"/> or more (a large corpus, a slow level), it is the
/// measurement: just-in-time compilation (a few hundred milliseconds at most for a codec) is then a small part of it,
/// and a second pass would double a long wait for little.
/// </summary>
internal sealed class ClockPassTimer(TimeProvider time) : PassTimer
{
    /// <summary>A warm-up pass this long is taken as the measurement.</summary>
    public static readonly TimeSpan LongPass = TimeSpan.FromSeconds(3);

    public static ClockPassTimer System { get; } = new(TimeProvider.System);

    public override double SecondsPerPass(string label, Action pass, TimeSpan budget)
    {
        long start = time.GetTimestamp();
        pass();
        TimeSpan warmUp = time.GetElapsedTime(start);
        if (warmUp >= LongPass) return warmUp.TotalSeconds;

        int passes = 0;
        start = time.GetTimestamp();
        TimeSpan elapsed;
        do
        {
            pass();
            passes++;
            elapsed = time.GetElapsedTime(start);
        }
        while (elapsed < budget);
        return elapsed.TotalSeconds / passes;
    }
}
