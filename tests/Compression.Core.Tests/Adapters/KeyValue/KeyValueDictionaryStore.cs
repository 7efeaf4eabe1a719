using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;
using Compression.Dictionaries;

namespace Compression.Core.Tests.Adapters.KeyValue;

/// <summary>
/// The key-value adapter's <see cref="DictionaryStore"/>: a record under <c>dict:{id}</c> in <see cref="KeyValueRecordFormat"/>,
/// and for each version a pointer <c>ver:{namespace}:{version, 7 digits}</c> holding the id. Insert-only through
/// set-if-absent on both keys; records are checked by <see cref="DictionaryRecordCodec"/>, and ones that do not read are
/// skipped and reported, so a peer's broken record never hides the versions below it.
/// </summary>
internal sealed class KeyValueDictionaryStore(KeyValueDatabase database, int maxDictionaryBytes = ZstdDictionary.DefaultMaximumSize) : DictionaryStore
{
    public override string Location => $"the key-value store '{database.Name}' (keys dict:* and ver:*)";

    public override bool CanGetSynchronously => true;

    public static string RecordKey(uint id) => $"dict:{id.ToString(CultureInfo.InvariantCulture)}";

    public static string VersionKey(string @namespace, int version) => $"{VersionPrefix(@namespace)}{version.ToString("D7", CultureInfo.InvariantCulture)}";

    private static string VersionPrefix(string @namespace) => $"ver:{@namespace}:";

    public override async ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default) =>
        Parse(id, await database.GetAsync(RecordKey(id)));

    public override DictionaryRecord? Get(uint id) => Parse(id, database.Get(RecordKey(id)));

    private DictionaryRecord? Parse(uint id, byte[]? body)
    {
        if (body is null) return null;
        string key = RecordKey(id);
        if (body.Length > DictionaryRecordCodec.MaxRecordBytes(maxDictionaryBytes, base64: true))
            throw new InvalidDataException($"Dictionary record {key} in {Location} has {body.Length} bytes, more than a record can; it was not read.");
        DictionaryRecord record = KeyValueRecordFormat.Read(body, $"Dictionary record {key} in {Location}", maxDictionaryBytes);
        return record.Id == id ? record : throw new InvalidDataException($"Dictionary record {key} in {Location} says it is dictionary {record.Id}; it was not used.");
    }

    /// <summary>The record a version pointer names, checked against the pointer.</summary>
    private async ValueTask<DictionaryRecord> ReadVersionAsync(string @namespace, int version)
    {
        string key = VersionKey(@namespace, version);
        byte[] pointer = await database.GetAsync(key) ?? throw new InvalidDataException($"{key} is missing from {Location}; this store never deletes one.");
        if (!uint.TryParse(Encoding.UTF8.GetString(pointer), NumberStyles.None, CultureInfo.InvariantCulture, out uint id))
            throw new InvalidDataException($"{key} in {Location} does not hold a dictionary id.");
        DictionaryRecord record = await GetAsync(id) ?? throw new InvalidDataException($"{key} in {Location} names dictionary {id}, whose record is missing.");
        return record.Namespace == @namespace && record.Version == version ? record
            : throw new InvalidDataException($"Dictionary record {RecordKey(id)} in {Location} says version {record.Version} of '{record.Namespace}', but {key} files it as version {version} of '{@namespace}'.");
    }

    /// <summary>The versions filed for a namespace (or every namespace), oldest first.</summary>
    private async ValueTask<List<(string Namespace, int Version)>> VersionsAsync(string? @namespace)
    {
        var versions = new List<(string, int)>();
        foreach (string key in await database.KeysAsync(@namespace is null ? "ver:" : VersionPrefix(@namespace)))
        {
            int colon = key.LastIndexOf(':');
            string ns = key[4..colon];
            if ((@namespace is null || ns == @namespace) && key.Length - colon - 1 == 7
                && int.TryParse(key.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int version))
            {
                versions.Add((ns, version));
            }
        }
        versions.Sort((a, b) => a.Item1 == b.Item1 ? a.Item2.CompareTo(b.Item2) : string.CompareOrdinal(a.Item1, b.Item1));
        return versions;
    }

    public override async ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default) =>
        await NewestAsync(@namespace, int.MaxValue);

    public override async ValueTask<DictionaryRecord?> GetNewestBelowAsync(string @namespace, int version, CancellationToken cancellationToken = default) =>
        await NewestAsync(@namespace, version);

    /// <summary>The newest version below <paramref name="below"/> that reads, skipping and reporting at most <see cref="DictionaryStore.MaxSkippedRecords"/> that do not.</summary>
    private async ValueTask<DictionaryRecord?> NewestAsync(string @namespace, int below)
    {
        int skipped = 0;
        List<(string Namespace, int Version)> versions = await VersionsAsync(@namespace);
        for (int i = versions.Count - 1; i >= 0; i--)
        {
            if (versions[i].Version >= below) continue;
            try
            {
                return await ReadVersionAsync(@namespace, versions[i].Version);
            }
            catch (InvalidDataException ex) when (skipped < MaxSkippedRecords)
            {
                skipped++;
                ReportSkippedRecord(ex.Message);
            }
        }
        return null;
    }

    public override async ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(candidate.Version, DictionaryRecord.MaxVersion);
        ArgumentOutOfRangeException.ThrowIfLessThan(candidate.Version, 1);
        byte[] body = KeyValueRecordFormat.Write(candidate);
        if (!await database.SetIfAbsentAsync(RecordKey(candidate.Id), body))
        {
            // The same record: an earlier attempt of this publication got in. Another one: the id is taken.
            byte[]? stored = await database.GetAsync(RecordKey(candidate.Id));
            if (stored is null || !stored.AsSpan().SequenceEqual(body)) throw new DictionaryIdConflictException(candidate.Id);
        }
        byte[] pointer = Encoding.UTF8.GetBytes(candidate.Id.ToString(CultureInfo.InvariantCulture));
        if (await database.SetIfAbsentAsync(VersionKey(candidate.Namespace, candidate.Version), pointer)) return candidate;
        byte[]? holder = await database.GetAsync(VersionKey(candidate.Namespace, candidate.Version));
        if (holder is not null && holder.AsSpan().SequenceEqual(pointer)) return candidate;
        await database.DeleteAsync(RecordKey(candidate.Id)); // lost the version: nothing names this id
        return await ReadVersionAsync(candidate.Namespace, candidate.Version);
    }

    public override async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        foreach ((string ns, int version) in await VersionsAsync(@namespace))
        {
            cancellationToken.ThrowIfCancellationRequested();
            DictionaryRecord? record = null;
            try
            {
                record = await ReadVersionAsync(ns, version);
            }
            catch (InvalidDataException ex)
            {
                ReportSkippedRecord(ex.Message);
            }
            if (record is not null) yield return record;
        }
    }
}
