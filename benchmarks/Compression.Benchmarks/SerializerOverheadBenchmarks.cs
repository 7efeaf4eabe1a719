using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Compression.Dictionaries;
using Compression.MongoDB;
using MongoDB.Bson;
using MongoDB.Bson.IO;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;
using ZstdSharp;

namespace Compression.Benchmarks;

/// <summary>
/// The middleware overhead of <see cref="CompressedDocumentSerializer{T}"/>: one operation writes (or reads) every measured
/// document of a corpus, as POCOs, through our serializer against the bare minimum: the driver's class-map serializer into a
/// reused buffer, then one ZstdSharp call with the same level-3 dictionary into a reused buffer (and the reverse).
/// Both write into a reused stream; the dictionary is trained by the engine from the 20% training split.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)]
[CategoriesColumn]
public class SerializerOverheadBenchmarks
{
    private const string Namespace = "bench.documents";

    private Case _case = null!;

    public static IEnumerable<string> Corpora => Benchmarks.Corpus.Selected("movies", "flights");

    [ParamsSource(nameof(Corpora))]
    public string Corpus { get; set; } = "movies";

    [GlobalSetup]
    public void Setup()
    {
        var corpus = Benchmarks.Corpus.Load(Corpus);
        _case = Corpus switch
        {
            "movies" => new Case<MovieDocument>(corpus, MovieDocument.From, ["Title"]),
            "flights" => new Case<FlightDocument>(corpus, FlightDocument.From, ["Origin"]),
            _ => throw new NotSupportedException($"No POCO for corpus '{Corpus}' (movies and flights have one)."),
        };
        double ratio = (double)_case.RawBsonBytes / _case.StoredBytes;
        foreach (string method in new[] { nameof(SerializeBare), nameof(SerializeEngine), nameof(SerializeOurs), nameof(DeserializeBare), nameof(DeserializeOurs), nameof(DeserializePlain) })
            FactsFile.Append(CaseKey.Of(method, (nameof(Corpus), Corpus)), _case.RawBsonBytes, ratio);
    }

    [GlobalCleanup]
    public void Cleanup() => _case.Dispose();

    [Benchmark(Baseline = true), BenchmarkCategory("Serialize")]
    public long SerializeBare() => _case.SerializeBare();

    /// <summary>The class map, then the engine (zstd, envelope, checksum, sampling) without the serializer's split.</summary>
    [Benchmark, BenchmarkCategory("Serialize")]
    public long SerializeEngine() => _case.SerializeEngine();

    [Benchmark, BenchmarkCategory("Serialize")]
    public long SerializeOurs() => _case.SerializeOurs();

    [Benchmark(Baseline = true), BenchmarkCategory("Deserialize")]
    public long DeserializeBare() => _case.DeserializeBare();

    [Benchmark, BenchmarkCategory("Deserialize")]
    public long DeserializeOurs() => _case.DeserializeOurs();

    /// <summary>What a plain read does instead: the class map over plain documents back to back, as in a reply batch.</summary>
    [Benchmark, BenchmarkCategory("Deserialize")]
    public long DeserializePlain() => _case.DeserializePlain();

    private abstract class Case : IDisposable
    {
        public long RawBsonBytes { get; protected set; }

        public long StoredBytes { get; protected set; }

        public abstract long SerializeBare();

        public abstract long SerializeEngine();

        public abstract long SerializeOurs();

        public abstract long DeserializeBare();

        public abstract long DeserializeOurs();

        public abstract long DeserializePlain();

        public abstract void Dispose();
    }

    private sealed class Case<T> : Case
        where T : class
    {
        private readonly T[] _documents;
        private readonly BsonClassMapSerializer<T> _plain = new(BsonClassMap.LookupClassMap(typeof(T)));
        private readonly CompressionEngine _engine;
        private readonly CompressionNamespace _namespace;
        private readonly CompressedDocumentSerializer<T> _ours;
        private readonly Compressor _compressor;
        private readonly Decompressor _decompressor;

        // Write side: one reused stream and writer each, one reused destination buffer for the bare zstd call.
        private readonly MemoryStream _bareStream = new();
        private readonly BsonBinaryWriter _bareWriter;
        private readonly BsonSerializationContext _bareContext;
        private readonly byte[] _bareOutput;
        private readonly System.Buffers.ArrayBufferWriter<byte> _engineOutput = new(64 * 1024);
        private readonly MemoryStream _oursStream = new();
        private readonly BsonBinaryWriter _oursWriter;
        private readonly BsonSerializationContext _oursContext;

        // Read side: every stored document back to back in one buffer, read in sequence like a cursor batch.
        private readonly byte[][] _bareEnvelopes;
        private readonly byte[] _bareDecompressed;
        private readonly byte[] _oursStored;
        private readonly byte[] _plainStored;
        private readonly int _count;

        public Case(Corpus corpus, Func<BsonDocument, T> map, string[] clearFields)
        {
            _documents = [.. corpus.Measured.Select(line => map(BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(line))))];
            T[] training = [.. corpus.Training.Select(line => map(BsonDocument.Parse(System.Text.Encoding.UTF8.GetString(line))))];
            _count = _documents.Length;

            // The engine samples what our serializer compresses; train once from the 20% split and adopt synchronously.
            var options = new CompressionEngineOptions();
            options.Defaults.Dictionary.MinTrainingInterval = TimeSpan.FromDays(1); // no retraining while measuring
            _engine = new CompressionEngine(new InMemoryDictionaryStore(), options);
            _namespace = _engine.GetNamespace(Namespace);
            _namespace.RefreshAsync().GetAwaiter().GetResult();
            _ours = new CompressedDocumentSerializer<T>(_namespace, new CompressedDocumentOptions { ClearFields = clearFields });
            using (var trainingStream = new MemoryStream())
            using (var trainingWriter = new BsonBinaryWriter(trainingStream))
            {
                foreach (T document in training)
                {
                    trainingStream.Position = 0;
                    _ours.Serialize(BsonSerializationContext.CreateRoot(trainingWriter), document);
                }
            }
            _engine.WhenIdleAsync().GetAwaiter().GetResult(); // a run the writes may have started
            if (_namespace.CurrentDictionary is null)
            {
                TrainingResult result = _namespace.TrainAsync().GetAwaiter().GetResult();
                if (_namespace.CurrentDictionary is null)
                    throw new InvalidOperationException($"No dictionary adopted for {corpus.Name}: {result.Outcome}.");
            }
            DictionaryRecord dictionary = _namespace.CurrentDictionary!;

            _compressor = new Compressor(3);
            _compressor.LoadDictionary(dictionary.Content.Span);
            _decompressor = new Decompressor();
            _decompressor.LoadDictionary(dictionary.Content.Span);

            _bareWriter = new BsonBinaryWriter(_bareStream);
            _bareContext = BsonSerializationContext.CreateRoot(_bareWriter);
            _oursWriter = new BsonBinaryWriter(_oursStream);
            _oursContext = BsonSerializationContext.CreateRoot(_oursWriter);

            // Expected results, and the stored forms the read side starts from.
            _bareEnvelopes = new byte[_count][];
            int maxBson = 0;
            using var stored = new MemoryStream();
            using var plainStored = new MemoryStream();
            for (int i = 0; i < _count; i++)
            {
                byte[] bson = _documents[i].ToBson(_plain);
                RawBsonBytes += bson.Length;
                maxBson = Math.Max(maxBson, bson.Length);
                _bareEnvelopes[i] = _compressor.Wrap(bson).ToArray();
                plainStored.Write(bson);
                using var writer = new BsonBinaryWriter(stored);
                _ours.Serialize(BsonSerializationContext.CreateRoot(writer), _documents[i]);
            }
            _oursStored = stored.ToArray();
            _plainStored = plainStored.ToArray();
            StoredBytes = _oursStored.Length;
            _bareOutput = new byte[Compressor.GetCompressBound(maxBson)];
            _bareDecompressed = new byte[maxBson];
            Verify();
        }

        public override long SerializeBare()
        {
            long total = 0;
            foreach (T document in _documents)
            {
                _bareStream.Position = 0;
                _plain.Serialize(_bareContext, document);
                var bson = new ReadOnlySpan<byte>(_bareStream.GetBuffer(), 0, (int)_bareStream.Position);
                total += _compressor.Wrap(bson, _bareOutput);
            }
            return total;
        }

        public override long SerializeEngine()
        {
            long total = 0;
            foreach (T document in _documents)
            {
                _bareStream.Position = 0;
                _plain.Serialize(_bareContext, document);
                var bson = new ReadOnlySpan<byte>(_bareStream.GetBuffer(), 0, (int)_bareStream.Position);
                _engineOutput.ResetWrittenCount();
                _namespace.Compress(bson, _engineOutput);
                total += _engineOutput.WrittenCount;
            }
            return total;
        }

        public override long SerializeOurs()
        {
            long total = 0;
            foreach (T document in _documents)
            {
                _oursStream.Position = 0;
                _ours.Serialize(_oursContext, document);
                total += _oursStream.Position;
            }
            return total;
        }

        public override long DeserializeBare()
        {
            long total = 0;
            foreach (byte[] envelope in _bareEnvelopes)
            {
                int length = _decompressor.Unwrap(envelope, _bareDecompressed);
                using var buffer = new ByteArrayBuffer(_bareDecompressed, length, isReadOnly: true);
                using var stream = new ByteBufferStream(buffer);
                using var reader = new BsonBinaryReader(stream);
                T value = _plain.Deserialize(BsonDeserializationContext.CreateRoot(reader));
                total += value is null ? 0 : length;
            }
            return total;
        }

        // The driver reads a reply batch from one buffer; here every stored document, back to back.
        public override long DeserializeOurs() => ReadAll(_oursStored, _ours);

        public override long DeserializePlain() => ReadAll(_plainStored, _plain);

        private long ReadAll(byte[] stored, IBsonSerializer<T> serializer)
        {
            using var buffer = new ByteArrayBuffer(stored, isReadOnly: true);
            using var stream = new ByteBufferStream(buffer);
            using var reader = new BsonBinaryReader(stream);
            var context = BsonDeserializationContext.CreateRoot(reader);
            long total = 0;
            for (int i = 0; i < _count; i++)
            {
                T value = serializer.Deserialize(context);
                total += value is null ? 0 : 1;
            }
            return total;
        }

        private void Verify()
        {
            // Both paths must produce the same documents, or the comparison means nothing.
            using var buffer = new ByteArrayBuffer(_oursStored, isReadOnly: true);
            using var stream = new ByteBufferStream(buffer);
            using var reader = new BsonBinaryReader(stream);
            var context = BsonDeserializationContext.CreateRoot(reader);
            for (int i = 0; i < _count; i++)
            {
                T ours = _ours.Deserialize(context);
                byte[] bare = _decompressor.Unwrap(_bareEnvelopes[i]).ToArray();
                if (!ours.ToBson(_plain).AsSpan().SequenceEqual(bare))
                    throw new InvalidOperationException($"Document {i} does not round-trip through the compressed serializer.");
            }
        }

        public override void Dispose()
        {
            _compressor.Dispose();
            _decompressor.Dispose();
            _bareWriter.Dispose();
            _oursWriter.Dispose();
            _bareStream.Dispose();
            _oursStream.Dispose();
            _engine.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }
}

/// <summary>A row of movies.jsonl as a user would map it (titles that are numbers become strings).</summary>
public sealed class MovieDocument
{
    public ObjectId Id { get; set; }

    public string? Title { get; set; }

    [BsonElement("US Gross")]
    public long? UsGross { get; set; }

    [BsonElement("Worldwide Gross")]
    public long? WorldwideGross { get; set; }

    [BsonElement("US DVD Sales")]
    public long? UsDvdSales { get; set; }

    [BsonElement("Production Budget")]
    public long? ProductionBudget { get; set; }

    [BsonElement("Release Date")]
    public string? ReleaseDate { get; set; }

    [BsonElement("MPAA Rating")]
    public string? MpaaRating { get; set; }

    [BsonElement("Running Time min")]
    public int? RunningTimeMinutes { get; set; }

    public string? Distributor { get; set; }

    public string? Source { get; set; }

    [BsonElement("Major Genre")]
    public string? MajorGenre { get; set; }

    [BsonElement("Creative Type")]
    public string? CreativeType { get; set; }

    public string? Director { get; set; }

    [BsonElement("Rotten Tomatoes Rating")]
    public int? RottenTomatoesRating { get; set; }

    [BsonElement("IMDB Rating")]
    public double? ImdbRating { get; set; }

    [BsonElement("IMDB Votes")]
    public int? ImdbVotes { get; set; }

    internal static MovieDocument From(BsonDocument d) => new()
    {
        Id = ObjectId.GenerateNewId(),
        Title = Text(d, "Title"),
        UsGross = Long(d, "US Gross"),
        WorldwideGross = Long(d, "Worldwide Gross"),
        UsDvdSales = Long(d, "US DVD Sales"),
        ProductionBudget = Long(d, "Production Budget"),
        ReleaseDate = Text(d, "Release Date"),
        MpaaRating = Text(d, "MPAA Rating"),
        RunningTimeMinutes = (int?)Long(d, "Running Time min"),
        Distributor = Text(d, "Distributor"),
        Source = Text(d, "Source"),
        MajorGenre = Text(d, "Major Genre"),
        CreativeType = Text(d, "Creative Type"),
        Director = Text(d, "Director"),
        RottenTomatoesRating = (int?)Long(d, "Rotten Tomatoes Rating"),
        ImdbRating = d.GetValue("IMDB Rating", BsonNull.Value) is { IsNumeric: true } r ? r.ToDouble() : null,
        ImdbVotes = (int?)Long(d, "IMDB Votes"),
    };

    private static string? Text(BsonDocument d, string name) => d.GetValue(name, BsonNull.Value) is { IsBsonNull: false } v ? v.ToString() : null;

    private static long? Long(BsonDocument d, string name) => d.GetValue(name, BsonNull.Value) is { IsNumeric: true } v ? v.ToInt64() : null;
}

/// <summary>A row of flights.jsonl.</summary>
public sealed class FlightDocument
{
    public ObjectId Id { get; set; }

    [BsonElement("date")]
    public string Date { get; set; } = "";

    [BsonElement("delay")]
    public int Delay { get; set; }

    [BsonElement("distance")]
    public int Distance { get; set; }

    [BsonElement("origin")]
    public string Origin { get; set; } = "";

    [BsonElement("destination")]
    public string Destination { get; set; } = "";

    internal static FlightDocument From(BsonDocument d) => new()
    {
        Id = ObjectId.GenerateNewId(),
        Date = d["date"].AsString,
        Delay = d["delay"].ToInt32(),
        Distance = d["distance"].ToInt32(),
        Origin = d["origin"].AsString,
        Destination = d["destination"].AsString,
    };
}
