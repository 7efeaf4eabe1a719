using Compression.Structure;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// The static rANS coder of codec 8 (<see cref="RansEncoder"/>, <see cref="RansDecoder"/>; docs/format.md, "Codec 8"):
/// random symbol sequences under random models (12-bit frequency tables as the field model uses, any scale of 1-16
/// bits, raw bit fields of 0-64 bits) come back exactly; the empty stream codes nothing; and a stream that was cut,
/// extended or had a bit flipped is caught by the decoder or by <see cref="RansDecoder.End"/>, or decodes to other
/// symbols (never to the same ones: decoding is the exact inverse of encoding). What is left undetected here is the
/// envelope checksum's to catch (FieldModelTests' mutation tests).
/// </summary>
public sealed class RansTests(ITestOutputHelper output)
{
    /// <summary>One step of a sequence: a symbol of a frequency table (its cumulative starts), or a raw bit field.</summary>
    private abstract record Step;

    private sealed record TableStep(int[] Cumulative, int ScaleBits, int Symbol) : Step;

    private sealed record BitsStep(int Bits, ulong Value) : Step;

    /// <summary>Frequencies of <paramref name="symbols"/> symbols, each at least 1, adding up to 2^<paramref name="scaleBits"/>; some skewed hard.</summary>
    private static int[] RandomCumulative(Random random, int symbols, int scaleBits)
    {
        int total = 1 << scaleBits;
        symbols = Math.Min(symbols, total);
        double[] weights = [.. Enumerable.Range(0, symbols).Select(_ => Math.Pow(random.NextDouble(), random.Next(1, 8)))];
        double sum = weights.Sum();
        int[] frequencies = [.. weights.Select(w => 1 + (int)(w / sum * (total - symbols)))];
        int left = total - frequencies.Sum();
        frequencies[random.Next(symbols)] += left; // rounding down left at most symbols - 1 unassigned
        int[] cumulative = new int[symbols + 1];
        for (int s = 0; s < symbols; s++) cumulative[s + 1] = cumulative[s] + frequencies[s];
        Assert.Equal(total, cumulative[^1]);
        Assert.All(frequencies, f => Assert.True(f >= 1));
        return cumulative;
    }

    /// <summary>A symbol drawn by its frequency (what a field's values look like), or uniformly.</summary>
    private static int Draw(Random random, int[] cumulative, bool byFrequency)
    {
        if (!byFrequency) return random.Next(cumulative.Length - 1);
        int slot = random.Next(cumulative[^1]);
        int s = 0;
        while (cumulative[s + 1] <= slot) s++;
        return s;
    }

    /// <summary>
    /// <paramref name="length"/> steps under 1-5 random models (scale 12, or any of 1-16), a quarter of them raw bit
    /// fields when <paramref name="withBits"/>. At scale 16 a model has at least two symbols: <see cref="RansSymbol"/>
    /// holds a frequency in 16 bits, so one symbol of frequency 2^16 (certain, coding nothing) cannot be added. The field
    /// model's scale is 12 and raw bits have frequency 1, so the codec never asks for one.
    /// </summary>
    private static List<Step> RandomSequence(Random random, int length, bool fieldScaleOnly, bool withBits = true)
    {
        var models = new List<(int[] Cumulative, int ScaleBits)>();
        for (int m = random.Next(1, 6); m > 0; m--)
        {
            int scale = fieldScaleOnly ? FieldModel.ScaleBits : random.Next(1, Rans.MaxScaleBits + 1);
            int symbols = random.Next(4) switch { 0 => 1, 1 => 2, 2 => random.Next(3, 40), _ => random.Next(40, 1100) };
            if (scale == Rans.MaxScaleBits) symbols = Math.Max(2, symbols);
            models.Add((RandomCumulative(random, symbols, scale), scale));
        }
        bool byFrequency = random.Next(2) == 0;
        var steps = new List<Step>(length);
        for (int i = 0; i < length; i++)
        {
            if (withBits && random.Next(4) == 0)
            {
                int bits = random.Next(65);
                ulong value = bits == 0 ? 0 : (ulong)random.NextInt64() << 1 ^ (ulong)random.Next(2);
                if (bits < 64) value &= (1UL << bits) - 1;
                steps.Add(new BitsStep(bits, value));
            }
            else
            {
                (int[] cumulative, int scale) = models[random.Next(models.Count)];
                steps.Add(new TableStep(cumulative, scale, Draw(random, cumulative, byFrequency)));
            }
        }
        return steps;
    }

    private static byte[] Encode(List<Step> steps, ushort? folded = null)
    {
        var encoder = new RansEncoder();
        encoder.Reset();
        foreach (Step step in steps)
        {
            switch (step)
            {
                case TableStep t:
                    encoder.Add(t.Cumulative[t.Symbol], t.Cumulative[t.Symbol + 1] - t.Cumulative[t.Symbol], t.ScaleBits);
                    break;
                case BitsStep b:
                    encoder.AddBits(b.Value, b.Bits);
                    break;
            }
        }
        return (folded is ushort value ? encoder.EncodeFolded(value) : encoder.Encode()).ToArray();
    }

    /// <summary>Decodes <paramref name="stream"/> with the models of <paramref name="steps"/> (as the joiner does: it knows which model comes next) and checks the end.</summary>
    private static List<ulong> Decode(byte[] stream, List<Step> steps) => Decode(stream, steps, folds: false, out _);

    private static List<ulong> Decode(byte[] stream, List<Step> steps, bool folds, out ushort folded)
    {
        var decoder = new RansDecoder(stream, folds);
        var symbols = new List<ulong>(steps.Count);
        foreach (Step step in steps)
        {
            switch (step)
            {
                case TableStep t:
                    int slot = decoder.Peek(t.ScaleBits);
                    int s = 0;
                    while (t.Cumulative[s + 1] <= slot) s++;
                    decoder.Advance(t.Cumulative[s], t.Cumulative[s + 1] - t.Cumulative[s], t.ScaleBits);
                    symbols.Add((ulong)s);
                    break;
                case BitsStep b:
                    symbols.Add(decoder.Bits(b.Bits));
                    break;
            }
        }
        folded = 0;
        if (folds) folded = decoder.EndFolded();
        else decoder.End();
        return symbols;
    }

    private static List<ulong> Expected(List<Step> steps) =>
        [.. steps.Select(step => step is TableStep t ? (ulong)t.Symbol : ((BitsStep)step).Value)];

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void RandomSequencesUnderRandomModels_RoundTrip(bool fieldScaleOnly)
    {
        var random = new Random(fieldScaleOnly ? 8101 : 8102);
        long symbols = 0, bytes = 0;
        for (int sequence = 0; sequence < 2_000; sequence++)
        {
            int length = random.Next(5) switch { 0 => random.Next(1, 4), 1 => random.Next(4, 40), _ => random.Next(40, 600) };
            List<Step> steps = RandomSequence(random, length, fieldScaleOnly);
            byte[] stream = Encode(steps);
            bool codes = steps.Any(step => step is TableStep or BitsStep { Bits: > 0 });
            Assert.True(codes ? stream.Length >= Rans.StateLength : stream.Length == 0, $"sequence {sequence}: a {stream.Length}-byte stream for {steps.Count} symbols");
            Assert.Equal(Expected(steps), Decode(stream, steps));
            symbols += steps.Count;
            bytes += stream.Length;
        }
        output.WriteLine($"2,000 sequences, {symbols:N0} symbols, {bytes:N0} stream bytes: all round-trip");
    }

    /// <summary>
    /// Codec 9 folds the document's 16-bit checksum into the encoder's initial state (<see cref="RansEncoder.EncodeFolded"/>):
    /// the symbols and the value come back, and the value costs the stream about a bit (the initial state is under
    /// 2^17 instead of exactly 2^16), not the 2 bytes it takes beside it.
    /// </summary>
    [Fact]
    public void FoldedValue_RoundTripsWithTheSymbols_AtAboutABitOfCost()
    {
        var random = new Random(8104);
        long plainBytes = 0, foldedBytes = 0;
        const int Sequences = 2_000;
        for (int sequence = 0; sequence < Sequences; sequence++)
        {
            int length = random.Next(4) switch { 0 => 0, 1 => random.Next(1, 4), _ => random.Next(4, 60) };
            List<Step> steps = RandomSequence(random, length, fieldScaleOnly: true);
            ushort value = (ushort)random.Next(sequence % 3 == 0 ? 2 : 65_536);
            byte[] stream = Encode(steps, value);
            bool codes = steps.Any(step => step is TableStep or BitsStep { Bits: > 0 });
            Assert.True(codes ? stream.Length >= Rans.StateLength : stream.Length == Rans.FoldedAloneLength,
                $"sequence {sequence}: a folded stream holds the state, or the value alone when it codes nothing");
            Assert.Equal(Expected(steps), Decode(stream, steps, folds: true, out ushort back));
            Assert.Equal(value, back);
            byte[] plain = Encode(steps);
            if (plain.Length > 0)
            {
                plainBytes += plain.Length;
                foldedBytes += stream.Length;
            }
        }
        double cost = (double)(foldedBytes - plainBytes) / Sequences;
        output.WriteLine($"{Sequences:N0} sequences: a folded 16-bit value cost {cost:F3} bytes a stream on average (beside it: 2)");
        Assert.InRange(cost, 0, 0.5);
    }

    [Fact]
    public void FoldedStream_TooShortOrEndingOutsideTheFoldedStates_Refused()
    {
        foreach (byte[] tooShort in (byte[][])[[], [0x12]])
        {
            var ex = Assert.Throws<InvalidDataException>(() => new RansDecoder(tooShort, folded: true));
            Assert.Contains("holds at least the checksum", ex.Message);
        }
        // Two bytes: the value alone, no symbol; reading one fails.
        Assert.Equal(0x1234, new RansDecoder([0x34, 0x12], folded: true).EndFolded());
        var symbol = Assert.Throws<InvalidDataException>(() => new RansDecoder([0x34, 0x12], folded: true).Peek(12));
        Assert.Contains("the stream is empty", symbol.Message);
        // No symbol: the stream is the state alone, Low + value; one at or past 2 Low is no encoder's initial state.
        var decoder = new RansDecoder([0x34, 0x12, 0x01], folded: true);
        Assert.Equal(0x1234, decoder.EndFolded());
        var past = Assert.Throws<InvalidDataException>(() => new RansDecoder([0x00, 0x00, 0x02], folded: true).EndFolded());
        Assert.Contains("not one an encoder starts from", past.Message);
        // A plain stream's end is not a folded one's: the state must be exactly Low there.
        Assert.Throws<InvalidDataException>(() => new RansDecoder([0x34, 0x12, 0x01]).End());
    }

    [Fact]
    public void EveryBitFieldWidth_ExtremeValues_RoundTrip()
    {
        for (int bits = 0; bits <= 64; bits++)
        {
            ulong all = bits == 64 ? ulong.MaxValue : (1UL << bits) - 1;
            foreach (ulong value in (ulong[])[0, all, all & 0x5555_5555_5555_5555, all & 0xAAAA_AAAA_AAAA_AAAA, bits == 0 ? 0 : 1UL << (bits - 1)])
            {
                List<Step> steps = [new BitsStep(bits, value), new TableStep([0, 1, 4096], 12, 1), new BitsStep(bits, value)];
                Assert.Equal(Expected(steps), Decode(Encode(steps), steps));
            }
        }
    }

    [Fact]
    public void SymbolsOfFrequencyOneAndOfAlmostTheWholeScale_RoundTrip()
    {
        int[] rare = [0, 1, 4096];        // symbol 0: 1/4096, symbol 1: the rest
        int[] certain = [0, 4095, 4096];  // symbol 0: almost certain
        var random = new Random(8103);
        List<Step> steps = [.. Enumerable.Range(0, 5_000).Select(i => (Step)(i % 2 == 0
            ? new TableStep(rare, 12, random.Next(50) == 0 ? 0 : 1)
            : new TableStep(certain, 12, random.Next(50) == 0 ? 1 : 0)))];
        Assert.Equal(Expected(steps), Decode(Encode(steps), steps));
        List<Step> allRare = [.. Enumerable.Range(0, 1_000).Select(_ => (Step)new TableStep(rare, 12, 0))];
        byte[] stream = Encode(allRare);
        Assert.Equal(Expected(allRare), Decode(stream, allRare));
        Assert.InRange(stream.Length, 1_000 * 12 / 8, 1_000 * 12 / 8 + 8); // 12 bits a symbol of probability 2^-12
    }

    [Fact]
    public void EmptyStream_CodesNothing_EndsCleanly_AndRefusesASymbol()
    {
        var encoder = new RansEncoder();
        encoder.Reset();
        Assert.True(encoder.Encode().IsEmpty);
        var decoder = new RansDecoder([]);
        decoder.End();
        Assert.Equal(0UL, new RansDecoder([]).Bits(0)); // zero bits take nothing
        var ex = Assert.Throws<InvalidDataException>(() => new RansDecoder([]).Peek(12));
        Assert.Contains("the stream is empty", ex.Message);
    }

    [Fact]
    public void ShortOrUnnormalizedState_Refused()
    {
        Assert.Contains("under the 3 of its state", Assert.Throws<InvalidDataException>(() => new RansDecoder([1])).Message);
        Assert.Contains("under the 3 of its state", Assert.Throws<InvalidDataException>(() => new RansDecoder([1, 2])).Message);
        // 0x00FFFF: below L = 2^16.
        Assert.Contains("below the normalized interval", Assert.Throws<InvalidDataException>(() => new RansDecoder([0xFF, 0xFF, 0x00])).Message);
        // Exactly L with no symbol read: the stream of... nothing, which a writer never emits (an empty stream codes no symbol). It still ends cleanly.
        new RansDecoder([0x00, 0x00, 0x01]).End();
        Assert.Contains("the final state", Assert.Throws<InvalidDataException>(() => new RansDecoder([0x01, 0x00, 0x01]).End()).Message);
        Assert.Contains("bytes left", Assert.Throws<InvalidDataException>(() => new RansDecoder([0x00, 0x00, 0x01, 0x00]).End()).Message);
    }

    /// <summary>
    /// Every prefix, two extensions and every single-bit flip of streams of field-model symbols (12-bit tables), without
    /// and with raw bit fields: each is caught (at a symbol or at <see cref="RansDecoder.End"/>) or decodes to other
    /// symbols; none decodes to the same symbols (decoding is the exact inverse of encoding). Cuts and extensions are
    /// always caught. A flipped bit among table symbols is caught almost always (98.2% observed: the end state is off); a flipped bit
    /// among raw bits is a valid other number (raw bits carry no redundancy): only the envelope checksum catches it.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TruncatedExtendedAndBitFlippedStreams_CaughtOrDecodeToOtherSymbols_NeverToTheSame(bool withBits)
    {
        var random = new Random(withBits ? 8105 : 8104);
        int damaged = 0, caught = 0, other = 0, same = 0;
        int cutCaught = 0, cuts = 0, extendedCaught = 0, extensions = 0, flipCaught = 0, flips = 0;
        for (int sequence = 0; sequence < 300; sequence++)
        {
            List<Step> steps = RandomSequence(random, random.Next(1, 80), fieldScaleOnly: true, withBits);
            byte[] stream = Encode(steps);
            if (stream.Length == 0) continue; // only empty bit fields: nothing to damage
            List<ulong> expected = Expected(steps);
            var variants = new List<(byte[] Stream, int Kind)>();
            for (int length = 0; length < stream.Length; length++) variants.Add((stream[..length], 0));
            variants.Add(([.. stream, (byte)random.Next(256)], 1));
            variants.Add(([.. stream, .. stream[^Math.Min(3, stream.Length)..]], 1));
            for (int bit = 0; bit < stream.Length * 8; bit++)
            {
                byte[] flipped = (byte[])stream.Clone();
                flipped[bit / 8] ^= (byte)(1 << (bit % 8));
                variants.Add((flipped, 2));
            }
            foreach ((byte[] variant, int kind) in variants)
            {
                damaged++;
                bool detected;
                try
                {
                    List<ulong> decoded = Decode(variant, steps);
                    detected = false;
                    if (decoded.SequenceEqual(expected)) same++;
                    else other++;
                }
                catch (InvalidDataException)
                {
                    detected = true;
                    caught++;
                }
                switch (kind)
                {
                    case 0: cuts++; if (detected) cutCaught++; break;
                    case 1: extensions++; if (detected) extendedCaught++; break;
                    default: flips++; if (detected) flipCaught++; break;
                }
            }
        }
        output.WriteLine($"{(withBits ? "with" : "without")} raw bit fields: {damaged:N0} damaged streams: {caught:N0} caught ({100.0 * caught / damaged:F2}%), {other:N0} decoded to other symbols, {same} to the same; " +
            $"cuts caught {cutCaught:N0}/{cuts:N0}, extensions {extendedCaught:N0}/{extensions:N0}, bit flips {flipCaught:N0}/{flips:N0} ({100.0 * flipCaught / flips:F2}%)");
        Assert.Equal(0, same);
        Assert.Equal(cuts, cutCaught); // a cut stream always runs out (the decoder follows the same path up to the cut)
        Assert.Equal(extensions, extendedCaught); // and bytes after the last symbol are always left over
        if (!withBits) Assert.True(flipCaught >= flips * 0.97, $"only {flipCaught} of {flips} bit flips caught by the stream itself");
    }
}
