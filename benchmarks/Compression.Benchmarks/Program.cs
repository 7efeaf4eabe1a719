using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Running;

namespace Compression.Benchmarks;

public static class Program
{
    public static void Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "replay")
        {
            Environment.ExitCode = ReplaySweep.RunAsync(args).GetAwaiter().GetResult();
            return;
        }
        if (args.Length > 0 && args[0] == "alternate")
        {
            Environment.ExitCode = HotPathAlternate.Run(args);
            return;
        }

        // BenchmarkDotNet runs each benchmark in a child process from its own folder: a relative corpus folder (as the
        // docs' commands give it) is made absolute here, before the children inherit it (a relative one failed every
        // benchmark with "Corpus not found").
        if (Environment.GetEnvironmentVariable("COMPRESSION_CORPUS_DIR") is { Length: > 0 } corpora && !Path.IsPathRooted(corpora))
            Environment.SetEnvironmentVariable("COMPRESSION_CORPUS_DIR", Path.GetFullPath(corpora));

        var config = DefaultConfig.Instance
            .AddDiagnoser(MemoryDiagnoser.Default)
            .AddExporter(MarkdownExporter.GitHub)
            .AddColumn(new RatioColumn(), new ThroughputColumn(), new WireBytesColumn(), new PerDocumentColumn(allocation: false), new PerDocumentColumn(allocation: true))
            .HideColumns(Column.Error, Column.StdDev, Column.Median, Column.RatioSD);
        FactsFile.Reset();
        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, config);
    }
}
