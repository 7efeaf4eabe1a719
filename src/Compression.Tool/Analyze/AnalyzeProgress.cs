using System.Globalization;
using Spectre.Console;

namespace Compression.Tool.Analyze;

/// <summary>
/// Where a long run says how far it is. A run goes through phases (reading, measuring, the online replay), each a
/// count of items done out of a total, with the item under way named. Implementations write to stderr only, so stdout
/// keeps nothing but the report (<c>--format json</c> stays parseable).
/// </summary>
internal abstract class AnalyzeProgress
{
    /// <summary>Reports nothing.</summary>
    public static AnalyzeProgress None { get; } = new NoProgress();

    /// <summary>A phase starts: <paramref name="total"/> items (settings, documents, bytes), none done yet.</summary>
    public abstract void Start(string phase, long total);

    /// <summary><paramref name="done"/> items of the current phase are done (the total may have grown); <paramref name="current"/> is under way, when named.</summary>
    public abstract void Report(long done, long total, string? current = null);

    /// <summary>The current phase is over.</summary>
    public abstract void Stop();

    private sealed class NoProgress : AnalyzeProgress
    {
        public override void Start(string phase, long total) { }

        public override void Report(long done, long total, string? current = null) { }

        public override void Stop() { }
    }
}

/// <summary>
/// Progress as plain lines, for a stderr that is not a terminal (a log, a pipe, a test): one line when a phase starts,
/// one per named item (each setting measured), one at every further tenth of a phase counted in documents or bytes, and
/// one when it ends. No escape codes, nothing redrawn.
/// </summary>
internal sealed class LineAnalyzeProgress(TextWriter error) : AnalyzeProgress
{
    private static readonly CultureInfo C = CultureInfo.InvariantCulture;
    private string _phase = "";
    private int _tenths;

    public override void Start(string phase, long total)
    {
        _phase = phase;
        _tenths = 0;
        error.WriteLine(string.Create(C, $"docz analyze: {phase} ({total:N0})"));
    }

    public override void Report(long done, long total, string? current = null)
    {
        if (current is not null)
        {
            error.WriteLine(string.Create(C, $"docz analyze: {_phase} {done + 1:N0}/{total:N0}: {current}"));
            return;
        }
        int tenths = total <= 0 ? 10 : (int)(done * 10 / total);
        if (tenths <= _tenths) return;
        _tenths = tenths;
        error.WriteLine(string.Create(C, $"docz analyze: {_phase} {done:N0}/{total:N0} ({tenths * 10}%)"));
    }

    public override void Stop() => error.WriteLine($"docz analyze: {_phase} done");
}

/// <summary>
/// Progress bars on a terminal (Spectre.Console): one bar per phase with the item under way, a spinner and the time
/// spent, redrawn in place on stderr. The work runs inside <see cref="RunAsync"/>.
/// </summary>
internal sealed class SpectreAnalyzeProgress : AnalyzeProgress
{
    private readonly ProgressContext _context;
    private ProgressTask? _task;
    private string _phase = "";

    private SpectreAnalyzeProgress(ProgressContext context) => _context = context;

    /// <summary>Runs <paramref name="work"/> with progress bars drawn on <paramref name="console"/>; the bars stay on screen when it ends.</summary>
    public static Task<T> RunAsync<T>(IAnsiConsole console, Func<AnalyzeProgress, Task<T>> work) =>
        console.Progress()
            .AutoClear(false)
            .HideCompleted(false)
            .Columns(new TaskDescriptionColumn { Alignment = Justify.Left }, new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn(), new SpinnerColumn())
            .StartAsync(context => work(new SpectreAnalyzeProgress(context)));

    public override void Start(string phase, long total)
    {
        _phase = phase;
        _task = _context.AddTask(Markup.Escape(phase), maxValue: Math.Max(1, total));
    }

    public override void Report(long done, long total, string? current = null)
    {
        if (_task is null) return;
        _task.MaxValue = Math.Max(1, total);
        _task.Value = done;
        if (current is not null) _task.Description = Markup.Escape($"{_phase}: {current}");
    }

    public override void Stop()
    {
        if (_task is null) return;
        _task.Description = Markup.Escape(_phase);
        _task.Value = _task.MaxValue;
        _task.StopTask();
        _task = null;
    }
}
