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
}
