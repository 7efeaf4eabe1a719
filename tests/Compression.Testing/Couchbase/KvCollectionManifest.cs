using System.Globalization;
using System.Text.Json;

namespace Compression.Testing.Couchbase;

/// <summary>
/// The bucket's collections manifest: <c>_default._default</c> (id 0), the configured collections, and those the
/// management API creates later (<see cref="CreateScope"/>, <see cref="CreateCollection"/>), as kv_engine's
/// docs/Collections.md describes the manifest GET_COLLECTIONS_MANIFEST (0xBA) returns and the paths GET_COLLECTION_ID
/// (0xBB) resolves. Thread-safe.
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
    private readonly Lock _lock = new();
    private uint _nextScopeId = FirstUserId, _nextCollectionId = FirstUserId;
    private ulong _uid;
    private byte[] _json = [];

    public KvCollectionManifest(IReadOnlyList<KvCollectionDefinition> collections)
    {
        _byId[DefaultCollectionId] = _scopes[0].Collections[0];
        foreach (KvCollectionDefinition definition in collections)
        {
            ArgumentNullException.ThrowIfNull(definition, nameof(collections));
            CheckName(definition.Scope, "scope");
            CheckName(definition.Name, "collection");
            if (definition.Name == DefaultName)
            {
                throw new ArgumentException($"{definition.Scope}._default: the _default collection exists in the _default scope only, and is not created.", nameof(collections));
            }

            if (_scopes.Find(s => s.Name == definition.Scope) is null)
            {
                CreateScope(definition.Scope);
            }

            uint? maxTtlSeconds = definition.MaxTtl is TimeSpan maxTtl ? MaxTtlSeconds(definition, maxTtl) : null;
            if (CreateCollection(definition.Scope, definition.Name, maxTtlSeconds) == CreateResult.Exists)
            {
                throw new ArgumentException($"Collection {definition.Scope}.{definition.Name} is defined twice.", nameof(collections));
            }
        }

        _json = BuildJson();
    }

    /// <summary>What <see cref="CreateScope"/> and <see cref="CreateCollection"/> did.</summary>
    public enum CreateResult
    {
        /// <summary>Created; the manifest's uid went up by one.</summary>
        Created,

        /// <summary>One of that name exists already; nothing changed.</summary>
        Exists,

        /// <summary>The collection's scope does not exist.</summary>
        ScopeNotFound,

        /// <summary>The name is not valid (<see cref="NameError"/>).</summary>
        InvalidName,
    }

    /// <summary>The manifest's uid: one per scope or collection created since the bucket was (a fresh bucket's is 0).</summary>
    public ulong Uid
    {
        get
        {
            lock (_lock)
            {
                return _uid;
            }
        }
    }

    /// <summary>The manifest as GET_COLLECTIONS_MANIFEST returns it.</summary>
    public byte[] Json
    {
        get
        {
            lock (_lock)
            {
                return _json;
            }
        }
    }

    /// <summary>The value of an UnknownCollection (0x88) or UnknownScope (0x8C) reply: the uid of the manifest looked in.</summary>
    public byte[] UnknownBody => System.Text.Encoding.UTF8.GetBytes($$"""{"manifest_uid":"{{Uid.ToString("x", CultureInfo.InvariantCulture)}}"}""");

    /// <summary>The collection with this id, or null.</summary>
    public CollectionEntry? Find(uint collectionId)
    {
        lock (_lock)
        {
            return _byId.GetValueOrDefault(collectionId);
        }
    }

    /// <summary>Creates a scope, as the management API's <c>POST .../scopes</c> does.</summary>
    public CreateResult CreateScope(string name)
    {
        lock (_lock)
        {
            if (name == DefaultName || _scopes.Exists(s => s.Name == name))
            {
                return CreateResult.Exists;
            }

            if (NameError(name) is not null)
            {
                return CreateResult.InvalidName;
            }

            _scopes.Add(new ScopeEntry(name, _nextScopeId++, []));
            _uid++;
            _json = BuildJson();
            return CreateResult.Created;
        }
    }

    /// <summary>Creates a collection in an existing scope, as <c>POST .../scopes/{scope}/collections</c> does.</summary>
    public CreateResult CreateCollection(string scopeName, string name, uint? maxTtlSeconds)
    {
        lock (_lock)
        {
            ScopeEntry? scope = _scopes.Find(s => s.Name == scopeName);
            if (scope is null)
            {
                return CreateResult.ScopeNotFound;
            }

            if (name == DefaultName || scope.Collections.Exists(c => c.Name == name))
            {
                return CreateResult.Exists;
            }

            if (NameError(name) is not null)
            {
                return CreateResult.InvalidName;
            }

            var collection = new CollectionEntry(name, _nextCollectionId++, maxTtlSeconds);
            scope.Collections.Add(collection);
            _byId[collection.Id] = collection;
            _uid++;
            _json = BuildJson();
            return CreateResult.Created;
        }
    }

    /// <summary>Every scope with its collections (names and maximum TTLs), as the management API lists them.</summary>
    public IReadOnlyList<(string Scope, uint ScopeId, IReadOnlyList<CollectionEntry> Collections)> Scopes()
    {
        lock (_lock)
        {
            return [.. _scopes.Select(s => (s.Name, s.Id, (IReadOnlyList<CollectionEntry>)[.. s.Collections]))];
        }
    }

    /// <summary>The id of the collection named <c>scope.collection</c>, or the status that says why there is none.</summary>
    /// <remarks>As kv_engine: an empty scope or collection name means <c>_default</c> (<c>.</c> is the default collection);
    /// a path without exactly one dot, or with a name that is not valid, is invalid (0x04).</remarks>
    public ushort Resolve(string path, out uint collectionId)
    {
        lock (_lock)
        {
            return ResolveLocked(path, out collectionId);
        }
    }

    private ushort ResolveLocked(string path, out uint collectionId)
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
            string known = string.Join(", ", Scopes().SelectMany(s => s.Collections.Select(c => $"{s.Scope}.{c.Name}")));
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
    internal static string? NameError(string name)
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
            json.WriteString("uid", Hex(_uid));
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
