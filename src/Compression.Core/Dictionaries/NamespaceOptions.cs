namespace Compression.Dictionaries;

/// <summary>
/// The settings of one namespace: how its documents are compressed, and how its dictionaries are trained. In
/// configuration, a namespace's section starts from <see cref="CompressionEngineOptions.Defaults"/> and changes only the
/// keys it names; in code, an entry of <see cref="CompressionEngineOptions.Namespaces"/> is complete on its own.
/// </summary>
public sealed class NamespaceOptions
{
    /// <summary>The codec new documents are compressed with.</summary>
    /// <value>Defaults to <see cref="CompressionCodec.Zstd"/>; dictionaries are used with zstd only.</value>
    public CompressionCodec Codec { get; set; } = CompressionCodec.Zstd;

    /// <summary>The codec level, or <see langword="null"/> for the codec's default (see <see cref="DocumentCompressorOptions.Level"/>).</summary>
    /// <value>Defaults to <see langword="null"/>.</value>
    public int? Level { get; set; }

    /// <summary>
    /// For zstd: documents of <see cref="DocumentCompressorOptions.LargeDocumentSize"/> bytes (64 KiB) or more compress at
    /// this level when it is higher than <see cref="Level"/> (see <see cref="DocumentCompressorOptions.LargeDocumentLevel"/>);
    /// <see langword="null"/>: <see cref="Level"/> for every document. Allowed: 1-22.
    /// </summary>
    /// <value>Defaults to 9.</value>
    public int? LargeDocumentLevel { get; set; } = 9;

    /// <summary>Whether envelopes end with a checksum of the document, so that corruption is detected on read (v1: the 4-byte XxHash32; v2: its low 16 bits; v3: the low 16 bits of the XxHash3).</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Checksum { get; set; } = true;

    /// <summary>Whether reading rejects envelopes without a checksum (see <see cref="DocumentCompressorOptions.RequireChecksum"/>).</summary>
    /// <value>Defaults to <see langword="false"/>.</value>
    public bool RequireChecksum { get; set; }

    /// <summary>The envelope format new documents are written in (see <see cref="DocumentCompressorOptions.Format"/>); every format is always read.</summary>
    /// <value>Defaults to <see cref="EnvelopeFormat.V3"/>.</value>
    public EnvelopeFormat Format { get; set; } = EnvelopeFormat.V3;

    /// <summary>Documents shorter than this many bytes are stored uncompressed (codec 0).</summary>
    /// <value>Defaults to 32.</value>
    public int MinimumSize { get; set; } = 32;

    /// <summary>Envelopes declaring more uncompressed bytes are rejected on read; larger documents are refused on write.</summary>
    /// <value>Defaults to 64 MiB.</value>
    public int MaxUncompressedLength { get; set; } = DocumentCompressorOptions.DefaultMaxUncompressedLength;

    /// <summary>
    /// Per-namespace settings of database adapters, by name: each a list of names. In configuration, a name an adapter
    /// declares (<c>DocumentCompressionBuilder.AddNamespaceSetting</c>) is a key of the namespace's section beside the
    /// others. Core copies them and reads none of them: the adapter that declared a name reads and validates it.
    /// </summary>
    /// <value>Defaults to none. Names are case-insensitive.</value>
    public IDictionary<string, IList<string>> AdapterSettings { get; set; } = new Dictionary<string, IList<string>>(StringComparer.OrdinalIgnoreCase);

    /// <summary>Dictionary sampling, training and adoption.</summary>
    public DictionaryOptions Dictionary { get; set; } = new();

    /// <summary>A deep copy: the engine keeps its own, so changing these options later changes nothing.</summary>
    internal NamespaceOptions Clone() => new()
    {
        Codec = Codec,
        Level = Level,
        LargeDocumentLevel = LargeDocumentLevel,
        Checksum = Checksum,
        RequireChecksum = RequireChecksum,
        Format = Format,
        MinimumSize = MinimumSize,
        MaxUncompressedLength = MaxUncompressedLength,
        AdapterSettings = CloneAdapterSettings(AdapterSettings),
        Dictionary = (Dictionary ?? new()).Clone(),
    };

    private static Dictionary<string, IList<string>> CloneAdapterSettings(IDictionary<string, IList<string>>? settings)
    {
        var copy = new Dictionary<string, IList<string>>(StringComparer.OrdinalIgnoreCase);
        if (settings is null) return copy;
        foreach ((string name, IList<string> values) in settings) copy[name] = values is null ? null! : [.. values];
        return copy;
    }

    internal DocumentCompressorOptions ToCompressorOptions() => new()
    {
        Codec = Codec,
        Level = Level,
        LargeDocumentLevel = LargeDocumentLevel,
        Checksum = Checksum,
        RequireChecksum = RequireChecksum,
        Format = Format,
        MinimumSize = MinimumSize,
        MaxUncompressedLength = MaxUncompressedLength,
    };

    /// <summary>Whether the namespace trains and uses dictionaries (they are on, and the codec is zstd).</summary>
    internal bool UsesDictionary => Dictionary.Enabled && Codec == CompressionCodec.Zstd;

    internal List<string> Validate(string prefix)
    {
        var errors = new List<string>(ToCompressorOptions().Validate(prefix));
        if (AdapterSettings is null) errors.Add($"{prefix}:{nameof(AdapterSettings)}: null; allowed: a section of adapter settings.");
        if (Dictionary is null) errors.Add($"{prefix}:{nameof(Dictionary)}: null; allowed: a section of dictionary settings.");
        else errors.AddRange(Dictionary.Validate($"{prefix}:{nameof(Dictionary)}"));
        return errors;
    }
}
