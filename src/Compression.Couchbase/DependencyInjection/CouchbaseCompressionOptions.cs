using Couchbase.Core.IO.Transcoders;

namespace Compression.Couchbase;

/// <summary>
/// Where <c>.AddCouchbase(...)</c> keeps the dictionaries, and how the collections it hands out write. Each collection's
/// compression settings are the engine's: <c>Compression:Namespaces:{bucket.scope.collection}</c>, else <c>Compression:Defaults</c>.
/// </summary>
public sealed class CouchbaseCompressionOptions
{
    /// <summary>The bucket the dictionary store lives in (opened through the SDK's <c>IBucketProvider</c>).</summary>
    /// <value>Required: set by <c>AddCouchbase(bucketName)</c>.</value>
    public string BucketName { get; set; } = "";

    /// <summary>The default <see cref="StoreScopeName"/>: a scope of the store's own (Couchbase reserves names starting with <c>_</c>).</summary>
    internal const string DefaultStoreScopeName = "compression";

    /// <summary>The default <see cref="StoreCollectionName"/>.</summary>
    internal const string DefaultStoreCollectionName = "dictionaries";

    /// <summary>The scope of the store's collection.</summary>
    /// <value>Defaults to <c>compression</c>.</value>
    public string StoreScopeName { get; set; } = DefaultStoreScopeName;

    /// <summary>The store's collection, where the dictionaries live under keys starting <c>_compression::</c>.</summary>
    /// <value>Defaults to <c>dictionaries</c>: <c>compression.dictionaries</c>, created at
    /// start-up when missing (and when the user may), apart from application data. Versions before it kept them in <c>_default._default</c>:
    /// set both names to <c>_default</c> to keep them there (start-up refuses the new default when it finds them there).</value>
    public string StoreCollectionName { get; set; } = DefaultStoreCollectionName;

    /// <summary>
    /// Whether start-up checks the store's location (<see cref="CouchbaseDictionaryStore.CheckLocationAsync"/>: no maximum TTL, no
    /// evicting ephemeral bucket) and creates the default one when missing. Both ask the cluster's management service.
    /// </summary>
    /// <value>Defaults to <see langword="true"/>. Turn it off only for a user whose roles cannot read the bucket's settings, after checking the location by hand.</value>
    public bool CheckStoreLocation { get; set; } = true;

    /// <summary>Whether the collections handed out write compressed documents (both forms are always read).</summary>
    /// <value>Defaults to <see langword="true"/>.</value>
    public bool Compress { get; set; } = true;

    /// <summary>The section of <c>Compression</c> these options are read from: <c>Compression:Couchbase</c>.</summary>
    internal const string SectionName = "Couchbase";

    /// <summary>What binding <c>Compression:Couchbase</c> found wrong, one message per key (reported at start-up).</summary>
    internal List<string> BindingErrors { get; } = [];

    /// <summary>
    /// Binds <c>Compression:Couchbase</c>: <see cref="StoreScopeName"/>, <see cref="StoreCollectionName"/>,
    /// <see cref="CheckStoreLocation"/> and <see cref="Compress"/>; anything else is an error naming the key and the allowed ones.
    /// </summary>
    internal sealed class ConfigureFromSection(Microsoft.Extensions.Configuration.IConfigurationSection section) : Microsoft.Extensions.Options.IConfigureOptions<CouchbaseCompressionOptions>
    {
        private static readonly string[] Allowed = [nameof(StoreScopeName), nameof(StoreCollectionName), nameof(CheckStoreLocation), nameof(Compress)];

        public void Configure(CouchbaseCompressionOptions options)
        {
            foreach (var child in section.GetChildren())
            {
                string? value = child.Value;
                if (child.GetChildren().Any())
                {
                    options.BindingErrors.Add($"{child.Path}: a section; allowed: a value.");
                    continue;
                }
                switch (Allowed.FirstOrDefault(n => string.Equals(n, child.Key, StringComparison.OrdinalIgnoreCase)))
                {
                    case nameof(StoreScopeName): options.StoreScopeName = value ?? ""; break;
                    case nameof(StoreCollectionName): options.StoreCollectionName = value ?? ""; break;
                    case nameof(CheckStoreLocation) when bool.TryParse(value, out bool check): options.CheckStoreLocation = check; break;
                    case nameof(Compress) when bool.TryParse(value, out bool compress): options.Compress = compress; break;
                    case nameof(CheckStoreLocation) or nameof(Compress):
                        options.BindingErrors.Add($"{child.Path}: '{value}' is not valid; allowed: true or false.");
                        break;
                    default:
                        options.BindingErrors.Add($"{child.Path}: unknown setting; allowed: {string.Join(", ", Allowed)}.");
                        break;
                }
            }
        }
    }

    /// <summary>The transcoder that turns values into JSON and back.</summary>
    /// <value>Defaults to <see langword="null"/>: the cluster's own transcoder (<c>ClusterOptions.WithTranscoder</c>, else the
    /// SDK's <see cref="JsonTranscoder"/> over the serializer of <c>ClusterOptions.WithSerializer</c>), as the plain collection uses.</value>
    public ITypeTranscoder? JsonTranscoder { get; set; }
}
