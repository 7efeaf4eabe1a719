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
        var root = new RootCommand("docz: measure and manage client-side document compression.")
        {
            AnalyzeCommand.Create(output, error),
            TrainCommand.Create(output, error),
            MigrateCommand.CreateMigrate(output, error),
            VerifyCommand.Create(output, error),
            StatsCommand.Create(output, error),
            MigrateCommand.CreateRecompress(output, error),
        };
        ParseResult parse = root.Parse(args);
        int exit = parse.Invoke(new InvocationConfiguration { Output = output, Error = error });
        return parse.Errors.Count > 0 ? 2 : exit; // bad usage: 2, as docs/docz.md says
    }
}
