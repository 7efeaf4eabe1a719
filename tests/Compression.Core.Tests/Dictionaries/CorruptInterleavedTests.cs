using System.Buffers;
using Compression.Codecs;
using Compression.Core.Tests.Envelope;
using Compression.Dictionaries;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// Every codec and format: each bit flipped, each truncation, bytes appended, payloads swapped and headers spliced, each
/// corrupt envelope decoded on one thread between valid ones. A corrupt envelope is a clear error (or, where the codec
/// ignores the bit, the same document), never other bytes, and never spoils the next valid decode of any codec (pooled
/// and thread-static contexts). Written by a review helper (2026-11-25); it found nothing, and stays as a guard.
/// </summary>
public sealed class CorruptInterleavedTests(ITestOutputHelper output)
{
    private sealed record Case(string Name, DocumentCompressor Compressor, ZstdDictionary? Dictionary, List<(byte[] Doc, byte[] Env)> Valid);

    private static async Task<(CompressionEngine Engine, CompressionNamespace Ns, ZstdDictionary Dict, List<(byte[], byte[])> Written)> TrainPackedAsync()
    {
        var engine = TestEngine.Create(new InMemoryDictionaryStore(), CompressionEngineOptionsBuilder.TrainOnceAt(400));
        var ns = engine.GetNamespace("db.movies");
        var random = new Random(7);
        var written = new List<(byte[], byte[])>();
        for (int i = 0; i < 400; i++) { var d = TestDocuments.Movie(random); written.Add((d, ns.Compress(d))); }
        await engine.WhenIdleAsync();
        if (ns.CurrentDictionary is null) await ns.TrainAsync();
        Assert.NotNull(ns.CurrentDictionary);
        for (int i = 0; i < 50; i++) { var d = TestDocuments.Movie(random); written.Add((d, ns.Compress(d))); }
        byte[] last = written[^1].Item2;
        ZstdDictionary dict = (await ns.PreloadDictionaryAsync(last))!;
        Assert.True(dict.HasShapeTable, "no shape table");
        return (engine, ns, dict, written);
    }

    private static List<Case> BuildCases(ZstdDictionary dict)
    {
        var random = new Random(11);
        var docs = new List<byte[]>();
        for (int i = 0; i < 4; i++) docs.Add(TestDocuments.Movie(random));
        for (int i = 0; i < 2; i++) docs.Add(TestDocuments.Sensor(random));
        var cases = new List<Case>();
        void Add(string name, DocumentCompressor c, ZstdDictionary? d, CompressionCodec expected)
        {
            var valid = docs.Select(doc => (doc, c.Compress(doc, d))).ToList();
            Assert.Contains(valid, v => DocumentEnvelope.TryReadHeader(v.Item2, out var h) && h.Codec == expected);
            cases.Add(new Case(name, c, d, valid));
        }
        foreach (var f in new[] { EnvelopeFormat.V3, EnvelopeFormat.V2, EnvelopeFormat.V1 })
        {
            Add($"zstd-{f}", new DocumentCompressor(new() { Codec = CompressionCodec.Zstd, Format = f }), null, CompressionCodec.Zstd);
            Add($"zstd-dict-{f}", new DocumentCompressor(new() { Codec = CompressionCodec.Zstd, Format = f }) { Pack = false }, dict, CompressionCodec.Zstd);
            foreach (var codec in Corpus.AllCodecsInRegistryOrder.Where(c => c is not (CompressionCodec.Stored or CompressionCodec.Zstd)))
                Add($"{CodecRegistry.For(codec).Name}-{f}", new DocumentCompressor(new() { Codec = codec, Format = f }), null, codec);
            if (f != EnvelopeFormat.V1)
                Add($"packed-{f}", new DocumentCompressor(new() { Codec = CompressionCodec.Zstd, Format = f }), dict,
                    dict.Shapes?.Fields is null ? CompressionCodec.PackedZstd
                    : f == EnvelopeFormat.V3 ? CompressionCodec.FieldZstdFoldedChecksum : CompressionCodec.FieldZstd); // the engine's dictionary: a field model where one pays
        }
        return cases;
    }

    private static IEnumerable<(string Kind, byte[] Corrupt, byte[] Original)> Mutations(Case c)
    {
        foreach (var (doc, env) in c.Valid)
        {
            for (int i = 0; i < env.Length; i++)
                for (int b = 0; b < 8; b++)
                {
                    byte[] m = (byte[])env.Clone();
                    m[i] ^= (byte)(1 << b);
                    yield return ($"flip {i}.{b}", m, doc);
                }
            for (int n = 0; n < env.Length; n++) yield return ($"truncate {n}", env[..n], doc);
            foreach (byte x in new byte[] { 0, 0xFF, 0x28 })
                for (int k = 1; k <= 3; k++)
                    yield return ($"append {k}x{x:X2}", [.. env, .. Enumerable.Repeat(x, k)], doc);
        }
        // swap payloads between same-length envelopes (same header length)
        for (int a = 0; a < c.Valid.Count; a++)
            for (int b = 0; b < c.Valid.Count; b++)
            {
                if (a == b) continue;
                var (docA, envA) = c.Valid[a];
                var (_, envB) = c.Valid[b];
                if (envA.Length != envB.Length) continue;
                if (!DocumentEnvelope.TryReadHeader(envA, out var ha) || !DocumentEnvelope.TryReadHeader(envB, out var hb) || ha.HeaderLength != hb.HeaderLength) continue;
                byte[] m = (byte[])envA.Clone();
                envB.AsSpan(ha.HeaderLength, ha.PayloadLength).CopyTo(m.AsSpan(ha.HeaderLength));
                // Codec 9 has no trailer: with identical headers its payload is all of envelope B, and decoding B is right.
                if (m.AsSpan().SequenceEqual(envB)) continue;
                yield return ($"swap {a}<-{b}", m, docA);
            }
        // cross-length swap: header of A over the whole tail of B
        for (int a = 0; a < c.Valid.Count; a++)
            for (int b = 0; b < c.Valid.Count; b++)
            {
                if (a == b) continue;
                var (docA, envA) = c.Valid[a];
                var (_, envB) = c.Valid[b];
                DocumentEnvelope.TryReadHeader(envA, out var ha);
                DocumentEnvelope.TryReadHeader(envB, out var hb);
                byte[] spliced = [.. envA.AsSpan(0, ha.HeaderLength), .. envB.AsSpan(hb.HeaderLength)];
                if (spliced.AsSpan().SequenceEqual(envB)) continue; // identical headers: that is just envelope B
                yield return ($"splice {a}hdr+{b}tail", spliced, docA);
            }
    }

    private sealed class Writer : IBufferWriter<byte>
    {
        public byte[] Buffer = new byte[1 << 18];
        public int Count;
        public void Advance(int count) => Count += count;
        public Memory<byte> GetMemory(int sizeHint = 0) => Buffer.AsMemory(Count);
        public Span<byte> GetSpan(int sizeHint = 0) => Buffer.AsSpan(Count);
    }

    [Fact]
    public async Task CorruptEnvelopes_InterleavedWithValid_OneThread_AllCodecs()
    {
        var (engine, ns, dict, written) = await TrainPackedAsync();
        await using var _ = engine;
        var cases = BuildCases(dict);
        var allValid = cases.SelectMany(c => c.Valid.Select(v => (c, v.Doc, v.Env))).ToList();
        var failures = new List<string>();
        int total = 0, thrown = 0, sameBytes = 0;
        int thread = Environment.CurrentManagedThreadId;
        int rot = 0;
        var sameKinds = new SortedDictionary<string, int>();
        var span = new byte[1 << 18];
        var writer = new Writer();
        foreach (var c in cases)
        {
            foreach (var (kind, corrupt, original) in Mutations(c))
            {
                total++;
                int api = total % 3;
                byte[]? result = null;
                Exception? error = null;
                try
                {
                    switch (api)
                    {
                        case 0: result = c.Compressor.Decompress(corrupt, c.Dictionary); break;
                        case 1:
                            span.AsSpan().Clear();
                            if (c.Compressor.TryDecompress(corrupt, span, out int w, c.Dictionary)) result = span[..w];
                            else result = null;
                            break;
                        default:
                            writer.Count = 0; writer.Buffer.AsSpan().Clear();
                            c.Compressor.Decompress(corrupt, writer, c.Dictionary);
                            result = writer.Buffer[..writer.Count];
                            break;
                    }
                }
                catch (Exception ex) { error = ex; }
                if (error is not null)
                {
                    thrown++;
                    if (error is not InvalidDataException and not DictionaryNotFoundException)
                        failures.Add($"{c.Name} {kind}: unexpected {error.GetType().Name}: {error.Message}");
                    if (api == 1 && span.AsSpan(0, 4096).IndexOfAnyExcept((byte)0) >= 0)
                        failures.Add($"{c.Name} {kind}: TryDecompress left bytes in destination after throw");
                    if (api == 2 && (writer.Count != 0 || writer.Buffer.AsSpan(0, 4096).IndexOfAnyExcept((byte)0) >= 0))
                        failures.Add($"{c.Name} {kind}: writer left bytes after throw (count {writer.Count})");
                }
                else if (result is not null)
                {
                    if (result.AsSpan().SequenceEqual(original)) { sameBytes++; string key = c.Name.Split('-')[^1] + " " + kind.Split(' ')[0] + (kind.StartsWith("flip") ? " " + kind.Split(' ')[1].Split('.')[0] : ""); sameKinds[key] = sameKinds.GetValueOrDefault(key) + 1; }
                    else failures.Add($"{c.Name} {kind}: SILENT WRONG BYTES ({result.Length} vs {original.Length})");
                }
                // engine path too, for a subset
                if (total % 7 == 0)
                {
                    try
                    {
                        byte[] r = ns.Decompress(corrupt);
                        if (!r.AsSpan().SequenceEqual(original)) failures.Add($"{c.Name} {kind}: engine SILENT WRONG BYTES");
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException) { }
                    catch (Exception ex) { failures.Add($"{c.Name} {kind}: engine unexpected {ex.GetType().Name}: {ex.Message}"); }
                }
                // valid decode of the same codec right after, then one rotating across codecs, same thread
                Assert.Equal(thread, Environment.CurrentManagedThreadId);
                var (vdoc, venv) = c.Valid[total % c.Valid.Count];
                try
                {
                    if (!c.Compressor.Decompress(venv, c.Dictionary).AsSpan().SequenceEqual(vdoc)) failures.Add($"{c.Name} after {kind}: valid decode wrong bytes");
                    var (rc, rdoc, renv) = allValid[rot++ % allValid.Count];
                    if (!rc.Compressor.Decompress(renv, rc.Dictionary).AsSpan().SequenceEqual(rdoc)) failures.Add($"{c.Name} after {kind}: rotating valid {rc.Name} wrong bytes");
                    if (total % 7 == 0)
                    {
                        var (wd, we) = written[total % written.Count];
                        if (!ns.Decompress(we).AsSpan().SequenceEqual(wd)) failures.Add($"{c.Name} after {kind}: engine valid wrong bytes");
                    }
                }
                catch (Exception ex) { failures.Add($"{c.Name} after {kind}: valid decode threw {ex.GetType().Name}: {ex.Message}"); }
                if (failures.Count > 50) break;
            }
        }
        output.WriteLine($"{cases.Count} cases, {total} mutations, {thrown} threw, {sameBytes} decoded to the original");
        foreach (var f in failures.Take(50)) output.WriteLine(f);
        foreach (var kv in sameKinds) output.WriteLine($"same: {kv.Key} x{kv.Value}");
        Assert.Empty(failures);
    }
}
