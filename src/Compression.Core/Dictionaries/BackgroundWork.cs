using System.Collections.Concurrent;

namespace Compression.Dictionaries;

/// <summary>
/// The engine's background tasks (loads, polls, training runs): started here, tracked until they end, cancelled and
/// awaited together when the engine stops. A failure is logged where it happens and never reaches a write.
/// </summary>
internal sealed class BackgroundWork : IDisposable
{
    private readonly CancellationTokenSource _stopping = new();
    private readonly ConcurrentDictionary<Task, byte> _running = new();

    public CancellationToken Stopping => _stopping.Token;

    public bool IsStopping => _stopping.IsCancellationRequested;

    public void Run(Func<CancellationToken, Task> work)
    {
        if (_stopping.IsCancellationRequested) return;
        CancellationToken token = _stopping.Token;
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
