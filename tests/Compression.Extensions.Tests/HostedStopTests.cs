using Compression.Dictionaries;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Xunit;

namespace Compression.Extensions.Tests;

/// <summary>
/// A host whose shutdown timeout ends before the engine's background work stops gracefully (found 2026-12-08: on a
/// loaded machine a training run outlasted the default 30 s, and the sample's <c>host.StopAsync</c> threw
/// <see cref="TaskCanceledException"/>). The stop returns; disposing the host waits for the work.
/// </summary>
public sealed class HostedStopTests
{
    [Fact]
    public async Task A_stop_whose_shutdown_timeout_ends_during_background_work_returns_and_the_disposal_waits_for_the_work()
    {
        var store = new BlockingStore();
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.Zero);
        builder.Services.AddDocumentCompression(builder.Configuration).UseStore(_ => store);
        IHost host = builder.Build();
        await host.StartAsync();
        var engine = host.Services.GetRequiredService<CompressionEngine>();
        _ = engine.GetNamespace("db.movies"); // its background load waits on the store, past any token
        await store.Entered.Task;

        await host.StopAsync(); // the timeout (zero) ends the wait at once: no exception

        Assert.False(store.Gate.Task.IsCompleted);
        ValueTask disposal = ((IAsyncDisposable)host).DisposeAsync();
        Assert.False(disposal.IsCompleted); // the disposal waits for the load
        store.Gate.SetResult();
        await disposal;
        Assert.Equal(1, store.Loads);
    }

    /// <summary>An in-memory store whose reads of the current version wait for <see cref="Gate"/>, ignoring cancellation.</summary>
    private sealed class BlockingStore : DictionaryStore
    {
        private readonly InMemoryDictionaryStore _inner = new();

        public TaskCompletionSource Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Gate { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public int Loads;

        public override string Location => "blocking in-memory store";

        public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default) => _inner.GetAsync(id, cancellationToken);

        public override async ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
        {
            Entered.TrySetResult();
            await Gate.Task.ConfigureAwait(false);
            Interlocked.Increment(ref Loads);
            return await _inner.GetCurrentAsync(@namespace, CancellationToken.None).ConfigureAwait(false);
        }

        public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default) => _inner.PublishAsync(candidate, cancellationToken);

        public override IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, CancellationToken cancellationToken = default) => _inner.ListAsync(@namespace, cancellationToken);
    }
}
