using System.Diagnostics;
using System.Text;
using Compression;
using Compression.Codecs;
using Compression.Structure;
using MongoDB.Bson;

namespace Compression.StructureAnalysis;

/// <summary>
/// Where the time of the structure step goes, per document (best of several passes, so a shared machine's noise is
/// mostly left out): parsing, shape lookup, emitting, the verifying decode, and zstd on the packed stream, against a
/// plain zstd compression of the same documents. <c>Compression.StructureAnalysis profile FILE.jsonl [json|bson]</c>
/// </summary>
internal static class Profile
{
    /// <summary>Timed passes per row (the best counts): PROFILE_PASSES, 15 by default.</summary>
    private static readonly int Passes = int.TryParse(Environment.GetEnvironmentVariable("PROFILE_PASSES"), out int n) && n > 0 ? n : 15;

    public static int Run(string file, string input)
    {
        var documents = File.ReadAllLines(file).Where(l => l.Length > 0)
            .Select(l => input == "json" ? Encoding.UTF8.GetBytes(l) : Bson(l)).ToList();
        var training = documents.Take(documents.Count / 5).ToList();
        var test = documents.Skip(documents.Count / 5).Take(2000).ToList();
        StructureModel model = StructureTrainer.TryTrain(training, 16 * 1024, 1) ?? throw new InvalidOperationException("no model");
        ZstdDictionary plain = Compression.Dictionaries.ZstdDictionaryTrainer.TryTrain(training, 16 * 1024, 2)!;
        ShapeTransform transform = model.Transform;
        long bytes = test.Sum(d => (long)d.Length);
        byte[] buffer = new byte[test.Max(d => d.Length) * 2 + 256];
        byte[] back = new byte[buffer.Length];
        var packed = test.Select(d => { transform.TryEncode(d, buffer, out int n); return buffer[..n]; }).ToList();
        var frames = test.Select(d => { model.TryCompress(d, buffer, 3, out int n); return buffer[..n]; }).ToList();
        var plainFrames = test.Select(d => { ZstdCodec.Instance.TryCompress(d, buffer, 3, plain, out int n); return buffer[..n]; }).ToList();

        void Report(string name, Action pass)
        {
            pass();
            double best = double.MaxValue;
            for (int i = 0; i < Passes; i++)
            {
                var sw = Stopwatch.StartNew();
                pass();
                best = Math.Min(best, sw.Elapsed.TotalSeconds);
            }
            Console.WriteLine($"{name,-40} {best * 1e9 / test.Count,8:F0} ns/doc {bytes / best / 1e6,8:F0} MB/s");
        }

        Report("plain zstd compress", () => { foreach (byte[] d in test) ZstdCodec.Instance.TryCompress(d, buffer, 3, plain, out _); });
        Report("parse", () =>
        {
            foreach (byte[] d in test) { PackScratch s = PackScratch.Rent(); ShapeTransform.TryParse(d, s, transform.Table); PackScratch.Return(s); }
        });
        Report("parse + resolve", () =>
        {
            foreach (byte[] d in test) { PackScratch s = PackScratch.Rent(); ShapeTransform.TryParse(d, s, transform.Table); s.ResolveShapes(d, transform.Table); PackScratch.Return(s); }
        });
        Report("parse + resolve + emit", () =>
        {
            foreach (byte[] d in test) { PackScratch s = PackScratch.Rent(); ShapeTransform.TryParse(d, s, transform.Table); s.ResolveShapes(d, transform.Table); PackedEmitter.TryEmit(d, s, buffer, out _); PackScratch.Return(s); }
        });
        Report("decode (unpack)", () => { for (int i = 0; i < test.Count; i++) transform.Decode(packed[i], back.AsSpan(0, test[i].Length)); });
        Report("TryEncode (all of it, with verify)", () => { foreach (byte[] d in test) transform.TryEncode(d, buffer, out _); });
        Report("zstd of the packed streams", () => { foreach (byte[] p in packed) ZstdCodec.Instance.TryCompress(p, buffer, 3, model.Dictionary, out _); });
        Report("structured compress (TryCompress)", () => { foreach (byte[] d in test) model.TryCompress(d, buffer, 3, out _); });
        Report("plain zstd decompress", () => { for (int i = 0; i < test.Count; i++) ZstdCodec.Instance.Decompress(plainFrames[i], back.AsSpan(0, test[i].Length), plain); });
        Report("structured decompress", () => { for (int i = 0; i < test.Count; i++) model.Decompress(frames[i], back.AsSpan(0, test[i].Length)); });
        return 0;
    }

    private static byte[] Bson(string json)
    {
        BsonDocument document = BsonDocument.Parse(json);
        document.Remove("_id");
        return document.ToBson();
    }
}
