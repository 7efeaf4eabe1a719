namespace Compression.Testing.Mongo;

/// <summary>Holds back every reply of a <see cref="MongoLoopbackServer"/> (requests are still read and executed)
/// until <see cref="Release"/> or <see cref="Dispose"/>.</summary>
public sealed class ReplyStall : IDisposable
{
    private readonly MongoLoopbackServer _server;
    private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _firstHeld = new(TaskCreationOptions.RunContinuationsAsynchronously);

    internal ReplyStall(MongoLoopbackServer server) => _server = server;

    /// <summary>Completes when the first reply is being held back.</summary>
    public Task FirstReplyHeld => _firstHeld.Task;

    /// <summary>True once released.</summary>
    public bool IsReleased => _released.Task.IsCompleted;

    internal Task Released => _released.Task;

    /// <summary>Lets the held replies go, and every later one.</summary>
    public void Release()
    {
        _server.EndStall(this);
        _released.TrySetResult();
    }

    /// <inheritdoc cref="Release"/>
    public void Dispose() => Release();

    internal void NoteHeld() => _firstHeld.TrySetResult();
}
