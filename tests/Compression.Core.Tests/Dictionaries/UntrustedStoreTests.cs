using System.Text.Json.Nodes;
using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// Nothing read from a store is trusted: a damaged or edited record is a clear error naming the store, and is never
/// adopted, so a damaged store can stop compression but never make a client write envelopes others cannot read.
/// </summary>
public sealed class UntrustedStoreTests : IDisposable
{
    private const string Ns = "shop.orders";
    private readonly string _directory = Directory.CreateTempSubdirectory("untrusted-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    /// <summary>Trains and publishes a real dictionary into the folder store; returns its record file.</summary>
    private async Task<(DictionaryRecord Record, string Path)> PublishAsync(string @namespace = Ns)
    {
        await using var engine = TestEngine.Create(new FileDictionaryStore(_directory), CompressionEngineOptionsBuilder.TrainOnceAt(400));
        var ns = engine.GetNamespace(@namespace);
        var random = new Random(5);
        for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        TrainingResult? again = null;
        // Once in a full run under load (2026-11-28) neither the background training nor this one gave a dictionary, and
        // again in CI on 2026-12-08, where this one said AlreadyRunning: a training run was still under way after
        // WhenIdleAsync (not explained yet: see the closing note of that day). The test needs a dictionary, not that
        // race: it waits for the run under way to end (polling, bounded at 5 minutes: a bound on a hang) and asks again.
        var bound = System.Diagnostics.Stopwatch.StartNew();
        while (ns.CurrentDictionary is null && bound.Elapsed < TimeSpan.FromMinutes(5))
        {
            again = await ns.TrainAsync();
            if (again.Outcome != TrainingOutcome.AlreadyRunning) break;
            await engine.WhenIdleAsync();
            await Task.Delay(10);
        }
        var record = ns.CurrentDictionary ?? again?.Dictionary;
        Assert.True(record is not null, $"no dictionary after idle; a training now: {again?.Outcome}");
        return (record, Path.Combine(_directory, $"{record.Id}.dict.json"));
    }

    private static void Edit(string path, string field, JsonNode value)
    {
        var json = JsonNode.Parse(File.ReadAllText(path))!;
        json[field] = value;
        File.WriteAllText(path, json.ToJsonString());
    }

    [Theory]
    [InlineData("Id", 1)]
    [InlineData("Version", 1000)]
    [InlineData("Namespace", "other.collection")]
    [InlineData("ContentHash", 12345)]
    [InlineData("Level", 99)]
    [InlineData("ShapesHash", 12345)]
    public async Task Refresh_TamperedRecordInTheFolder_IsRefusedNamingTheStore_AndNeverAdopted(string field, object value)
    {
        var (record, path) = await PublishAsync();
        if (field == "ShapesHash") Assert.False(record.Shapes.IsEmpty); // movies pack: the record carries a shape table
        if (field == "Id" && record.Id == 1u) value = 2; // ids are random from 1 to 127: the tampered id must differ from the real one
        Edit(path, field, value is int i ? JsonValue.Create(i) : JsonValue.Create((string)value)!);

        await using var engine = TestEngine.Create(new FileDictionaryStore(_directory));
        var ns = engine.GetNamespace(Ns);
        var ex = await Assert.ThrowsAsync<InvalidDataException>(() => ns.RefreshAsync());
        Assert.Contains(_directory, ex.Message);
        Assert.Null(ns.CurrentDictionary);

        // Writes go on without a dictionary: every envelope is readable by anyone.
        byte[] envelope = ns.Compress(TestDocuments.Movie(new Random(1)));
        Assert.True(DocumentEnvelope.TryReadHeader(envelope, out var header));
        Assert.Null(header.DictionaryId);
        Assert.NotEqual(0u, record.Id);
    }

    [Theory]
    [InlineData("removed")]
    [InlineData("garbage with its hash")]
    public async Task Refresh_ShapeTableRemovedOrReplaced_IsRefusedNamingTheStore_AndNeverAdopted(string edit)
    {
        var (record, path) = await PublishAsync();
        Assert.False(record.Shapes.IsEmpty);
        var json = JsonNode.Parse(File.ReadAllText(path))!;
        byte[] replacement = edit switch
        {
            "removed" => [],
            _ => [.. record.Shapes.Span[..^1], (byte)(record.Shapes.Span[^1] ^ 0xFF)], // its hash matches; the table's own checksum breaks
        };
        if (replacement.Length == 0) json.AsObject().Remove("Shapes");
        else
        {
            json["Shapes"] = Convert.ToBase64String(replacement);
            json["ShapesHash"] = DictionaryRecord.ComputeContentHash(replacement);
        }
        File.WriteAllText(path, json.ToJsonString());

        await using var engine = TestEngine.Create(new FileDictionaryStore(_directory));
        var ns = engine.GetNamespace(Ns);
        var ex = await Assert.ThrowsAsync<InvalidDataException>(() => ns.RefreshAsync());
        Assert.Contains(_directory, ex.Message);
        Assert.Contains(edit == "removed" ? "shape table is missing" : "shape table", ex.Message);
        Assert.Null(ns.CurrentDictionary);
    }

    [Fact]
    public async Task Train_AfterARefusedRecord_PublishesAboveIt_AndKeepsWritingReadableEnvelopes()
    {
        var (_, path) = await PublishAsync();
        Edit(path, "Version", 1000); // before 2026-11-24: adopted as version 1000, then every publication failed forever

        // Since 2026-11-27: the namespace recovers by itself. Version 1 is held by a record that is not valid (kept:
        // nothing is ever deleted); training publishes above it, and every envelope stays readable by a cold client.
        var store = new FileDictionaryStore(_directory);
        await using var engine = TestEngine.Create(store);
        var ns = engine.GetNamespace(Ns);
        var random = new Random(9);
        var written = new List<(byte[], byte[])>();
        for (int i = 0; i < 400; i++)
        {
            byte[] d = TestDocuments.Movie(random);
            written.Add((d, ns.Compress(d)));
        }
        await engine.WhenIdleAsync();
        Assert.True(ns.CurrentDictionary?.Version >= 2, $"current: {ns.CurrentDictionary?.Version}");
        Assert.True(File.Exists(path));
        await using var cold = TestEngine.Create(new FileDictionaryStore(_directory));
        foreach (var (d, e) in written) Assert.Equal(d, await cold.GetNamespace(Ns).DecompressAsync(e));
    }

    [Fact]
    public async Task Refresh_StoreAnswersWithARecordOfAnotherNamespace_IsRefused()
    {
        var inner = new InMemoryDictionaryStore();
        await using (var writer = TestEngine.Create(inner))
        {
            var other = writer.GetNamespace("other.collection");
            var random = new Random(3);
            for (int i = 0; i < 400; i++) other.Compress(TestDocuments.Movie(random));
            await writer.WhenIdleAsync();
            Assert.NotNull(other.CurrentDictionary);
        }
        var store = new ControllableStore(inner) { Tamper = _ => inner.GetCurrentAsync("other.collection").AsTask().Result };
        await using var engine = TestEngine.Create(store);
        var ns = engine.GetNamespace(Ns);
        var ex = await Assert.ThrowsAsync<InvalidDataException>(() => ns.RefreshAsync());
        Assert.Contains("belongs to namespace 'other.collection', not 'shop.orders'", ex.Message);
        Assert.Contains(store.Location, ex.Message);
        Assert.Null(ns.CurrentDictionary);
    }

    [Fact]
    public async Task Decompress_RecordWhoseIdLies_IsRefusedAndNotCached()
    {
        var (record, path) = await PublishAsync();
        byte[] envelope;
        await using (var writer = TestEngine.Create(new FileDictionaryStore(_directory)))
        {
            var ns = writer.GetNamespace(Ns);
            await ns.RefreshAsync();
            envelope = ns.Compress(TestDocuments.Movie(new Random(2)));
        }
        uint lie = record.Id == 1 ? 2u : 1u; // ids are random from 1 to 127: the lie must differ from the truth
        Edit(path, "Id", lie);
        await using var reader = TestEngine.Create(new FileDictionaryStore(_directory));
        var ex = Assert.Throws<InvalidDataException>(() => reader.GetNamespace(Ns).Decompress(envelope));
        Assert.Contains($"asked for id {record.Id}, the record says {lie}", ex.Message);
        Assert.Equal(0, reader.CachedDictionaryCount);
    }

    [Fact]
    public async Task Get_HugeRecordFile_IsRefusedBeforeItIsRead()
    {
        string path = Path.Combine(_directory, "77.dict.json");
        using (var file = File.Create(path)) file.SetLength(50 * 1024 * 1024);
        var store = new FileDictionaryStore(_directory);
        long before = GC.GetAllocatedBytesForCurrentThread();
        var ex = Assert.Throws<InvalidDataException>(() => store.Get(77));
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Contains("was not read", ex.Message);
        Assert.True(allocated < 256 * 1024, $"allocated {allocated:N0} bytes for a 50 MB record (before: the whole file, then its base64)");
        await Task.CompletedTask;
    }

    public static TheoryData<string> LongNames() => new()
    {
        "商店订单集合商店订单集合商店订单集合商店订单集合商店订单集",    // 29 Chinese characters: 261 escaped bytes
        new string('a', 240),                                       // 240 ASCII characters
        "db." + new string('x', 200) + ".with.many.dots.ü",
        "bucket.scope.collection",
        "Shop.Orders",                                              // upper-case letters are escaped
    };

    [Theory]
    [MemberData(nameof(LongNames))]
    public async Task FileStore_AnyNamespaceName_PublishesReadsAndListsWithoutOrphans(string name)
    {
        var (record, _) = await PublishAsync(name);
        Assert.Equal(name, record.Namespace);
        var store = new FileDictionaryStore(_directory);
        Assert.Equal(record.Id, (await store.GetCurrentAsync(name))!.Id);
        var listed = new List<DictionaryRecord>();
        await foreach (var r in store.ListAsync(name)) listed.Add(r);
        Assert.Equal(record.Id, Assert.Single(listed).Id);
        await foreach (var r in store.ListAsync()) Assert.Equal(name, r.Namespace);

        // Every record file is named by a version file: nothing orphaned, no temporary files left.
        Assert.Single(Directory.GetFiles(_directory, "*.dict.json"));
        Assert.Single(Directory.GetFiles(_directory, "*.id"));
        Assert.Empty(Directory.GetFiles(_directory, ".tmp-*"));
        Assert.All(Directory.GetFiles(_directory), f => Assert.True(Path.GetFileName(f).Length <= 255));

        // A second version on top, and a cold client finds it.
        var second = record with { Id = record.Id + 1, Version = 2 };
        Assert.Equal(second.Id, (await store.PublishAsync(second)).Id);
        await using var cold = TestEngine.Create(new FileDictionaryStore(_directory));
        var ns = cold.GetNamespace(name);
        await ns.RefreshAsync();
        Assert.Equal(2, ns.CurrentDictionary!.Version);
    }

    [Fact]
    public void FileStore_LongNamesThatShareAPrefix_GetDifferentKeys()
    {
        string a = new string('a', 200) + "1", b = new string('a', 200) + "2";
        Assert.NotEqual(FileDictionaryStore.Key(a), FileDictionaryStore.Key(b));
        Assert.True(FileDictionaryStore.Key(a).Length < 120);
        Assert.Equal("db%2Eorders", FileDictionaryStore.Key("db.orders")); // short names keep the readable form of 0.1.0
    }

    [Fact]
    public async Task FileStore_VersionFileCannotBeWritten_LeavesNoOrphanRecord()
    {
        var store = new FileDictionaryStore(_directory);
        var record = DictionaryStoreTests.Record(5, "db.a", 1);
        // A directory where the version file must go makes link(2) fail with an error other than "exists".
        string key = FileDictionaryStore.Key("db.a");
        Directory.CreateDirectory(Path.Combine(_directory, $"{key}.v1.id"));
        await Assert.ThrowsAnyAsync<Exception>(async () => await store.PublishAsync(record));
        Assert.Empty(Directory.GetFiles(_directory, "*.dict.json"));
    }

    [Fact]
    public void FileStore_NamesThatDifferOnlyInCase_KeepKeysThatDifferWhereTheFileSystemIgnoresCase()
    {
        // Found by review: keys kept letters as they were, so on Windows' and macOS's file systems "db.Orders" and
        // "db.orders" (two collections to the databases) shared version files and the second never got a dictionary.
        string[] names = ["db.orders", "db.Orders", "DB.ORDERS", "db.ordErs", "ü.x", "Ü.x", new string('a', 200), new string('A', 200), "a%2e", "a."];
        var folded = names.Select(n => FileDictionaryStore.Key(n).ToUpperInvariant()).ToList();
        Assert.Equal(names.Length, folded.Distinct(StringComparer.Ordinal).Count());
        Assert.Equal("db%2E%4Frders", FileDictionaryStore.Key("db.Orders"));
    }

    [Fact]
    public async Task FileStore_VersionsClaimedUnderTheKeyOf010_AreStillFound_AndTheNextIsClaimedAfterThem()
    {
        // 0.1.0 named the version files of "Shop.Orders" "Shop%2EOrders.v{n}.id": an upgraded client reads them, goes on
        // from their newest version, and lists them.
        const string name = "Shop.Orders";
        var store = new FileDictionaryStore(_directory);
        await store.PublishAsync(DictionaryStoreTests.Record(5, name, 1));
        await store.PublishAsync(DictionaryStoreTests.Record(6, name, 2));
        foreach (int version in new[] { 1, 2 })
            File.Move(Path.Combine(_directory, $"{FileDictionaryStore.Key(name)}.v{version}.id"), Path.Combine(_directory, $"Shop%2EOrders.v{version}.id"));

        Assert.Equal(6u, (await store.GetCurrentAsync(name))!.Id);
        Assert.Equal(6u, (await store.PublishAsync(DictionaryStoreTests.Record(9, name, 2))).Id); // published already: the winner
        Assert.Equal(7u, (await store.PublishAsync(DictionaryStoreTests.Record(7, name, 3))).Id);
        Assert.True(File.Exists(Path.Combine(_directory, "%53hop%2E%4Frders.v3.id")));
        Assert.Equal(7u, (await store.GetCurrentAsync(name))!.Id);

        var listed = new List<uint>();
        await foreach (var r in store.ListAsync(name)) listed.Add(r.Id);
        Assert.Equal([5u, 6u, 7u], listed);
        listed.Clear();
        await foreach (var r in store.ListAsync()) listed.Add(r.Id);
        Assert.Equal([5u, 6u, 7u], listed);
        Assert.False(File.Exists(Path.Combine(_directory, "9.dict.json")));
    }

    [Fact]
    public async Task FileStore_VersionFileWithLeadingZeros_IsNotASecondCopyOfItsVersion()
    {
        // Found by review: "v01" parsed as version 1, so the version was listed twice (and could name another record).
        var store = new FileDictionaryStore(_directory);
        await store.PublishAsync(DictionaryStoreTests.Record(5, "db.a", 1));
        await store.PublishAsync(DictionaryStoreTests.Record(6, "db.a", 2));
        string key = FileDictionaryStore.Key("db.a");
        File.Copy(Path.Combine(_directory, key + ".v1.id"), Path.Combine(_directory, key + ".v01.id"));
        File.Copy(Path.Combine(_directory, key + ".v2.id"), Path.Combine(_directory, key + ".v003.id"));
        var versions = new List<int>();
        await foreach (var r in store.ListAsync("db.a")) versions.Add(r.Version);
        Assert.Equal([1, 2], versions);
        Assert.Equal(2, (await store.GetCurrentAsync("db.a"))!.Version);
    }

    [Theory]
    [InlineData("record")]
    [InlineData("version")]
    public async Task FileStore_AFifoUnderAFilesName_IsRefusedNamingIt_InsteadOfBlockingTheReader(string which)
    {
        // Found by review: opening a FIFO for reading blocks until a writer comes, so one planted under a record's name
        // hung the reader, and with it every synchronous decode that missed the cache (the catalog's fetch holds a gate).
        if (OperatingSystem.IsWindows()) return; // no FIFOs among files there; the test's subject does not exist
        var store = new FileDictionaryStore(_directory);
        var skipped = new List<string>();
        store.RecordSkipped += skipped.Add;
        string path;
        Func<Task> read;
        if (which == "record")
        {
            path = Path.Combine(_directory, "5.dict.json");
            read = () => Task.FromResult(store.Get(5));
        }
        else
        {
            await store.PublishAsync(DictionaryStoreTests.Record(5, "db.a", 1));
            path = Path.Combine(_directory, $"{FileDictionaryStore.Key("db.a")}.v2.id");
            read = async () => await store.GetCurrentAsync("db.a");
        }
        Assert.Equal(0, MakeFifo(path, Convert.ToUInt32("600", 8)));
        Task reading = Task.Run(read);
        // A bound on a hang, not a timing: the fixed read fails at once.
        bool finished = await Task.WhenAny(reading, Task.Delay(TimeSpan.FromSeconds(30))) == reading;
        if (!finished)
        {
            using var unblock = new FileStream(path, FileMode.Open, FileAccess.Write); // let the blocked reader go
        }
        Assert.True(finished, $"the read of {path} was still blocked after 30 s");
        if (which == "record")
        {
            var ex = await Assert.ThrowsAsync<InvalidDataException>(() => reading);
            Assert.Contains($"{path} is not a regular file", ex.Message);
        }
        else
        {
            // The version it blocks is skipped and reported: version 1 is current.
            await reading;
            Assert.Equal(5u, (await store.GetCurrentAsync("db.a"))!.Id);
            Assert.Contains(skipped, m => m.Contains($"{path} is not a regular file", StringComparison.Ordinal));
        }
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "mkfifo", SetLastError = true)]
    private static extern int MakeFifo([System.Runtime.InteropServices.MarshalAs(System.Runtime.InteropServices.UnmanagedType.LPUTF8Str)] string path, uint mode);
}
