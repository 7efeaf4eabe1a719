using Compression.Dictionaries;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// What <see cref="DocumentCompressionServiceCollectionExtensions.AddDocumentCompression(IServiceCollection, Configuration.IConfiguration)"/>
/// returns: where the dictionary store is chosen, and what database adapters extend (<c>.AddMongoDB(...)</c>, <c>.AddCouchbase(...)</c>).
/// </summary>
public sealed class DocumentCompressionBuilder
{
    internal DocumentCompressionBuilder(IServiceCollection services, Configuration.IConfigurationSection? section = null)
    {
        Services = services;
        Section = section;
    }

    /// <summary>The application's services.</summary>
    public IServiceCollection Services { get; }

    /// <summary>
    /// The <c>Compression</c> section of the configuration given to <c>AddDocumentCompression(configuration)</c>, or
    /// <see langword="null"/> when the options come from code: an adapter binds its own section of it (<see cref="AddAdapterSection"/>).
    /// </summary>
    public Configuration.IConfigurationSection? Section { get; }

    /// <summary>
    /// Declares <c>Compression:{name}</c> a database adapter's own section (e.g. <c>Compression:Couchbase</c>): the engine's
    /// binder leaves it to the adapter, which binds it from <see cref="Section"/> and reports its bad keys the same way.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or a setting of the engine.</exception>
    public DocumentCompressionBuilder AddAdapterSection(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (typeof(CompressionEngineOptions).GetProperty(name, System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.IgnoreCase) is not null)
            throw new ArgumentException($"'{name}' is a setting of the engine; an adapter's section needs a name of its own.", nameof(name));
        Services.AddSingleton(new AdapterSectionName(name));
        return this;
    }

    /// <summary>Keeps dictionaries in a folder (<see cref="FileDictionaryStore"/>): for single-host applications and tools.</summary>
    public DocumentCompressionBuilder UseFileStore(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        return UseStore(sp => new FileDictionaryStore(directory, sp.GetRequiredService<Options.IOptions<CompressionEngineOptions>>().Value.MaxDictionaryBytes));
    }

    /// <summary>Uses the store <paramref name="factory"/> makes (an adapter's store, or your own).</summary>
    public DocumentCompressionBuilder UseStore(Func<IServiceProvider, DictionaryStore> factory)
    {
        ArgumentNullException.ThrowIfNull(factory);
        Services.AddSingleton(factory);
        return this;
    }

    /// <summary>
    /// Declares a per-namespace setting of a database adapter: a list of names under <paramref name="name"/> in each
    /// namespace's section of configuration (and in <c>Defaults</c>), bound into <see cref="NamespaceOptions.AdapterSettings"/>
    /// with the same checks of shape as the other keys. The adapter validates the values (an
    /// <see cref="Options.IValidateOptions{TOptions}"/> of <see cref="CompressionEngineOptions"/>) and reads them from
    /// <see cref="CompressionNamespace.AdapterSettings"/>.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or a setting of Core.</exception>
    public DocumentCompressionBuilder AddNamespaceSetting(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (typeof(NamespaceOptions).GetProperty(name, System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.IgnoreCase) is not null)
            throw new ArgumentException($"'{name}' is a setting of every namespace; an adapter's setting needs a name of its own.", nameof(name));
        Services.AddSingleton(new AdapterSettingName(name));
        return this;
    }

    /// <summary>Changes the options after configuration is bound (before they are validated).</summary>
    public DocumentCompressionBuilder Configure(Action<CompressionEngineOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        Services.Configure(configure);
        return this;
    }
}

/// <summary>A section of <c>Compression</c> an adapter binds itself (<see cref="DocumentCompressionBuilder.AddAdapterSection"/>).</summary>
internal sealed record AdapterSectionName(string Name);

/// <summary>A per-namespace setting an adapter declared (<see cref="DocumentCompressionBuilder.AddNamespaceSetting"/>).</summary>
internal sealed record AdapterSettingName(string Name);
