using System.Text;
using Compression.Structure;
using Xunit;

namespace Compression.Core.Tests.Structure;

/// <summary>
/// Training chooses a field's source among the <see cref="FieldModelBuilder.MaxSourceCandidates"/> keys most recently
/// valued before it, and only among those: the search stays linear in a sample's values however many keys it has.
/// </summary>
public sealed class SourceChoiceTests
{
    /// <summary>Earthquake-like records: a place, <paramref name="keysBetween"/> numeric keys, then a title that holds the place.</summary>
    private static List<byte[]> Samples(int keysBetween)
    {
        var random = new Random(3);
        string[] towns = ["Idyllwild", "Castaic", "San Marino", "Anza", "Ridgecrest", "Borrego Springs", "Ocotillo Wells", "Brawley"];
        string[] directions = ["N", "S", "E", "W", "NNW", "SSE", "ENE", "WSW"];
        var samples = new List<byte[]>();
        for (int i = 0; i < 400; i++)
        {
            string place = $"{random.Next(1, 40)}km {directions[random.Next(directions.Length)]} of {towns[random.Next(towns.Length)]}, CA";
            var text = new StringBuilder($"{{\"place\":\"{place}\"");
            for (int k = 0; k < keysBetween; k++) text.Append($",\"k{k}\":{random.Next(1000)}");
            text.Append($",\"title\":\"M {random.Next(1, 6)}.{random.Next(10)} - {place}\"}}");
            samples.Add(Encoding.UTF8.GetBytes(text.ToString()));
        }
        return samples;
    }

    private static bool TitleCopiesPlace(int keysBetween)
    {
        FieldModel model = StructureTrainer.TryTrain(Samples(keysBetween), 8 * 1024, 88, DocumentKind.Json, fieldModel: true)?.Transform.Fields?.Model
            ?? throw new InvalidOperationException("No field model was trained.");
        for (int f = 0; f < model.FieldCount; f++)
        {
            if (model[f].Templates.Any(t => t.CopySlot >= 0)) return true;
        }
        return false;
    }

    [Fact]
    public void Source_WithinTheRecentKeys_IsChosen()
    {
        Assert.True(TitleCopiesPlace(keysBetween: 8));
        Assert.True(TitleCopiesPlace(keysBetween: FieldModelBuilder.MaxSourceCandidates - 2));
    }

    [Fact]
    public void Source_FurtherBackThanTheRecentKeys_IsNotLookedFor()
    {
        Assert.False(TitleCopiesPlace(keysBetween: FieldModelBuilder.MaxSourceCandidates + 10));
    }

    /// <summary>
    /// Event records: a url whose last segment is a network and an id, (with <paramref name="withWholeCopy"/>) a link, a
    /// detail URL holding that segment and a code holding it less the network's two letters. The link holds the whole url in 3
    /// records of 10 and the url's last segment in the others: a part covers more of the link's bytes than the whole
    /// string does, in all.
    /// </summary>
    private static List<byte[]> UrlSamples(bool withWholeCopy)
    {
        var random = new Random(5);
        string[] networks = ["ci", "us", "nc", "ak", "hv"];
        var samples = new List<byte[]>();
        for (int i = 0; i < 400; i++)
        {
            string segment = networks[random.Next(networks.Length)] + random.NextInt64(1_000_000_000_000_000, 9_999_999_999_999_999);
            string url = $"https://q.example/e/{segment}";
            string link = !withWholeCopy ? "" : i % 10 < 3 ? $",\"link\":\"see {url}/\"" : $",\"link\":\"id {segment}\"";
            samples.Add(Encoding.UTF8.GetBytes($"{{\"url\":\"{url}\"{link},\"detail\":\"https://q.example/d/{segment}.json\",\"code\":\"{segment[2..]}\"}}"));
        }
        return samples;
    }

    private static FieldModel.Field FieldNamed(StructureModel trained, string name)
    {
        ShapeTransform shapes = trained.Transform;
        FieldModel model = shapes.Fields?.Model ?? throw new InvalidOperationException("No field model was trained.");
        ShapeTable table = shapes.Table;
        for (int f = 0; f < model.FieldCount; f++)
        {
            int key = model[f].Key;
            for (int id = 1; id <= table.Count; id++)
            {
                int m = key - table.FirstKey(id);
                if (m >= 0 && m < table.KeyCount(id) && table.Key(id, m).SequenceEqual(Encoding.UTF8.GetBytes(name))) return model[f];
            }
        }
        throw new InvalidOperationException($"No field {name} in the model.");
    }

    [Fact]
    public void Part_WhenNoKeysWholeStringIsHeld_IsChosen_WithItsDelimiterAndSkip()
    {
        StructureModel trained = StructureTrainer.TryTrain(UrlSamples(withWholeCopy: false), 8 * 1024, 89, DocumentKind.Json, fieldModel: true)
            ?? throw new InvalidOperationException("No model was trained.");
        FieldModel.Field detail = FieldNamed(trained, "detail"), code = FieldNamed(trained, "code");
        Assert.Equal(((byte)'/', (byte)0), (detail.CopyDelimiter, detail.CopySkip));
        Assert.Equal(((byte)'/', (byte)2), (code.CopyDelimiter, code.CopySkip));
        Assert.Contains(detail.Templates, t => t.CopySlot >= 0);
        Assert.Equal(FieldModel.PartsFormatVersion, trained.Transform.Fields!.Model.Serialize()[4]);
    }

    [Fact]
    public void WholeString_WhenHeld_IsChosenBeforeAPart()
    {
        // The link holds the whole url in 3 records of 10, its last segment in all: the whole string is still its source
        // (held often enough, it comes first), while detail and code, which hold only parts, take parts. The builder's definitions, before training
        // measures which fields pay against zstd (here none clearly does: zstd codes these copies as short matches).
        List<byte[]> samples = UrlSamples(withWholeCopy: true);
        var tables = new ShapeTableBuilder(DocumentKind.Json);
        foreach (byte[] sample in samples) Assert.True(tables.Add(sample));
        ShapeTable table = tables.Build();
        var transform = new ShapeTransform(table);
        var builder = new FieldModelBuilder(table);
        foreach (byte[] sample in samples)
        {
            byte[] packed = new byte[sample.Length];
            Assert.True(transform.TryEncode(sample, packed, out int length));
            Assert.True(builder.Add(packed.AsSpan(0, length)));
        }
        List<FieldModel.FieldDefinition> definitions = builder.BuildDefinitions();
        FieldModel.FieldDefinition Named(string name) => definitions.Single(d => table.Key(1, d.Key - table.FirstKey(1)).SequenceEqual(Encoding.UTF8.GetBytes(name)));
        Assert.Equal(((byte)0, (byte)0), (Named("link").CopyDelimiter, Named("link").CopySkip));
        Assert.Contains(Named("link").Templates, t => t.Widths.Contains((byte)0));
        Assert.Equal(((byte)'/', (byte)0), (Named("detail").CopyDelimiter, Named("detail").CopySkip));
        Assert.Equal(((byte)'/', (byte)2), (Named("code").CopyDelimiter, Named("code").CopySkip));
    }
}
