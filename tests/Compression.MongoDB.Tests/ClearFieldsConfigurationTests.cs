using Compression.Dictionaries;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests;

/// <summary>
/// <c>ClearFields</c> is the MongoDB adapter's own key of a namespace's section: <c>AddMongoDB</c> declares it, and it binds
/// and fails the start with the same messages as when Core held it. No server is needed: the options are bound and checked
/// before the database is used (the client below never connects).
/// </summary>
public sealed class ClearFieldsConfigurationTests
{
    private static IHost Build(Action<IConfigurationBuilder> configure)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        configure(builder.Configuration);
        builder.Services.AddDocumentCompression(builder.Configuration)
            .AddMongoDB(_ => new MongoClient("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100").GetDatabase("shop"), _ => { });
        return builder.Build();
    }

    private static IHost Build(IDictionary<string, string?> values) => Build(c => c.AddInMemoryCollection(values));

    private static IHost BuildJson(string json) => Build(c => c.AddJsonStream(new MemoryStream(System.Text.Encoding.UTF8.GetBytes(json))));

    [Fact]
    public void ClearFields_BindFromNamespacesAndDefaults_ANamespaceEntryReplacingTheDefaults()
    {
        using IHost host = BuildJson("""
            { "Compression": {
                "Defaults": { "ClearFields": [ "Kind" ] },
                "Namespaces": { "shop.orders": { "Level": 6, "ClearFields": [ "CustomerId", "Status" ] }, "shop.audit": { "Level": 5 }, "shop.empty": { "clearfields": [ ] } } } }
            """);
        CompressionEngineOptions options = host.Services.GetRequiredService<IOptions<CompressionEngineOptions>>().Value;
        Assert.Equal(["Kind"], options.Defaults.AdapterSettings["ClearFields"]);
        Assert.Equal(["CustomerId", "Status"], options.Namespaces["shop.orders"].AdapterSettings["ClearFields"]);
        Assert.Equal(6, options.Namespaces["shop.orders"].Level);
        Assert.Equal(["Kind"], options.Namespaces["shop.audit"].AdapterSettings["ClearFields"]);   // from Defaults
        Assert.Empty(options.Namespaces["shop.empty"].AdapterSettings["ClearFields"]);             // case-insensitive, empty
    }

    public static TheoryData<string, string, string> BadValues() => new()
    {
        { "Compression:Namespaces:a.b:ClearFields:0", "user.name", "Compression:Namespaces:a.b:ClearFields: 'user.name' is not a clear field; allowed: top-level field names, not empty, without '.', not starting with '$', not '_z'." },
        { "Compression:Namespaces:a.b:ClearFields:0", "_z", "Compression:Namespaces:a.b:ClearFields: '_z' is not a clear field; allowed: top-level field names, not empty, without '.', not starting with '$', not '_z'." },
        { "Compression:Defaults:ClearFields:0", "$where", "Compression:Defaults:ClearFields: '$where' is not a clear field; allowed: top-level field names, not empty, without '.', not starting with '$', not '_z'." },
        { "Compression:Defaults:ClearFields:0", "", "Compression:Defaults:ClearFields: '' is not a clear field; allowed: top-level field names" },
        { "Compression:Defaults:ClearFeilds:0", "Title", "Compression:Defaults:ClearFeilds: unknown setting; allowed: Codec, Level, LargeDocumentLevel, Checksum, RequireChecksum, Format, MinimumSize, MaxUncompressedLength, ClearFields, Dictionary." },
    };

    [Theory]
    [MemberData(nameof(BadValues))]
    public async Task BadClearField_FailsTheStart_NamingTheKeyAndTheAllowedValues(string key, string value, string expected)
    {
        using IHost host = Build(new Dictionary<string, string?> { [key] = value });
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Contains(expected, ex.Message, StringComparison.Ordinal);
    }

    public static TheoryData<string, string> BadShapes() => new()
    {
        { """{ "Compression": { "Namespaces": { "shop.orders": { "ClearFields": "CustomerId" } } } }""",
          """Compression:Namespaces:shop.orders:ClearFields: 'CustomerId' is a value; allowed: a list of names, e.g. [ "CustomerId" ].""" },
        { """{ "Compression": { "Namespaces": { "a.b": { "ClearFields": [ { "name": "x" } ] } } } }""", "Compression:Namespaces:a.b:ClearFields:0: a section; allowed: a name." },
        { """{ "Compression": { "Defaults": "zstd" } }""", "Compression:Defaults: 'zstd' is a value; allowed: a section of settings (Codec, Level, LargeDocumentLevel, Checksum, RequireChecksum, Format, MinimumSize, MaxUncompressedLength, ClearFields, Dictionary)." },
    };

    [Theory]
    [MemberData(nameof(BadShapes))]
    public async Task ClearFieldsOfTheWrongShape_FailTheStart_NamingTheKey(string json, string expected)
    {
        using IHost host = BuildJson(json);
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Contains(expected, ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task BadClearFields_AreReportedTogetherWithCoresErrors()
    {
        using IHost host = Build(new Dictionary<string, string?>
        {
            ["Compression:Defaults:Level"] = "0",
            ["Compression:Namespaces:x.y:ClearFields:0"] = "a.b",
        });
        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Equal(3, ex.Failures.Count());
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:Defaults:Level:", StringComparison.Ordinal));
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:Namespaces:x.y:Level: 0", StringComparison.Ordinal));
        Assert.Contains(ex.Failures, f => f.StartsWith("Compression:Namespaces:x.y:ClearFields: 'a.b' is not a clear field", StringComparison.Ordinal));
    }
}
