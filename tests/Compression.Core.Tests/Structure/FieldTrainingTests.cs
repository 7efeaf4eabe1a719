using System.Text;
using Compression.Structure;
using Compression.Core.Tests.Envelope;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>Training a table with a field model (<see cref="StructureTrainer.TryTrain(IReadOnlyList{byte[]}, int, uint, DocumentKind?, bool)"/>) in the cases that once lost the table.</summary>
public sealed class FieldTrainingTests
{
    /// <summary>
    /// Records whose every value the model codes leave residuals too small to train a dictionary on: the model is still
    /// published, with a dictionary trained on the packed streams (before, training returned nothing, and the namespace
    /// lost its shape table too: found by docz analyze's tests in CI).
    /// </summary>
    [Fact]
    public void TryTrain_RecordsWhoseValuesTheModelCodesEntirely_GivesATableAndAModel_AndDocumentsRoundTrip()
    {
        // Flights-like: a templated date, airports from a short list, small numbers: what is left for zstd is the shape id.
        var random = new Random(5);
        string[] airports = ["SAN", "LAX", "SFO", "SEA", "PDX", "LAS"];
        List<byte[]> Records(int count) => [.. Enumerable.Range(0, count).Select(_ => Encoding.UTF8.GetBytes(string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $"{{\"date\":\"2001/01/{random.Next(1, 29):00} {random.Next(24):00}:{random.Next(60):00}\",\"delay\":{random.Next(-10, 30)},\"distance\":{random.Next(100, 900)},\"origin\":\"{airports[random.Next(6)]}\",\"destination\":\"{airports[random.Next(6)]}\"}}")))];
        List<byte[]> training = Records(400), heldOut = Records(200);

        StructureModel model = StructureTrainer.TryTrain(training, 4096, 7, kind: null, fieldModel: true)
            ?? throw new Xunit.Sdk.XunitException("no model: the table was lost with the dictionary");
        Assert.NotNull(model.Transform.Fields);
        var compressor = new DocumentCompressor(new DocumentCompressorOptions { MinimumSize = 0 });
        int coded = 0;
        foreach (byte[] document in heldOut)
        {
            byte[] envelope = compressor.Compress(document, model.Dictionary);
            if (DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) && Corpus.IsFieldCoded(header.Codec)) coded++;
            Assert.Equal(document, compressor.Decompress(envelope, model.Dictionary));
        }
        Assert.True(coded >= heldOut.Count * 9 / 10, $"{coded} of {heldOut.Count} written as codec 8");
    }
}
