using System.Text;
using Compression.Codecs;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>The zstd step over packed streams, and the per-namespace choice by held-out measurement.</summary>
public sealed class StructureModelTests
{
    internal static readonly List<byte[]> JsonTraining = StructureDocuments.JsonDocuments(600, 6, seed: 11);
    internal static readonly List<byte[]> JsonHeldOut = StructureDocuments.JsonDocuments(300, 6, seed: 12);
    internal static readonly List<byte[]> BsonTraining = StructureDocuments.BsonRecords(600, seed: 11);
    internal static readonly List<byte[]> BsonHeldOut = StructureDocuments.BsonRecords(300, seed: 12);

    internal static StructureModel Train(List<byte[]> samples) =>
        StructureTrainer.TryTrain(samples, 8 * 1024, 77) ?? throw new InvalidOperationException("no model");

    public static TheoryData<string> Kinds() => ["json", "bson"];

    private static (List<byte[]> Training, List<byte[]> HeldOut) Data(string kind) =>
        kind == "json" ? (JsonTraining, JsonHeldOut) : (BsonTraining, BsonHeldOut);

    [Theory]
    [MemberData(nameof(Kinds))]
    public void TryCompress_HeldOutDocuments_DecompressByteForByte(string kind)
    {
        (List<byte[]> training, List<byte[]> heldOut) = Data(kind);
        StructureModel model = Train(training);
        Assert.Equal(kind == "json" ? DocumentKind.Json : DocumentKind.Bson, model.Table.Kind);
        byte[] frame = new byte[64 * 1024];
        int packed = 0;
        foreach (byte[] document in heldOut)
        {
            if (!model.TryCompress(document, frame, 3, out int written)) continue;
            packed++;
            byte[] back = new byte[document.Length];
            model.Decompress(frame.AsSpan(0, written), back);
            Assert.Equal(document, back);
        }
        Assert.True(packed >= heldOut.Count * 0.95, $"{packed} of {heldOut.Count} packed");
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void TrainAndChoose_RecordsOfFewShapes_ChoosesStructureAndMeasuresFewerBytes(string kind)
    {
        (List<byte[]> training, List<byte[]> heldOut) = Data(kind);
        ZstdDictionary plain = Compression.Dictionaries.ZstdDictionaryTrainer.TryTrain(training, 8 * 1024, 76)!;
        StructureChoice choice = StructureTrainer.TrainAndChoose(training, heldOut, plain, 8 * 1024, 77, level: 3);
        Assert.NotNull(choice.Model);
        Assert.True(choice.Chosen, $"plain {choice.Measurement.PlainBytes}, structured {choice.Measurement.StructuredBytes}");
        Assert.Equal(heldOut.Count, choice.Measurement.Documents);
        Assert.Equal(heldOut.Sum(d => (long)d.Length), choice.Measurement.RawBytes);
        Assert.True(choice.Measurement.StructuredRatio > choice.Measurement.PlainRatio);
    }

    [Fact]
    public void TrainAndChoose_DocumentsTheTransformCannotTake_NoModel()
    {
        // Pretty-printed JSON (whitespace between tokens) is not packed: there is nothing to train.
        var pretty = JsonTraining.Select(d => Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(d).Replace(",\"", ", \"", StringComparison.Ordinal))).ToList();
        ZstdDictionary plain = Compression.Dictionaries.ZstdDictionaryTrainer.TryTrain(pretty, 8 * 1024, 76)!;
        StructureChoice choice = StructureTrainer.TrainAndChoose(pretty, pretty.Take(50).ToList(), plain, 8 * 1024, 77, level: 3);
        Assert.Null(choice.Model);
        Assert.False(choice.Chosen);
        Assert.Equal(choice.Measurement.PlainBytes, choice.Measurement.StructuredBytes);
    }

    [Fact]
    public void TryTrain_SameSamples_SameTableAndDictionary()
    {
        StructureModel a = Train(JsonTraining);
        StructureModel b = Train(JsonTraining);
        Assert.Equal(a.Table.Serialize(), b.Table.Serialize());
        Assert.Equal(a.Dictionary.Content.ToArray(), b.Dictionary.Content.ToArray());
    }

    [Fact]
    public void TryCompress_NotApplicable_ReturnsFalse_DocumentStillCompressesWithTheModelDictionary()
    {
        StructureModel model = Train(JsonTraining);
        byte[] pretty = "{ \"not\": \"compact\", \"so\": \"not packed\" }"u8.ToArray();
        byte[] frame = new byte[1024];
        Assert.False(model.TryCompress(pretty, frame, 3, out _));
        Assert.True(ZstdCodec.Instance.TryCompress(pretty, frame, 3, model.Dictionary, out int written));
        byte[] back = new byte[pretty.Length];
        ZstdCodec.Instance.Decompress(frame.AsSpan(0, written), back, model.Dictionary);
        Assert.Equal(pretty, back);
    }

    [Fact]
    public void Decompress_WrongLengthOrGarbage_InvalidDataException()
    {
        StructureModel model = Train(JsonTraining);
        byte[] document = JsonHeldOut[0];
        byte[] frame = new byte[4096];
        Assert.True(model.TryCompress(document, frame, 3, out int written));
        frame = frame[..written];
        Assert.Throws<InvalidDataException>(() => model.Decompress(frame, new byte[document.Length - 1]));
        Assert.Throws<InvalidDataException>(() => model.Decompress(frame, new byte[document.Length + 1]));
        Assert.Throws<InvalidDataException>(() => model.Decompress([1, 2, 3, 4, 5], new byte[document.Length]));
        Assert.Throws<InvalidDataException>(() => model.Decompress([], new byte[document.Length]));
        Assert.Throws<InvalidDataException>(() => model.Decompress(frame, []));
    }
}
