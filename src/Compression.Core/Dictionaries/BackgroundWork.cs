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
    public void Run(Func<CancellationToken, Task> work)
    {
        CancellationToken token = _token;
        if (token.IsCancellationRequested) return;
        Task task = Task.Run(async () =>
        {
            try
            {
                await work(token).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                // Logged where it happened; a background failure never reaches the write path.
            }
        }, CancellationToken.None);
        _running.TryAdd(task, 0);
        task.ContinueWith(static (t, s) => ((ConcurrentDictionary<Task, byte>)s!).TryRemove(t, out _), _running,
            CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>Completes when nothing is running (work started meanwhile is awaited too).</summary>
    public async Task WhenIdleAsync(CancellationToken cancellationToken = default)
    {
        while (!_running.IsEmpty)
        {
            await Task.WhenAll(_running.Keys).WaitAsync(cancellationToken).ConfigureAwait(false);
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
