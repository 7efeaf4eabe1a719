using System.Diagnostics;
using System.IO.Hashing;
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

    public static TheoryData<string, bool, bool, EnvelopeFormat> Cases()
    {
        var data = new TheoryData<string, bool, bool, EnvelopeFormat>();
        foreach (var format in Enum.GetValues<EnvelopeFormat>())
        {
            foreach (string name in Corpus.AllCodecs.Select(c => c.ToString()).Append("ZstdDictionary"))
            {
                data.Add(name, true, false, format);
                data.Add(name, true, true, format);
                data.Add(name, false, false, format);
            }
        }
        return data;
    }

    private enum Kind { FlipBits, OverwriteByte, Truncate, InsertByte, DeleteByte, DuplicateTail }

    private readonly record struct Mutant(byte[] Bytes, Kind Kind, bool TouchesHeaderOrChecksum);

    [Theory]
    [MemberData(nameof(Cases))]
    public void Decompress_TenThousandRandomMutations_ThrowDocumentedExceptionsAndNeverWrongBytesWithChecksum(string name, bool checksum, bool requireChecksum, EnvelopeFormat format)
    {
        bool withDictionary = name == "ZstdDictionary";
        var codec = withDictionary ? CompressionCodec.Zstd : Enum.Parse<CompressionCodec>(name);
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum, RequireChecksum = requireChecksum, MinimumSize = 0, Format = format });
        var dictionary = Corpus.Dictionary;
        int seed = 1000 + (int)codec * 10 + (withDictionary ? 5 : 0);
        var random = new Random(seed);
        var originals = Corpus.Mixed(30, 50, 2000, seed).Concat(Enumerable.Range(0, 30).Select(_ => Corpus.JsonRecord(random))).ToList();
        var envelopes = originals.Select(d => compressor.Compress(d, withDictionary ? dictionary : null)).ToList();
        var headers = envelopes.Select(e => DocumentEnvelope.TryReadHeader(e, out var h) ? h : throw new InvalidOperationException()).ToList();
        if (codec != CompressionCodec.Stored) Assert.Contains(headers, h => h.Codec == codec);
        if (withDictionary) Assert.Contains(headers, h => h.DictionaryId == Corpus.DictionaryId);
        Assert.All(headers, h => Assert.Equal(format, h.Format));

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

        output.WriteLine($"{name} {format} checksum={checksum} requireChecksum={requireChecksum}: {MutantsPerCase} changed mutants in {stopwatch.ElapsedMilliseconds} ms; " +
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

    /// <summary>
    /// The detection rate format v2 keeps with a 2-byte checksum instead of v1's 4 bytes, measured: 100,000 random mutants
    /// of v2 zstd envelopes (raw blocks, with the trained dictionary, as the engine writes them) are decoded without any
    /// checksum, so the only defence is the zstd block's own structure (entropy tables, bit streams, the exact decoded
    /// length). For every mutant that still decodes to wrong bytes, the test asks whether the low 16 bits of the XxHash32
    /// (v2's checksum) would have let it through, and the low 8 bits, to show the measurement sees collisions where
    /// they are expected (about 1 in 256). The rate kept: 1 - (structural misses / mutants) x 2^-16.
    /// </summary>
    [Theory]
    [InlineData(EnvelopeFormat.V2)]
    [InlineData(EnvelopeFormat.V3)]
    public void ShortChecksum_MutantsTheZstdBlockStructureMisses_AreCaughtByItsLow16Bits(EnvelopeFormat format)
    {
        const int Mutants = 100_000;
        var plain = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Checksum = false, MinimumSize = 0, Format = format });
        var dictionary = Corpus.Dictionary;
        var random = new Random(4242);
        // The hash the format's 2-byte checksum is the low 16 bits of.
        Func<byte[], ulong> hash = format == EnvelopeFormat.V2 ? d => XxHash32.HashToUInt32(d) : d => XxHash3.HashToUInt64(d);
        var originals = Corpus.Mixed(30, 50, 2000, 4242).Concat(Enumerable.Range(0, 60).Select(_ => Corpus.JsonRecord(random))).ToList();
        var envelopes = originals.Select(d => plain.Compress(d, dictionary)).ToList();
        var headers = envelopes.Select(e => DocumentEnvelope.TryReadHeader(e, out var h) ? h : throw new InvalidOperationException()).ToList();
        Assert.Contains(headers, h => h.Codec == CompressionCodec.Zstd && h.DictionaryId == Corpus.DictionaryId);

        int rejected = 0, harmless = 0, wrong = 0, pass16 = 0, pass8 = 0;
        for (int n = 0; n < Mutants;)
        {
            int pick = random.Next(envelopes.Count);
            Mutant mutant = Mutate(envelopes[pick], headers[pick], random);
            if (mutant.Bytes.AsSpan().SequenceEqual(envelopes[pick])) continue;
            n++;
            byte[] result;
            try
            {
                result = plain.Decompress(mutant.Bytes, dictionary);
            }
            catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
            {
                rejected++;
                continue;
            }
            if (result.AsSpan().SequenceEqual(originals[pick]))
            {
                harmless++;
                continue;
            }
            wrong++;
            ulong mutated = hash(result), original = hash(originals[pick]);
            if ((ushort)mutated == (ushort)original) pass16++;
            if ((byte)mutated == (byte)original) pass8++;
        }

        double missRate = (double)wrong / Mutants;
        output.WriteLine($"{format} zstd with dictionary, no checksum: {Mutants} mutants, {rejected} rejected by the block's structure, {harmless} decoded to the original, {wrong} decoded to wrong bytes ({missRate:P2})");
        output.WriteLine($"  of those {wrong}: {pass16} have the original's low 16 bits ({format}'s checksum; expected {wrong / 65536.0:F2}), {pass8} its low 8 bits (expected {wrong / 256.0:F1})");
        output.WriteLine($"  detection rate with {format}'s checksum: 1 - {missRate:F4} x 2^-16 = {1 - missRate / 65536:P6} (v1's 4 bytes: 1 - {missRate:F4} x 2^-32)");

        Assert.Equal(Mutants, rejected + harmless + wrong);
        Assert.True(wrong >= 1000, $"the structure alone let only {wrong} mutants through: too few to measure the checksum against");
        Assert.True(pass8 > 0 && pass8 < wrong / 64, $"8-bit collisions {pass8} of {wrong}: far from the expected 1 in 256, so the measurement is off");
        Assert.True(pass16 <= 1 + wrong / 16384, $"{pass16} of {wrong} wrong outputs pass a 16-bit check (expected {wrong / 65536.0:F2})");
    }

    /// <summary>One random mutation, and whether it touched the header or the checksum (bytes that always matter).</summary>
    private static Mutant Mutate(byte[] envelope, EnvelopeHeader header, Random random)
    {
        int checksumStart = envelope.Length - header.ChecksumLength;
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
