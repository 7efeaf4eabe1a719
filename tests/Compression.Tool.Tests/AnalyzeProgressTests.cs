using Compression.Tool.Analyze;
using Spectre.Console;
using Xunit;

namespace Compression.Tool.Tests;

/// <summary>The two progress displays: plain lines for logs and pipes, Spectre.Console bars for a terminal.</summary>
public sealed class AnalyzeProgressTests
{
    private static void Drive(AnalyzeProgress progress)
    {
        progress.Start("measuring", 3);
        progress.Report(0, 3, "zstd level 1");
        progress.Report(1, 3, "zstd level 3");
        progress.Report(2, 4, "zstd level 3 again");
        progress.Report(4, 4);
        progress.Stop();
        progress.Start("online replay (documents)", 1000);
        for (int i = 1; i <= 1000; i++) progress.Report(i, 1000);
        progress.Stop();
    }

    [Fact]
    public void Lines_OnePerNamedStepAndPerTenthOfACountedPhase_NoEscapeCodes()
    {
        var error = new StringWriter();
        Drive(new LineAnalyzeProgress(error));
        string[] lines = error.ToString().ReplaceLineEndings("\n").TrimEnd('\n').Split('\n');
        Assert.Equal(
        [
            "docz analyze: measuring (3)",
            "docz analyze: measuring 1/3: zstd level 1",
            "docz analyze: measuring 2/3: zstd level 3",
            "docz analyze: measuring 3/4: zstd level 3 again",
            "docz analyze: measuring 4/4 (100%)",
            "docz analyze: measuring done",
            "docz analyze: online replay (documents) (1,000)",
            .. Enumerable.Range(1, 10).Select(t => $"docz analyze: online replay (documents) {t * 100:N0}/1,000 ({t * 10}%)"),
            "docz analyze: online replay (documents) done",
        ], lines);
        Assert.DoesNotContain('\u001b', error.ToString());
    }

    [Fact]
    public async Task Spectre_OnATerminal_DrawsBarsForEachPhaseAndReturnsTheWorksResult()
    {
        var screen = new StringWriter();
        IAnsiConsole console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Ansi = AnsiSupport.Yes,
            Interactive = InteractionSupport.Yes,
            ColorSystem = ColorSystemSupport.NoColors,
            Out = new AnsiConsoleOutput(screen),
        });
        int result = await SpectreAnalyzeProgress.RunAsync(console, progress =>
        {
            Drive(progress);
            return Task.FromResult(42);
        });
        Assert.Equal(42, result);
        string drawn = screen.ToString();
        Assert.Contains("measuring", drawn);
        Assert.Contains("online replay (documents)", drawn);
        Assert.Contains("100%", drawn);
    }
}
