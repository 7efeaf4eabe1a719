using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using Compression.Benchmarks;

namespace Compression.Couchbase.Benchmarks;

/// <summary>A case's wire bytes over those of its baseline (same category, same parameters), both counted by the loopback server.</summary>
public sealed class WireRatioColumn : IColumn
{
    public string Id => nameof(WireRatioColumn);
    public string ColumnName => "Wire ratio";
    public bool AlwaysShow => true;
    public ColumnCategory Category => ColumnCategory.Custom;
    public int PriorityInCategory => 3;
    public bool IsNumeric => true;
    public UnitType UnitType => UnitType.Dimensionless;
    public string Legend => "Wire B/doc of the case over Wire B/doc of its baseline (plain) in the same category and with the same parameters";
    public bool IsAvailable(Summary summary) => true;
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style)
    {
        BenchmarkCase? baseline = summary.BenchmarksCases.FirstOrDefault(c => c.Descriptor.Baseline
            && c.Descriptor.Categories.SequenceEqual(benchmarkCase.Descriptor.Categories)
            && c.Parameters.Items.Select(p => p.Value).SequenceEqual(benchmarkCase.Parameters.Items.Select(p => p.Value)));
        if (baseline is null
            || !FactsFile.TryRead("wire|" + CaseKey.Of(benchmarkCase), out long bytes, out _)
            || !FactsFile.TryRead("wire|" + CaseKey.Of(baseline), out long baseBytes, out _)
            || baseBytes == 0)
        {
            return "-";
        }

        return ((double)bytes / baseBytes).ToString("F2", CultureInfo.InvariantCulture);
    }
}
