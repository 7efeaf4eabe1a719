using System.Diagnostics;
using System.Text;
using Compression.Structure;

namespace Compression.StructureAnalysis;

/// <summary>
/// One operation of the recommended setting (zstd level 3, dictionary and shapes, through <see cref="DocumentCompressor"/>)
/// in a loop for a while, for a profiler to attach to (<c>perf record</c> with <c>DOTNET_PerfMapEnabled=1</c> and
/// <c>DOTNET_EnableWriteXorExecute=0</c>): <c>Compression.StructureAnalysis hot FILE.jsonl SECONDS compress|decompress|encode</c>.
/// <c>HOT_FIELDS=0</c>: the shape table alone (codec 7) instead of the engine's default, table and field model (codec 8).
/// Split as <c>docz analyze</c> splits (seed 42, 20% trains a 64 KiB dictionary). Prints the fastest pass, the median
/// pass, and the median of each 50 passes in order, which shows how much the machine's speed drifts during the run.
/// </summary>
internal static class HotLoop
{
    public static int Run(string file, double seconds, string what)
    {
        var documents = File.ReadAllLines(file).Where(l => l.Length > 0).Select(l => Encoding.UTF8.GetBytes(l)).ToArray();
        new Random(42).Shuffle(documents);
        int trainCount = (int)(documents.Length * 0.2);
        byte[][] training = documents[..trainCount], test = documents[trainCount..];
        // The engine's default learns a field model (codec 8) with the table; HOT_FIELDS=0 measures the table alone (codec 7).
        bool fields = Environment.GetEnvironmentVariable("HOT_FIELDS") != "0";
        StructureModel model = StructureTrainer.TryTrain(training, 64 * 1024, 1, kind: null, fieldModel: fields) ?? throw new InvalidOperationException("no shape table trained");
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Level = 3 });
        byte[] buffer = new byte[DocumentCompressor.GetMaxEnvelopeLength(test.Max(d => d.Length))];
        var envelopes = test.Select(d => { compressor.TryCompress(d, buffer, out int n, model.Dictionary); return buffer[..n]; }).ToArray();
        long bytes = test.Sum(d => (long)d.Length);
        Action pass = what switch
        {
            "compress" => () => { foreach (byte[] d in test) compressor.TryCompress(d, buffer, out _, model.Dictionary); },
            "decompress" => () => { foreach (byte[] e in envelopes) compressor.TryDecompress(e, buffer, out _, model.Dictionary); },
            "encode" => () => { foreach (byte[] d in test) model.Transform.TryEncode(d, buffer, out _); },
            _ => throw new ArgumentException($"'{what}': compress, decompress or encode."),
        };
        Console.WriteLine($"{test.Length} documents, dictionary {model.Dictionary.Content.Length} B, {model.Table.Count} shapes, {model.Transform.Fields?.Model.FieldCount ?? 0} modelled fields; {what} for {seconds} s");
        var times = new List<double>();
        var run = Stopwatch.StartNew();
        while (run.Elapsed.TotalSeconds < seconds)
        {
            long start = Stopwatch.GetTimestamp();
            pass();
            times.Add(Stopwatch.GetElapsedTime(start).TotalSeconds);
        }
        double MBps(double s) => bytes / s / 1e6;
        for (int i = 0; i + 50 <= times.Count; i += 50) Console.Write($"{MBps(times.Skip(i).Take(50).Order().ElementAt(25)):F0} ");
        Console.WriteLine("(MB/s, median of each 50 passes in order)");
        var sorted = times.Order().ToList();
        Console.WriteLine($"{times.Count} passes: fastest {MBps(sorted[0]):F1} MB/s ({sorted[0] * 1e9 / test.Length:F0} ns/doc), median {MBps(sorted[sorted.Count / 2]):F1} MB/s");
        return 0;
    }
}
