using System.Collections.Concurrent;

namespace Compression.Dictionaries;

/// <summary>
/// The engine's background tasks (loads, polls, training runs): started here, tracked until they end, cancelled and
/// awaited together when the engine stops. A failure is logged where it happens and never reaches a write.
/// </summary>
internal sealed class BackgroundWork : IDisposable
{
    private readonly CancellationTokenSource _stopping;
    private readonly ConcurrentDictionary<Task, byte> _running = new();

    // Taken once: reading CancellationTokenSource.Token after Dispose throws, and Run is called from the write path, which
    // a disposal racing with it must never fail (found by review: a write that had succeeded could throw).
    private readonly CancellationToken _token;

    public BackgroundWork()
    {
        _stopping = new CancellationTokenSource();
        _token = _stopping.Token;
    }

    public CancellationToken Stopping => _token;

    public bool IsStopping => _token.IsCancellationRequested;

    /// <summary>Starts <paramref name="work"/> unless stopping; never throws (it is called on the write path).</summary>
    /// <remarks>
    /// The task is tracked before it looks at the stop signal, so a stop either sees it (and waits for it) or has
    /// signalled before it looks (and it does nothing). Checked only before tracking, a call racing with
    /// <see cref="StopAsync"/> could start its work after the stop had found nothing running (found by review).
    /// </remarks>
    public void Run(Func<CancellationToken, Task> work)
    {
        CancellationToken token = _token;
        if (token.IsCancellationRequested) return;
        var start = new Task<Task>(static state => RunGuarded(((Func<CancellationToken, Task>, CancellationToken))state!), (work, token));
        Task task = start.Unwrap();
        // The removal is the task's first continuation, registered before anyone can see the task in the set.
        task.ContinueWith(static (t, s) => ((ConcurrentDictionary<Task, byte>)s!).TryRemove(t, out _), _running,
            CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        _running.TryAdd(task, 0);
        start.Start(TaskScheduler.Default);
    }

    private static async Task RunGuarded((Func<CancellationToken, Task> Work, CancellationToken Token) run)
    {
        if (run.Token.IsCancellationRequested) return; // stopped between Run's check and this task's tracking
        try
        {
            await run.Work(run.Token).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            // Logged where it happened; a background failure never reaches the write path.
        }
    }

    /// <summary>Completes when nothing is running (work started meanwhile is awaited too).</summary>
    /// <remarks>
    /// Only tasks not yet completed are awaited: a completed one may still be in the set for a moment (its removal runs
    /// as its continuation, possibly after this method's), and awaiting it again would spin on the same thread, keeping
    /// that removal from ever running (found by a test of the race with <see cref="Run"/>).
    /// </remarks>
    public async Task WhenIdleAsync(CancellationToken cancellationToken = default)
    {
        while (true)
        {
            Task[] running = [.. _running.Keys.Where(static t => !t.IsCompleted)];
            if (running.Length == 0) return;
            await Task.WhenAll(running).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Cancels everything running and waits for it to end (or for <paramref name="cancellationToken"/>).</summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (!_stopping.IsCancellationRequested) await _stopping.CancelAsync().ConfigureAwait(false);
        await WhenIdleAsync(cancellationToken).ConfigureAwait(false);
    }

    public void Dispose() => _stopping.Dispose();
}
