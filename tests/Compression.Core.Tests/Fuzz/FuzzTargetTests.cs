using System.Diagnostics;
using Compression.Fuzz;
using Compression.Structure;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Fuzz;

/// <summary>
/// The short fuzzing budget of <c>dotnet test</c>: the AFL++ targets of <c>fuzz/</c> run in process on their seeds, on
/// every input kept in <c>fuzz/regressions/TARGET/</c>, and on seeded random mutations of the seeds (AFL-style havoc:
/// bit flips, interesting values, block deletion, duplication and splicing). The long, coverage-guided run is
/// <c>bash fuzz/run.sh</c>.
/// </summary>
public sealed class FuzzTargetTests(ITestOutputHelper output)
{
    private const int MutantsPerTarget = 20_000;

    private static readonly FuzzTargets Targets = new(ZstdDictionary.Create(
        4242, File.ReadAllBytes(Path.Combine(AppContext.BaseDirectory, "Vectors", "dictionary-4242.bin"))));

    public static TheoryData<string> Names() => [.. FuzzTargets.Names];

    [Theory]
    [MemberData(nameof(Names))]
    public void Target_SeedsAndKeptRegressions_PassAsDocumented(string target)
    {
        var inputs = Targets.Seeds(target).ToList();
        string regressions = Path.Combine(AppContext.BaseDirectory, "FuzzRegressions", target);
        if (Directory.Exists(regressions))
            inputs.AddRange(Directory.EnumerateFiles(regressions).Order(StringComparer.Ordinal).Select(File.ReadAllBytes));

        Assert.NotEmpty(inputs);
        foreach (byte[] input in inputs)
            Targets.Run(target, input);
        output.WriteLine($"{target}: {inputs.Count} seeds and regressions passed");
    }

    [Fact]
    public void EnvelopeSeeds_IncludePackedEnvelopes_SoTheFuzzerReachesTheUnpacker()
    {
        int packed = Targets.Seeds("envelope").Count(e => DocumentEnvelope.TryReadHeader(e, out var h) && h.Codec == CompressionCodec.PackedZstd);
        output.WriteLine($"{packed} packed envelopes among the envelope seeds");
        Assert.True(packed > 0, "no packed envelope among the envelope seeds");
    }

    [Fact]
    public void FieldsSeeds_ReachTheModelParserAndTheJoiner()
    {
        var targets = new FuzzTargets(ZstdDictionary.Create(4242, File.ReadAllBytes(Path.Combine(AppContext.BaseDirectory, "Vectors", "dictionary-4242.bin"))));
        var seeds = targets.Seeds("fields").ToList();
        foreach (byte[] seed in seeds) targets.Run("fields", seed);
        output.WriteLine($"{seeds.Count} fields seeds: {targets.FieldModelsAccepted} models accepted, {targets.FieldPayloadsDecoded} payloads decoded");
        Assert.True(targets.FieldModelsAccepted >= 6, $"{targets.FieldModelsAccepted} models accepted");
        Assert.True(targets.FieldPayloadsDecoded >= 8, $"{targets.FieldPayloadsDecoded} payloads decoded");

        // The fixed model has templates, and the payload seeds' documents are coded with them: splitting with the same
        // model without its templates (their symbols dropped) leaves more in the residual.
        (ZstdDictionary dictionary, IReadOnlyList<byte[]> documents) = targets.FieldFixtureForTests;
        ShapeTransform shapes = dictionary.Shapes!;
        FieldModel model = shapes.Fields!.Model;
        int templates = Enumerable.Range(0, model.FieldCount).Sum(f => model[f].Templates.Length);
        List<FieldModel.FieldDefinition> without = [.. FuzzTargets.FieldDefinitions(model).Select(d => d.Templates.Count == 0 ? d
            : d with { Templates = [], Counts = [.. d.Counts.Take(d.Counts.Count - 1 - d.Templates.Count), d.Counts[^1]] })];
        var withoutTemplates = new FieldCoder(shapes.Table, FieldModel.Create(shapes.Table, without));
        var symbols = new RansEncoder();
        int templated = 0;
        foreach (byte[] document in documents)
        {
            byte[] packed = new byte[document.Length];
            Assert.True(shapes.TryEncode(document, packed, out int length));
            byte[] residual = new byte[length];
            symbols.Reset();
            Assert.True(shapes.Fields.TrySplit(packed.AsSpan(0, length), residual, out int with, symbols));
            symbols.Reset();
            Assert.True(withoutTemplates.TrySplit(packed.AsSpan(0, length), residual, out int withoutLength, symbols));
            if (withoutLength > with) templated++;
        }
        output.WriteLine($"the fixed model: {model.FieldCount} fields, {templates} templates; {templated} of the {documents.Count} seed documents coded with templates");
        Assert.True(templates >= 2, $"{templates} templates");
        Assert.Equal(documents.Count, templated);

        // And it is of version 3 (sources and parts): the title's template copies the place, the indexing time's range
        // counts from the time, the detail URL and the code copy parts of the event URL; so the fuzzer mutates a version-3
        // model and payloads coded with copy slots, parts and relative ranges.
        Assert.Equal(FieldModel.PartsFormatVersion, model.Serialize()[4]);
        Assert.Contains(Enumerable.Range(0, model.FieldCount), f => model[f].CopyDelimiter == '/' && model[f].CopySkip == 2);
        Assert.Contains(Enumerable.Range(0, model.FieldCount), f => model[f].CopyDelimiter == '/' && model[f].CopySkip == 0);
        Assert.Contains(Enumerable.Range(0, model.FieldCount), f => model[f].Templates.Any(t => t.CopySlot >= 0));
        Assert.Contains(Enumerable.Range(0, model.FieldCount), f => model[f].RangeRelative);
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Target_TwentyThousandSeededMutations_PassAsDocumented(string target)
    {
        var seeds = Targets.Seeds(target).Where(s => s.Length > 0).ToList();
        var random = new Random(target.Length * 7919 + 17);
        var stopwatch = Stopwatch.StartNew();
        long bytes = 0;
        for (int n = 0; n < MutantsPerTarget; n++)
        {
            byte[] input = Havoc(seeds[random.Next(seeds.Count)], seeds[random.Next(seeds.Count)], random);
            bytes += input.Length;
            try
            {
                Targets.Run(target, input);
            }
            catch (Exception ex)
            {
                Assert.Fail($"{target}: mutant {n} ({Convert.ToHexString(input.AsSpan(0, Math.Min(64, input.Length)))}...) failed: {ex}");
            }
        }
        output.WriteLine($"{target}: {MutantsPerTarget:N0} mutants ({bytes:N0} bytes) in {stopwatch.Elapsed.TotalSeconds:F1} s, all handled as documented");
        if (target == "fields") output.WriteLine($"fields (this run and the others of the shared targets): {Targets.FieldModelsAccepted:N0} models accepted, {Targets.FieldPayloadsDecoded:N0} payloads decoded");
    }

    private static readonly int[] Interesting = [0, 1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0xFFFF, int.MaxValue];

    /// <summary>One to eight stacked mutations, as AFL's havoc stage does.</summary>
    private static byte[] Havoc(byte[] seed, byte[] other, Random random)
    {
        var bytes = new List<byte>(seed);
        int steps = 1 << random.Next(4);
        for (int i = 0; i < steps; i++)
        {
            int at = bytes.Count == 0 ? 0 : random.Next(bytes.Count);
            switch (random.Next(8))
            {
                case 0 when bytes.Count > 0: bytes[at] ^= (byte)(1 << random.Next(8)); break;
                case 1 when bytes.Count > 0: bytes[at] = (byte)random.Next(256); break;
                case 2 when bytes.Count > 0:
                    int value = Interesting[random.Next(Interesting.Length)];
                    for (int b = 0; b < 4 && at + b < bytes.Count; b++) bytes[at + b] = (byte)(value >> (8 * b));
                    break;
                case 3 when bytes.Count > 0: bytes.RemoveRange(at, random.Next(1, Math.Min(32, bytes.Count - at) + 1)); break;
                case 4: bytes.InsertRange(at, Enumerable.Range(0, random.Next(1, 16)).Select(_ => (byte)random.Next(256))); break;
                case 5 when bytes.Count > 0:
                    int length = random.Next(1, Math.Min(64, bytes.Count - at) + 1);
                    bytes.InsertRange(random.Next(bytes.Count + 1), bytes.GetRange(at, length));
                    break;
                case 6 when other.Length > 0:
                    int from = random.Next(other.Length);
                    bytes.RemoveRange(at, bytes.Count - at);
                    bytes.AddRange(other.AsSpan(from).ToArray());
                    break;
                case 7 when bytes.Count > 1: bytes.RemoveRange(at, bytes.Count - at); break;
                default: bytes.Add((byte)random.Next(256)); break;
            }
        }
        return [.. bytes];
    }
}
