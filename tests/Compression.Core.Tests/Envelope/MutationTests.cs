using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Envelope;

/// <summary>
/// At least 10,000 random mutations of valid envelopes per codec (seeded). With checksums on (written and required)
/// every changed envelope is rejected or decodes to the original bytes, never to other bytes; without them, decoding
/// returns bytes or throws only the documented exceptions, and the count of wrong results is reported.
/// </summary>
public sealed class MutationTests(ITestOutputHelper output)
{
    private const int MutantsPerCodec = 10_000;

    public static TheoryData<CompressionCodec, bool, bool> Cases()
    {
        var data = new TheoryData<CompressionCodec, bool, bool>();
        foreach (var codec in Corpus.AllCodecs)
        {
            data.Add(codec, true, true);
            data.Add(codec, true, false);
            data.Add(codec, false, false);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void Decompress_RandomMutations_AreRejectedOrExact(CompressionCodec codec, bool checksum, bool requireChecksum)
    {
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = codec, Checksum = checksum, MinimumSize = 0, RequireChecksum = requireChecksum });
        var dictionary = Corpus.Dictionary;
        var originals = Corpus.Mixed(40, 50, 2000, seed: (int)codec).ToList();
        var envelopes = originals.Select((d, i) => compressor.Compress(d, codec == CompressionCodec.Zstd && i % 2 == 0 ? dictionary : null)).ToList();
        var random = new Random(1000 + (int)codec * 2 + (checksum ? 1 : 0));
        int rejected = 0, exact = 0, wrong = 0, unchanged = 0;

        for (int n = 0; n < MutantsPerCodec; n++)
        {
            int pick = random.Next(envelopes.Count);
            byte[] mutant = Mutate(envelopes[pick], random);
            if (mutant.AsSpan().SequenceEqual(envelopes[pick]))
            {
                unchanged++;
                n--; // only changed envelopes count
                continue;
            }
            byte[] result;
            try
            {
                result = compressor.Decompress(mutant, dictionary);
            }
            catch (InvalidDataException)
            {
                rejected++;
                continue;
            }
            catch (DictionaryNotFoundException)
            {
                rejected++;
                continue;
            }
            if (result.AsSpan().SequenceEqual(originals[pick])) exact++;
            else wrong++;
        }

        output.WriteLine($"{codec} checksum={checksum} require={requireChecksum}: {MutantsPerCodec} mutants, {rejected} rejected, {exact} decoded to the original, {wrong} decoded to other bytes");
        Assert.Equal(MutantsPerCodec, rejected + exact + wrong);
        if (requireChecksum) Assert.Equal(0, wrong);
        // Without RequireChecksum a mutation can clear the checksum flag; every codec but raw deflate (which ignores
        // bytes after its final block and has no integrity check of its own) still rejects what follows.
        if (checksum && codec != CompressionCodec.Deflate) Assert.Equal(0, wrong);
    }

    private static byte[] Mutate(byte[] envelope, Random random)
    {
        var bytes = new List<byte>(envelope);
        switch (random.Next(6))
        {
            case 0: // flip 1-3 bits
                for (int i = random.Next(1, 4); i > 0; i--)
                {
                    int at = random.Next(bytes.Count);
                    bytes[at] ^= (byte)(1 << random.Next(8));
                }
                break;
            case 1: // overwrite a byte
                bytes[random.Next(bytes.Count)] = (byte)random.Next(256);
                break;
            case 2: // truncate to a shorter, non-empty prefix
                int keep = random.Next(1, bytes.Count);
                bytes.RemoveRange(keep, bytes.Count - keep);
                break;
            case 3: // insert a byte
                bytes.Insert(random.Next(bytes.Count + 1), (byte)random.Next(256));
                break;
            case 4: // delete a byte
                if (bytes.Count > 1) bytes.RemoveAt(random.Next(bytes.Count));
                break;
            default: // duplicate a tail
                int from = random.Next(bytes.Count);
                bytes.AddRange(bytes.GetRange(from, Math.Min(bytes.Count - from, random.Next(1, 32))));
                break;
        }
        return [.. bytes];
    }
}
