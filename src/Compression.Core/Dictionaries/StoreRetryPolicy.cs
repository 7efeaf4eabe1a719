using Compression.Internal;
using Microsoft.Extensions.Logging;

namespace Compression.Dictionaries;

/// <summary>
/// The one retry policy of every store call: a bounded number of attempts, waits that double from a base delay (on the
/// engine's <see cref="TimeProvider"/>, so tests advance a fake clock), failures logged. Cancellation is never retried.
/// </summary>
internal sealed class StoreRetryPolicy(int attempts, TimeSpan baseDelay, TimeProvider time, ILogger logger)
{
    public int Attempts => attempts;

    /// <summary>Runs <paramref name="call"/> until it succeeds or the attempts are spent; then throws <see cref="StoreUnavailableException"/>.</summary>
    public async ValueTask<T> ExecuteAsync<T, TState>(Func<TState, CancellationToken, ValueTask<T>> call, TState state, string operation,
        CancellationToken cancellationToken)
    {
        Exception? last = null;
        for (int attempt = 1; attempt <= attempts; attempt++)
        {
            try
            {
                return await call(state, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception ex) when (IsRetriable(ex, cancellationToken))
            {
                last = ex;
                Log.StoreCallFailed(logger, ex, operation, attempt, attempts);
            }
            if (attempt < attempts && baseDelay > TimeSpan.Zero)
                await Task.Delay(baseDelay * (1 << Math.Min(attempt - 1, 16)), time, cancellationToken).ConfigureAwait(false);
        }
        throw new StoreUnavailableException(operation, attempts, last!);
    }

    /// <summary>The synchronous form, for synchronous decode paths: the attempts follow each other without waiting.</summary>
    public T Execute<T, TState>(Func<TState, T> call, TState state, string operation)
    {
        Exception? last = null;
        for (int attempt = 1; attempt <= attempts; attempt++)
        {
            try
            {
                return call(state);
            }
            catch (Exception ex) when (IsRetriable(ex, CancellationToken.None))
            {
                last = ex;
                Log.StoreCallFailed(logger, ex, operation, attempt, attempts);
            }
        }
        throw new StoreUnavailableException(operation, attempts, last!);
    }

    /// <summary>
    /// What a retry may help with: not cancellation, not a damaged record (retrying reads the same bytes), not an id
    /// conflict or a bad argument (the caller decides), not running out of memory.
    /// </summary>
    private static bool IsRetriable(Exception ex, CancellationToken cancellationToken) =>
        ex is not (OutOfMemoryException or InvalidDataException or DictionaryIdConflictException or ArgumentException or NotSupportedException)
        && !(ex is OperationCanceledException && cancellationToken.IsCancellationRequested);
}

/// <summary>A store call failed on every attempt; the inner exception is the last failure.</summary>
internal sealed class StoreUnavailableException(string operation, int attempts, Exception inner)
    : IOException($"{operation} failed after {attempts} attempt(s): {inner.Message}", inner);
