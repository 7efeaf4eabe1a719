namespace Compression.Testing.Couchbase;

/// <summary>
/// A collection of the loopback server's bucket (<see cref="CouchbaseLoopbackServerOptions.Collections"/>); its scope is
/// created with it when no earlier definition named it.
/// </summary>
/// <param name="Scope">The scope's name: <c>_default</c>, or 1 to 30 of <c>A-Z a-z 0-9 _ - %</c> not starting with <c>_</c> or <c>%</c>.</param>
/// <param name="Name">The collection's name, under the same rules (unique within its scope; <c>_default</c> exists already).</param>
public sealed record KvCollectionDefinition(string Scope, string Name)
{
    /// <summary>
    /// The collection's maximum time to live (whole seconds): a document written with no expiry, or with a later one,
    /// expires this long after it was written, as on Couchbase Server. Null: none (the manifest has no <c>maxTTL</c>).
    /// </summary>
    public TimeSpan? MaxTtl { get; init; }
}
