using System.CommandLine;
using Compression.Tool.Analyze;
using Compression.Tool.Live;

namespace Compression.Tool;

/// <summary>The <c>docz</c> command line.</summary>
public static class Program
{
    /// <summary>Entry point.</summary>
    public static int Main(string[] args) => Run(args, Console.Out, Console.Error);

    /// <summary>Runs the command line with the given writers (tests capture them).</summary>
    internal static int Run(string[] args, TextWriter output, TextWriter error)
    {
        // A Command named docz, not a RootCommand: that one is named after the entry assembly (Compression.Tool).
        var root = new Command("docz", "docz: measure and manage client-side document compression. Exit codes: 0 ok, 1 failures found, 2 bad usage.")
        {
            new System.CommandLine.Help.HelpOption(), new VersionOption(),
            AnalyzeCommand.Create(output, error),
            TrainCommand.Create(output, error),
            MigrateCommand.CreateMigrate(output, error),
            VerifyCommand.Create(output, error),
            StatsCommand.Create(output, error),
            MigrateCommand.CreateRecompress(output, error),
            DictionariesCommand.Create(output, error),
            CatCommand.Create(output, error),
            ExportCommand.Create(output, error),
            ImportCommand.Create(output, error),
        };
        ParseResult parsed = root.Parse(args);
        int exit = parsed.Invoke(new InvocationConfiguration { Output = output, Error = error });
        return parsed.Errors.Count > 0 ? 2 : exit; // System.CommandLine says 1 for a parse error; docz says 2 (bad usage).
    }
}
