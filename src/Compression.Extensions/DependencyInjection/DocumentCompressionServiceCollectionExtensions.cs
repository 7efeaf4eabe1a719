using System.Diagnostics.Metrics;
using Compression.Configuration;
using Compression.Dictionaries;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers document compression: options from configuration, validated at start-up, one engine, its background work.</summary>
public static class DocumentCompressionServiceCollectionExtensions
{
    /// <summary>
    /// Adds a <see cref="CompressionEngine"/> configured from the <c>Compression</c> section of <paramref name="configuration"/>
    /// (see docs/configuration.md). The options are validated when the host starts: every bad key fails the start with a
    /// message naming it and the allowed values. The engine's polling runs in a hosted service.
    /// </summary>
    /// <param name="services">The application's services.</param>
    /// <param name="configuration">The application's configuration (the section <c>Compression</c> is read from it).</param>
    /// <returns>A builder on which to choose the dictionary store, or add a database adapter.</returns>
    public static DocumentCompressionBuilder AddDocumentCompression(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        IConfigurationSection section = configuration.GetSection(CompressionEngineOptions.SectionName);
        services.AddDocumentCompression();
        services.AddSingleton<IConfigureOptions<CompressionEngineOptions>>(sp =>
            new ConfigureFromSection(section, [.. sp.GetServices<AdapterSettingName>().Select(s => s.Name).Distinct(StringComparer.OrdinalIgnoreCase)],
                [.. sp.GetServices<AdapterSectionName>().Select(s => s.Name)]));
        return new DocumentCompressionBuilder(services, section);
    }

    /// <summary>Adds a <see cref="CompressionEngine"/> configured in code; see <see cref="AddDocumentCompression(IServiceCollection, IConfiguration)"/>.</summary>
    public static DocumentCompressionBuilder AddDocumentCompression(this IServiceCollection services, Action<CompressionEngineOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        DocumentCompressionBuilder builder = services.AddDocumentCompression();
        services.Configure(configure);
        return builder;
    }

    /// <summary>Adds a <see cref="CompressionEngine"/> with the default options (or options configured elsewhere).</summary>
    public static DocumentCompressionBuilder AddDocumentCompression(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<CompressionEngineOptions>().ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<CompressionEngineOptions>, CompressionOptionsValidator>());
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton(sp => new CompressionEngine(
            sp.GetService<DictionaryStore>() ?? throw new InvalidOperationException(
                "No dictionary store is registered for document compression: call UseFileStore(...) or UseStore(...) on the builder " +
                "AddDocumentCompression returns, or a database adapter's AddMongoDB(...) / AddCouchbase(...)."),
            sp.GetRequiredService<IOptions<CompressionEngineOptions>>().Value,
            sp.GetService<ILoggerFactory>(),
            sp.GetService<IMeterFactory>(),
            sp.GetService<TimeProvider>()));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, CompressionEngineHostedService>());
        return new DocumentCompressionBuilder(services);
    }

    private sealed class ConfigureFromSection(IConfigurationSection section, IReadOnlyList<string> adapterSettings, IReadOnlyList<string> adapterSections)
        : IConfigureOptions<CompressionEngineOptions>
    {
        public void Configure(CompressionEngineOptions options) =>
            CompressionConfigurationBinder.Bind(section, options, options.BindingErrors, adapterSettings, adapterSections);
    }
}
