using System.Globalization;

namespace Compression.Tool.Analyze;

/// <summary>
/// Picks the setting <c>analyze</c> recommends from measured rows. Size comes first, speed is a bar to clear, and the
/// bar is wide enough that timing noise does not decide:
/// <list type="number">
/// <item>Only settings that make the documents smaller qualify: ratio above 1 (envelope included), and not <c>stored</c>.
/// When none does, the recommendation is to store the documents uncompressed.</item>
/// <item>Among those, the highest ratio whose compress speed clears <see cref="LineMBps"/> less
/// <see cref="Tolerance"/> (so 40 MB/s clears a 50 MB/s line: one timing on a busy machine is off by that much).</item>
/// <item>When none clears it (a slow or busy machine: then every speed drops together), the highest ratio among the
/// settings at least <see cref="FallbackShare"/> as fast as the fastest that pays, said as such; not the slowest level
/// there is.</item>
/// <item>Diminishing returns: when a setting of that pool compresses at least <see cref="KneeSpeedup"/> times as fast as
/// the one chosen and its ratio is within <see cref="KneeRatioShare"/> of it, the faster one is recommended instead (and
/// the sentence names the one passed over); again from that one, always within that share of the best ratio. Twice the write time for a few percent of bytes is not a default to give,
/// and a slow level whose speed hovers around the line no longer flips the recommendation from run to run. 1.5, not 2:
/// zstd-9 measures about 2.4x slower than zstd-3 on small documents, and one run on this machine measured it 1.77x
/// (the faster row timed in a slow moment), which a factor of 2 let through.</item>
/// </list>
/// Before the choice, <see cref="CorpusAnalyzer"/> times every row whose passes are short three times, in rounds seconds
/// apart, and keeps the fastest, so a slow moment of the machine cannot push a setting under the bar. Rows with shapes
/// (documents packed before zstd with the dictionary) compete under the same rules; the baselines the sentence compares
/// with are rows without them.
/// </summary>
internal static class SettingRecommender
{
    /// <summary>The compress speed, in MB/s, a recommended setting should reach when any setting does: a write path that keeps up.</summary>
    public const double LineMBps = 50;

    /// <summary>How far under <see cref="LineMBps"/> a measured speed may be and still clear it (a fraction).</summary>
    public const double Tolerance = 0.2;

    /// <summary>The speed that clears the line: <see cref="LineMBps"/> x (1 - <see cref="Tolerance"/>).</summary>
    public const double ClearsMBps = LineMBps * (1 - Tolerance);

    /// <summary>When no setting clears the line: the share of the fastest paying setting's speed a setting must reach.</summary>
    public const double FallbackShare = 0.5;

    /// <summary>A setting this many times as fast as the best-ratio one, with a ratio within <see cref="KneeRatioShare"/> of it, is preferred.</summary>
    public const double KneeSpeedup = 1.5;

    /// <summary>How much ratio (a fraction of the best one's) the faster setting may give up: 5%.</summary>
    public const double KneeRatioShare = 0.05;

    private static readonly CultureInfo C = CultureInfo.InvariantCulture;

    /// <summary>Whether the setting makes documents smaller at all.</summary>
    public static bool Pays(CodecResult row) => row.Codec != "stored" && row.Ratio > 1;

    /// <summary>The recommended row (null when compression does not pay) and the sentence that says why.</summary>
    public static (CodecResult? Best, string Reason) Recommend(IReadOnlyList<CodecResult> rows)
    {
        var paying = rows.Where(Pays).ToList();
        if (paying.Count == 0)
        {
            CodecResult? closest = rows.Where(r => r.Codec != "stored").MaxBy(r => r.Ratio);
            string best = closest is null ? "" : string.Create(C, $" (the best, {Name(closest)}, has ratio {closest.Ratio:F2})");
            return (null, $"store these documents uncompressed: compression does not pay, no setting measured makes them smaller{best}.");
        }

        var fast = paying.Where(r => r.CompressMBps >= ClearsMBps).ToList();
        double fastestPaying = paying.Max(r => r.CompressMBps);
        var pool = fast.Count > 0 ? fast : paying.Where(r => r.CompressMBps >= fastestPaying * FallbackShare).ToList();
        // Highest ratio; between equal ratios, the faster.
        CodecResult chosen = pool.OrderByDescending(r => r.Ratio).ThenByDescending(r => r.CompressMBps).First();
        CodecResult? passedOver = null;
        double kneeFloor = chosen.Ratio * (1 - KneeRatioShare); // every step stays within 5% of the best ratio, not of the last step
        while (pool.Where(r => r.CompressMBps >= chosen.CompressMBps * KneeSpeedup && r.Ratio >= kneeFloor)
                   .OrderByDescending(r => r.Ratio).ThenByDescending(r => r.CompressMBps).FirstOrDefault() is { } faster)
        {
            passedOver ??= chosen;
            chosen = faster;
        }
        CodecResult? plainZstd = rows.FirstOrDefault(r => r.Codec == "zstd" && r.Level == 3 && !r.Dictionary && !r.Shapes);
        string gain = chosen.Dictionary && plainZstd is not null ? string.Create(C, $", {chosen.Ratio / plainZstd.Ratio:F1}x zstd-3 without a dictionary") : "";
        // A row with shapes is also compared with the same level and the plain dictionary: what packing adds.
        CodecResult? plainDictionary = chosen.Shapes ? rows.FirstOrDefault(r => r.Codec == chosen.Codec && r.Level == chosen.Level && r.Dictionary && !r.Shapes) : null;
        if (plainDictionary is not null)
            gain += string.Create(C, $", {chosen.Ratio / plainDictionary.Ratio:F2}x {chosen.Codec}-{chosen.Level} with a dictionary but no shapes");
        string why = fast.Count > 0
            ? string.Create(C, $"the highest ratio among settings compressing at {LineMBps:F0} MB/s or more ({ClearsMBps:F0} MB/s counts: timings vary that much).")
            : string.Create(C, $"no setting reached {ClearsMBps:F0} MB/s (a slow or busy machine, or large documents); the highest ratio among settings at least half as fast as the fastest that pays ({fastestPaying:F0} MB/s).");
        if (passedOver is not null)
            why += string.Create(C, $" {Name(passedOver)} (ratio {passedOver.Ratio:F2} at {passedOver.CompressMBps:F0} MB/s) is passed over: {(passedOver.Ratio / chosen.Ratio - 1) * 100:F1}% more ratio for {chosen.CompressMBps / passedOver.CompressMBps:F1}x the compress time.");
        return (chosen, string.Create(C, $"{Name(chosen)}: ratio {chosen.Ratio:F2} at {chosen.CompressMBps:F0} MB/s compress{gain}; ") + why);
    }

    /// <summary>A row as the recommendation names it: <c>zstd level 3 with a trained dictionary and shapes</c>.</summary>
    public static string Name(CodecResult r) =>
        string.Create(C, $"{r.Codec} level {r.Level}{(r.Shapes ? " with a trained dictionary and shapes" : r.Dictionary ? " with a trained dictionary" : "")}");
}
