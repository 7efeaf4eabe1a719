using System.Diagnostics;
using System.IO.Hashing;
using Compression.Structure;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// 10,000 seeded mutations (flipped bits, overwritten, inserted or deleted bytes, truncations, duplicated tails) of
/// packed streams and of structured frames, JSON and BSON. A decode either throws <see cref="InvalidDataException"/> or
/// returns bytes, never anything else and never more than the destination; the share of mutants that decode to other
/// bytes of the right length is reported (the packed layer carries no checksum of its own: the envelope's catches them,
/// and with it no mutant ever gives wrong bytes).
/// </summary>
public sealed class StructureMutationTests(ITestOutputHelper output)
{
    private const int Mutants = 10_000;

    public static TheoryData<string, bool> Cases() => new()
    {
        { "json", false }, { "json", true }, { "bson", false }, { "bson", true },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void Decode_TenThousandMutants_OnlyInvalidDataException_AndNoWrongBytesBehindAChecksum(string kind, bool frames)
    {
        List<byte[]> training = kind == "json" ? StructureModelTests.JsonTraining : StructureModelTests.BsonTraining;
        List<byte[]> documents = (kind == "json" ? StructureModelTests.JsonHeldOut : StructureModelTests.BsonHeldOut).Take(60).ToList();
        StructureModel model = StructureModelTests.Train(training);
        var encoded = new List<byte[]>();
        foreach (byte[] document in documents)
        {
            byte[] buffer = new byte[document.Length + 1024];
            int written;
            Assert.True(frames ? model.TryCompress(document, buffer, 3, out written) : model.Transform.TryEncode(document, buffer, out written));
            encoded.Add(buffer[..written]);
        }

        var random = new Random(kind.Length * 100 + (frames ? 1 : 0));
        int rejected = 0, same = 0, wrong = 0, wrongBehindChecksum = 0;
        var stopwatch = Stopwatch.StartNew();
        for (int n = 0; n < Mutants;)
        {
            int pick = random.Next(encoded.Count);
            byte[] mutant = Mutate(encoded[pick], random);
            if (mutant.AsSpan().SequenceEqual(encoded[pick])) continue;
            n++;
            byte[] document = documents[pick];
            byte[] back = new byte[document.Length];
            try
            {
                if (frames)
                {
                    model.Decompress(mutant, back);
                }
                else
                {
                    int length = model.Transform.Decode(mutant, back);
                    if (length != document.Length) { wrong++; continue; } // caught by the length check of the caller
                }
            }
            catch (InvalidDataException)
            {
                rejected++;
                continue;
            }
            catch (Exception ex)
            {
                Assert.Fail($"mutant {n} of {kind} ({(frames ? "frame" : "packed")}) threw {ex}");
            }
            if (back.AsSpan().SequenceEqual(document))
            {
                same++;
            }
            else
            {
                wrong++;
                // What an envelope does: the XxHash32 of the decoded document against the writer's.
                if (XxHash32.HashToUInt32(back) == XxHash32.HashToUInt32(document)) wrongBehindChecksum++;
            }
        }
        output.WriteLine($"{kind} {(frames ? "structured frames" : "packed streams")}: {Mutants:N0} mutants in {stopwatch.Elapsed.TotalSeconds:F1} s: " +
            $"{rejected:N0} rejected ({100.0 * rejected / Mutants:F1}%), {same:N0} decode to the original, {wrong:N0} to other bytes " +
            $"({100.0 * wrong / Mutants:F1}%), {wrongBehindChecksum} of those pass a checksum");
        Assert.Equal(0, wrongBehindChecksum);
        Assert.True(rejected > Mutants / 4, $"only {rejected} rejected");
    }

    internal static byte[] Mutate(byte[] bytes, Random random)
    {
        var list = new List<byte>(bytes);
        switch (random.Next(6))
        {
            case 0:
                for (int i = random.Next(1, 4); i > 0; i--)
                {
                    int bit = random.Next(list.Count * 8);
                    list[bit / 8] ^= (byte)(1 << (bit % 8));
                }
                break;
            case 1: list[random.Next(list.Count)] = (byte)random.Next(256); break;
            case 2: list.Insert(random.Next(list.Count + 1), (byte)random.Next(256)); break;
            case 3: list.RemoveAt(random.Next(list.Count)); break;
            case 4:
                int cut = random.Next(list.Count);
                list.RemoveRange(cut, list.Count - cut);
                break;
            default:
                int from = random.Next(list.Count);
                list.AddRange(list.GetRange(from, list.Count - from));
                break;
        }
        return [.. list];
    }
}
