using System.Diagnostics;
using System.Globalization;
using Compression;
using Compression.Dictionaries;

// dotnet run -c Release --project clients/js/bench/dotnet-writer -- INPUT.jsonl OUTDIR [--format v1|v2|v3] [--no-fields] [--no-shapes]
if (args.Length < 2)
{
    Console.Error.WriteLine("usage: DotnetWriter INPUT.jsonl OUTDIR [--format v1|v2|v3] [--no-fields] [--no-shapes]");
    return 2;
}
string input = args[0], output = args[1];
var format = EnvelopeFormat.V3;
bool fields = true, shapes = true;
for (int i = 2; i < args.Length; i++)
{
    if (args[i] == "--format") format = Enum.Parse<EnvelopeFormat>(args[++i], ignoreCase: true);
    else if (args[i] == "--no-fields") fields = false;
    else if (args[i] == "--no-shapes") shapes = false;
}
if (Directory.Exists(output)) Directory.Delete(output, recursive: true);
Directory.CreateDirectory(output);

byte[][] documents = [.. File.ReadLines(input).Where(l => l.Length > 0).Select(l => System.Text.Encoding.UTF8.GetBytes(l))];
var options = new CompressionEngineOptions();
options.Defaults.Format = format;
options.Defaults.Dictionary.PackDocuments = shapes;
options.Defaults.Dictionary.ModelFields = fields;
options.Defaults.Dictionary.MinSampleCount = int.Min(documents.Length, 16_000);
options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.Zero;
await using var engine = new CompressionEngine(new FileDictionaryStore(Path.Combine(output, "dictionaries")), options);
CompressionNamespace ns = engine.GetNamespace("bench.corpus");
foreach (byte[] document in documents) ns.Compress(document); // samples
// The write path trains in the background once it has the samples; wait for it (or train when it did not start).
for (int i = 0; i < 1200 && ns.CurrentDictionary is null; i++)
{
    await Task.Delay(100);
    await ns.RefreshAsync();
}
if (ns.CurrentDictionary is null)
{
    TrainingResult training = await ns.TrainAsync();
    Console.Error.WriteLine($"training: {training.Outcome}");
    await ns.RefreshAsync();
}
Console.Error.WriteLine($"dictionary {ns.CurrentDictionary?.Id} version {ns.CurrentDictionary?.Version}");

byte[][] envelopes = [.. documents.Select(d => ns.Compress(d))];
var codecs = envelopes.GroupBy(e => { DocumentEnvelope.TryReadHeader(e, out var h); return h.Codec; }).ToDictionary(g => g.Key.ToString(), g => g.Count());
await using (var file = File.Create(Path.Combine(output, "envelopes.bin")))
{
    foreach (byte[] e in envelopes)
    {
        file.Write(BitConverter.GetBytes(e.Length));
        file.Write(e);
    }
}

// The .NET decode of the same envelopes: span to span, the fastest of 5 rounds of at least 0.5 s.
long raw = documents.Sum(d => (long)d.Length), stored = envelopes.Sum(e => (long)e.Length);
byte[] destination = new byte[documents.Max(d => d.Length)];
double best = double.MaxValue, bestCpu = double.MaxValue;
using var process = Process.GetCurrentProcess();
for (int round = 0; round < 5; round++)
{
    long passes = 0;
    process.Refresh();
    TimeSpan cpu = process.TotalProcessorTime;
    var watch = Stopwatch.StartNew();
    do
    {
        foreach (byte[] e in envelopes)
        {
            if (!ns.TryDecompress(e, destination, out _)) throw new InvalidOperationException("decode failed");
        }
        passes++;
    } while (watch.Elapsed.TotalSeconds < 0.5);
    best = Math.Min(best, watch.Elapsed.TotalSeconds / passes);
    process.Refresh();
    bestCpu = Math.Min(bestCpu, (process.TotalProcessorTime - cpu).TotalSeconds / passes);
}
string summary = string.Create(CultureInfo.InvariantCulture,
    $"{{\"documents\":{documents.Length},\"rawBytes\":{raw},\"storedBytes\":{stored},\"ratio\":{(double)raw / stored:F3},\"dotnetDecodeMBps\":{raw / best / 1e6:F1},\"dotnetMicrosecondsPerDocument\":{best / documents.Length * 1e6:F3},\"dotnetCpuMBps\":{raw / bestCpu / 1e6:F1},\"codecs\":{System.Text.Json.JsonSerializer.Serialize(codecs)},\"format\":\"{format}\"}}");
File.WriteAllText(Path.Combine(output, "dotnet.json"), summary);
Console.WriteLine(summary);
return 0;
