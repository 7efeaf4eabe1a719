using Compression.Dictionaries;
using Microsoft.Extensions.Time.Testing;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary><c>MinTrainingInterval</c> on a fake clock: one training run per interval, and no clock read per write while one waits.</summary>
public sealed class TrainingIntervalTests
{
    private const string Ns = "db.movies";

    /// <summary>A fake clock that counts how often its timestamp is read.</summary>
    private sealed class CountingClock : FakeTimeProvider
    {
        private int _reads;

        public int Reads => Volatile.Read(ref _reads);

        public override long GetTimestamp()
        {
            Interlocked.Increment(ref _reads);
            return base.GetTimestamp();
        }
    }

    private static CompressionEngineOptions Options()
    {
        var options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.FromSeconds(30);
        options.Defaults.Dictionary.GrowthFactor = 1.1; // due again a few writes after a run
        options.Defaults.Dictionary.MaxSampleCount = 5000; // (growth is a trigger only while runs see fewer samples than this)
        return options;
    }

    /// <summary>Writes until the first training run has started and ended; returns the engine's run count.</summary>
    private static async Task<Func<int>> TrainOnceAsync(CompressionEngine engine, Random random)
    {
        int runs = 0;
        engine.InlineTraining = true; // runs start on the write that finds them due: the counts below are exact
        engine.TrainingStarting = _ => Interlocked.Increment(ref runs);
        var ns = engine.GetNamespace(Ns);
        await ns.RefreshAsync();
        for (int i = 0; i < 1000 && Volatile.Read(ref runs) == 0; i++) ns.Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        Assert.Equal(1, Volatile.Read(ref runs));
        return () => Volatile.Read(ref runs);
    }

    /// <summary>Writes enough for a training run to be due again (growth): within the interval, it waits.</summary>
    private static Task WriteUntilDueAsync(CompressionEngine engine, Random random) => WriteAsync(engine, random, 500);

    private static async Task WriteAsync(CompressionEngine engine, Random random, int count)
    {
        for (int i = 0; i < count; i++) engine.GetNamespace(Ns).Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
    }

    [Fact]
    public async Task TrainingDueAgain_WaitsOutMinTrainingInterval_ThenStartsOnTheNextWrite()
    {
        var time = new FakeTimeProvider();
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), Options(), time);
        var random = new Random(5);
        Func<int> runs = await TrainOnceAsync(engine, random);

        await WriteUntilDueAsync(engine, random); // due again (growth), but within the interval
        Assert.Equal(1, runs());

        time.Advance(TimeSpan.FromSeconds(29));
        await WriteAsync(engine, random, 50);
        Assert.Equal(1, runs());

        time.Advance(TimeSpan.FromSeconds(1));
        await WriteAsync(engine, random, 1); // the first write after the interval starts the run
        Assert.Equal(2, runs());
    }

    [Fact]
    public async Task WritesWhileATrainingWaits_DoNotReadTheClockEachTime()
    {
        var time = new CountingClock();
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), Options(), time);
        var random = new Random(6);
        await TrainOnceAsync(engine, random);
        await WriteUntilDueAsync(engine, random); // due again: the first due write reads the clock, and the run waits

        int before = time.Reads;
        await WriteAsync(engine, random, 2000);
        Assert.Equal(before, time.Reads);
    }

    [Fact]
    public async Task StoppingTheEngine_EndsAWaitingTrainingsTimer()
    {
        var time = new FakeTimeProvider();
        var engine = TestEngine.Create(new InMemoryDictionaryStore(), Options(), time);
        var random = new Random(7);
        await TrainOnceAsync(engine, random);
        await WriteUntilDueAsync(engine, random);
        NamespaceState state = engine.GetNamespace(Ns).State;
        Assert.True(state.TrainingDeferred);

        await engine.DisposeAsync();
        Assert.False(state.TrainingDeferred);
        state.Reservoir.Offer(TestDocuments.Movie(random));
        engine.Coordinator.OnWrite(state); // a write after the stop: still due and too soon, and no timer is made
        Assert.False(state.TrainingDeferred);
    }

    [Fact]
    public async Task AStopWhoseWaitIsCancelled_StillEndsAWaitingTrainingsTimer()
    {
        // Found by review: the timers were ended after the wait for the background work, which a cancelled stop leaves.
        var store = new ControllableStore(new InMemoryDictionaryStore());
        var engine = TestEngine.Create(store, Options(), new FakeTimeProvider());
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        try
        {
            var random = new Random(8);
            await TrainOnceAsync(engine, random);
            await WriteUntilDueAsync(engine, random);
            NamespaceState state = engine.GetNamespace(Ns).State;
            Assert.True(state.TrainingDeferred);

            var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            store.CurrentEntered = entered;
            store.CurrentGateIgnoresCancellation = true;
            store.CurrentGate = gate;
            engine.GetNamespace("db.other"); // its background load waits on the store, past the stop's token
            await entered.Task.WaitAsync(TimeSpan.FromMinutes(5)); // a safety net, not a wait for a condition
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => engine.StopAsync(new CancellationToken(canceled: true)));

            Assert.False(state.TrainingDeferred);
        }
        finally
        {
            gate.TrySetResult();
            await engine.DisposeAsync();
        }
    }
}
