using System.Text;

namespace Compression.Fuzz;

/// <summary>
/// The fuzz targets. Each takes arbitrary bytes and either returns (the input was handled as documented) or throws
/// <see cref="FuzzFailureException"/> or an undocumented exception, which the fuzzer records as a crash. Shared by the
/// AFL++ entry point (<c>Program</c>) and by the short in-process run in <c>dotnet test</c>
/// (<c>tests/Compression.Core.Tests/Fuzz/FuzzTargetTests.cs</c> compiles this file in).
/// </summary>
public sealed class FuzzTargets
{
    /// <summary>The largest document a fuzzed envelope may declare; the decoder must refuse larger ones before allocating.</summary>
    public const int MaxUncompressedLength = 1024 * 1024;

    /// <summary>
    /// Declared lengths up to this are decoded straight into a buffer of that length; above it, the decoder allocates
    /// only as the payload proves its output (DocumentCompressor's direct-decode limit, docs/reliability.md).
    /// </summary>
    public const int DirectDecodeLimit = 256 * 1024;

    /// <summary>Allocation allowed per input beyond the document (or, when rejected, beyond the direct-decode buffer): codec state, messages, exceptions.</summary>
    public const long AllocationSlack = 64 * 1024;

    private const int MaxRoundTripDocument = 64 * 1024;

    private static readonly CompressionCodec[] Codecs =
    [
        CompressionCodec.Stored, CompressionCodec.Zstd, CompressionCodec.Lz4, CompressionCodec.Snappy,
        CompressionCodec.Deflate, CompressionCodec.Brotli, CompressionCodec.Gzip,
    ];

    private static readonly Dictionary<CompressionCodec, int[]> Levels = new()
    {
        [CompressionCodec.Stored] = [0],
        [CompressionCodec.Zstd] = [1, 3, 9],
        [CompressionCodec.Lz4] = [0, 9],
        [CompressionCodec.Snappy] = [0],
        [CompressionCodec.Deflate] = [1, 6],
        [CompressionCodec.Brotli] = [1, 4],
        [CompressionCodec.Gzip] = [6],
    };

    private readonly ZstdDictionary _dictionary;
    private readonly DocumentCompressor _reader;
    private readonly DocumentCompressor _strictReader;
    private readonly Dictionary<(CompressionCodec Codec, int Level, bool Checksum, EnvelopeFormat Format), DocumentCompressor> _writers = [];

    /// <param name="dictionary">The dictionary envelopes may name; any other id must give <see cref="DictionaryNotFoundException"/>.</param>
    public FuzzTargets(ZstdDictionary dictionary)
    {
        ArgumentNullException.ThrowIfNull(dictionary);
        _dictionary = dictionary;
        _reader = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = MaxUncompressedLength });
        _strictReader = new DocumentCompressor(new DocumentCompressorOptions { MaxUncompressedLength = MaxUncompressedLength, RequireChecksum = true });
        foreach (CompressionCodec codec in Codecs)
        {
            foreach (int level in Levels[codec])
            {
                foreach (bool checksum in (bool[])[true, false])
                {
                    foreach (EnvelopeFormat format in (EnvelopeFormat[])[EnvelopeFormat.V1, EnvelopeFormat.V2])
                    {
                        _writers[(codec, level, checksum, format)] = new DocumentCompressor(new DocumentCompressorOptions
                        {
                            Codec = codec, Level = level, Checksum = checksum, MinimumSize = 0, MaxUncompressedLength = MaxUncompressedLength, Format = format,
                        });
                    }
                }
            }
        }
    }

    /// <summary>The target names, as the command line takes them.</summary>
    public static IReadOnlyList<string> Names { get; } = ["envelope", "roundtrip", "dictionary"];

    /// <summary>Runs the target <paramref name="name"/> on <paramref name="input"/>.</summary>
    public void Run(string name, ReadOnlySpan<byte> input)
    {
        switch (name)
        {
            case "envelope": Envelope(input); break;
            case "roundtrip": RoundTrip(input); break;
            case "dictionary": Dictionary(input); break;
            default: throw new ArgumentException($"Unknown fuzz target '{name}'; allowed: {string.Join(", ", Names)}.", nameof(name));
        }
    }

    /// <summary>
    /// Untrusted envelope (a value read from the database): decodes to a document, or throws
    /// <see cref="InvalidDataException"/> or <see cref="DictionaryNotFoundException"/>. Allocates no more than the decoded
    /// document plus <see cref="AllocationSlack"/>; a rejected envelope no more than its declared length, capped at
    /// <see cref="DirectDecodeLimit"/> whatever the header claims, plus the slack. A decoded document must survive a round
    /// trip through the same codec, and a reader that requires checksums must agree with the lenient one whenever the
    /// envelope has one.
    /// </summary>
    public void Envelope(ReadOnlySpan<byte> input)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        byte[]? document = Decode(_reader, input, out EnvelopeHeader header);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        long allowed = (document?.Length ?? Math.Min(header.UncompressedLength, DirectDecodeLimit)) + AllocationSlack;
        if (allocated > allowed)
        {
            // A codec may fill a buffer pool the first time it meets a size (Snappier rents an output-sized buffer
            // from ArrayPool.Shared, and large declared lengths are decoded into pooled buffers that grow with the
            // output): what must stay bounded is the steady state, so measure a second decode.
            before = GC.GetAllocatedBytesForCurrentThread();
            Decode(_reader, input, out _);
            allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            if (allocated > allowed)
                throw new FuzzFailureException($"Decoding allocated {allocated:N0} bytes (twice in a row); allowed {allowed:N0}.");
        }
        if (document is null) return;

        if (header.HasChecksum)
        {
            byte[]? strict = Decode(_strictReader, input, out _);
            if (strict is null || !strict.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException("A reader requiring checksums disagrees with the lenient reader on an envelope with a checksum.");
        }

        int level = Levels[header.Codec][0];
        byte[] again = _writers[(header.Codec, level, header.HasChecksum, header.Format)].Compress(document, header.DictionaryId is null ? null : _dictionary);
        byte[] back = _reader.Decompress(again, _dictionary);
        if (!back.AsSpan().SequenceEqual(document))
            throw new FuzzFailureException($"{header.Codec} did not round-trip a document of {document.Length} bytes.");
    }

    /// <summary>
    /// Arbitrary document: byte 0 picks the codec, level, checksum and dictionary, the rest is the document, written in
    /// both envelope formats (v1 and v2). Compression never throws, and decompression gives back exactly the document.
    /// </summary>
    public void RoundTrip(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty) return;
        byte selector = input[0];
        ReadOnlySpan<byte> document = input[1..];
        if (document.Length > MaxRoundTripDocument) document = document[..MaxRoundTripDocument];

        CompressionCodec codec = Codecs[selector % Codecs.Length];
        int[] levels = Levels[codec];
        int level = levels[(selector >> 3) % levels.Length];
        bool checksum = (selector & 0x40) != 0;
        ZstdDictionary? dictionary = codec == CompressionCodec.Zstd && (selector & 0x80) != 0 ? _dictionary : null;

        foreach (EnvelopeFormat format in (EnvelopeFormat[])[EnvelopeFormat.V1, EnvelopeFormat.V2])
        {
            DocumentCompressor writer = _writers[(codec, level, checksum, format)];
            byte[] envelope = writer.Compress(document, dictionary);
            byte[] back = ReaderFor(checksum).Decompress(envelope, dictionary);
            if (!back.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException($"{codec} level {level} (checksum {checksum}, dictionary {dictionary is not null}, {format}) did not round-trip {document.Length} bytes.");
        }
    }

    /// <summary>
    /// Untrusted dictionary bytes (a dictionary record read from the database): <see cref="ZstdDictionary.Create"/> accepts
    /// them or throws <see cref="InvalidDataException"/>; an accepted dictionary compresses and decompresses documents
    /// correctly, and an envelope written with it is refused (not misread) by a reader holding another dictionary.
    /// </summary>
    public void Dictionary(ReadOnlySpan<byte> input)
    {
        ZstdDictionary candidate;
        try
        {
            candidate = ZstdDictionary.Create(7, input, 64 * 1024);
        }
        catch (InvalidDataException)
        {
            return;
        }

        DocumentCompressor writer = _writers[(CompressionCodec.Zstd, 3, true, EnvelopeFormat.V2)];
        foreach (byte[] document in SampleDocuments)
        {
            byte[] envelope = writer.Compress(document, candidate);
            byte[] back = _reader.Decompress(envelope, candidate);
            if (!back.AsSpan().SequenceEqual(document))
                throw new FuzzFailureException($"An accepted dictionary of {input.Length} bytes did not round-trip a document of {document.Length} bytes.");
            if (_reader.ReadHeader(envelope).DictionaryId is not null)
            {
                try
                {
                    _reader.Decompress(envelope, _dictionary);
                    throw new FuzzFailureException("An envelope naming dictionary 7 was decoded with dictionary " + _dictionary.Id + ".");
                }
                catch (DictionaryNotFoundException)
                {
                }
            }
        }
    }

    /// <summary>Starting inputs for <paramref name="name"/>: valid envelopes of every codec and setting, documents, the dictionary.</summary>
    public IEnumerable<byte[]> Seeds(string name)
    {
        switch (name)
        {
            case "envelope":
                foreach (((CompressionCodec codec, int level, bool checksum, EnvelopeFormat _), DocumentCompressor writer) in _writers)
                {
                    if (level != Levels[codec][0]) continue;
                    foreach (byte[] document in SampleDocuments)
                    {
                        yield return writer.Compress(document);
                        if (codec == CompressionCodec.Zstd) yield return writer.Compress(document, _dictionary);
                    }
                }
                break;
            case "roundtrip":
                byte selector = 0;
                foreach (byte[] document in SampleDocuments)
                {
                    for (int i = 0; i < 4; i++, selector += 37)
                        yield return [selector, .. document];
                }
                break;
            case "dictionary":
                yield return _dictionary.Content.ToArray();
                break;
            default:
                throw new ArgumentException($"Unknown fuzz target '{name}'; allowed: {string.Join(", ", Names)}.", nameof(name));
        }
    }

    /// <summary>A few small documents shaped like the JSON the library stores, plus a binary and an empty one.</summary>
    public static IReadOnlyList<byte[]> SampleDocuments { get; } = CreateSampleDocuments();

    private DocumentCompressor ReaderFor(bool checksum) => checksum ? _strictReader : _reader;

    private byte[]? Decode(DocumentCompressor reader, ReadOnlySpan<byte> input, out EnvelopeHeader header)
    {
        header = default;
        try
        {
            header = reader.ReadHeader(input);
            return reader.Decompress(input, _dictionary);
        }
        catch (InvalidDataException)
        {
            return null;
        }
        catch (DictionaryNotFoundException)
        {
            return null;
        }
    }

    private static byte[][] CreateSampleDocuments()
    {
        var movie = new StringBuilder();
        movie.Append("{\"title\":\"The Night of the Hunter\",\"year\":1955,\"genres\":[\"Crime\",\"Drama\",\"Thriller\"],");
        movie.Append("\"cast\":[\"Robert Mitchum\",\"Shelley Winters\",\"Lillian Gish\"],\"rating\":{\"imdb\":8.0,\"votes\":93912}}");
        var events = new StringBuilder("[");
        for (int i = 0; i < 40; i++)
            events.Append("{\"id\":").Append(i).Append(",\"type\":\"quake\",\"mag\":").Append(1.5 + (i % 7) * 0.3).Append(",\"place\":\"").Append(i * 7 % 13).Append(" km N of Nowhere\"},");
        events[^1] = ']';
        byte[] binary = new byte[300];
        new Random(42).NextBytes(binary);
        return
        [
            Encoding.UTF8.GetBytes(movie.ToString()),
            Encoding.UTF8.GetBytes(events.ToString()),
            Encoding.UTF8.GetBytes("{\"a\":1}"),
            binary,
            [],
        ];
    }
}

/// <summary>A fuzz target found input that the library mishandled: the fuzzer records it as a crash.</summary>
public sealed class FuzzFailureException(string message) : Exception(message);
