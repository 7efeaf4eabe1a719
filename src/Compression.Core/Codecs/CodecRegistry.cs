namespace Compression.Codecs;

/// <summary>
/// Every codec, once: the one list the rest of the library derives from. The envelope reader's highest codec id and its
/// message listing the known ids, which codecs an envelope may carry a dictionary id with, the codecs and levels a
/// setting may name (and the messages that list them), the <c>codec</c> tag of the metrics, and the settings
/// <c>docz analyze</c> measures all come from here. Adding a codec: its file in this folder, its id in
/// <see cref="CompressionCodec"/>, its line in <see cref="All"/>, and a format vector (docs/format.md, "Adding a codec").
/// </summary>
internal static class CodecRegistry
{
    /// <summary>
    /// Every codec, in the order <c>docz analyze</c> measures and lists them (the zlib family together); <see cref="ById"/>
    /// has them in id order. <see cref="ZstdBlockCodec"/> is not here: it is how formats v2 and v3 write and read codec 1
    /// (<see cref="Codec.ForWriting"/>, <see cref="Codec.ForReading"/>), not a codec of its own.
    /// </summary>
    public static readonly IReadOnlyList<Codec> All =
    [
        StoredCodec.Instance,
        ZstdCodec.Instance,
        Lz4Codec.Instance,
        SnappyCodec.Instance,
        ZlibFamilyCodec.Deflate,
        ZlibFamilyCodec.Gzip,
        BrotliCodec.Instance,
        PackedZstdCodec.Instance,
        FieldZstdCodec.Instance,
        FieldZstdCodec.FoldedChecksum,
    ];

    private static readonly Codec[] s_byId = [.. All.OrderBy(c => c.Id)];

    /// <summary>Every codec, at the index of its id (ids are dense from 0: the registry tests hold them to it).</summary>
    public static IReadOnlyList<Codec> ById => s_byId;

    /// <summary>The highest codec id: the envelope reader rejects higher ids as unknown.</summary>
    public static readonly int MaxId = (int)s_byId[^1].Id;

    /// <summary>The application codecs (not <see cref="Codec.IsStructured"/>), in id order: what a setting may name.</summary>
    public static readonly IReadOnlyList<Codec> Settable = [.. s_byId.Where(c => !c.IsStructured)];

    /// <summary>The names of <see cref="Settable"/> as the enum spells them, comma separated: the values a validation message allows.</summary>
    public static readonly string SettableNames = string.Join(", ", Settable.Select(c => c.Id.ToString()));

    /// <summary>Every codec's name in id order, with spaces for '_': the list the envelope reader's unknown-codec message gives.</summary>
    public static readonly string KnownNames = string.Join(", ", s_byId.Select(c => c.Name.Replace('_', ' ')));

    /// <summary>The codec of id <paramref name="codec"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="codec"/> is not a known id.</exception>
    public static Codec For(CompressionCodec codec) =>
        (uint)codec < (uint)s_byId.Length ? s_byId[(int)codec] : throw new ArgumentOutOfRangeException(nameof(codec), codec, "Unknown codec.");

    /// <summary>The codec of id <paramref name="codec"/>, or <see langword="null"/> when the id is unknown.</summary>
    public static Codec? Find(CompressionCodec codec) => (uint)codec < (uint)s_byId.Length ? s_byId[(int)codec] : null;
}
