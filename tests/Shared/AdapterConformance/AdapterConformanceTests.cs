using Compression.Core.Tests.Dictionaries;
using Compression.Dictionaries;
using Xunit;

namespace Compression.Tests.Conformance;

/// <summary>
/// The adapter contract of docs/adapters.md, database-neutral: one suite every adapter runs (MongoDB, Couchbase, the
/// in-memory key-value adapter of the Core tests). An adapter derives a test class from it and gives
/// <see cref="StartAsync"/>; each test gets a new <see cref="AdapterUnderTest"/> over an empty place in its database.
/// It proves: its <see cref="DictionaryStore"/> keeps every field of a record, lists versions, is insert-only, reports
/// a missing dictionary as missing, and refuses a hostile peer's record with the record codec's error without crashing
/// or stalling a namespace; its stored layout reads back what it wrote, reads plain documents, keeps reading when
/// compression is switched off, and reports a corrupt envelope clearly.
/// </summary>
/// <remarks>Linked as source into each adapter's test project (tests/Shared/AdapterConformance).</remarks>
public abstract class AdapterConformanceTests : IAsyncLifetime
{
    private const string Ns = "conformance.dictionaries";
    private const uint HostileId = 4_000_000_002;

    /// <summary>How long a namespace may take over anything here: a stalled one fails the test instead of hanging it.</summary>
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    private static readonly Lazy<Task<DictionaryRecord>> Trained = new(TrainAsync);

    private AdapterUnderTest? _adapter;

    /// <summary>The adapter over an empty place in its database, for one test.</summary>
    protected abstract Task<AdapterUnderTest> StartAsync();

    private AdapterUnderTest Adapter => _adapter ?? throw new InvalidOperationException("not started");

    public async Task InitializeAsync() => _adapter = await StartAsync();

    public async Task DisposeAsync()
    {
        if (_adapter is not null) await _adapter.DisposeAsync();
    }

    /// <summary>A real dictionary with a shape table, trained once for every test and adapter (validation loads it into zstd).</summary>
    private static async Task<DictionaryRecord> TrainAsync()
    {
        await using var engine = new CompressionEngine(new InMemoryDictionaryStore(), CompressionEngineOptionsBuilder.Fast());
        CompressionNamespace ns = engine.GetNamespace("conformance.training");
        var random = new Random(36);
        for (int i = 0; i < 400; i++) ns.Compress(TestDocuments.Movie(random));
        await engine.WhenIdleAsync();
        if (ns.CurrentDictionary is null) await ns.TrainAsync();
        return ns.CurrentDictionary ?? throw new InvalidOperationException("the training corpus trained no dictionary");
    }

    private static async Task<DictionaryRecord> RecordAsync(uint id, string @namespace, int version) =>
        await Trained.Value with { Id = id, Namespace = @namespace, Version = version };

    /// <summary>A small record whose content is not a trained dictionary: enough for the store, which does not validate.</summary>
    private static DictionaryRecord SmallRecord(uint id, string @namespace, int version, byte fill = 1)
    {
        byte[] content = [.. Enumerable.Range(0, 64).Select(i => (byte)(i * fill))];
        return new DictionaryRecord
        {
            Id = id, Namespace = @namespace, Version = version, Content = content, ContentHash = DictionaryRecord.ComputeContentHash(content),
            Created = new DateTimeOffset(2026, 12, 7, 17, 0, 0, TimeSpan.Zero), Level = 3, SampleCount = 100, Ratio = 3.25,
        };
    }

    private static void AssertSameRecord(DictionaryRecord expected, DictionaryRecord? actual)
    {
        Assert.NotNull(actual);
        Assert.Equal(expected with { Content = default, Shapes = default, Created = default }, actual with { Content = default, Shapes = default, Created = default });
        // The time to the millisecond: BSON dates hold no more.
        Assert.True((expected.Created - actual.Created).Duration() < TimeSpan.FromMilliseconds(1), $"created {expected.Created:O}, read {actual.Created:O}");
        Assert.Equal(expected.Content.ToArray(), actual.Content.ToArray());
        Assert.Equal(expected.Shapes.ToArray(), actual.Shapes.ToArray());
    }

    private static async Task<List<DictionaryRecord>> ListAsync(DictionaryStore store, string? @namespace)
    {
        var all = new List<DictionaryRecord>();
        await foreach (DictionaryRecord record in store.ListAsync(@namespace)) all.Add(record);
        return all;
    }

    private async Task<CompressionEngine> EngineWithDictionaryAsync()
    {
        await Adapter.OpenStore().PublishAsync(await RecordAsync(1001, Adapter.NamespaceName, 1));
        var engine = new CompressionEngine(Adapter.OpenStore());
        await engine.GetNamespace(Adapter.NamespaceName).RefreshAsync().WaitAsync(Deadline);
        Assert.Equal(1001u, engine.GetNamespace(Adapter.NamespaceName).CurrentDictionary?.Id);
        return engine;
    }

    private static T? Find<T>(Exception? ex) where T : Exception
    {
        for (; ex is not null; ex = ex.InnerException) if (ex is T found) return found;
        return null;
    }

    // ---- The dictionary store ----

    [Fact]
    public async Task A_published_record_reads_back_with_every_field_by_id_and_as_current_from_another_client()
    {
        DictionaryRecord record = await RecordAsync(1001, Ns, 1);
        Assert.False(record.Shapes.IsEmpty); // the optional shape table and its hash are part of what must come back
        AssertSameRecord(record, await Adapter.OpenStore().PublishAsync(record));

        DictionaryStore other = Adapter.OpenStore();
        AssertSameRecord(record, await other.GetAsync(1001));
        AssertSameRecord(record, await other.GetCurrentAsync(Ns));
        if (other.CanGetSynchronously) AssertSameRecord(record, other.Get(1001));
    }

    [Fact]
    public async Task A_record_without_a_shape_table_reads_back_without_one()
    {
        DictionaryRecord record = SmallRecord(7, Ns, 1);
        await Adapter.OpenStore().PublishAsync(record);
        DictionaryRecord? read = await Adapter.OpenStore().GetAsync(7);
        AssertSameRecord(record, read);
        Assert.True(read!.Shapes.IsEmpty);
        Assert.Equal(0ul, read.ShapesHash);
    }

    [Fact]
    public async Task Versions_are_listed_oldest_first_by_namespace_and_all_together_and_the_newest_is_current()
    {
        DictionaryStore store = Adapter.OpenStore();
        await store.PublishAsync(SmallRecord(11, Ns, 1));
        await store.PublishAsync(SmallRecord(12, "conformance.other", 1, fill: 2));
        await store.PublishAsync(SmallRecord(13, Ns, 2, fill: 3));
        await store.PublishAsync(SmallRecord(14, Ns, 3, fill: 5));

        DictionaryStore other = Adapter.OpenStore();
        Assert.Equal([1, 2, 3], (await ListAsync(other, Ns)).Select(r => r.Version));
        Assert.Equal([11u, 13u, 14u], (await ListAsync(other, Ns)).Select(r => r.Id));
        Assert.Equal([11u, 12u, 13u, 14u], (await ListAsync(other, null)).Select(r => r.Id).Order());
        Assert.Equal(14u, (await other.GetCurrentAsync(Ns))?.Id);
        Assert.Equal(13u, (await other.GetNewestBelowAsync(Ns, 3))?.Id);
        Assert.Null(await other.GetNewestBelowAsync(Ns, 1));
    }

    [Fact]
    public async Task Publishing_a_taken_version_returns_the_winner_and_overwrites_nothing()
    {
        DictionaryRecord winner = SmallRecord(21, Ns, 1);
        await Adapter.OpenStore().PublishAsync(winner);

        DictionaryRecord returned = await Adapter.OpenStore().PublishAsync(SmallRecord(22, Ns, 1, fill: 3));
        AssertSameRecord(winner, returned);
        DictionaryStore other = Adapter.OpenStore();
        AssertSameRecord(winner, await other.GetCurrentAsync(Ns));
        Assert.Equal([21u], (await ListAsync(other, Ns)).Select(r => r.Id));
    }

    [Fact]
    public async Task Publishing_a_taken_id_under_another_version_is_an_id_conflict_and_overwrites_nothing()
    {
        DictionaryRecord first = SmallRecord(31, Ns, 1);
        await Adapter.OpenStore().PublishAsync(first);
        await Assert.ThrowsAsync<DictionaryIdConflictException>(async () => await Adapter.OpenStore().PublishAsync(SmallRecord(31, Ns, 2, fill: 3)));
        AssertSameRecord(first, await Adapter.OpenStore().GetAsync(31));
        Assert.Equal([1], (await ListAsync(Adapter.OpenStore(), Ns)).Select(r => r.Version));
    }

    [Fact]
    public async Task A_missing_dictionary_is_reported_as_missing_not_as_an_error()
    {
        DictionaryStore store = Adapter.OpenStore();
        await store.PublishAsync(SmallRecord(41, Ns, 1));
        Assert.Null(await store.GetAsync(42));
        if (store.CanGetSynchronously) Assert.Null(store.Get(42));
        Assert.Null(await store.GetCurrentAsync("conformance.nothing"));
        Assert.Empty(await ListAsync(store, "conformance.nothing"));

        // Through a namespace: an envelope naming a dictionary this store lacks.
        await using var elsewhere = new CompressionEngine(new InMemoryDictionaryStore());
        await elsewhere.Store.PublishAsync(await RecordAsync(42, Ns, 1));
        await elsewhere.GetNamespace(Ns).RefreshAsync();
        byte[] envelope = elsewhere.GetNamespace(Ns).Compress(TestDocuments.Movie(new Random(1)));
        await using var engine = new CompressionEngine(Adapter.OpenStore());
        var missing = await Assert.ThrowsAsync<DictionaryNotFoundException>(async () => await engine.GetNamespace(Ns).DecompressAsync(envelope).AsTask().WaitAsync(Deadline));
        Assert.Contains("42", missing.Message, StringComparison.Ordinal);
    }

    /// <summary>Records a peer may write: each names what the codec says of it.</summary>
    public static TheoryData<string, string> HostileRecords() => new()
    {
        { "a required field missing", "is missing" },
        { "a number stored as text", "" },
        { "a codec that is not one name", "not a codec name" },
        { "content over the largest dictionary", "bytes, over" },
        { "a version out of range", "is not a version" },
        { "a shape table without its hash", "is missing" },
    };

    private async Task WriteHostileAsync(string what, uint id, string @namespace, int version)
    {
        DictionaryRecord valid = await RecordAsync(id, @namespace, version);
        await Adapter.WriteRawRecordAsync(id, @namespace, version, writer => DictionaryRecordCodec.Write(valid, new Damaged(writer, what)));
    }

    [Theory]
    [MemberData(nameof(HostileRecords))]
    public async Task A_hostile_record_is_refused_with_the_record_codecs_error_naming_the_record_and_the_store(string what, string problem)
    {
        await WriteHostileAsync(what, HostileId, Ns, 1);
        DictionaryStore store = Adapter.OpenStore();
        var refused = await Assert.ThrowsAsync<InvalidDataException>(async () => await store.GetAsync(HostileId).AsTask().WaitAsync(Deadline));
        Assert.Contains("is invalid and was not used", refused.Message, StringComparison.Ordinal);
        Assert.Contains(problem, refused.Message, StringComparison.Ordinal);
        Assert.Contains(HostileId.ToString(System.Globalization.CultureInfo.InvariantCulture), refused.Message, StringComparison.Ordinal);
        Assert.Contains(store.Location, refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(HostileRecords))]
    public async Task A_hostile_record_above_the_current_version_never_stalls_a_namespace_which_keeps_its_dictionary_and_adopts_the_next(string what, string problem)
    {
        _ = problem;
        await Adapter.OpenStore().PublishAsync(await RecordAsync(1001, Ns, 1));
        await WriteHostileAsync(what, HostileId, Ns, 2);

        await using var engine = new CompressionEngine(Adapter.OpenStore());
        CompressionNamespace ns = engine.GetNamespace(Ns);
        await ns.RefreshAsync().WaitAsync(Deadline);
        Assert.Equal(1001u, ns.CurrentDictionary?.Id);
        byte[] document = TestDocuments.Movie(new Random(2));
        byte[] envelope = ns.Compress(document);
        await using var cold = new CompressionEngine(Adapter.OpenStore());
        Assert.Equal(document, await cold.GetNamespace(Ns).DecompressAsync(envelope).AsTask().WaitAsync(Deadline));

        // A publication above the hostile record becomes current: the store skips what it cannot read.
        DictionaryStore store = Adapter.OpenStore();
        Assert.Equal(1003u, (await store.PublishAsync(await RecordAsync(1003, Ns, 3))).Id);
        Assert.Equal(1003u, (await Adapter.OpenStore().GetCurrentAsync(Ns).AsTask().WaitAsync(Deadline))?.Id);
        await ns.RefreshAsync().WaitAsync(Deadline);
        Assert.Equal(1003u, ns.CurrentDictionary?.Id);
    }

    [Fact]
    public async Task An_envelope_naming_a_hostile_record_is_refused_with_the_codecs_error_and_the_next_read_still_works()
    {
        await Adapter.OpenStore().PublishAsync(await RecordAsync(1001, Ns, 1));
        await WriteHostileAsync("a required field missing", HostileId, "conformance.elsewhere", 1);
        await using var elsewhere = new CompressionEngine(new InMemoryDictionaryStore());
        await elsewhere.Store.PublishAsync(await RecordAsync(HostileId, Ns, 1));
        await elsewhere.GetNamespace(Ns).RefreshAsync();
        byte[] naming = elsewhere.GetNamespace(Ns).Compress(TestDocuments.Movie(new Random(3)));

        await using var engine = new CompressionEngine(Adapter.OpenStore());
        CompressionNamespace ns = engine.GetNamespace(Ns);
        Exception? refused = await Record.ExceptionAsync(async () => await ns.PreloadDictionaryAsync(naming).AsTask().WaitAsync(Deadline));
        InvalidDataException? problem = Find<InvalidDataException>(refused);
        Assert.True(problem is not null, $"expected the codec's InvalidDataException, got {refused}");
        Assert.Contains("is invalid and was not used", problem.Message, StringComparison.Ordinal);

        byte[] document = TestDocuments.Movie(new Random(4));
        await ns.RefreshAsync().WaitAsync(Deadline);
        Assert.Equal(document, await ns.DecompressAsync(ns.Compress(document)).AsTask().WaitAsync(Deadline));
    }

    // ---- The stored layout ----

    [Fact]
    public async Task Documents_written_through_the_adapter_are_stored_as_envelopes_and_read_back_the_same_by_a_cold_client()
    {
        await using var engine = await EngineWithDictionaryAsync();
        var random = new Random(5);
        byte[][] documents = [TestDocuments.Movie(random), TestDocuments.Sensor(random), TestDocuments.Movie(random)];
        for (int i = 0; i < documents.Length; i++) await Adapter.WriteAsync(engine, $"doc-{i}", documents[i]);

        await using var cold = new CompressionEngine(Adapter.OpenStore());
        for (int i = 0; i < documents.Length; i++)
        {
            byte[]? envelope = await Adapter.ReadStoredEnvelopeAsync($"doc-{i}");
            Assert.NotNull(envelope);
            Assert.Equal(0xC5, envelope[0]);
            Assert.Equal(Adapter.Canonical(documents[i]), await Adapter.ReadAsync(engine, $"doc-{i}"));
            Assert.Equal(Adapter.Canonical(documents[i]), await Adapter.ReadAsync(cold, $"doc-{i}").WaitAsync(Deadline));
        }
    }

    [Fact]
    public async Task A_plain_document_written_before_compression_reads_back_unchanged()
    {
        byte[] legacy = TestDocuments.Sensor(new Random(6));
        await Adapter.WritePlainAsync("legacy", legacy);
        await using var engine = await EngineWithDictionaryAsync();
        Assert.Null(await Adapter.ReadStoredEnvelopeAsync("legacy"));
        Assert.Equal(Adapter.Canonical(legacy), await Adapter.ReadAsync(engine, "legacy"));
    }

    [Fact]
    public async Task Compression_switched_off_then_on_again_leaves_every_document_readable_either_way()
    {
        await using var engine = await EngineWithDictionaryAsync();
        var random = new Random(7);
        byte[] on = TestDocuments.Movie(random), off = TestDocuments.Movie(random), onAgain = TestDocuments.Movie(random);
        await Adapter.WriteAsync(engine, "on", on);
        await Adapter.WriteAsync(engine, "off", off, compress: false);
        await Adapter.WriteAsync(engine, "on-again", onAgain);

        Assert.NotNull(await Adapter.ReadStoredEnvelopeAsync("on"));
        Assert.Null(await Adapter.ReadStoredEnvelopeAsync("off")); // written plain
        Assert.NotNull(await Adapter.ReadStoredEnvelopeAsync("on-again"));
        foreach (bool compress in new[] { true, false })
        {
            Assert.Equal(Adapter.Canonical(on), await Adapter.ReadAsync(engine, "on", compress));
            Assert.Equal(Adapter.Canonical(off), await Adapter.ReadAsync(engine, "off", compress));
            Assert.Equal(Adapter.Canonical(onAgain), await Adapter.ReadAsync(engine, "on-again", compress));
        }
    }

    public static TheoryData<string> Corruptions() => ["a flipped payload byte", "cut in half", "not an envelope after the magic byte"];

    [Theory]
    [MemberData(nameof(Corruptions))]
    public async Task A_corrupt_envelope_is_a_clear_InvalidDataException_and_other_documents_still_read(string corruption)
    {
        await using var engine = await EngineWithDictionaryAsync();
        var random = new Random(8);
        byte[] document = TestDocuments.Movie(random), neighbour = TestDocuments.Movie(random);
        await Adapter.WriteAsync(engine, "corrupt", document);
        await Adapter.WriteAsync(engine, "neighbour", neighbour);
        byte[] envelope = (await Adapter.ReadStoredEnvelopeAsync("corrupt"))!;
        byte[] damaged = corruption switch
        {
            "a flipped payload byte" => Flip(envelope, envelope.Length - 2),
            "cut in half" => envelope[..(envelope.Length / 2)],
            _ => [0xC5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        };
        await Adapter.WriteStoredEnvelopeAsync("corrupt", damaged);

        Exception? thrown = await Record.ExceptionAsync(async () => await Adapter.ReadAsync(engine, "corrupt").WaitAsync(Deadline));
        Assert.True(Find<InvalidDataException>(thrown) is not null, $"expected an InvalidDataException, got {thrown}");
        Assert.Equal(Adapter.Canonical(neighbour), await Adapter.ReadAsync(engine, "neighbour"));

        static byte[] Flip(byte[] bytes, int at)
        {
            byte[] copy = [.. bytes];
            copy[at] ^= 0x5A;
            return copy;
        }
    }

    [Fact]
    public async Task A_stored_envelope_naming_a_dictionary_the_store_lacks_is_a_DictionaryNotFoundException()
    {
        await using var engine = await EngineWithDictionaryAsync();
        await Adapter.WriteAsync(engine, "known", TestDocuments.Movie(new Random(9)));
        await using var elsewhere = new CompressionEngine(new InMemoryDictionaryStore());
        await elsewhere.Store.PublishAsync(await RecordAsync(1999, Adapter.NamespaceName, 1));
        await elsewhere.GetNamespace(Adapter.NamespaceName).RefreshAsync();
        // The envelope the adapter stored, re-compressed with a dictionary only the other store has.
        byte[] stored = (await Adapter.ReadStoredEnvelopeAsync("known"))!;
        byte[] payload = engine.GetNamespace(Adapter.NamespaceName).Decompress(stored);
        await Adapter.WriteStoredEnvelopeAsync("unknown", elsewhere.GetNamespace(Adapter.NamespaceName).Compress(payload));

        Exception? thrown = await Record.ExceptionAsync(async () => await Adapter.ReadAsync(engine, "unknown").WaitAsync(Deadline));
        DictionaryNotFoundException? missing = Find<DictionaryNotFoundException>(thrown);
        Assert.True(missing is not null, $"expected a DictionaryNotFoundException, got {thrown}");
        Assert.Contains("1999", missing.Message, StringComparison.Ordinal);
    }

    /// <summary>A record writer that damages one field on its way to the store's own writer.</summary>
    private sealed class Damaged(IDictionaryRecordWriter inner, string what) : IDictionaryRecordWriter
    {
        public void WriteInteger(DictionaryRecordField field, long value)
        {
            switch (what, field)
            {
                case ("a number stored as text", DictionaryRecordField.Level): inner.WriteText(field, "3"); break;
                case ("a version out of range", DictionaryRecordField.Version): inner.WriteInteger(field, DictionaryRecord.MaxVersion + 1L); break;
                default: inner.WriteInteger(field, value); break;
            }
        }

        public void WriteText(DictionaryRecordField field, string value)
        {
            switch (what, field)
            {
                case ("a required field missing", DictionaryRecordField.Codec): break;
                case ("a codec that is not one name", DictionaryRecordField.Codec): inner.WriteText(field, "Zstd, Lz4"); break;
                default: inner.WriteText(field, value); break;
            }
        }

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) =>
            inner.WriteBytes(field, what == "content over the largest dictionary" && field == DictionaryRecordField.Content
                ? new byte[ZstdDictionary.DefaultMaximumSize + 1] : value);

        public void WriteHash(DictionaryRecordField field, ulong value)
        {
            if (what == "a shape table without its hash" && field == DictionaryRecordField.ShapesHash) return;
            inner.WriteHash(field, value);
        }

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => inner.WriteTimestamp(field, value);

        public void WriteNumber(DictionaryRecordField field, double value) => inner.WriteNumber(field, value);

        public void WriteAbsent(DictionaryRecordField field) => inner.WriteAbsent(field);
    }
}
