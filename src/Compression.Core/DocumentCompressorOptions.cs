using Compression.Codecs;

namespace Compression;

/// <summary>
/// How documents are written as envelopes and read back: the codec, its level, the checksum, the envelope format and the
/// readers' limits. <see cref="DocumentCompressor"/> takes them for fixed settings; a namespace's settings
/// (<see cref="Dictionaries.NamespaceOptions"/>) are these plus dictionaries and adapter settings, so each setting is
/// declared, documented and validated here once.
/// </summary>
public class DocumentCompressorOptions
{
    /// <summary>The default limit on a declared uncompressed length: 64 MiB.</summary>
    public const int DefaultMaxUncompressedLength = 64 * 1024 * 1024;

    /// <summary>The codec used for new values. Dictionaries (of a namespace) are used with zstd only.</summary>
    /// <value>Defaults to <see cref="CompressionCodec.Zstd"/>.</value>
    public CompressionCodec Codec { get; set; } = CompressionCodec.Zstd;

    /// <summary>
    /// The codec level, or <see langword="null"/> for the codec's default. Each codec's allowed levels and default are
    /// in docs/configuration.md ("Level"), taken from its file in <c>Codecs/</c>; a level outside them fails validation
    /// with the range in the message.
    /// </summary>
    /// <value>Defaults to <see langword="null"/>.</value>
    public int? Level { get; set; }

    /// <summary>The size from which a document is large: <see cref="LargeDocumentLevel"/> applies to it.</summary>
    public static readonly int LargeDocumentSize = 64 * 1024;

    /// <summary>
    /// For zstd: documents of <see cref="LargeDocumentSize"/> bytes or more compress at this level when it is higher than
    /// <see cref="Level"/>. A large document pays its per-document cost over many bytes, as a block compressor's page
    /// does, and without a dictionary (a collection of a few large documents trains none) zstd's default level leaves it
    /// larger than the server's own zstd-6 would. <see langword="null"/>: <see cref="Level"/> for every document.
    /// Allowed: 1-22. Readers need nothing: the level is not in the envelope.
    /// </summary>
    /// <value>Defaults to 9.</value>
    public int? LargeDocumentLevel { get; set; } = 9;

    /// <summary>Whether envelopes end with a checksum of the document (v1: all 4 bytes of the XxHash32; v2: its low 2; v3: the low 2 of the XxHash3), so that corruption is detected on read.</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Checksum { get; set; } = true;

    /// <summary>
    /// Whether reading rejects envelopes that carry no checksum. The checksum flag is itself a header bit, so a
    /// corruption that clears it would also switch verification off; a reader whose writers always add checksums can
    /// close that gap with this option. Leave it off while envelopes written without checksums must stay readable.
    /// </summary>
    /// <value>Defaults to <see langword="false"/>.</value>
    public bool RequireChecksum { get; set; }

    /// <summary>
    /// The envelope format new values are written in. Every format is always read. v2 is 5 bytes smaller per zstd
    /// document of up to 128 KiB and 2 bytes smaller with a checksum than v1; v3 is v2 with a checksum that costs about a
    /// third of the time. Readers that know only older formats (this library before v2, before v3) reject newer
    /// envelopes as an unknown format version, so write the newest format every reader knows while such readers remain.
    /// </summary>
    /// <value>Defaults to <see cref="EnvelopeFormat.V3"/>.</value>
    public EnvelopeFormat Format { get; set; } = EnvelopeFormat.V3;

    /// <summary>Documents shorter than this many bytes are stored uncompressed (codec 0).</summary>
    /// <value>Defaults to 32.</value>
    public int MinimumSize { get; set; } = 32;

    /// <summary>Envelopes that declare more uncompressed bytes than this are rejected on read (decompression bombs); documents larger than this are refused on write.</summary>
    /// <value>Defaults to 64 MiB.</value>
    public int MaxUncompressedLength { get; set; } = DefaultMaxUncompressedLength;

    /// <summary>The codecs a setting may name: every codec but the structured ones, which the engine chooses (<see cref="CodecRegistry.SettableNames"/>).</summary>
    internal static string SettableCodecNames => CodecRegistry.SettableNames;

    /// <summary>The effective level: <see cref="Level"/> or the codec's default.</summary>
    internal int EffectiveLevel => Level ?? Compression.Codecs.Codec.For(Codec).DefaultLevel;

    /// <summary>Every problem with these options, one message each; empty when valid.</summary>
    /// <param name="prefix">The configuration path the messages name, for example <c>Compression:Defaults</c>.</param>
    public IReadOnlyList<string> Validate(string prefix = "")
    {
        var errors = new List<string>();
        AddErrors(errors, prefix);
        return errors;
    }

    /// <summary>Adds every problem of these options to <paramref name="errors"/>; a derived type adds its own after the base's.</summary>
    private protected virtual void AddErrors(List<string> errors, string prefix) => AddCompressorErrors(errors, prefix);

    /// <summary>Adds the problems of the settings declared here (not a derived type's): what a <see cref="DocumentCompressor"/> needs.</summary>
    internal void AddCompressorErrors(List<string> errors, string prefix)
    {
        string Key(string name) => prefix.Length == 0 ? name : $"{prefix}:{name}";
        if (CodecRegistry.Find(Codec) is not { IsStructured: false } codec)
        {
            string why = CodecRegistry.Find(Codec) is { IsStructured: true }
                ? "is written by the engine when a dictionary carries a shape table (and a field model), not chosen (choose Zstd)"
                : "is not a codec";
            errors.Add($"{Key(nameof(Codec))}: '{Codec}' {why}; allowed: {SettableCodecNames}.");
        }
        else if (Level is int level)
        {
            if (level < codec.MinLevel || level > codec.MaxLevel)
                errors.Add($"{Key(nameof(Level))}: {level} is out of range for {Codec}; allowed: {codec.MinLevel} to {codec.MaxLevel}.");
        }
        if (LargeDocumentLevel is int large && Codec == CompressionCodec.Zstd && (large < ZstdCodec.MinimumLevel || large > ZstdCodec.MaximumLevel))
            errors.Add($"{Key(nameof(LargeDocumentLevel))}: {large} is out of range for Zstd; allowed: {ZstdCodec.MinimumLevel} to {ZstdCodec.MaximumLevel}, or null.");
        if (!Enum.IsDefined(Format))
            errors.Add($"{Key(nameof(Format))}: '{Format}' is not an envelope format; allowed: {string.Join(", ", Enum.GetNames<EnvelopeFormat>())}.");
        if (MinimumSize < 0)
            errors.Add($"{Key(nameof(MinimumSize))}: {MinimumSize} is negative; allowed: 0 or more.");
        // A setting that writes envelopes without a checksum and reads only envelopes with one refuses every document it
        // writes (its own reads, and every reader with the same settings): found by review.
        if (RequireChecksum && !Checksum)
            errors.Add($"{Key(nameof(RequireChecksum))}: true while {Key(nameof(Checksum))} is false: every envelope written would be refused when read; allowed: false, or true with {nameof(Checksum)} true.");
        if (MaxUncompressedLength < 1)
            errors.Add($"{Key(nameof(MaxUncompressedLength))}: {MaxUncompressedLength} is not positive; allowed: 1 to {int.MaxValue}.");
    }

    /// <summary>Throws one <see cref="ArgumentException"/> listing every problem, when there is any.</summary>
    public void ThrowIfInvalid(string prefix = "") => Throw(Validate(prefix));

    /// <summary>A copy of the settings declared here, validated: what a <see cref="DocumentCompressor"/> keeps.</summary>
    /// <exception cref="ArgumentException">Any of them is invalid; the message lists every problem.</exception>
    internal DocumentCompressorOptions ValidCompressorCopy()
    {
        var copy = (DocumentCompressorOptions)MemberwiseClone();
        var errors = new List<string>();
        copy.AddCompressorErrors(errors, "");
        Throw(errors);
        return copy;
    }

    private static void Throw(IReadOnlyList<string> errors)
    {
        if (errors.Count > 0) throw new ArgumentException("Invalid compression options:" + Environment.NewLine + string.Join(Environment.NewLine, errors));
    }
}
