using Compression.Dictionaries;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

// `docz dictionaries list|export|import` (docs/docz.md, "dictionaries"): every version of every namespace of a database's
// dictionary store, to one file and back, insert-only.
internal abstract partial class LiveBackend<TSession, TNamespace, TDocument>
{
    public async Task<int> ListDictionariesAsync(LiveSettings settings, LiveOutput console, CancellationToken cancellationToken)
    {
        List<StoreContents> stores = await ReadStoresAsync(settings, cancellationToken).ConfigureAwait(false);
        var report = new DictionaryListReport("dictionaries list", [.. stores.Select(s => s.ToListing())], stores.Any(s => s.Unreadable.Count > 0) ? 1 : 0);
        console.Write(report, DictionariesCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> ExportDictionariesAsync(LiveSettings settings, FileInfo to, LiveOutput console, CancellationToken cancellationToken)
    {
        List<StoreContents> stores = await ReadStoresAsync(settings, cancellationToken).ConfigureAwait(false);
        List<DictionaryRecord> records = [.. stores.SelectMany(s => s.Namespaces.SelectMany(n => n.Records))];
        // Written beside the file, then moved into place: a run that fails leaves no half-written file.
        string partial = Path.Combine(to.DirectoryName!, $".{to.Name}.{Guid.NewGuid():N}.partial");
        try
        {
            await using (var stream = new FileStream(partial, FileMode.CreateNew, FileAccess.Write, FileShare.None))
            {
                await DictionaryFile.WriteAsync(stream, [.. stores.Select(s => s.Location)], records, DateTimeOffset.UtcNow, cancellationToken).ConfigureAwait(false);
                await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
                stream.Flush(flushToDisk: true);
            }
            File.Move(partial, to.FullName, overwrite: false);
        }
        finally
        {
            if (File.Exists(partial)) File.Delete(partial);
        }
        List<string> unreadable = [.. stores.SelectMany(s => s.Unreadable)];
        var report = new DictionaryExportReport("dictionaries export", to.FullName, records.Count,
            [.. stores.SelectMany(s => s.Namespaces).Select(n => new ExportedNamespace(n.Namespace, n.Records.Count, n.Records.Count > 0 ? n.Records.Max(r => r.Version) : null))],
            unreadable, unreadable.Count > 0 ? 1 : 0);
        console.Write(report, DictionariesCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> ImportDictionariesAsync(LiveSettings settings, FileInfo from, LiveOutput console, CancellationToken cancellationToken)
    {
        // The whole file is read and checked before anything is opened or written: a damaged or changed file imports nothing.
        (List<(int Line, DictionaryRecord Record)> lines, List<string> problems) =
            await DictionaryFile.ReadAsync(from.FullName, DictionaryFile.MaxDictionaryBytes, cancellationToken).ConfigureAwait(false);
        if (problems.Count > 0)
        {
            var refused = new DictionaryImportReport("dictionaries import", from.FullName, 0, 0, 0, [], problems, 1);
            console.Write(refused, DictionariesCommand.ToTable);
            return 1;
        }
        HashSet<string>? only = settings.Namespaces.Count > 0 ? new HashSet<string>(settings.Namespaces, StringComparer.Ordinal) : null;
        List<IGrouping<string, DictionaryRecord>> byNamespace = [.. lines.Select(l => l.Record).Where(r => only is null || only.Contains(r.Namespace))
            .GroupBy(r => r.Namespace, StringComparer.Ordinal).OrderBy(g => g.Key, StringComparer.Ordinal)];
        var results = new List<ImportedNamespace>();
        if (byNamespace.Count > 0)
        {
            // The namespaces are the file's (or those of --namespace that it holds): each record goes to its database's store.
            await using TSession session = Open(settings with { Namespaces = [.. byNamespace.Select(g => g.Key)] }, @override: null);
            await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
            foreach (TNamespace ns in session.Namespaces)
            {
                IGrouping<string, DictionaryRecord> records = byNamespace.First(g => g.Key == ns.Name);
                results.Add(await ImportAsync(session, ns, [.. records.OrderBy(r => r.Version)], cancellationToken).ConfigureAwait(false));
            }
        }
        int imported = results.Sum(n => n.Records.Count(r => r.Outcome == ImportOutcome.Imported));
        int present = results.Sum(n => n.Records.Count(r => r.Outcome == ImportOutcome.Present));
        int notImported = results.Sum(n => n.Records.Count(r => r.Outcome is not (ImportOutcome.Imported or ImportOutcome.Present)));
        var report = new DictionaryImportReport("dictionaries import", from.FullName, imported, present, notImported, results, [], notImported > 0 ? 1 : 0);
        console.Write(report, DictionariesCommand.ToTable);
        return report.ExitCode;
    }

    /// <summary>
    /// Every stored version of one namespace (<paramref name="name"/>) or of all, oldest first, each as its record or the
    /// problem that keeps it from reading. The default stops at the first that does not read (<see cref="DictionaryStore.ListAsync"/>
    /// cannot go on); a backend whose store can go on overrides it.
    /// </summary>
    protected virtual async IAsyncEnumerable<(DictionaryRecord? Record, string? Problem)> ListStoredAsync(DictionaryStore store, string? name,
        [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken)
    {
        await using IAsyncEnumerator<DictionaryRecord> records = store.ListAsync(name, cancellationToken).GetAsyncEnumerator(cancellationToken);
        while (true)
        {
            DictionaryRecord? record = null;
            string? problem = null;
            try
            {
                if (!await records.MoveNextAsync().ConfigureAwait(false)) yield break;
                record = records.Current;
            }
            catch (InvalidDataException ex)
            {
                problem = $"{ex.Message} (the store cannot list the versions after it)";
            }
            yield return (record, problem);
            if (problem is not null) yield break;
        }
    }

    /// <summary>
    /// Each database's store: with <c>--namespace</c>, those namespaces' versions; without, every namespace the store holds
    /// (the configuration's namespaces only say which databases). Each record is checked as the engine checks one
    /// before it uses it; one that is not valid is listed among the unreadable ones.
    /// </summary>
    private async Task<List<StoreContents>> ReadStoresAsync(LiveSettings settings, CancellationToken cancellationToken)
    {
        await using TSession session = Open(settings, @override: null);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        var stores = new List<StoreContents>();
        foreach (IGrouping<string, TNamespace> database in session.Namespaces.GroupBy(n => n.Database, StringComparer.Ordinal))
        {
            TNamespace first = database.First();
            DictionaryStore store = session.Engine(first).Store;
            int maxDictionaryBytes = session.MaxDictionaryBytes(first);
            var contents = new StoreContents(store.Location);
            IEnumerable<string?> names = settings.Namespaces.Count > 0 ? database.Select(n => (string?)n.Name) : [null];
            foreach (string? name in names)
            {
                if (name is not null) contents.Add(name); // listed even when it has no version
                await foreach ((DictionaryRecord? record, string? problem) in ListStoredAsync(store, name, cancellationToken).ConfigureAwait(false))
                {
                    if (record is null)
                    {
                        contents.Unreadable.Add(problem ?? "a record does not read");
                        continue;
                    }
                    try
                    {
                        DictionaryRecordValidator.Validate(record, store, expectedId: null, expectedNamespace: name, maxDictionaryBytes);
                        contents.Add(record.Namespace).Records.Add(record);
                    }
                    catch (InvalidDataException ex)
                    {
                        contents.Unreadable.Add(ex.Message);
                    }
                }
            }
            stores.Add(contents);
        }
        return stores;
    }

    /// <summary>
    /// Publishes a namespace's records oldest first, each insert-only with its own id and version: one the store holds
    /// already (the same dictionary) is present; one whose id or version the store holds for another dictionary is a
    /// conflict, refused, and the namespace's later versions are not imported (they would follow a version that is not theirs).
    /// </summary>
    private static async Task<ImportedNamespace> ImportAsync(TSession session, TNamespace ns, List<DictionaryRecord> records, CancellationToken cancellationToken)
    {
        DictionaryStore store = session.Engine(ns).Store;
        int maxDictionaryBytes = session.MaxDictionaryBytes(ns);
        var results = new List<ImportedRecord>();
        string? blocked = null;
        foreach (DictionaryRecord record in records)
        {
            if (blocked is not null)
            {
                results.Add(new ImportedRecord(record.Id, record.Version, ImportOutcome.NotImported, $"not imported: {blocked}"));
                continue;
            }
            (ImportOutcome outcome, string? message) = await PublishAsync(store, record, maxDictionaryBytes, cancellationToken).ConfigureAwait(false);
            results.Add(new ImportedRecord(record.Id, record.Version, outcome, message));
            if (outcome is ImportOutcome.Conflict or ImportOutcome.Refused) blocked = $"version {record.Version} before it was not imported";
        }
        int? current = null;
        try
        {
            current = (await store.GetCurrentAsync(ns.Name, cancellationToken).ConfigureAwait(false))?.Version;
        }
        catch (InvalidDataException)
        {
            // the report says none
        }
        return new ImportedNamespace(ns.Name, store.Location, current, results);
    }

    private static async Task<(ImportOutcome Outcome, string? Message)> PublishAsync(DictionaryStore store, DictionaryRecord record, int maxDictionaryBytes,
        CancellationToken cancellationToken)
    {
        if (record.Content.Length > maxDictionaryBytes)
            return (ImportOutcome.Refused, $"{record.Content.Length:N0} dictionary bytes, over MaxDictionaryBytes ({maxDictionaryBytes:N0}): no reader with this configuration would use it");
        DictionaryRecord? existing;
        try
        {
            existing = await store.GetAsync(record.Id, cancellationToken).ConfigureAwait(false);
        }
        catch (InvalidDataException ex)
        {
            return (ImportOutcome.Conflict, $"the store's record with id {record.Id} does not read: {ex.Message}");
        }
        if (existing is not null && !Same(existing, record))
            return (ImportOutcome.Conflict, $"id {record.Id} is taken in {store.Location} by another dictionary (version {existing.Version} of '{existing.Namespace}')");
        DictionaryRecord holder;
        try
        {
            holder = await store.PublishAsync(record, cancellationToken).ConfigureAwait(false);
        }
        catch (DictionaryIdConflictException)
        {
            return (ImportOutcome.Conflict, $"id {record.Id} is taken in {store.Location} by another dictionary");
        }
        catch (InvalidDataException ex)
        {
            return (ImportOutcome.Conflict, $"version {record.Version} is held in {store.Location} by a record that does not read: {ex.Message}");
        }
        catch (ArgumentException ex)
        {
            return (ImportOutcome.Refused, LiveRunner.FirstLine(ex.Message));
        }
        if (!Same(holder, record))
            return (ImportOutcome.Conflict, $"version {record.Version} of '{record.Namespace}' is held in {store.Location} by another dictionary (id {holder.Id})");
        return existing is null ? (ImportOutcome.Imported, null) : (ImportOutcome.Present, null);
    }

    /// <summary>
    /// The same dictionary: id, namespace, version, content and shape table. Its other fields (when it was made, its
    /// level, samples and ratio) do not change what it reads, and a store may keep them less precisely (MongoDB keeps milliseconds).
    /// </summary>
    private static bool Same(DictionaryRecord a, DictionaryRecord b) =>
        a.Id == b.Id && a.Version == b.Version && string.Equals(a.Namespace, b.Namespace, StringComparison.Ordinal)
        && a.ContentHash == b.ContentHash && a.ShapesHash == b.ShapesHash
        && a.Content.Span.SequenceEqual(b.Content.Span) && a.Shapes.Span.SequenceEqual(b.Shapes.Span);

    /// <summary>What a store holds: its valid records by namespace, and the problems of those that are not.</summary>
    private sealed class StoreContents(string location)
    {
        public string Location => location;

        public List<(string Namespace, List<DictionaryRecord> Records)> Namespaces { get; } = [];

        public List<string> Unreadable { get; } = [];

        public (string Namespace, List<DictionaryRecord> Records) Add(string ns)
        {
            foreach (var entry in Namespaces)
            {
                if (entry.Namespace == ns) return entry;
            }
            var added = (ns, new List<DictionaryRecord>());
            Namespaces.Add(added);
            return added;
        }

        public StoreListing ToListing() => new(Location,
            [.. Namespaces.OrderBy(n => n.Namespace, StringComparer.Ordinal).Select(n =>
            {
                DictionaryRecord? current = n.Records.MaxBy(r => r.Version);
                return new NamespaceListing(n.Namespace, current?.Version, [.. n.Records.OrderBy(r => r.Version).Select(r => new DictionaryListing(
                    r.Id, r.Version, r.Codec.ToString(), r.Level, r.Created, r.Content.Length, r.Shapes.Length, r.SampleCount, Math.Round(r.Ratio, 4),
                    ReferenceEquals(r, current), DictionaryFile.Hex(r.ContentHash)))]);
            })],
            Unreadable);
    }
}
