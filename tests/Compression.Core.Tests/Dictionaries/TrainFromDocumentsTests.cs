using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// A bulk load trains from its first batch before writing it (issue #40: 2,300 of 3,201 documents of the sample went
/// out before background training had a dictionary). <see cref="CompressionNamespace.TrainAsync(IEnumerable{ReadOnlyMemory{byte}}, CancellationToken)"/>.
/// </summary>
public sealed class TrainFromDocumentsTests
{
    private static List<ReadOnlyMemory<byte>> Movies(int count, int seed = 7)
    {
        var random = new Random(seed);
        return [.. Enumerable.Range(0, count).Select(_ => (ReadOnlyMemory<byte>)TestDocuments.Movie(random))];
    }

    private static CompressionEngine Engine(InMemoryDictionaryStore store, CompressionEngineOptions? options = null) =>
        new(store, options ?? CompressionEngineOptionsBuilder.Fast(), timeProvider: new Microsoft.Extensions.Time.Testing.FakeTimeProvider())
        {
            InlineTraining = true,
            Random = new Random(1),
        };

    [Fact]
    public async Task TheFirstBatch_IsCompressedWithADictionary_TrainedFromIt()
    {
        var store = new InMemoryDictionaryStore();
        await using var engine = Engine(store);
        CompressionNamespace ns = engine.GetNamespace("db.movies");
        List<ReadOnlyMemory<byte>> batch = Movies(300);

        TrainingResult result = await ns.TrainAsync(batch);

        Assert.Equal(TrainingOutcome.Adopted, result.Outcome);
        DictionaryRecord record = Assert.IsType<DictionaryRecord>(result.Dictionary);
        Assert.Same(record, ns.CurrentDictionary);
        Assert.Equal(1, record.Version);
        Assert.NotNull(await store.GetAsync(record.Id)); // published, so every client reads what this one writes
        byte[] envelope = ns.Compress(batch[0].Span);
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header));
        Assert.Equal(record.Id, header.DictionaryId);
        Assert.Equal(batch[0].ToArray(), ns.Decompress(envelope));
    }

    [Fact]
    public async Task GivenDocuments_AreNotKept_AndCountAsSeenForTheNextRetraining()
    {
        await using var engine = Engine(new InMemoryDictionaryStore());
        CompressionNamespace ns = engine.GetNamespace("db.movies");
        int runs = 0;
        engine.Coordinator.TrainingStarting += _ => runs++;
        List<ReadOnlyMemory<byte>> batch = Movies(300);
        Assert.Equal(TrainingOutcome.Adopted, (await ns.TrainAsync(batch)).Outcome);
        Assert.Equal(1, runs);
        Assert.Equal(0, ns.State.Reservoir.Count);

        // Writing the batch (300 documents seen) does not retrain: training saw 300. Before, DocsAtLastTraining was the
        // documents written (none), so the growth trigger fired at the second write and again at every doubling.
        foreach (ReadOnlyMemory<byte> document in batch) ns.Compress(document.Span);
        Assert.Equal(1, runs);

        // Doubling what training saw does.
        foreach (ReadOnlyMemory<byte> document in Movies(301, seed: 8)) ns.Compress(document.Span);
        Assert.Equal(2, runs);
    }

    [Fact]
    public async Task GivenDocuments_AreBoundedAsSamplesAre()
    {
        CompressionEngineOptions options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Dictionary.MinSampleCount = 50;
        options.Defaults.Dictionary.MaxSampleCount = 200;
        await using var engine = Engine(new InMemoryDictionaryStore(), options);
        CompressionNamespace ns = engine.GetNamespace("db.movies");

        TrainingResult result = await ns.TrainAsync(Movies(1_000));

        DictionaryRecord record = Assert.IsType<DictionaryRecord>(result.Dictionary);
        Assert.Equal(200 - (int)(200 * options.Defaults.Dictionary.HoldoutFraction), record.SampleCount);
    }

    [Fact]
    public async Task TooFewDocuments_TrainNothing_AndSayWhy()
    {
        await using var engine = Engine(new InMemoryDictionaryStore());
        CompressionNamespace ns = engine.GetNamespace("db.movies");

        TrainingResult result = await ns.TrainAsync(Movies(10));

        Assert.Equal(TrainingOutcome.TooFewSamples, result.Outcome);
        Assert.Null(ns.CurrentDictionary);
    }

    [Fact]
    public async Task ANamespaceWithoutDictionaries_SaysSo()
    {
        CompressionEngineOptions options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Codec = CompressionCodec.Lz4;
        await using var engine = Engine(new InMemoryDictionaryStore(), options);

        TrainingResult result = await engine.GetNamespace("db.movies").TrainAsync(Movies(300));

        Assert.Equal(TrainingOutcome.Disabled, result.Outcome);
    }
}
