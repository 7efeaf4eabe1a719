using System.Globalization;
using System.Text.Json;

namespace Compression.Testing.Couchbase;

/// <summary>
/// The bucket's collections manifest, fixed for the server's life: <c>_default._default</c> (id 0) and the configured
/// collections, as kv_engine's docs/Collections.md describes the manifest GET_COLLECTIONS_MANIFEST (0xBA) returns and
/// the paths GET_COLLECTION_ID (0xBB) resolves.
/// </summary>
internal sealed class KvCollectionManifest
{
    /// <summary>The default scope's and default collection's name.</summary>
    public const string DefaultName = "_default";

    /// <summary>The default collection's id.</summary>
    public const uint DefaultCollectionId = 0;

    private const uint FirstUserId = 8; // 0 is _default, 1 to 7 are reserved
    private const int MaxNameLength = 30;

    private readonly List<ScopeEntry> _scopes = [new ScopeEntry(DefaultName, 0, [new CollectionEntry(DefaultName, DefaultCollectionId, null)])];
    private readonly Dictionary<uint, CollectionEntry> _byId = [];

    public KvCollectionManifest(IReadOnlyList<KvCollectionDefinition> collections)
    {
        _byId[DefaultCollectionId] = _scopes[0].Collections[0];
        uint nextScopeId = FirstUserId, nextCollectionId = FirstUserId, changes = 0;
        foreach (KvCollectionDefinition definition in collections)
        {
            ArgumentNullException.ThrowIfNull(definition, nameof(collections));
            CheckName(definition.Scope, "scope");
            CheckName(definition.Name, "collection");
            if (definition.Name == DefaultName)
            {
                throw new ArgumentException($"{definition.Scope}._default: the _default collection exists in the _default scope only, and is not created.", nameof(collections));
            }

            ScopeEntry? scope = _scopes.Find(s => s.Name == definition.Scope);
            if (scope is null)
            {
                scope = new ScopeEntry(definition.Scope, nextScopeId++, []);
                _scopes.Add(scope);
                changes++;
            }

            if (scope.Collections.Exists(c => c.Name == definition.Name))
            {
                throw new ArgumentException($"Collection {definition.Scope}.{definition.Name} is defined twice.", nameof(collections));
            }

            uint? maxTtlSeconds = definition.MaxTtl is TimeSpan maxTtl ? MaxTtlSeconds(definition, maxTtl) : null;
            var collection = new CollectionEntry(definition.Name, nextCollectionId++, maxTtlSeconds);
            scope.Collections.Add(collection);
            _byId[collection.Id] = collection;
            changes++;
        }

        Uid = changes;
        Json = BuildJson();
    }

    /// <summary>The manifest's uid: one per scope or collection created since the bucket was (a fresh bucket's is 0).</summary>
    public ulong Uid { get; }

    /// <summary>The manifest as GET_COLLECTIONS_MANIFEST returns it.</summary>
    public byte[] Json { get; }

    /// <summary>The value of an UnknownCollection (0x88) or UnknownScope (0x8C) reply: the uid of the manifest looked in.</summary>
    public byte[] UnknownBody => System.Text.Encoding.UTF8.GetBytes($$"""{"manifest_uid":"{{Uid.ToString("x", CultureInfo.InvariantCulture)}}"}""");

    /// <summary>The collection with this id, or null.</summary>
    public CollectionEntry? Find(uint collectionId) => _byId.GetValueOrDefault(collectionId);

    /// <summary>The id of the collection named <c>scope.collection</c>, or the status that says why there is none.</summary>
    /// <remarks>As kv_engine: an empty scope or collection name means <c>_default</c> (<c>.</c> is the default collection);
    /// a path without exactly one dot, or with a name that is not valid, is invalid (0x04).</remarks>
    public ushort Resolve(string path, out uint collectionId)
    {
        collectionId = 0;
        string[] parts = path.Split('.');
        if (parts.Length != 2)
        {
            return KvProtocol.Status.InvalidArguments;
        }

        string scopeName = parts[0].Length == 0 ? DefaultName : parts[0];
        string collectionName = parts[1].Length == 0 ? DefaultName : parts[1];
        if (NameError(scopeName) is not null || NameError(collectionName) is not null)
        {
            return KvProtocol.Status.InvalidArguments;
        }

        ScopeEntry? scope = _scopes.Find(s => s.Name == scopeName);
        if (scope is null)
        {
            return KvProtocol.Status.UnknownScope;
        }

        CollectionEntry? collection = scope.Collections.Find(c => c.Name == collectionName);
        if (collection is null)
        {
            return KvProtocol.Status.UnknownCollection;
        }

        collectionId = collection.Id;
        return KvProtocol.Status.Success;
    }

    /// <summary>The id of <c>scope.collection</c>; an <see cref="ArgumentException"/> naming the known ones when there is none.</summary>
    public uint IdOf(string scope, string collection)
    {
        if (Resolve($"{scope}.{collection}", out uint id) != KvProtocol.Status.Success)
        {
            string known = string.Join(", ", _scopes.SelectMany(s => s.Collections.Select(c => $"{s.Name}.{c.Name}")));
            throw new ArgumentException($"The bucket has no collection {scope}.{collection} (it has {known}); configure it in CouchbaseLoopbackServerOptions.Collections.");
        }

        return id;
    }

    private static void CheckName(string name, string what)
    {
        if (NameError(name) is string error)
        {
            throw new ArgumentException($"The {what} name '{name}' is not valid: {error}.", "options");
        }
    }

    /// <summary>Why a scope or collection name is not valid (kv_engine's rules for user names), or null.</summary>
    private static string? NameError(string name)
    {
        if (name == DefaultName)
        {
            return null;
        }

        if (name.Length is 0 or > MaxNameLength)
        {
            return $"it must have 1 to {MaxNameLength} characters";
        }

        if (name[0] is '_' or '%')
        {
            return "only _default may start with _ or %";
        }

        return name.All(c => char.IsAsciiLetterOrDigit(c) || c is '_' or '-' or '%') ? null : "allowed are A-Z, a-z, 0-9, _, - and %";
    }

    private static uint MaxTtlSeconds(KvCollectionDefinition definition, TimeSpan maxTtl)
    {
        if (maxTtl <= TimeSpan.Zero || maxTtl.Ticks % TimeSpan.TicksPerSecond != 0 || maxTtl.TotalSeconds > int.MaxValue)
        {
            throw new ArgumentException($"The maximum TTL of {definition.Scope}.{definition.Name} must be a positive whole number of seconds, at most {int.MaxValue}; it is {maxTtl}.", "options");
        }

        return (uint)maxTtl.TotalSeconds;
    }

    private byte[] BuildJson()
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("uid", Hex(Uid));
            json.WriteStartArray("scopes");
            foreach (ScopeEntry scope in _scopes)
            {
                json.WriteStartObject();
                json.WriteString("name", scope.Name);
                json.WriteString("uid", Hex(scope.Id));
                json.WriteStartArray("collections");
                foreach (CollectionEntry collection in scope.Collections)
                {
                    json.WriteStartObject();
                    json.WriteString("name", collection.Name);
                    json.WriteString("uid", Hex(collection.Id));
                    if (collection.MaxTtlSeconds is uint maxTtl)
                    {
                        json.WriteNumber("maxTTL", maxTtl);
                    }

                    json.WriteEndObject();
                }

                json.WriteEndArray();
                json.WriteEndObject();
            }

            json.WriteEndArray();
            json.WriteEndObject();
        }

        return buffer.ToArray();
    }

    private static string Hex(ulong value) => value.ToString("x", CultureInfo.InvariantCulture);

    private sealed record ScopeEntry(string Name, uint Id, List<CollectionEntry> Collections);

    /// <summary>One collection: its name in its scope, its id, and its maximum TTL in seconds (null: none).</summary>
    internal sealed record CollectionEntry(string Name, uint Id, uint? MaxTtlSeconds);
}
