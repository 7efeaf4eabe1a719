using System.Globalization;
using Compression.Dictionaries;
using ZstdSharp;

namespace Compression.Benchmarks;

/// <summary>
/// <c>replay [--seeds 42,1] [--set Key=Value;...]... FILE.jsonl...</c>: the online replay of <c>docz analyze --online</c>
/// (<see cref="OnlineReplay"/>: the documents in file order through the engine, bootstrap included) for one or more
/// settings, averaged over seeds, reported as the online ratio and the online ratio over the limit (the whole corpus as
/// one zstd-19 frame, as analyze computes it), with the geometric mean over the corpora. Each <c>--set</c> is one row;
/// its keys are <see cref="NamespaceOptions"/> and <see cref="DictionaryOptions"/> properties (Format=V1,
/// DictionarySize=32768, MaxSampleCount=2000, ...), and <c>TrainFirst=N</c>: the first N documents train a dictionary
/// before any is written (a bulk load's <c>CompressionNamespace.TrainAsync(documents)</c>; <c>docz analyze --train-first</c>);
/// without any, the library defaults. Not a BenchmarkDotNet suite: the
/// figures are sizes, repeatable for a given seed, and no time is measured.
/// </summary>
internal static class ReplaySweep
{
    public static async Task<int> RunAsync(string[] args)
    {
        var seeds = new List<int> { 42 };
        var settings = new List<string>();
        var files = new List<string>();
        for (int i = 1; i < args.Length; i++)
        {
            if (args[i] == "--seeds" && i + 1 < args.Length) seeds = [.. args[++i].Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture))];
            else if (args[i] == "--set" && i + 1 < args.Length) settings.Add(args[++i]);
            else files.Add(args[i]);
        }
        if (files.Count == 0)
        {
            Console.Error.WriteLine("usage: replay [--seeds 42,1,2] [--set Key=Value;Key=Value]... FILE.jsonl...");
            return 2;
        }
        if (settings.Count == 0) settings.Add("");

        var corpora = files.Select(f => (Name: Path.GetFileNameWithoutExtension(f), Documents: Read(f))).ToList();
        var limits = corpora.Select(c => Limit(c.Documents)).ToList();
        Console.WriteLine($"seeds {string.Join(",", seeds)}; cell: online ratio (online / limit); limit = the whole corpus as one zstd-19 frame");
        Console.WriteLine();
        Console.WriteLine("| setting | " + string.Join(" | ", corpora.Select((c, i) => $"{c.Name} (limit {limits[i]:F2})")) + " | geometric mean of online / limit |");
        Console.WriteLine("|---|" + string.Concat(corpora.Select(_ => "---:|")) + "---:|");
        foreach (string setting in settings)
        {
            (NamespaceOptions options, int trainFirst) = Parse(setting);
            var cells = new List<string>();
            var details = new List<string>();
            double logSum = 0;
            for (int i = 0; i < corpora.Count; i++)
            {
                double ratio = 0;
                foreach (int seed in seeds)
                {
                    OnlineReplayResult result = await OnlineReplay.RunAsync(corpora[i].Documents, options, seed, trainFirst: trainFirst);
                    ratio += result.Ratio;
                    if (Environment.GetEnvironmentVariable("REPLAY_TRACE") is { Length: > 0 } trace)
                    {
                        // Per window of documents: raw bytes, envelope bytes and their ratio (where the bytes are lost).
                        int window = int.Parse(trace, CultureInfo.InvariantCulture);
                        var documents = corpora[i].Documents;
                        for (int start = 0; start < documents.Count; start += window)
                        {
                            int end = Math.Min(documents.Count, start + window);
                            long rawBytes = 0, envelopeBytes = 0;
                            for (int k = start; k < end; k++) { rawBytes += documents[k].Length; envelopeBytes += result.EnvelopeSizes![k]; }
                            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture, $"    {corpora[i].Name} [{start},{end}): raw {rawBytes}, out {envelopeBytes}, ratio {(double)rawBytes / envelopeBytes:F2}"));
                        }
                    }
                    details.Add(string.Create(CultureInfo.InvariantCulture,
                        $"{corpora[i].Name} seed {seed}: {result.Ratio:F2}, {result.Trainings} trainings in {result.TrainingTime.TotalSeconds:F1} s, {result.Versions.Count} versions adopted after documents {string.Join(", ", result.Versions.Select(v => $"{v.AfterDocuments} ({v.Ratio:F2})"))}"));
                }
                ratio /= seeds.Count;
                logSum += Math.Log(ratio / limits[i]);
                cells.Add(string.Create(CultureInfo.InvariantCulture, $"{ratio:F2} ({ratio / limits[i]:F3})"));
            }
            Console.WriteLine($"| {(setting.Length == 0 ? "defaults" : setting)} | {string.Join(" | ", cells)} | {Math.Exp(logSum / corpora.Count).ToString("F3", CultureInfo.InvariantCulture)} |");
            foreach (string detail in details) Console.Error.WriteLine($"  {(setting.Length == 0 ? "defaults" : setting)}: {detail}");
        }
        return 0;
    }

    private static List<byte[]> Read(string file) =>
        [.. File.ReadLines(file).Where(l => !string.IsNullOrWhiteSpace(l)).Select(l => System.Text.Encoding.UTF8.GetBytes(l))];

    /// <summary>As <c>CorpusAnalyzer.LimitRatio</c>: documents joined by newlines, one zstd-19 frame.</summary>
    private static double Limit(List<byte[]> documents)
    {
        byte[] all = [.. documents.SelectMany(d => d.Append((byte)'\n'))];
        using var compressor = new Compressor(19);
        return (double)all.Length / compressor.Wrap(all).Length;
    }

    private static (NamespaceOptions Options, int TrainFirst) Parse(string setting)
    {
        var options = new NamespaceOptions();
        int trainFirst = 0;
        foreach (string pair in setting.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string[] kv = pair.Split('=', 2);
            if (kv[0] == "TrainFirst")
            {
                trainFirst = int.Parse(kv[1], CultureInfo.InvariantCulture);
                continue;
            }
            object target = typeof(NamespaceOptions).GetProperty(kv[0]) is not null ? options : options.Dictionary;
            var property = target.GetType().GetProperty(kv[0]) ?? throw new ArgumentException($"unknown setting '{kv[0]}'");
            Type type = Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
            object value = type.IsEnum ? Enum.Parse(type, kv[1], ignoreCase: true) : Convert.ChangeType(kv[1], type, CultureInfo.InvariantCulture);
            property.SetValue(target, value);
        }
        return (options, trainFirst);
    }
}
