using Compression.Dictionaries;
using Compression.MongoDB;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;

namespace Compression.StorageLoad;

/// <summary>
/// A document as the benchmark hands it to the serializer: the <c>_id</c>, then the corpus document's elements in their
/// order. The class map writes <c>{_id, ...fields}</c>, which is the plain document; no POCO of the corpus is needed.
/// </summary>
public sealed class StoredDocument
{
    /// <summary>The document's <c>_id</c>.</summary>
    [BsonId]
    public BsonValue Id { get; set; } = BsonNull.Value;

    /// <summary>Every other element, in order.</summary>
    [BsonExtraElements]
    public BsonDocument Fields { get; set; } = [];
}

/// <summary>
/// The only place that uses <see cref="CompressionEngine"/> and <see cref="CompressedDocumentSerializer{T}"/>: what the
/// serializer writes for one collection whose documents arrive in file order, with zstd-3 and dictionaries trained as a
/// live collection would (bootstrap without a dictionary included). Training runs inline at the moment the engine would
/// start it in the background, with a seeded random source, as <c>OnlineReplay</c> (and so <c>docz analyze --online</c>)
/// does, so a run is repeatable; as there, the time-based rate limit between training runs is off.
/// </summary>
internal sealed class SerializerPath : IAsyncDisposable
{
    public const string Namespace = "bench.collection";

    private readonly CompressionEngine _engine;
    private readonly CompressionNamespace _namespace;
    private readonly CompressedDocumentSerializer<StoredDocument> _serializer;
    private readonly MemoryStream _buffer = new();
    private readonly InMemoryDictionaryStore _store;
    private readonly DocumentCompressor _compressor;
    private readonly Dictionary<uint, ZstdDictionary> _dictionaries = [];

    private SerializerPath(CompressionEngine engine, InMemoryDictionaryStore store, EnvelopeFormat format)
    {
        _engine = engine;
        _store = store;
        _compressor = new DocumentCompressor(new DocumentCompressorOptions { Codec = CompressionCodec.Zstd, Level = 3, Format = format });
        _namespace = engine.GetNamespace(Namespace);
        _serializer = new CompressedDocumentSerializer<StoredDocument>(_namespace);
    }

    public static async Task<SerializerPath> CreateAsync(int seed, EnvelopeFormat format = EnvelopeFormat.V3)
    {
        var options = new CompressionEngineOptions { PollInterval = TimeSpan.FromHours(1) };
        options.Defaults.Codec = CompressionCodec.Zstd;
        options.Defaults.Level = 3;
        options.Defaults.Format = format;
        options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.Zero;
        var store = new InMemoryDictionaryStore();
        var engine = new CompressionEngine(store, options) { InlineTraining = true, Random = new Random(seed) };
        var path = new SerializerPath(engine, store, format);
        await path._namespace.RefreshAsync().ConfigureAwait(false);
        await engine.WhenIdleAsync().ConfigureAwait(false);
        return path;
    }

    /// <summary>
    /// Trains from <paramref name="documents"/> before any is written, as an application does before a bulk load
    /// (<c>collection.TrainCompressionAsync(firstBatch)</c>, which splits each document as the serializer does).
    /// </summary>
    public Task<TrainingResult> TrainFirstAsync(IEnumerable<StoredDocument> documents)
    {
        var serializer = (ICompressedDocumentSerializer<StoredDocument>)_serializer;
        return _namespace.TrainAsync(documents.Select(d => (ReadOnlyMemory<byte>)serializer.CompressedPart(d)));
    }

    /// <summary>The version of the dictionary new documents are compressed with (0: none yet).</summary>
    public int DictionaryVersion => _namespace.CurrentDictionary?.Version ?? 0;

    /// <summary>The BSON document the serializer writes: <c>{_id, _z: BinData(0x81, envelope)}</c> (0x80 with format v1).</summary>
    public byte[] Serialize(StoredDocument document)
    {
        _buffer.SetLength(0);
        using (var writer = new BsonBinaryWriter(_buffer))
        {
            _serializer.Serialize(BsonSerializationContext.CreateRoot(writer), document);
        }
        return _buffer.ToArray();
    }

    /// <summary>
    /// Reads a plain BSON document through the driver's class map, as a plain collection's read does: from a byte buffer
    /// stream, as the driver reads a reply (a <see cref="MemoryStream"/> would be read through a slower adapter).
    /// </summary>
    public static StoredDocument DeserializePlain(byte[] plain)
    {
        using var buffer = new ByteArrayBuffer(plain, isReadOnly: true);
        using var stream = new ByteBufferStream(buffer);
        using var reader = new BsonBinaryReader(stream);
        return BsonSerializer.LookupSerializer<StoredDocument>().Deserialize(BsonDeserializationContext.CreateRoot(reader));
    }

    /// <summary>Reads a stored document back through the serializer (from a byte buffer stream, as the driver does).</summary>
    public StoredDocument Deserialize(byte[] stored)
    {
        using var buffer = new ByteArrayBuffer(stored, isReadOnly: true);
        using var stream = new ByteBufferStream(buffer);
        using var reader = new BsonBinaryReader(stream);
        return _serializer.Deserialize(BsonDeserializationContext.CreateRoot(reader));
    }

    /// <summary>
    /// What the compressed part's own BSON framing (int32 length and terminator, 5 bytes before compression) costs inside
    /// an envelope: the payload bytes of the whole inner document less those of its elements alone, compressed with the
    /// same dictionary, level and format. Under subtype 0x81 (format v2) the framing is not stored; this says what it
    /// would cost. Null for stored envelopes.
    /// </summary>
    public long? InnerFramingCost(byte[] envelope, bool elementsOnly)
    {
        if (!DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) || header.Codec == CompressionCodec.Stored) return null;
        ZstdDictionary? dictionary = null;
        if (header.DictionaryId is uint id && !_dictionaries.TryGetValue(id, out dictionary))
        {
            DictionaryRecord record = _store.Get(id) ?? throw new InvalidOperationException($"dictionary {id} is not in the store");
            _dictionaries[id] = dictionary = ZstdDictionary.Create(record.Id, record.Content.Span);
        }
        byte[] inner = _namespace.Decompress(envelope);
        byte[] elements = elementsOnly ? inner : inner[4..^1];
        byte[] document = new byte[elements.Length + 5];
        BitConverter.TryWriteBytes(document, document.Length);
        elements.CopyTo(document, 4);
        if (!DocumentEnvelope.TryReadHeader(_compressor.Compress(elements, dictionary), out EnvelopeHeader lean) || lean.Codec == CompressionCodec.Stored) return null;
        if (!DocumentEnvelope.TryReadHeader(_compressor.Compress(document, dictionary), out EnvelopeHeader whole) || whole.Codec == CompressionCodec.Stored) return null;
        return (long)whole.PayloadLength - lean.PayloadLength;
    }

    public ValueTask DisposeAsync() => _engine.DisposeAsync();
}
