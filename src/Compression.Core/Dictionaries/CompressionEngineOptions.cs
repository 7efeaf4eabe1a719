namespace Compression.Dictionaries;

/// <summary>
/// The settings of a <see cref="CompressionEngine"/>: the <c>Compression</c> section of <c>appsettings.json</c>
/// (see docs/configuration.md). The engine validates them once and keeps its own copy: changing this object after the
/// engine is built changes nothing.
/// </summary>
public sealed class CompressionEngineOptions
{
    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "Compression";

    /// <summary>Settings of every namespace not named in <see cref="Namespaces"/>.</summary>
    public NamespaceOptions Defaults { get; set; } = new();

    /// <summary>Settings per namespace (<c>database.collection</c> or <c>bucket.scope.collection</c>), replacing <see cref="Defaults"/>.</summary>
    public IDictionary<string, NamespaceOptions> Namespaces { get; set; } = new Dictionary<string, NamespaceOptions>(StringComparer.Ordinal);

    /// <summary>How often the store is asked for versions other clients published (once <see cref="CompressionEngine.StartAsync"/> has run).</summary>
    /// <value>Defaults to 30 seconds.</value>
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The most dictionaries kept in memory besides the ones namespaces compress with now, which are always kept.</summary>
    /// <value>Defaults to 64.</value>
    public int MaxCachedDictionaries { get; set; } = 64;

    /// <summary>Dictionaries read from the store larger than this are refused (they are untrusted input).</summary>
    /// <value>Defaults to 1 MiB.</value>
    public int MaxDictionaryBytes { get; set; } = ZstdDictionary.DefaultMaximumSize;

    /// <summary>Attempts of every store call (fetch, current version, publication) before it counts as failed.</summary>
    /// <value>Defaults to 3.</value>
    public int StoreAttempts { get; set; } = 3;

    /// <summary>The wait before the second attempt of a store call; it doubles for each further attempt.</summary>
    /// <value>Defaults to 50 milliseconds.</value>
    public TimeSpan StoreRetryDelay { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>
    /// How long a dictionary id the store does not have is remembered as missing: reads of it fail at once meanwhile,
    /// without asking the store again.
    /// </summary>
    /// <value>Defaults to 10 seconds.</value>
    public TimeSpan MissingDictionaryRetention { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The most namespaces kept in memory; beyond it, the least recently used are dropped (and reloaded when used again).</summary>
    /// <value>Defaults to 1,024.</value>
    public int MaxNamespaces { get; set; } = 1024;

    /// <summary>A namespace unused for this long is dropped with its samples (and reloaded from the store when used again).</summary>
    /// <value>Defaults to 30 minutes.</value>
    public TimeSpan NamespaceIdleTimeout { get; set; } = TimeSpan.FromMinutes(30);

    /// <summary>What the configuration binder could not read (unknown keys, values that do not parse).</summary>
    internal List<string> BindingErrors { get; } = [];

    /// <summary>Every problem with these options, each naming its configuration key (<c>Compression:...</c>) and the allowed values; empty when valid.</summary>
    public IReadOnlyList<string> Validate()
    {
        const string root = SectionName;
        var errors = new List<string>();
        // A dictionary trained larger than MaxDictionaryBytes would be written with, then refused by every reader with the
        // same options (the writer too, once it left the cache): found by review, documents written with it were unreadable.
        void DictionaryFits(string key, NamespaceOptions settings)
        {
            if (settings.Dictionary is { } d && d.DictionarySize > MaxDictionaryBytes)
                errors.Add($"{key}:{nameof(NamespaceOptions.Dictionary)}:{nameof(DictionaryOptions.DictionarySize)}: {d.DictionarySize} is over " +
                    $"{root}:{nameof(MaxDictionaryBytes)} ({MaxDictionaryBytes}), the largest dictionary a reader accepts; allowed: {ZstdDictionary.MinimumSize} to {MaxDictionaryBytes}.");
        }
        if (Defaults is null) errors.Add($"{root}:{nameof(Defaults)}: null; allowed: a section of namespace settings.");
        else
        {
            errors.AddRange(Defaults.Validate($"{root}:{nameof(Defaults)}"));
            DictionaryFits($"{root}:{nameof(Defaults)}", Defaults);
        }
        if (Namespaces is null) errors.Add($"{root}:{nameof(Namespaces)}: null; allowed: a section keyed by namespace.");
        else
        {
            foreach (var (name, ns) in Namespaces)
            {
                string key = $"{root}:{nameof(Namespaces)}:{name}";
                if (!NamespaceName.IsValid(name, out string? why)) errors.Add($"{key}: '{name}' is not a namespace name: {why}");
                if (ns is null) errors.Add($"{key}: null; allowed: a section of namespace settings.");
                else
                {
                    errors.AddRange(ns.Validate(key));
                    DictionaryFits(key, ns);
                }
            }
        }
        void Positive(string name, TimeSpan value, TimeSpan max)
        {
            if (value <= TimeSpan.Zero || value > max) errors.Add($"{root}:{name}: {value} is out of range; allowed: more than 00:00:00, up to {max}.");
        }
        void Range(string name, long value, long min, long max)
        {
            if (value < min || value > max) errors.Add($"{root}:{name}: {value} is out of range; allowed: {min} to {max}.");
        }
        Positive(nameof(PollInterval), PollInterval, TimeSpan.FromDays(1));
        Range(nameof(MaxCachedDictionaries), MaxCachedDictionaries, 1, 100_000);
        Range(nameof(MaxDictionaryBytes), MaxDictionaryBytes, ZstdDictionary.MinimumSize, 64 * 1024 * 1024);
        Range(nameof(StoreAttempts), StoreAttempts, 1, 100);
        if (StoreRetryDelay < TimeSpan.Zero || StoreRetryDelay > TimeSpan.FromMinutes(1))
            errors.Add($"{root}:{nameof(StoreRetryDelay)}: {StoreRetryDelay} is out of range; allowed: 00:00:00 to 00:01:00.");
        Positive(nameof(MissingDictionaryRetention), MissingDictionaryRetention, TimeSpan.FromDays(1));
        Range(nameof(MaxNamespaces), MaxNamespaces, 1, 1_000_000);
        Positive(nameof(NamespaceIdleTimeout), NamespaceIdleTimeout, TimeSpan.FromDays(365));
        return errors;
    }

    /// <summary>Throws one <see cref="ArgumentException"/> listing every problem, when there is any.</summary>
    internal void ThrowIfInvalid()
    {
        var errors = Validate();
        if (errors.Count > 0)
            throw new ArgumentException("Invalid compression options:" + Environment.NewLine + string.Join(Environment.NewLine, errors), "options");
    }

    /// <summary>A deep copy, so the engine never reads the caller's mutable object.</summary>
    internal CompressionEngineOptions Clone() => new()
    {
        Defaults = Defaults.Clone(),
        Namespaces = Namespaces.ToDictionary(e => e.Key, e => e.Value.Clone(), StringComparer.Ordinal),
        PollInterval = PollInterval,
        MaxCachedDictionaries = MaxCachedDictionaries,
        MaxDictionaryBytes = MaxDictionaryBytes,
        StoreAttempts = StoreAttempts,
        StoreRetryDelay = StoreRetryDelay,
        MissingDictionaryRetention = MissingDictionaryRetention,
        MaxNamespaces = MaxNamespaces,
        NamespaceIdleTimeout = NamespaceIdleTimeout,
    };
}

/// <summary>The rules for namespace names.</summary>
internal static class NamespaceName
{
    public const int MaxLength = 512;

    public static bool IsValid(string? name, out string? problem)
    {
        problem = string.IsNullOrWhiteSpace(name) ? "it is empty; allowed: 1 to 512 characters, no control characters."
            : name.Length > MaxLength ? $"it has {name.Length} characters; allowed: 1 to {MaxLength}."
            : name.Any(char.IsControl) ? "it holds a control character; allowed: printable characters."
            : null;
        return problem is null;
    }
}
