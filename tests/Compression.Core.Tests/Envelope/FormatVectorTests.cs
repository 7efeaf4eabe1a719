using System.Text;
using System.Text.Json;
using Xunit;

namespace Compression.Core.Tests.Envelope;

/// <summary>The test vectors of docs/format.md, checked byte for byte.</summary>
public sealed class FormatVectorTests
{
    private sealed record Vector(string Name, string Codec, int Level, bool Checksum, string? Dictionary, string Envelope, string Text);

    private static readonly string VectorDirectory = Path.Combine(AppContext.BaseDirectory, "Vectors");

    private static List<Vector> Load() =>
        JsonSerializer.Deserialize<List<Vector>>(File.ReadAllText(Path.Combine(VectorDirectory, "vectors.json")), new JsonSerializerOptions(JsonSerializerDefaults.Web))!;

    private static ZstdDictionary? DictionaryFor(Vector v) =>
        v.Dictionary is null ? null : ZstdDictionary.Create(4242, File.ReadAllBytes(Path.Combine(VectorDirectory, v.Dictionary)));

    public static TheoryData<string> Names() => new(Load().Select(v => v.Name));

    [Fact]
    public void Vectors_CoverEveryCodecADictionaryAChecksumAndStored()
    {
        var vectors = Load();
        Assert.True(vectors.Count >= 8);
        foreach (var codec in Corpus.AllCodecs) Assert.Contains(vectors, v => v.Codec == codec.ToString().ToLowerInvariant());
        Assert.Contains(vectors, v => v.Dictionary is not null);
        Assert.Contains(vectors, v => v.Checksum);
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Vector_DecodesToTheExactBytes(string name)
    {
        Vector v = Load().Single(x => x.Name == name);
        byte[] envelope = Convert.FromHexString(v.Envelope);
        byte[] expected = Encoding.UTF8.GetBytes(v.Text);
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Equal(v.Codec, header.Codec.ToString().ToLowerInvariant());
        Assert.Equal(v.Checksum, header.HasChecksum);
        Assert.Equal(expected.Length, header.UncompressedLength);
        Assert.Equal(v.Dictionary is null ? null : 4242u, header.DictionaryId);
        Assert.Equal(expected, new DocumentCompressor().Decompress(envelope, DictionaryFor(v)));
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Vector_DeterministicCodecs_ReencodeToTheSameBytes(string name)
    {
        Vector v = Load().Single(x => x.Name == name);
        if (v.Codec is "deflate" or "gzip") return; // the platform's zlib may differ; decoding is what the contract fixes
        var compressor = new DocumentCompressor(new DocumentCompressorOptions
        {
            Codec = Enum.Parse<CompressionCodec>(v.Codec, ignoreCase: true),
            Level = v.Level,
            Checksum = v.Checksum,
            MinimumSize = 0,
        });
        Assert.Equal(v.Envelope, Convert.ToHexString(compressor.Compress(Encoding.UTF8.GetBytes(v.Text), DictionaryFor(v))).ToLowerInvariant());
    }

    [Fact]
    public void FormatDocument_ContainsEveryVector()
    {
        string? directory = AppContext.BaseDirectory;
        while (directory is not null && !File.Exists(Path.Combine(directory, "Compression.sln"))) directory = Path.GetDirectoryName(directory);
        Assert.NotNull(directory);
        string format = File.ReadAllText(Path.Combine(directory, "docs", "format.md"));
        foreach (var v in Load())
        {
            Assert.Contains(v.Envelope, format);
            Assert.Contains(v.Text, format);
        }
    }
}
