using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>The store contract, for every store in Core.</summary>
public sealed class DictionaryStoreTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("dict-store-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    public static TheoryData<string> Stores() => new("memory", "file");

    private DictionaryStore Create(string kind) => kind == "file" ? new FileDictionaryStore(_directory) : new InMemoryDictionaryStore();

    internal static DictionaryRecord Record(uint id, string ns, int version) => new()
    {
        Id = id, Namespace = ns, Version = version, Content = new byte[] { 1, 2, 3, (byte)id }, ContentHash = DictionaryRecord.ComputeContentHash([1, 2, 3, (byte)id]), Created = DateTimeOffset.UnixEpoch, Level = 3, SampleCount = 10, Ratio = 2.5,
    };

    [Theory]
    [MemberData(nameof(Stores))]
    public async Task Publish_InsertsVersionsInOrder_AndReadsThemBack(string kind)
    {
        var store = Create(kind);
        Assert.Null(await store.GetCurrentAsync("db.a"));
        Assert.Equal(10u, (await store.PublishAsync(Record(10, "db.a", 1))).Id);
        Assert.Equal(11u, (await store.PublishAsync(Record(11, "db.a", 2))).Id);
        Assert.Equal(12u, (await store.PublishAsync(Record(12, "db.b/x y", 1))).Id);

        var current = await store.GetCurrentAsync("db.a");
        Assert.Equal(11u, current!.Id);
        Assert.Equal(2, current.Version);
        var byId = await store.GetAsync(10);
        Assert.Equal(new byte[] { 1, 2, 3, 10 }, byId!.Content.ToArray());
        Assert.Equal(2.5, byId.Ratio);
        Assert.Null(await store.GetAsync(99));
        Assert.Equal(12u, (await store.GetCurrentAsync("db.b/x y"))!.Id);

        var all = new List<DictionaryRecord>();
        await foreach (var r in store.ListAsync()) all.Add(r);
        Assert.Equal([10u, 11u, 12u], all.Select(r => r.Id).Order().ToArray());
        var a = new List<int>();
        await foreach (var r in store.ListAsync("db.a")) a.Add(r.Version);
        Assert.Equal([1, 2], a);
    }

    [Theory]
    [MemberData(nameof(Stores))]
    public async Task Publish_RecordWithAShapeTable_ReadsItBack_AndOneWithoutHasNone(string kind)
    {
        var store = Create(kind);
        byte[] shapes = [0x53, 0x48, 0x50, 0x54, 1, 1, 0, 1, 1, 1, (byte)'a', 9, 9, 9, 9];
        await store.PublishAsync(Record(70, "db.a", 1) with { Shapes = shapes, ShapesHash = DictionaryRecord.ComputeContentHash(shapes) });
        await store.PublishAsync(Record(71, "db.b", 1));
        var reread = kind == "file" ? new FileDictionaryStore(_directory) : store;
        DictionaryRecord read = (await reread.GetAsync(70))!;
        Assert.Equal(shapes, read.Shapes.ToArray());
        Assert.Equal(DictionaryRecord.ComputeContentHash(shapes), read.ShapesHash);
        DictionaryRecord plain = (await reread.GetAsync(71))!;
        Assert.True(plain.Shapes.IsEmpty);
        Assert.Equal(0ul, plain.ShapesHash);
    }

    [Theory]
    [MemberData(nameof(Stores))]
    public async Task Publish_SameVersionTwice_ReturnsTheWinnerAndOverwritesNothing(string kind)
    {
        var store = Create(kind);
        await store.PublishAsync(Record(20, "db.a", 1));
        var winner = await store.PublishAsync(Record(21, "db.a", 1));
        Assert.Equal(20u, winner.Id);
        Assert.Null(await store.GetAsync(21));
        Assert.Equal(20u, (await store.GetCurrentAsync("db.a"))!.Id);
    }

    [Theory]
    [MemberData(nameof(Stores))]
    public async Task Publish_TakenId_IsRefused_AndAVersionAboveAGapIsInserted(string kind)
    {
        var store = Create(kind);
        await store.PublishAsync(Record(30, "db.a", 1));
        await Assert.ThrowsAsync<DictionaryIdConflictException>(async () => await store.PublishAsync(Record(30, "db.b", 1)));
        // A gap is what the engine leaves when it publishes past a version held by an invalid record: allowed.
        Assert.Equal(31u, (await store.PublishAsync(Record(31, "db.a", 3))).Id);
        Assert.Equal(3, (await store.GetCurrentAsync("db.a"))!.Version);
        Assert.Equal(30u, (await store.GetNewestBelowAsync("db.a", 3))!.Id);
        Assert.Null(await store.GetNewestBelowAsync("db.a", 1));
    }

    [Fact]
    public async Task FileStore_ConcurrentPublishersOfOneVersion_ExactlyOneWins()
    {
        var stores = Enumerable.Range(0, 8).Select(_ => new FileDictionaryStore(_directory)).ToArray();
        for (int round = 1; round <= 60; round++)
        {
            int version = round;
            var results = await Task.WhenAll(stores.Select((s, i) => Task.Run(async () => await s.PublishAsync(Record((uint)(1000 * round + i), "db.race", version)))));
            Assert.Single(results.Select(r => r.Id).Distinct());
            Assert.Equal(round, Directory.GetFiles(_directory, "*.dict.json").Length);
            Assert.Empty(Directory.GetFiles(_directory, ".tmp-*"));
        }
    }

    [Fact]
    public async Task FileStore_EngineRestartedWithAColdCache_ReadsEverythingWrittenBefore()
    {
        var random = new Random(31);
        var written = new List<(byte[] Document, byte[] Envelope)>();
        await using (var before = TestEngine.Create(new FileDictionaryStore(_directory)))
        {
            for (int i = 0; i < 1500; i++)
            {
                var d = i < 700 ? TestDocuments.Movie(random) : TestDocuments.Sensor(random);
                written.Add((d, before.GetNamespace("db.restart").Compress(d)));
            }
            await before.WhenIdleAsync();
            Assert.NotNull(before.GetNamespace("db.restart").CurrentDictionary);
        }

        // A new process: a new store object over the same folder and an engine with nothing cached.
        await using var after = TestEngine.Create(new FileDictionaryStore(_directory));
        foreach (var (document, envelope) in written) Assert.Equal(document, after.GetNamespace("db.restart").Decompress(envelope));
        await after.GetNamespace("db.restart").RefreshAsync();
        Assert.NotNull(after.GetNamespace("db.restart").CurrentDictionary);
    }
}
