using System.Runtime.CompilerServices;
using Compression.Dictionaries;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// An asynchronous-only store over an <see cref="InMemoryDictionaryStore"/> whose faults tests switch on and off, and
/// whose answers tests can hold back until they release them (gates, not delays: nothing waits on wall time).
/// </summary>
internal sealed class ControllableStore(InMemoryDictionaryStore inner) : DictionaryStore
{
    private int _getCalls;
    private int _currentCalls;
    private int _publishCalls;

    public InMemoryDictionaryStore Inner { get; } = inner;

    public volatile bool FailPublish;
    public volatile bool FailGet;

    /// <summary>When set, GetAsync waits for it before answering.</summary>
    public TaskCompletionSource? GetGate;

    /// <summary>When set, GetCurrentAsync waits for it before answering.</summary>
    public TaskCompletionSource? CurrentGate;

    /// <summary>When true, GetCurrentAsync waits for <see cref="CurrentGate"/> whatever its token says (a driver call that ignores cancellation).</summary>
    public volatile bool CurrentGateIgnoresCancellation;

    /// <summary>When set, completed as GetCurrentAsync is entered.</summary>
    public TaskCompletionSource? CurrentEntered;

    /// <summary>Replaces what GetCurrentAsync and GetAsync return (a tampered store).</summary>
    public Func<DictionaryRecord?, DictionaryRecord?>? Tamper;

    public override string Location => "the controllable test store";

    public int GetCalls => Volatile.Read(ref _getCalls);

    public int CurrentCalls => Volatile.Read(ref _currentCalls);

    public int PublishCalls => Volatile.Read(ref _publishCalls);

    public override async ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _getCalls);
        if (GetGate is { } gate) await gate.Task.WaitAsync(cancellationToken);
        if (FailGet) throw new IOException("store unreachable (test)");
        var record = await Inner.GetAsync(id, cancellationToken);
        return Tamper is null ? record : Tamper(record);
    }

    public override async ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _currentCalls);
        CurrentEntered?.TrySetResult();
        if (CurrentGate is { } gate) await (CurrentGateIgnoresCancellation ? gate.Task : gate.Task.WaitAsync(cancellationToken));
        if (FailGet) throw new IOException("store unreachable (test)");
        var record = await Inner.GetCurrentAsync(@namespace, cancellationToken);
        return Tamper is null ? record : Tamper(record);
    }

    public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _publishCalls);
        return FailPublish ? throw new IOException("store unreachable (test)") : Inner.PublishAsync(candidate, cancellationToken);
    }

    public override async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        await foreach (var record in Inner.ListAsync(@namespace, cancellationToken)) yield return record;
    }
}
