using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace Compression.Internal;

/// <summary>The engine's instruments, on the meter named <see cref="MeterName"/>.</summary>
internal sealed class CompressionMetrics : IDisposable
{
    public const string MeterName = "Compression";

    private readonly Meter _meter;
    private readonly bool _ownsMeter;
    private readonly Counter<long> _bytesIn;
    private readonly Counter<long> _bytesOut;
    private readonly Counter<long> _trainingRuns;
    private readonly Histogram<double> _trainingDuration;
    private readonly Gauge<long> _adoptedVersion;
    private readonly Counter<long> _decodeFailures;

    public CompressionMetrics(IMeterFactory? meterFactory)
    {
        _ownsMeter = meterFactory is null;
        _meter = meterFactory?.Create(MeterName) ?? new Meter(MeterName);
        _bytesIn = _meter.CreateCounter<long>("compression.bytes_in", "By", "Document bytes before compression, per namespace and codec.");
        _bytesOut = _meter.CreateCounter<long>("compression.bytes_out", "By", "Envelope bytes after compression, per namespace and codec.");
        _trainingRuns = _meter.CreateCounter<long>("compression.training.runs", "{run}", "Dictionary training runs, per namespace and outcome.");
        _trainingDuration = _meter.CreateHistogram<double>("compression.training.duration", "s", "Duration of dictionary training runs.");
        _adoptedVersion = _meter.CreateGauge<long>("compression.dictionary.version", "{version}", "The dictionary version in use, per namespace.");
        _decodeFailures = _meter.CreateCounter<long>("compression.decode.failures", "{failure}", "Values that could not be decoded, per namespace and reason.");
    }

    public void Compressed(string ns, CompressionCodec codec, int bytesIn, int bytesOut)
    {
        if (!_bytesIn.Enabled && !_bytesOut.Enabled) return;
        var tags = new TagList { { "namespace", ns }, { "codec", CodecName(codec) } };
        _bytesIn.Add(bytesIn, tags);
        _bytesOut.Add(bytesOut, tags);
    }

    public void Training(string ns, string outcome, TimeSpan duration)
    {
        _trainingRuns.Add(1, new TagList { { "namespace", ns }, { "outcome", outcome } });
        _trainingDuration.Record(duration.TotalSeconds, new TagList { { "namespace", ns } });
    }

    public void Adopted(string ns, int version) => _adoptedVersion.Record(version, new TagList { { "namespace", ns } });

    public void DecodeFailed(string ns, string reason) => _decodeFailures.Add(1, new TagList { { "namespace", ns }, { "reason", reason } });

    /// <summary>The <c>codec</c> tag of <paramref name="codec"/>: its <see cref="Codecs.Codec.Name"/>, or "unknown".</summary>
    public static string CodecName(CompressionCodec codec) => Codecs.CodecRegistry.Find(codec)?.Name ?? "unknown";

    public void Dispose()
    {
        if (_ownsMeter) _meter.Dispose();
    }
}
