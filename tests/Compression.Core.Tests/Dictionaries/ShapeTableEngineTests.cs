using Compression.Dictionaries;
using Compression.Core.Tests.Envelope;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// The structure-aware step in the engine: training learns a shape table and publishes it with the dictionary when it
/// measures smaller, writes pack documents with it, and any client, cold or not, reads them through the store.
/// </summary>
public sealed class ShapeTableEngineTests(ITestOutputHelper output) : IDisposable
{
    private const string Ns = "db.movies";
    private readonly string _directory = Directory.CreateTempSubdirectory("shapes-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static Task<(List<(byte[] Document, byte[] Envelope)> Written, DictionaryRecord Record)> WriteMoviesAsync(CompressionEngine engine, int seed) =>
        MovieWrites.WriteAsync(engine, Ns, seed, after: 200);

    private static CompressionCodec Codec(byte[] envelope) =>
        DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header.Codec : throw new InvalidOperationException("not an envelope");

    [Fact]
    public async Task Training_RecordsOfOneShape_PublishesAShapeTable_WritesPacked_AndAColdClientReadsEverything()
    {
        var store = new FileDictionaryStore(_directory);
        List<(byte[] Document, byte[] Envelope)> written;
        DictionaryRecord record;
        await using (var engine = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400)))
        {
            (written, record) = await WriteMoviesAsync(engine, seed: 3);
        }

        Assert.False(record.Shapes.IsEmpty);
        Assert.Equal(DictionaryRecord.ComputeContentHash(record.Shapes.Span), record.ShapesHash);
        var stored = await new FileDictionaryStore(_directory).GetAsync(record.Id);
        Assert.Equal(record.Shapes.ToArray(), stored!.Shapes.ToArray());
        int packed = written.Count(w => Corpus.IsStructured(Codec(w.Envelope)));
        output.WriteLine($"{packed} of {written.Count} envelopes packed; record {record.Id} v{record.Version}: {record.Shapes.Length}-byte shape table, held-out ratio {record.Ratio:F2}");
        Assert.True(packed >= 150, $"{packed} envelopes packed");

        // A client that never saw the dictionary: a new engine on a new store instance over the same folder.
        await using var cold = TestEngine.Create(new FileDictionaryStore(_directory));
        var ns = cold.GetNamespace(Ns);
        foreach (var (document, envelope) in written)
        {
            await ns.PreloadDictionaryAsync(envelope);
            Assert.Equal(document, ns.Decompress(envelope));
        }
    }

    [Fact]
    public async Task Training_PackDocumentsOff_PublishesNoShapeTable_AndNeverPacks()
    {
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.Defaults.Dictionary.PackDocuments = false;
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), options);
        var (written, record) = await WriteMoviesAsync(engine, seed: 4);
        Assert.True(record.Shapes.IsEmpty);
        Assert.Equal(0ul, record.ShapesHash);
        Assert.DoesNotContain(written, w => Corpus.IsStructured(Codec(w.Envelope)));
        Assert.Contains(written, w => Codec(w.Envelope) == CompressionCodec.Zstd);
    }

    [Fact]
    public async Task Training_FormatV1_PublishesNoShapeTable()
    {
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.Defaults.Format = EnvelopeFormat.V1;
        await using var engine = TestEngine.Create(new InMemoryDictionaryStore(), options);
        var (written, record) = await WriteMoviesAsync(engine, seed: 5);
        Assert.True(record.Shapes.IsEmpty);
        Assert.DoesNotContain(written, w => Corpus.IsStructured(Codec(w.Envelope)));
    }

    [Fact]
    public async Task CompressionSwitchedOff_PackedDocumentsStayReadable()
    {
        var store = new InMemoryDictionaryStore();
        List<(byte[] Document, byte[] Envelope)> written;
        await using (var engine = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400)))
        {
            (written, _) = await WriteMoviesAsync(engine, seed: 6);
        }
        Assert.Contains(written, w => Corpus.IsStructured(Codec(w.Envelope)));

        var off = CompressionEngineOptionsBuilder.Fast();
        off.Defaults.Codec = CompressionCodec.Stored;
        off.Defaults.Dictionary.Enabled = false;
        await using var reader = TestEngine.Create(store, off);
        var ns = reader.GetNamespace(Ns);
        foreach (var (document, envelope) in written)
        {
            await ns.PreloadDictionaryAsync(envelope);
            Assert.Equal(document, ns.Decompress(envelope));
        }
    }

    [Fact]
    public void Options_PackedZstdAsACodecSetting_IsRefusedNamingTheKeyAndTheAllowedCodecs()
    {
        var options = new CompressionEngineOptions();
        options.Defaults.Codec = CompressionCodec.PackedZstd;
        string error = Assert.Single(options.Validate());
        Assert.Contains("Codec", error);
        Assert.Contains("written by the engine", error);
        Assert.Contains("allowed: Stored, Zstd, Lz4, Snappy, Deflate, Brotli, Gzip.", error);
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
            var ns = trainer.GetNamespace("db.movies");
            for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
            await trainer.WhenIdleAsync();
            var record = ns.CurrentDictionary ?? (await ns.TrainAsync()).Dictionary;
            Assert.False(record!.Shapes.IsEmpty);
        }
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.Defaults.Dictionary.PackDocuments = false;
        await using var engine = TestEngine.Create(store, options);
        var writer = engine.GetNamespace("db.movies");
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
}
