using System.Diagnostics;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// 10,000 seeded random mutations per codec (and zstd with a dictionary) of a pool of valid envelopes. A decode either
/// throws <see cref="InvalidDataException"/> / <see cref="DictionaryNotFoundException"/> or returns bytes; with checksums
/// the bytes are always the original and a mutation of the header or checksum never goes unnoticed; without checksums
/// no other exception escapes, and the number of mutants that decode to other bytes is reported.
/// </summary>
public sealed class EnvelopeMutationTests(ITestOutputHelper output)
{
    private const int MutantsPerCase = 10_000;

    public static TheoryData<string, bool, bool> Cases()
    {
        var data = new TheoryData<string, bool, bool>();
        foreach (string name in Corpus.AllCodecs.Select(c => c.ToString()).Append("ZstdDictionary"))
        {
            data.Add(name, true, false);
            data.Add(name, true, true);
            data.Add(name, false, false);
        }
        return data;
    }

    private enum Kind { FlipBits, OverwriteByte, Truncate, InsertByte, DeleteByte, DuplicateTail }

    private readonly record struct Mutant(byte[] Bytes, Kind Kind, bool TouchesHeaderOrChecksum);

    [Theory]
    [MemberData(nameof(Cases))]
    public void Decompress_TenThousandRandomMutations_ThrowDocumentedExceptionsAndNeverWrongBytesWithChecksum(string name, bool checksum, bool requireChecksum)
    {
        bool withDictionary = name == "ZstdDictionary";
        var codec = withDictionary ? CompressionCodec.Zstd : Enum.Parse<CompressionCodec>(name);
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum, RequireChecksum = requireChecksum, MinimumSize = 0 });
        var dictionary = Corpus.Dictionary;
        int seed = 1000 + (int)codec * 10 + (withDictionary ? 5 : 0);
        var random = new Random(seed);
        var originals = Corpus.Mixed(30, 50, 2000, seed).Concat(Enumerable.Range(0, 30).Select(_ => Corpus.JsonRecord(random))).ToList();
        var envelopes = originals.Select(d => compressor.Compress(d, withDictionary ? dictionary : null)).ToList();
        var headers = envelopes.Select(e => DocumentEnvelope.TryReadHeader(e, out var h) ? h : throw new InvalidOperationException()).ToList();
        if (codec != CompressionCodec.Stored) Assert.Contains(headers, h => h.Codec == codec);
        if (withDictionary) Assert.Contains(headers, h => h.DictionaryId == Corpus.DictionaryId);

        int rejected = 0, missingDictionary = 0, exact = 0, exactHeaderOrChecksum = 0, wrong = 0;
        var byKind = new int[6];
        var wrongByKind = new int[6];
        var failures = new List<string>();
        var stopwatch = Stopwatch.StartNew();
        for (int n = 0; n < MutantsPerCase;)
        {
            int pick = random.Next(envelopes.Count);
            Mutant mutant = Mutate(envelopes[pick], headers[pick], random);
            if (mutant.Bytes.AsSpan().SequenceEqual(envelopes[pick])) continue; // only changed envelopes count
            n++;
            byKind[(int)mutant.Kind]++;
            byte[] result;
            try
            {
                result = compressor.Decompress(mutant.Bytes, dictionary);
            }
            catch (InvalidDataException)
            {
                rejected++;
                continue;
            }
            catch (DictionaryNotFoundException)
            {
                missingDictionary++;
                continue;
            }
            catch (Exception ex)
            {
                failures.Add($"{mutant.Kind} {Convert.ToHexString(mutant.Bytes)}: {ex.GetType()}: {ex.Message}");
                continue;
            }

            if (result.AsSpan().SequenceEqual(originals[pick]))
            {
                exact++;
                if (mutant.TouchesHeaderOrChecksum) exactHeaderOrChecksum++;
            }
            else
            {
                wrong++;
                wrongByKind[(int)mutant.Kind]++;
                if (checksum && failures.Count < 5) failures.Add($"wrong bytes from {mutant.Kind}: {Convert.ToHexString(mutant.Bytes)}");
            }
        }

        output.WriteLine($"{name} checksum={checksum} requireChecksum={requireChecksum}: {MutantsPerCase} changed mutants in {stopwatch.ElapsedMilliseconds} ms; " +
            $"{rejected} InvalidDataException, {missingDictionary} DictionaryNotFoundException, {exact} decoded to the original " +
            $"({exactHeaderOrChecksum} of them with a changed header or checksum), {wrong} decoded to other bytes");
        output.WriteLine("  mutants by kind: " + string.Join(", ", Enum.GetValues<Kind>().Select(k => $"{k} {byKind[(int)k]} (wrong {wrongByKind[(int)k]})")));
        foreach (string failure in failures.Take(5)) output.WriteLine("  " + failure);

        Assert.True(failures.Count == 0 || !failures.Any(f => !f.StartsWith("wrong", StringComparison.Ordinal)),
            "undocumented exceptions escaped: " + string.Join(Environment.NewLine, failures.Where(f => !f.StartsWith("wrong", StringComparison.Ordinal)).Take(5)));
        Assert.Equal(MutantsPerCase, rejected + missingDictionary + exact + wrong);
        if (checksum)
        {
            Assert.True(wrong == 0, $"{name}: {wrong} of {MutantsPerCase} mutants of checksummed envelopes decoded to wrong bytes: {string.Join(" | ", failures)}");
            // Deflate and gzip streams stop at their end: a mutant that only appends or rearranges bytes after it can decode
            // to the original document (harmless, never wrong bytes; docs/format.md). Every other codec rejects it.
            if (!name.StartsWith("Deflate", StringComparison.Ordinal) && !name.StartsWith("Gzip", StringComparison.Ordinal))
                Assert.True(exactHeaderOrChecksum == 0, $"{name}: {exactHeaderOrChecksum} mutants with a changed header or checksum decoded without error");
        }
    }

    /// <summary>One random mutation, and whether it touched the header or the checksum (bytes that always matter).</summary>
    private static Mutant Mutate(byte[] envelope, EnvelopeHeader header, Random random)
    {
        int checksumStart = header.HasChecksum ? envelope.Length - 4 : envelope.Length;
        bool Matters(int at) => at < header.HeaderLength || at >= checksumStart;
        var bytes = new List<byte>(envelope);
        var kind = (Kind)random.Next(6);
        bool touches = false;
        switch (kind)
        {
            case Kind.FlipBits:
                for (int i = random.Next(1, 4); i > 0; i--)
                {
                    int at = random.Next(bytes.Count);
                    bytes[at] ^= (byte)(1 << random.Next(8));
                    touches |= Matters(at);
                }
                break;
            case Kind.OverwriteByte:
            {
                int at = random.Next(bytes.Count);
                bytes[at] = (byte)random.Next(256);
                touches = Matters(at);
                break;
            }
            case Kind.Truncate: // to a shorter prefix, possibly empty
            {
                int keep = random.Next(0, bytes.Count);
                bytes.RemoveRange(keep, bytes.Count - keep);
                touches = true; // the envelope loses its end: the checksum, or the end of the payload
                break;
            }
            case Kind.InsertByte:
            {
                int at = random.Next(bytes.Count + 1);
                bytes.Insert(at, (byte)random.Next(256));
                touches = Matters(Math.Min(at, envelope.Length - 1)) || at == envelope.Length;
                break;
            }
            case Kind.DeleteByte:
            {
                int at = random.Next(bytes.Count);
                bytes.RemoveAt(at);
                touches = Matters(at);
                break;
            }
            default: // duplicate a tail of 1-32 bytes
            {
                int from = random.Next(bytes.Count);
                bytes.AddRange(bytes.GetRange(from, Math.Min(bytes.Count - from, random.Next(1, 33))));
                touches = true; // bytes after the end: after the checksum, or after the payload
                break;
            }
        }
        return new Mutant([.. bytes], kind, touches);
    }
}
