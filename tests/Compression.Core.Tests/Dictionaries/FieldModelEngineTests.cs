using Compression.Dictionaries;
using Compression.Core.Tests.Envelope;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// The field model in the engine (docs/field-model.md): training publishes it with the shape table when fields pay,
/// writers code documents with it (codec 8), a cold client reads them through the store, and turning the option off
/// writes codec 7 only, while everything written before stays readable.
/// </summary>
public sealed class FieldModelEngineTests(ITestOutputHelper output) : IDisposable
{
    private const string Ns = "db.movies";
    private readonly string _directory = Directory.CreateTempSubdirectory("fields-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static CompressionCodec Codec(byte[] envelope) =>
        DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header.Codec : throw new InvalidOperationException("not an envelope");

    private static Task<(List<(byte[] Document, byte[] Envelope)> Written, DictionaryRecord Record)> WriteMoviesAsync(CompressionEngine engine, int seed) =>
        MovieWrites.WriteAsync(engine, Ns, seed, after: 400);

    [Fact]
    public async Task Training_MoviesWithCategoricalFields_PublishesAFieldModel_WritesCodec8_SmallerThanCodec7_AndAColdClientReadsEverything()
    {
        List<(byte[] Document, byte[] Envelope)> written;
        DictionaryRecord record;
        await using (var engine = TestEngine.Create(new FileDictionaryStore(_directory), CompressionEngineOptionsBuilder.TrainOnceAt(400)))
        {
            (written, record) = await WriteMoviesAsync(engine, seed: 3);
        }
        Assert.True(record.Shapes.Span.StartsWith("SMDL"u8), "the record carries the shape table with a field model");
        var after = written.Skip(400).ToList();
        int coded = after.Count(w => Corpus.IsFieldCoded(Codec(w.Envelope)));
        Assert.True(coded >= after.Count * 9 / 10, $"{coded} of {after.Count} written as codec 8");

        // The same documents through a namespace that learns no field model (codec 7), trained on the same documents.
        var options = CompressionEngineOptionsBuilder.TrainOnceAt(400);
        options.Defaults.Dictionary.ModelFields = false;
        List<(byte[] Document, byte[] Envelope)> packed;
        await using (var engine = TestEngine.Create(new InMemoryDictionaryStore(), options))
        {
            (packed, DictionaryRecord plainRecord) = await WriteMoviesAsync(engine, seed: 3);
            Assert.True(plainRecord.Shapes.Span.StartsWith("SHPT"u8), "without the option, the table alone");
        }
        Assert.DoesNotContain(packed, w => Corpus.IsFieldCoded(Codec(w.Envelope)));
        long fieldBytes = after.Sum(w => (long)w.Envelope.Length), packedBytes = packed.Skip(400).Sum(w => (long)w.Envelope.Length);
        output.WriteLine($"400 documents after training: codec 8 {fieldBytes} bytes, codec 7 {packedBytes} bytes ({(double)fieldBytes / packedBytes:F3})");
        Assert.True(fieldBytes < packedBytes * 0.95, $"codec 8 {fieldBytes} bytes against codec 7 {packedBytes}");

        // A client that never saw the dictionary reads every document through the store.
        await using var cold = TestEngine.Create(new FileDictionaryStore(_directory));
        var ns = cold.GetNamespace(Ns);
        foreach (var (document, envelope) in written)
        {
            await ns.PreloadDictionaryAsync(envelope);
            Assert.Equal(document, ns.Decompress(envelope));
        }
    }

    [Fact]
    public async Task ModelFieldsSwitchedOff_Later_WritesCodec7OrPlain_AndCodec8DocumentsStayReadable()
    {
        var store = new InMemoryDictionaryStore();
        List<(byte[] Document, byte[] Envelope)> written;
        await using (var engine = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400)))
        {
            (written, _) = await WriteMoviesAsync(engine, seed: 6);
        }
        Assert.Contains(written, w => Corpus.IsFieldCoded(Codec(w.Envelope)));

        // A namespace configured without the field model and without packing reads everything, and writes none of it.
        var off = CompressionEngineOptionsBuilder.Fast();
        off.Defaults.Dictionary.ModelFields = false;
        off.Defaults.Dictionary.PackDocuments = false;
        await using var reader = TestEngine.Create(store, off);
        var ns = reader.GetNamespace(Ns);
        foreach (var (document, envelope) in written)
        {
            await ns.PreloadDictionaryAsync(envelope);
            Assert.Equal(document, ns.Decompress(envelope));
            Assert.False(Corpus.IsFieldCoded(Codec(ns.Compress(document))));
        }
    }

    [Fact]
    public async Task ModelFieldsOff_WithADictionaryAnotherClientTrainedWithAFieldModel_WritesCodec7()
    {
        var store = new InMemoryDictionaryStore();
        await using (var engine = TestEngine.Create(store, CompressionEngineOptionsBuilder.TrainOnceAt(400)))
        {
            var (written, record) = await WriteMoviesAsync(engine, seed: 8);
            Assert.True(record.Shapes.Span.StartsWith("SMDL"u8));
        }

        // A client of the rollout's first stage: it reads codec 8, and must not write it for readers that do not.
        var options = CompressionEngineOptionsBuilder.Fast();
        options.Defaults.Dictionary.ModelFields = false;
        await using var older = TestEngine.Create(store, options);
        var ns = older.GetNamespace(Ns);
        await older.RefreshAsync();
        Assert.NotNull(ns.CurrentDictionary);
        var random = new Random(9);
        for (int i = 0; i < 100; i++)
        {
            byte[] document = TestDocuments.Movie(random);
            byte[] envelope = ns.Compress(document);
            Assert.Equal(CompressionCodec.PackedZstd, Codec(envelope));
            Assert.Equal(document, ns.Decompress(envelope));
        }
    }

    [Fact]
    public void Options_FieldZstdAsACodecSetting_IsRefusedNamingTheKey()
    {
        var options = new CompressionEngineOptions();
        options.Defaults.Codec = CompressionCodec.FieldZstd;
        string error = Assert.Single(options.Validate());
        Assert.Contains("Codec: 'FieldZstd' is written by the engine", error, StringComparison.Ordinal);
        Assert.Contains("allowed: Stored, Zstd, Lz4, Snappy, Deflate, Brotli, Gzip.", error, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.FieldZstd }));
    }
}
