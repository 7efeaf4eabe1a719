using System.CommandLine;
using Compression.Tool.Analyze;

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
        };
        return root.Parse(args).Invoke(new InvocationConfiguration { Output = output, Error = error });
    }
}
