using System.Diagnostics;
using System.Text;
using Compression.Codecs;
using Compression.Dictionaries;

namespace Compression.StructureAnalysis;

/// <summary>
/// The read path's layers side by side, without shapes: <c>Compression.StructureAnalysis blockframe FILE.jsonl SECONDS</c>
/// decodes the same documents as zstd frames (format v1's payload), as raw blocks (formats v2 and v3), as whole envelopes of the default format
/// through <see cref="DocumentCompressor"/> with and without the checksum, and through the engine's namespace into a
/// span and into an <c>IBufferWriter</c>, in interleaved passes for SECONDS, and prints each row's fastest pass. Two rows
/// show what the room after the output is worth: the block decoded into the whole 1 MiB buffer rather than the
/// document's exact length, and ZstdSharp's frame decoded into the exact length rather than the whole buffer.
/// <c>BLOCKFRAME_ONLY=ROW</c> (a row's name as printed) runs that row alone: interleaved rows disturb each other.
/// Split as <c>docz analyze</c> splits; the dictionary the engine trains on the training share (its defaults, packing
/// off), used by every row; zstd level 3.
/// </summary>
internal static class BlockVsFrame
{
    public static int Run(string file, double seconds)
    {
        var documents = File.ReadAllLines(file).Where(l => l.Length > 0).Select(l => Encoding.UTF8.GetBytes(l)).ToArray();
        new Random(42).Shuffle(documents);
        int trainCount = (int)(documents.Length * 0.2);
        byte[][] training = documents[..trainCount], test = documents[trainCount..];
        // The engine's namespace, trained by the engine on the training share; every row uses its dictionary.
        var options = new CompressionEngineOptions();
        options.Defaults.Dictionary.PackDocuments = false;
        options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.FromDays(1);
        options.Defaults.Dictionary.GrowthFactor = 1000;
        var engine = new CompressionEngine(new InMemoryDictionaryStore(), options);
        CompressionNamespace ns = engine.GetNamespace("bench.blockframe");
        foreach (byte[] d in training) ns.Compress(d);
        engine.WhenIdleAsync().GetAwaiter().GetResult();
        if (ns.CurrentDictionary is null) ns.TrainAsync().GetAwaiter().GetResult();
        byte[][] engineEnvelopes = test.Select(d => ns.Compress(d)).ToArray();
        DictionaryRecord record = ns.CurrentDictionary ?? throw new InvalidOperationException("the engine adopted no dictionary");
        ZstdDictionary dictionary = ZstdDictionary.Create(record.Id, record.Content.Span);
        byte[] buffer = new byte[1 << 20];
        byte[][] frames = test.Select(d => { ZstdCodec.Instance.TryCompress(d, buffer, 3, dictionary, out int n); return buffer[..n]; }).ToArray();
        byte[][] blocks = test.Select(d => { ZstdBlockCodec.Instance.TryCompress(d, buffer, 3, dictionary, out int n); return buffer[..n]; }).ToArray();
        long bytes = test.Sum(d => (long)d.Length);
        var withChecksum = new DocumentCompressor(new DocumentCompressorOptions { Level = 3 });
        var noChecksum = new DocumentCompressor(new DocumentCompressorOptions { Level = 3, Checksum = false });
        byte[][] envelopes = test.Select(d => { withChecksum.TryCompress(d, buffer, out int n, dictionary); return buffer[..n]; }).ToArray();
        byte[][] bare = test.Select(d => { noChecksum.TryCompress(d, buffer, out int n, dictionary); return buffer[..n]; }).ToArray();
        var writer = new System.Buffers.ArrayBufferWriter<byte>(1 << 20);
        // The suite's baseline (EngineHotPathBenchmarks' "bare zstd decompress"): ZstdSharp's own objects, the dictionary
        // loaded into the context, standard frames (magic, content size).
        using var suiteCompressor = new ZstdSharp.Compressor(3);
        suiteCompressor.LoadDictionary(record.Content.Span);
        using var suiteDecompressor = new ZstdSharp.Decompressor();
        suiteDecompressor.LoadDictionary(record.Content.Span);
        byte[][] standardFrames = test.Select(d => suiteCompressor.Wrap(d).ToArray()).ToArray();
        var rows = new (string, Action)[]
        {
            ("ZstdSharp Decompressor, standard frame", () => { foreach (byte[] f in standardFrames) suiteDecompressor.Unwrap(f, buffer); }),
            ("frame", () => { for (int i = 0; i < frames.Length; i++) ZstdCodec.Instance.Decompress(frames[i], buffer.AsSpan(0, test[i].Length), dictionary); }),
            ("block", () => { for (int i = 0; i < blocks.Length; i++) ZstdBlockCodec.DecompressBlock(blocks[i], buffer.AsSpan(0, test[i].Length), dictionary); }),
            ("block, whole buffer", () => { for (int i = 0; i < blocks.Length; i++) ZstdBlockCodec.DecompressBlock(blocks[i], buffer, dictionary); }),
            ("ZstdSharp Decompressor, standard frame, exact", () => { for (int i = 0; i < standardFrames.Length; i++) suiteDecompressor.Unwrap(standardFrames[i], buffer.AsSpan(0, test[i].Length)); }),
            ($"DocumentCompressor {withChecksum.Format}", () => { foreach (byte[] e in envelopes) withChecksum.TryDecompress(e, buffer, out _, dictionary); }),
            ($"DocumentCompressor {noChecksum.Format}, no checksum", () => { foreach (byte[] e in bare) noChecksum.TryDecompress(e, buffer, out _, dictionary); }),
            ("engine namespace, span", () => { foreach (byte[] e in engineEnvelopes) ns.TryDecompress(e, buffer, out _); }),
            ("engine namespace, IBufferWriter", () => { foreach (byte[] e in engineEnvelopes) { writer.ResetWrittenCount(); ns.Decompress(e, writer); } }),
        };
        if (Environment.GetEnvironmentVariable("BLOCKFRAME_ONLY") is { Length: > 0 } only)
        {
            string names = string.Join("; ", rows.Select(r => $"'{r.Item1}'"));
            rows = [.. rows.Where(r => r.Item1 == only)];
            if (rows.Length == 0) throw new ArgumentException($"BLOCKFRAME_ONLY='{only}' names no row; the rows: {names}.");
        }
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
        engine.DisposeAsync().AsTask().GetAwaiter().GetResult();
        return 0;
    }
}
