using Compression.Dictionaries;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Xunit;

namespace Compression.Extensions.Tests;

/// <summary>appsettings.json through the real host builder; every bad value fails the start naming its key.</summary>
public sealed class ConfigurationTests : IDisposable
{
    // An adapter's per-namespace setting, declared as the MongoDB adapter declares its own (the example file has one).
    private const string AdapterSetting = "ClearFields";

    private readonly string _directory = Directory.CreateTempSubdirectory("config-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private IHost Build(Action<IConfigurationBuilder> configure)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        configure(builder.Configuration);
        builder.Services.AddDocumentCompression(builder.Configuration).UseFileStore(Path.Combine(_directory, "dictionaries"))
            .AddNamespaceSetting(AdapterSetting);
        return builder.Build();
    }

    private IHost Build(IDictionary<string, string?> values) => Build(c => c.AddInMemoryCollection(values));

    [Fact]
    public async Task ExampleAppSettings_BindsThroughTheHostBuilder_AndTheEngineUsesIt()
    {
        using IHost host = Build(c => c.AddJsonFile(Path.Combine(AppContext.BaseDirectory, "appsettings.example.json"), optional: false));
        await host.StartAsync();
        var engine = host.Services.GetRequiredService<CompressionEngine>();
        var options = host.Services.GetRequiredService<IOptions<CompressionEngineOptions>>().Value;

        NamespaceOptions orders = options.Namespaces["shop.orders"];
        Assert.Equal(6, orders.Level);
        Assert.Equal(["CustomerId", "Status"], orders.AdapterSettings[AdapterSetting]);
        Assert.Equal(CompressionCodec.Zstd, orders.Codec);                 // from Defaults
        Assert.Equal(32768, orders.Dictionary.DictionarySize);            // from Defaults
        Assert.Equal(CompressionCodec.Brotli, options.Namespaces["shop.audit"].Codec);
        Assert.Equal(16384, options.Namespaces["travel.inventory.flights"].Dictionary.DictionarySize);
        Assert.Equal(4000, options.Namespaces["travel.inventory.flights"].Dictionary.MaxSampleCount);
        Assert.Equal(32, options.Namespaces["travel.inventory.flights"].MinimumSize);

        CompressionNamespace audit = engine.GetNamespace("shop.audit");
        Assert.Equal(CompressionCodec.Brotli, audit.Codec);
        Assert.Equal(["CustomerId", "Status"], engine.GetNamespace("shop.orders").AdapterSettings[AdapterSetting]);
        Assert.Empty(audit.AdapterSettings);
        byte[] document = """{"id":1,"note":"the same words, the same words, the same words"}"""u8.ToArray();
        byte[] envelope = audit.Compress(document);
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Equal(CompressionCodec.Brotli, header.Codec);
        Assert.Equal(document, audit.Decompress(envelope));
        Assert.IsType<FileDictionaryStore>(engine.Store);
        await host.StopAsync();
    }

    public static TheoryData<string, string, string> BadValues() => new()
    {
        { "Compression:Defaults:Level", "99", "Compression:Defaults:Level: 99 is out of range for Zstd; allowed: 1 to 22." },
        { "Compression:Namespaces:shop.orders:Level", "40", "Compression:Namespaces:shop.orders:Level: 40 is out of range for Zstd; allowed: 1 to 22." },
        { "Compression:Namespaces:shop.orders:Level", "high", "Compression:Namespaces:shop.orders:Level: 'high' is not valid; allowed: a whole number or empty for the default." },
        { "Compression:Defaults:Codec", "zip", "Compression:Defaults:Codec: 'zip' is not valid; allowed: one of Stored, Zstd, Lz4, Snappy, Deflate, Brotli, Gzip." },
        { "Compression:Defaults:Codec", "7", "Compression:Defaults:Codec: '7' is not valid; allowed: one of" },
        { "Compression:Defaults:Checksum", "yes", "Compression:Defaults:Checksum: 'yes' is not valid; allowed: true or false." },
        { "Compression:Defaults:Levle", "3", "Compression:Defaults:Levle: unknown setting; allowed: Codec, Level, LargeDocumentLevel, Checksum" },
        { "Compression:Defaults:Dictionary:HoldoutFraction", "0.9", "Compression:Defaults:Dictionary:HoldoutFraction: 0.9 is out of range; allowed: 0.05 to 0.5." },
        { "Compression:Namespaces:a.b:Dictionary:MinTrainingInterval", "soon", "Compression:Namespaces:a.b:Dictionary:MinTrainingInterval: 'soon' is not valid; allowed: a duration" },
        // Adapters' settings stand where they always stood in the list of allowed keys; one not declared is unknown.
        { "Compression:Namespaces:a.b:Fields:0", "x", "Compression:Namespaces:a.b:Fields: unknown setting; allowed: Codec, Level, LargeDocumentLevel, Checksum, RequireChecksum, Format, MinimumSize, MaxUncompressedLength, ClearFields, Dictionary." },
        { "Compression:PollInterval", "00:00:00", "Compression:PollInterval: 00:00:00 is out of range; allowed: more than 00:00:00" },
        { "Compression:MaxCachedDictionaries", "0", "Compression:MaxCachedDictionaries: 0 is out of range; allowed: 1 to 100000." },
        { "Compression:Pollinterval", "", "" }, // case-insensitive, empty: no error expected from this key (checked below)
    };

    [Theory]
    [MemberData(nameof(BadValues))]
    public async Task BadValue_FailsTheStart_NamingTheKeyAndTheAllowedValues(string key, string value, string expected)
    {
        using IHost host = Build(new Dictionary<string, string?> { [key] = value });
        if (expected.Length == 0)
        {
            var ex0 = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
            Assert.Contains("Compression:Pollinterval: '' is not valid", ex0.Message);
            return;
        }
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Contains(expected, ex.Message);
    }

    public static TheoryData<string, string> BadShapes() => new()
    {
        // Each was accepted without a word until 2026-11-27: a string where an adapter's list was expected bound as an
        // empty list (MongoDB's ClearFields: the field was compressed, filters on it failed at query time); the others
        // were dropped.
        { """{ "Compression": { "Namespaces": { "shop.orders": { "ClearFields": "CustomerId" } } } }""",
          """Compression:Namespaces:shop.orders:ClearFields: 'CustomerId' is a value; allowed: a list of names, e.g. [ "CustomerId" ].""" },
        { """{ "Compression": { "Namespaces": "shop.orders" } }""",
          "Compression:Namespaces: 'shop.orders' is a value; allowed: a section with one section of settings per namespace" },
        { """{ "Compression": "on" }""", "Compression: 'on' is a value; allowed: a section of settings (Defaults, Namespaces, " },
        { """{ "Compression": { "Defaults": "zstd" } }""", "Compression:Defaults: 'zstd' is a value; allowed: a section of settings (Codec, " },
        { """{ "Compression": { "Namespaces": { "a.b": { "ClearFields": [ { "name": "x" } ] } } } }""", "Compression:Namespaces:a.b:ClearFields:0: a section; allowed: a name." },
        { """{ "Compression": { "Namespaces": { "a.b": { "Dictionary": true } } } }""", "Compression:Namespaces:a.b:Dictionary: 'True' is a value; allowed: a section of settings" },
        { """{ "Compression": { "Defaults": { "Level": [ 3 ] } } }""", "Compression:Defaults:Level: a section; allowed: a whole number" },
    };

    [Theory]
    [MemberData(nameof(BadShapes))]
    public async Task ValueOfTheWrongShape_FailsTheStart_NamingTheKey(string json, string expected)
    {
        using IHost host = Build(c => c.AddJsonStream(new MemoryStream(System.Text.Encoding.UTF8.GetBytes(json))));
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Contains(expected, ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EmptyListsAndSections_AreEmpty_NotErrors()
    {
        using IHost host = Build(c => c.AddJsonStream(new MemoryStream("""{ "Compression": { "Namespaces": { "a.b": { "ClearFields": [ ] } }, "Defaults": { } } }"""u8.ToArray())));
        await host.StartAsync();
        Assert.Empty(host.Services.GetRequiredService<IOptions<CompressionEngineOptions>>().Value.Namespaces["a.b"].AdapterSettings[AdapterSetting]);
        await host.StopAsync();
    }

    [Fact]
    public async Task SeveralBadValues_AreReportedTogether()
    {
        using IHost host = Build(new Dictionary<string, string?>
        {
            ["Compression:Defaults:Level"] = "0",
            ["Compression:Namespaces:x.y:Codec"] = "Lzma",
            ["Compression:StoreAttempts"] = "0",
        });
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        // x.y starts from Defaults, so it inherits the bad level too, and says so under its own key.
        Assert.Equal(4, ex.Failures.Count());
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:Namespaces:x.y:Level: 0", StringComparison.Ordinal));
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:Defaults:Level:", StringComparison.Ordinal));
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:Namespaces:x.y:Codec:", StringComparison.Ordinal));
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:StoreAttempts:", StringComparison.Ordinal));
    }

    [Fact]
    public async Task AnAdaptersSection_IsLeftToTheAdapter_WhichFindsItOnTheBuilder_AndAnUndeclaredOneIsStillRefused()
    {
        var values = new Dictionary<string, string?> { ["Compression:Couchbase:StoreScopeName"] = "_default", ["Compression:Defaults:Level"] = "4" };
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(values);
        DocumentCompressionBuilder compression = builder.Services.AddDocumentCompression(builder.Configuration)
            .UseFileStore(Path.Combine(_directory, "dictionaries")).AddAdapterSection("Couchbase");
        using (IHost host = builder.Build())
        {
            await host.StartAsync();
            Assert.Equal("_default", compression.Section!.GetSection("Couchbase")["StoreScopeName"]);
            Assert.Equal(4, host.Services.GetRequiredService<IOptions<CompressionEngineOptions>>().Value.Defaults.Level);
            await host.StopAsync();
        }

        using IHost undeclared = Build(values);
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => undeclared.StartAsync());
        Assert.Contains("Compression:Couchbase", ex.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => compression.AddAdapterSection("Namespaces"));
        Assert.Null(new ServiceCollection().AddDocumentCompression().Section);
    }

    [Fact]
    public void AddNamespaceSetting_WithTheNameOfACoreSetting_IsRefused()
    {
        DocumentCompressionBuilder builder = new ServiceCollection().AddDocumentCompression();
        var ex = Assert.Throws<ArgumentException>(() => builder.AddNamespaceSetting("level"));
        Assert.Contains("'level' is a setting of every namespace", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task NoStore_FailsTheStartSayingWhatToCall()
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Services.AddDocumentCompression(builder.Configuration);
        using IHost host = builder.Build();
        var ex = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        Assert.Contains("UseFileStore", ex.Message);
    }

    [Fact]
    public async Task AddDocumentCompression_Twice_RegistersOneEngineAndOneHostedService()
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Services.AddDocumentCompression().UseStore(_ => new InMemoryDictionaryStore());
        builder.Services.AddDocumentCompression();
        using IHost host = builder.Build();
        await host.StartAsync();
        Assert.Single(host.Services.GetServices<CompressionEngine>());
        Assert.Single(host.Services.GetServices<IHostedService>(), s => s.GetType().Name == "CompressionEngineHostedService");
        await host.StopAsync();
    }
}
