using System.Diagnostics;
using System.Text;
using Compression.Codecs;
using Compression.Dictionaries;

namespace Compression.StructureAnalysis;

/// <summary>
/// The read path's layers side by side, without shapes: <c>Compression.StructureAnalysis blockframe FILE.jsonl SECONDS</c>
/// decodes the same documents as zstd frames (format v1's payload), as raw blocks (format v2's), and as whole v2
/// envelopes through <see cref="DocumentCompressor"/> with and without the checksum, in interleaved passes for SECONDS,
/// and prints each row's fastest pass. Split as <c>docz analyze</c> splits; a 32 KiB dictionary; zstd level 3.
/// </summary>
internal static class BlockVsFrame
{
    public static int Run(string file, double seconds)
    {
        var documents = File.ReadAllLines(file).Where(l => l.Length > 0).Select(l => Encoding.UTF8.GetBytes(l)).ToArray();
        new Random(42).Shuffle(documents);
        int trainCount = (int)(documents.Length * 0.2);
        byte[][] training = documents[..trainCount], test = documents[trainCount..];
        ZstdDictionary dictionary = ZstdDictionaryTrainer.TryTrain(training, 32 * 1024, 1)!;
        byte[] buffer = new byte[1 << 20];
        byte[][] frames = test.Select(d => { ZstdCodec.Instance.TryCompress(d, buffer, 3, dictionary, out int n); return buffer[..n]; }).ToArray();
        byte[][] blocks = test.Select(d => { ZstdBlockCodec.Instance.TryCompress(d, buffer, 3, dictionary, out int n); return buffer[..n]; }).ToArray();
        long bytes = test.Sum(d => (long)d.Length);
        var withChecksum = new DocumentCompressor(new DocumentCompressorOptions { Level = 3 });
        var noChecksum = new DocumentCompressor(new DocumentCompressorOptions { Level = 3, Checksum = false });
        byte[][] envelopes = test.Select(d => { withChecksum.TryCompress(d, buffer, out int n, dictionary); return buffer[..n]; }).ToArray();
        byte[][] bare = test.Select(d => { noChecksum.TryCompress(d, buffer, out int n, dictionary); return buffer[..n]; }).ToArray();
        var rows = new (string, Action)[]
        {
            ("frame", () => { for (int i = 0; i < frames.Length; i++) ZstdCodec.Instance.Decompress(frames[i], buffer.AsSpan(0, test[i].Length), dictionary); }),
            ("block", () => { for (int i = 0; i < blocks.Length; i++) ZstdBlockCodec.DecompressBlock(blocks[i], buffer.AsSpan(0, test[i].Length), dictionary); }),
            ("DocumentCompressor v2", () => { foreach (byte[] e in envelopes) withChecksum.TryDecompress(e, buffer, out _, dictionary); }),
            ("DocumentCompressor v2, no checksum", () => { foreach (byte[] e in bare) noChecksum.TryDecompress(e, buffer, out _, dictionary); }),
        };
        var best = new double[rows.Length];
        Array.Fill(best, double.MaxValue);
        var run = Stopwatch.StartNew();
        while (run.Elapsed.TotalSeconds < seconds)
            for (int r = 0; r < rows.Length; r++)
            {
                long start = Stopwatch.GetTimestamp();
                rows[r].Item2();
                best[r] = Math.Min(best[r], Stopwatch.GetElapsedTime(start).TotalSeconds);
            }
        for (int r = 0; r < rows.Length; r++) Console.WriteLine($"{rows[r].Item1}: {best[r] * 1e9 / test.Length:F0} ns/doc fastest, {bytes / best[r] / 1e6:F0} MB/s");
        return 0;
    }
}
