using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Running;
using Compression.Benchmarks;

namespace Compression.Couchbase.Benchmarks;

public static class Program
{
    public static int Main(string[] args)
    {
        // "--alternate [--rounds N] [--operations N] [--sdk]": the stopwatch check on the ratios (AlternatingRun), not
        // BenchmarkDotNet; "--sdk" times only the two pairs through the SDK (benchmarks/couchbase-link-sweep.sh).
        if (args.Contains("--alternate")) return AlternatingRun.Run(args);
        var config = DefaultConfig.Instance
            .AddDiagnoser(MemoryDiagnoser.Default)
            .AddColumn(new RatioColumn(), new ThroughputColumn(), new WireBytesColumn(), new WireRatioColumn())
            .HideColumns(Column.Error, Column.StdDev, Column.Median, Column.RatioSD);
        FactsFile.Reset();
        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, config);
        return 0;
    }
}
