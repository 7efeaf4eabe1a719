using System.Text.Json;
using Compression.Couchbase.Internal;
using Couchbase.Core.Exceptions;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

// The index of namespaces (for ListAsync over all of them): one document, read with its CAS and replaced with it.
public sealed partial class CouchbaseDictionaryStore
{
    private async ValueTask<NamespaceIndex> ReadIndexAsync(ICouchbaseCollection collection, CancellationToken cancellationToken)
    {
        return await ReadSmallAsync(collection, IndexKey, cancellationToken, (body, store) =>
        {
            using JsonDocument json = store._json.Parse(IndexKey, body);
            if (!json.RootElement.TryGetProperty("namespaces", out JsonElement list) || list.ValueKind != JsonValueKind.Array)
                throw new InvalidDataException($"{IndexKey} in {store.Location} has no 'namespaces' array.");
            var names = new List<string>();
            foreach (JsonElement item in list.EnumerateArray())
            {
                names.Add(item.ValueKind == JsonValueKind.String ? item.GetString()! : throw new InvalidDataException($"{IndexKey} in {store.Location} lists a namespace that is not a string."));
            }
            return new NamespaceIndex(names, 0);
        }, withCas: true).ConfigureAwait(false) ?? new NamespaceIndex([], 0);
    }

    /// <summary>Adds a namespace to the index document, with CAS so that concurrent first publications all get in.</summary>
    private async ValueTask AddToIndexAsync(ICouchbaseCollection collection, string ns, CancellationToken cancellationToken)
    {
        for (int attempt = 0; attempt < 16; attempt++)
        {
            NamespaceIndex index = await ReadIndexAsync(collection, cancellationToken).ConfigureAwait(false);
            if (index.Names.Contains(ns, StringComparer.Ordinal)) return;
            ReadOnlyMemory<byte> body = JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object> { ["namespaces"] = index.Names.Append(ns).ToArray() });
            try
            {
                if (index.Cas == 0)
                    await collection.InsertAsync(IndexKey, body, DurableInsert(cancellationToken)).ConfigureAwait(false);
                else
                    await collection.ReplaceAsync(IndexKey, body, new ReplaceOptions().Transcoder(RawBodyTranscoder.Instance).Cas(index.Cas)
                        .Durability(DurabilityLevel.Majority).CancellationToken(cancellationToken)).ConfigureAwait(false);
                return;
            }
            catch (Exception ex) when (ex is DocumentExistsException or CasMismatchException)
            {
                // another client changed it: read again
            }
        }
        throw new IOException($"Could not add '{ns}' to {IndexKey} in {Location}: it kept changing.");
    }

    private sealed record NamespaceIndex(List<string> Names, ulong Cas);
}
