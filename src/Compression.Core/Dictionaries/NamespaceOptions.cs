namespace Compression.Dictionaries;

/// <summary>
/// The settings of one namespace: how its documents are written and read (the settings it inherits from
/// <see cref="DocumentCompressorOptions"/>), how its dictionaries are trained (<see cref="Dictionary"/>), and the
/// settings of database adapters (<see cref="AdapterSettings"/>). In configuration, a namespace's section starts from
/// <see cref="CompressionEngineOptions.Defaults"/> and changes only the keys it names; in code, an entry of
/// <see cref="CompressionEngineOptions.Namespaces"/> is complete on its own.
/// </summary>
public sealed class NamespaceOptions : DocumentCompressorOptions
{
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
    internal NamespaceOptions Clone()
    {
        var copy = (NamespaceOptions)MemberwiseClone();
        copy.AdapterSettings = CloneAdapterSettings(AdapterSettings);
        copy.Dictionary = (Dictionary ?? new()).Clone();
        return copy;
    }

    private static Dictionary<string, IList<string>> CloneAdapterSettings(IDictionary<string, IList<string>>? settings)
    {
        var copy = new Dictionary<string, IList<string>>(StringComparer.OrdinalIgnoreCase);
        if (settings is null) return copy;
        foreach ((string name, IList<string> values) in settings) copy[name] = values is null ? null! : [.. values];
        return copy;
    }

    /// <summary>Whether the namespace trains and uses dictionaries (they are on, and the codec is zstd).</summary>
    internal bool UsesDictionary => Dictionary.Enabled && Codec == CompressionCodec.Zstd;

    private protected override void AddErrors(List<string> errors, string prefix)
    {
        base.AddErrors(errors, prefix);
        string Key(string name) => prefix.Length == 0 ? name : $"{prefix}:{name}";
        if (AdapterSettings is null) errors.Add($"{Key(nameof(AdapterSettings))}: null; allowed: a section of adapter settings.");
        if (Dictionary is null) errors.Add($"{Key(nameof(Dictionary))}: null; allowed: a section of dictionary settings.");
        else errors.AddRange(Dictionary.Validate(Key(nameof(Dictionary))));
    }
}
