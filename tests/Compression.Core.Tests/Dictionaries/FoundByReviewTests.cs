using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>Faults of the engine's settings found by review (2026-11-24, eighth session); each test failed before its fix.</summary>
public sealed class FoundByReviewTests
{
    private const string Ns = "db.movies";

    [Fact]
    public async Task DictionarySizeOverMaxDictionaryBytes_IsRefusedAtStartUp_NamingBothKeys()
    {
        // Before: an 8 KiB dictionary was trained, published and written with, then refused by every reader with the same
        // options (MaxDictionaryBytes 1024), the writer too once it left the cache: every document written with it was unreadable.
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.MaxDictionaryBytes = 1024;
        options.Defaults.Dictionary.DictionarySize = 8 * 1024;
        options.Namespaces["db.small"] = new NamespaceOptions { Dictionary = new DictionaryOptions { DictionarySize = 1024 } };
        options.Namespaces["db.large"] = new NamespaceOptions { Dictionary = new DictionaryOptions { DictionarySize = 4096 } };
        var ex = Assert.Throws<ArgumentException>(() => TestEngine.Create(new InMemoryDictionaryStore(), options));
        Assert.Contains("Compression:Defaults:Dictionary:DictionarySize: 8192 is over Compression:MaxDictionaryBytes (1024)", ex.Message, StringComparison.Ordinal);
        Assert.Contains("Compression:Namespaces:db.large:Dictionary:DictionarySize: 4096", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("db.small", ex.Message, StringComparison.Ordinal);

        // Within the bound, what one client writes another reads.
        options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.MaxDictionaryBytes = 8 * 1024;
        options.Defaults.Dictionary.DictionarySize = 8 * 1024;
        var store = new InMemoryDictionaryStore();
        var written = new List<(byte[] Document, byte[] Envelope)>();
        await using (var engine = TestEngine.Create(store, options))
        {
            var ns = engine.GetNamespace(Ns);
            var random = new Random(3);
            for (int i = 0; i < 450; i++)
            {
                byte[] d = TestDocuments.Movie(random);
                written.Add((d, ns.Compress(d)));
            }
            await engine.WhenIdleAsync();
            Assert.NotNull(ns.CurrentDictionary ?? (await ns.TrainAsync()).Dictionary);
        }
        await using var other = TestEngine.Create(store, options);
        var reader = other.GetNamespace(Ns);
        foreach (var (document, envelope) in written)
        {
            await reader.EnsureDictionaryAsync(envelope);
            Assert.Equal(document, reader.Decompress(envelope));
        }
    }

    [Fact]
    public async Task PackDocumentsFalse_WritesPlainZstd_EvenWithADictionaryThatHasAShapeTable()
    {
        // Before: PackDocuments = false (for readers that do not know codec 7) only stopped training a shape table; a client
        // that adopted a dictionary with one (published by another client) still wrote packed envelopes.
        var store = new InMemoryDictionaryStore();
        var random = new Random(3);
        await using (var trainer = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400)))
        {
            var ns = trainer.GetNamespace(Ns);
            for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
            await trainer.WhenIdleAsync();
            var record = ns.CurrentDictionary ?? (await ns.TrainAsync()).Dictionary;
            Assert.False(record!.Shapes.IsEmpty);
        }
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.Defaults.Dictionary.PackDocuments = false;
        await using var engine = TestEngine.Create(store, options);
        var writer = engine.GetNamespace(Ns);
        await writer.RefreshAsync();
        Assert.NotNull(writer.CurrentDictionary);
        var codecs = new List<CompressionCodec>();
        for (int i = 0; i < 50; i++)
        {
            byte[] document = TestDocuments.Movie(random);
            byte[] envelope = writer.Compress(document);
            Assert.True(DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header));
            codecs.Add(header.Codec);
            Assert.Equal(writer.CurrentDictionary!.Id, header.DictionaryId);
            Assert.Equal(document, writer.Decompress(envelope));
        }
        Assert.All(codecs, c => Assert.Equal(CompressionCodec.Zstd, c));
    }

    [Fact]
    public async Task BackgroundWork_StartedAfterDisposal_DoesNotThrow_AndNothingStartsOnceStopped()
    {
        // Suspected by review: the write path starts background work (a training run) after the envelope is written; a
        // disposal between the "stopping?" check and the token read threw ObjectDisposedException out of a write that had
        // succeeded. Dispose without a stop is the widest form of that window.
        var work = new BackgroundWork();
        work.Dispose();
        Exception? thrown = Record.Exception(() => work.Run(_ => Task.CompletedTask));
        Assert.Null(thrown);
        await work.WhenIdleAsync();

        // Stopped (as the engine stops before it disposes): nothing starts any more.
        var stopped = new BackgroundWork();
        await stopped.StopAsync(CancellationToken.None);
        stopped.Dispose();
        bool started = false;
        stopped.Run(_ =>
        {
            started = true;
            return Task.CompletedTask;
        });
        await stopped.WhenIdleAsync();
        Assert.False(started);
        Assert.True(stopped.IsStopping);
    }

    [Fact]
    public async Task BackgroundWork_RunRacingAStop_NeverStartsWorkAfterTheStopReturned()
    {
        // Found by review (2026-11-25): Run checked the stop signal, then tracked its task; a stop in between cancelled,
        // found nothing running and returned, and the work started afterwards, on an engine already disposed. The race is
        // run many times on two threads; before the fix about a quarter of the rounds started their work after the stop had
        // returned.
        int late = 0;
        for (int round = 0; round < 3000; round++)
        {
            var work = new BackgroundWork();
            int stopReturned = 0;
            using var go = new Barrier(2);
            Task runner = Task.Factory.StartNew(() =>
            {
                go.SignalAndWait();
                work.Run(_ =>
                {
                    if (Volatile.Read(ref stopReturned) == 1) Interlocked.Increment(ref late);
                    return Task.CompletedTask;
                });
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            go.SignalAndWait();
            // Bounded: a first fix of the race could leave the stop spinning forever on a completed task (see WhenIdleAsync).
            await work.StopAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30));
            Volatile.Write(ref stopReturned, 1);
            await runner;
            await work.WhenIdleAsync();
            work.Dispose();
        }
        Assert.Equal(0, late);
    }
}
