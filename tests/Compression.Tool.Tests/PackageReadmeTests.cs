using System.Text.RegularExpressions;
using System.Xml.Linq;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>
/// Each packable project under <c>src/</c> carries its own README.md as its package readme (Directory.Build.props;
/// docs/packaging.md): named after its package, with no links, since a relative link breaks on a feed and the packages
/// have no public URL to point at.
/// </summary>
public sealed partial class PackageReadmeTests
{
    public static TheoryData<string> PackableProjects()
    {
        var projects = new TheoryData<string>();
        foreach (string csproj in Directory.GetFiles(Path.Combine(ToolProcess.RepositoryRoot(), "src"), "*.csproj", SearchOption.AllDirectories).Order(StringComparer.Ordinal))
        {
            if (XDocument.Load(csproj).Descendants("IsPackable").Any(e => e.Value == "false")) continue;
            projects.Add(Path.GetFileName(Path.GetDirectoryName(csproj)!));
        }
        return projects;
    }

    [Theory]
    [MemberData(nameof(PackableProjects))]
    public void EachPackage_HasItsOwnReadme_NamedAfterIt_WithNoLinks(string project)
    {
        string directory = Path.Combine(ToolProcess.RepositoryRoot(), "src", project);
        string packageId = XDocument.Load(Path.Combine(directory, project + ".csproj")).Descendants("PackageId").Single().Value;
        string readme = Path.Combine(directory, "README.md");
        Assert.True(File.Exists(readme), $"{readme} is missing: every packable project packs its own README.md");

        string text = File.ReadAllText(readme);
        Assert.StartsWith($"# {packageId}", text, StringComparison.Ordinal);
        Assert.Contains($"dotnet ", text, StringComparison.Ordinal); // the install line
        Assert.Empty(Links().Matches(text));
    }

    /// <summary>A markdown link or image (<c>](target)</c>), a reference definition (<c>[x]: target</c>) or a bare URL.</summary>
    [GeneratedRegex(@"\]\(|^\s*\[[^\]]+\]:|https?://", RegexOptions.Multiline)]
    private static partial Regex Links();
}
