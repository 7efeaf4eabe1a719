using Compression.Dictionaries;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// What <see cref="DocumentCompressionServiceCollectionExtensions.AddDocumentCompression(IServiceCollection, Configuration.IConfiguration)"/>
/// returns: where the dictionary store is chosen, and what database adapters extend (<c>.AddMongoDB(...)</c>, <c>.AddCouchbase(...)</c>).
/// </summary>
public sealed class DocumentCompressionBuilder
{
    internal DocumentCompressionBuilder(IServiceCollection services) => Services = services;

    /// <summary>The application's services.</summary>
    public IServiceCollection Services { get; }

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

    /// <summary>Changes the options after configuration is bound (before they are validated).</summary>
    public DocumentCompressionBuilder Configure(Action<CompressionEngineOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        Services.Configure(configure);
        return this;
    }
}
