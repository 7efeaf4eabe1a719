using Compression.Dictionaries;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>An asynchronous-only store over an <see cref="InMemoryDictionaryStore"/> whose faults tests switch on and off.</summary>
internal sealed class ControllableStore(InMemoryDictionaryStore inner) : IDictionaryStore
{
    private int _getCalls;
    private int _publishCalls;

    public InMemoryDictionaryStore Inner { get; } = inner;

    public volatile bool FailPublish;
    public volatile bool FailGet;
    public TimeSpan GetDelay;
    public TimeSpan CurrentDelay;

    public int GetCalls => Volatile.Read(ref _getCalls);

    public int PublishCalls => Volatile.Read(ref _publishCalls);

    public async ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _getCalls);
        if (GetDelay > TimeSpan.Zero) await Task.Delay(GetDelay, cancellationToken);
        if (FailGet) throw new IOException("store unreachable (test)");
        return await Inner.GetAsync(id, cancellationToken);
    }

    public async ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        if (CurrentDelay > TimeSpan.Zero) await Task.Delay(CurrentDelay, cancellationToken);
        if (FailGet) throw new IOException("store unreachable (test)");
        return await Inner.GetCurrentAsync(@namespace, cancellationToken);
    }

    public ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _publishCalls);
        return FailPublish ? throw new IOException("store unreachable (test)") : Inner.PublishAsync(candidate, cancellationToken);
    }

    public IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default) =>
        Inner.ListAsync(@namespace, cancellationToken);
}
