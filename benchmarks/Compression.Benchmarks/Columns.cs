using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace Compression.Benchmarks;

/// <summary>The key under which a case's facts are stored: method and sorted parameter values.</summary>
public static class CaseKey
{
    public static string Of(string method, params (string Name, object Value)[] parameters) =>
        method + "|" + string.Join(",", parameters.OrderBy(p => p.Name, StringComparer.Ordinal).Select(p => $"{p.Name}={p.Value}"));

    internal static string Of(BenchmarkCase c) =>
        Of(c.Descriptor.WorkloadMethod.Name, [.. c.Parameters.Items.Select(p => (p.Name, p.Value))]);
}

/// <summary>A file the benchmark process writes in GlobalSetup and the host reads back (they are different processes).</summary>
internal static class FactsFile
{
    public static void Reset()
    {
        if (File.Exists(Path)) File.Delete(Path);
    }

    // One file per benchmark assembly (this file is linked into more than one project), so that two suites run at once
    // do not reset each other's facts. The host and the benchmark process both load that assembly.
    private static readonly string Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(),
        $"compression-benchmark-facts-{typeof(FactsFile).Assembly.GetName().Name}.tsv");

    public static void Append(string key, long rawBytes, double ratio) =>
        File.AppendAllText(Path, string.Create(CultureInfo.InvariantCulture, $"{key}\t{rawBytes}\t{ratio}\n"));

    public static bool TryRead(string key, out long rawBytes, out double ratio)
    {
        rawBytes = 0;
        ratio = 0;
        if (!File.Exists(Path)) return false;
        foreach (string line in File.ReadLines(Path).Reverse())
        {
            string[] parts = line.Split('\t');
            if (parts.Length == 3 && parts[0] == key)
            {
                rawBytes = long.Parse(parts[1], CultureInfo.InvariantCulture);
                ratio = double.Parse(parts[2], CultureInfo.InvariantCulture);
                return true;
            }
        }
        return false;
    }
}

public sealed class RatioColumn : IColumn
{
    public string Id => nameof(RatioColumn);
    public string ColumnName => "Size ratio";
    public bool AlwaysShow => true;
    public ColumnCategory Category => ColumnCategory.Custom;
    public int PriorityInCategory => 0;
    public bool IsNumeric => true;
    public UnitType UnitType => UnitType.Dimensionless;
    public string Legend => "Raw bytes / envelope bytes over the measured documents (envelope and checksum included)";
    public bool IsAvailable(Summary summary) => true;
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) =>
        FactsFile.TryRead(CaseKey.Of(benchmarkCase), out _, out double ratio) && ratio > 0 ? ratio.ToString("F2", CultureInfo.InvariantCulture) : "-";
}

public sealed class ThroughputColumn : IColumn
{
    public string Id => nameof(ThroughputColumn);
    public string ColumnName => "MB/s";
    public bool AlwaysShow => true;
    public ColumnCategory Category => ColumnCategory.Custom;
    public int PriorityInCategory => 1;
    public bool IsNumeric => true;
    public UnitType UnitType => UnitType.Dimensionless;
    public string Legend => "Raw (uncompressed) megabytes (10^6 B) per second, from the mean time of one operation";
    public bool IsAvailable(Summary summary) => true;
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style)
    {
        var stats = summary[benchmarkCase]?.ResultStatistics;
        if (stats is null || !FactsFile.TryRead(CaseKey.Of(benchmarkCase), out long raw, out _)) return "-";
        return (raw / (stats.Mean / 1e9) / 1e6).ToString("F1", CultureInfo.InvariantCulture);
    }
}

/// <summary>Bytes on the wire per document for one operation (requests and replies, headers included), counted by the loopback server.</summary>
public sealed class WireBytesColumn : IColumn
{
    public string Id => nameof(WireBytesColumn);
    public string ColumnName => "Wire B/doc";
    public bool AlwaysShow => true;
    public ColumnCategory Category => ColumnCategory.Custom;
    public int PriorityInCategory => 2;
    public bool IsNumeric => true;
    public UnitType UnitType => UnitType.Size;
    public string Legend => "Bytes on the wire per document (both directions, whole messages), counted by the loopback server for one operation";
    public bool IsAvailable(Summary summary) => true;
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) =>
        FactsFile.TryRead("wire|" + CaseKey.Of(benchmarkCase), out long bytes, out _) ? bytes.ToString(CultureInfo.InvariantCulture) : "-";
}

/// <summary>
/// Time and allocation per document: the mean time and the bytes allocated of one operation, divided by the documents the
/// operation handles (stored by the benchmark's setup under "docs|" + the case key; "-" when a suite does not store it).
/// </summary>
public sealed class PerDocumentColumn(bool allocation) : IColumn
{
    public string Id => nameof(PerDocumentColumn) + (allocation ? "Alloc" : "Time");
    public string ColumnName => allocation ? "Alloc B/doc" : "µs/doc";
    public bool AlwaysShow => true;
    public ColumnCategory Category => ColumnCategory.Custom;
    public int PriorityInCategory => allocation ? 4 : 3;
    public bool IsNumeric => true;
    public UnitType UnitType => UnitType.Dimensionless;
    public string Legend => allocation
        ? "Bytes allocated by one operation (MemoryDiagnoser) per document it handles"
        : "Mean time of one operation per document it handles, microseconds";
    public bool IsAvailable(Summary summary) => true;
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style)
    {
        if (!FactsFile.TryRead("docs|" + CaseKey.Of(benchmarkCase), out long documents, out _) || documents <= 0) return "-";
        BenchmarkReport? report = summary[benchmarkCase];
        if (allocation)
        {
            long? bytes = report?.GcStats.GetBytesAllocatedPerOperation(benchmarkCase);
            return bytes is long b ? (b / (double)documents).ToString("F0", CultureInfo.InvariantCulture) : "-";
        }
        return report?.ResultStatistics is { } stats ? (stats.Mean / 1e3 / documents).ToString("F2", CultureInfo.InvariantCulture) : "-";
    }
}
