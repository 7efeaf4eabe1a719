using System.Text;
using Compression.Dictionaries;
using Couchbase.KeyValue;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>The dictionary store in the bucket, called directly through the SDK.</summary>
public sealed class CouchbaseDictionaryStoreTests(ITestOutputHelper output) : IAsyncLifetime
{
    private const string Ns = "travel.inventory.hotels";
    private CouchbaseTarget _target = null!;

    public async Task InitializeAsync() => _target = await CouchbaseTarget.StartAsync(output);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    private static DictionaryRecord Record(uint id, int version, string ns = Ns, byte fill = 1)
    {
        byte[] content = Enumerable.Range(0, 512).Select(i => (byte)(i * fill)).ToArray();
        return new DictionaryRecord
        {
            Id = id, Namespace = ns, Version = version, Content = content, ContentHash = DictionaryRecord.ComputeContentHash(content),
            Created = new DateTimeOffset(2026, 11, 24, 10, 0, 0, TimeSpan.Zero), Level = 3, SampleCount = 100, Ratio = 3.5,
        };
    }

    [Fact]
    public async Task Publish_is_insert_only_the_loser_gets_the_winner_and_ids_are_unique()
    {
        Client a = await _target.ConnectAsync();
        Client b = await _target.ConnectAsync();

        Assert.Null(await a.Store.GetCurrentAsync(Ns));
        DictionaryRecord[] winners = await Task.WhenAll(a.Store.PublishAsync(Record(11, 1)).AsTask(), b.Store.PublishAsync(Record(12, 1, fill: 3)).AsTask());
        Assert.Equal(winners[0].Id, winners[1].Id);
        uint winner = winners[0].Id;
        uint loser = winner == 11 ? 12u : 11u;
        Assert.Null(await a.Store.GetAsync(loser)); // the loser's record is gone: nothing names it
        await Assert.ThrowsAsync<DictionaryIdConflictException>(() => a.Store.PublishAsync(Record(winner, 2, fill: 5)).AsTask());
        DictionaryRecord v2 = await b.Store.PublishAsync(Record(21, 2, fill: 7));

        Client cold = await _target.ConnectAsync();
        Assert.Equal(v2, await cold.Store.GetCurrentAsync(Ns) is { } current ? current with { Content = v2.Content } : null);
        Assert.Equal(v2.Content.ToArray(), (await cold.Store.GetAsync(21))!.Content.ToArray());
        Assert.Equal([winner, 21u], await cold.Store.ListAsync(Ns).Select(r => r.Id).ToArrayAsync());
        Assert.Equal([winner, 21u], await cold.Store.ListAsync().Select(r => r.Id).ToArrayAsync());
        // An old version asked for again returns what is stored, not the candidate.
        Assert.Equal(winner, (await cold.Store.PublishAsync(Record(99, 1))).Id);
        await Assert.ThrowsAsync<ArgumentException>(() => cold.Store.PublishAsync(Record(98, 4)).AsTask());
    }

    [Fact]
    public async Task A_version_whose_record_does_not_read_is_skipped_and_reported_and_publication_goes_above_it()
    {
        // A peer's version key naming a record that is missing: before 2026-11-27 the current version was refused, a new
        // client never adopted version 1, and every publication failed.
        Client a = await _target.ConnectAsync();
        await a.Store.PublishAsync(Record(51, 1));
        await a.Plain.InsertAsync(a.Store.VersionKey(Ns, 2), Encoding.UTF8.GetBytes("""{"namespace":"travel.inventory.hotels","version":2,"id":4000000001}"""),
            new InsertOptions().Transcoder(new global::Couchbase.Core.IO.Transcoders.RawJsonTranscoder()));

        Client cold = await _target.ConnectAsync();
        var skipped = new List<string>();
        cold.Store.RecordSkipped += skipped.Add;
        Assert.Equal(51u, (await cold.Store.GetCurrentAsync(Ns))!.Id);
        Assert.Contains(skipped, m => m.Contains("4000000001", StringComparison.Ordinal));
        Assert.Equal(51u, (await cold.Store.GetNewestBelowAsync(Ns, 2))!.Id);
        // Version 2's slot is taken by what does not read: the engine is told so, and publishes as 3.
        await Assert.ThrowsAsync<InvalidDataException>(() => cold.Store.PublishAsync(Record(52, 2, fill: 3)).AsTask());
        Assert.Equal(53u, (await cold.Store.PublishAsync(Record(53, 3, fill: 5))).Id);
        Assert.Equal(53u, (await (await _target.ConnectAsync()).Store.GetCurrentAsync(Ns))!.Id);
    }

    [Fact]
    public async Task A_shape_table_is_stored_with_its_dictionary_and_read_back_by_a_cold_client()
    {
        Client a = await _target.ConnectAsync();
        byte[] shapes = [0x53, 0x48, 0x50, 0x54, 1, 1, 0, 1, 1, 1, (byte)'a', 9, 9, 9, 9];
        DictionaryRecord withShapes = Record(41, 1) with { Shapes = shapes, ShapesHash = DictionaryRecord.ComputeContentHash(shapes) };
        await a.Store.PublishAsync(withShapes);
        await a.Store.PublishAsync(Record(42, 1, ns: "travel.inventory.other"));

        Client cold = await _target.ConnectAsync();
        DictionaryRecord read = (await cold.Store.GetAsync(41))!;
        Assert.Equal(shapes, read.Shapes.ToArray());
        Assert.Equal(withShapes.ShapesHash, read.ShapesHash);
        DictionaryRecord plain = (await cold.Store.GetAsync(42))!;
        Assert.True(plain.Shapes.IsEmpty);
        Assert.Equal(0ul, plain.ShapesHash);
    }

    [Fact]
    public async Task The_current_hint_is_only_a_hint_a_wrong_or_broken_one_is_corrected_by_probing()
    {
        Client a = await _target.ConnectAsync();
        await a.Store.PublishAsync(Record(31, 1));
        await a.Store.PublishAsync(Record(32, 2, fill: 3));
        var raw = new RawJsonWriter(a.Plain);

        await raw.PutAsync(a.Store.HintKey(Ns), """{"namespace":"travel.inventory.hotels","version":9}""");
        Assert.Equal(32u, (await (await _target.ConnectAsync()).Store.GetCurrentAsync(Ns))!.Id);
        await raw.PutAsync(a.Store.HintKey(Ns), """not json""");
        Assert.Equal(32u, (await (await _target.ConnectAsync()).Store.GetCurrentAsync(Ns))!.Id);
        await raw.PutAsync(a.Store.HintKey(Ns), """{"version":1}""");
        Assert.Equal(32u, (await (await _target.ConnectAsync()).Store.GetCurrentAsync(Ns))!.Id);
    }

    [Fact]
    public async Task Damaged_records_are_refused_naming_the_store_and_key()
    {
        Client a = await _target.ConnectAsync();
        await a.Store.PublishAsync(Record(41, 1));
        var raw = new RawJsonWriter(a.Plain);

        // Too large: refused before it is parsed.
        // (Past what a 1 MiB dictionary and a 768 KiB table and field model take in base64.)
        await raw.PutAsync(a.Store.RecordKey(42), "\"" + new string('A', 4 * 1024 * 1024) + "\"");
        var tooLarge = await Assert.ThrowsAsync<InvalidDataException>(() => a.Store.GetAsync(42).AsTask());
        Assert.Contains("was not parsed", tooLarge.Message, StringComparison.Ordinal);
        // A record under another id's key.
        string moved = Encoding.UTF8.GetString((await CouchbaseTarget.ReadRawAsync(a.Plain, a.Store.RecordKey(41))).Data.Span);
        await raw.PutAsync(a.Store.RecordKey(43), moved);
        Assert.Contains("says it is dictionary 41", (await Assert.ThrowsAsync<InvalidDataException>(() => a.Store.GetAsync(43).AsTask())).Message, StringComparison.Ordinal);
        // A field missing.
        await raw.PutAsync(a.Store.RecordKey(44), moved.Replace("\"level\":3,", "", StringComparison.Ordinal).Replace("\"id\":41", "\"id\":44", StringComparison.Ordinal));
        Assert.Contains("'level'", (await Assert.ThrowsAsync<InvalidDataException>(() => a.Store.GetAsync(44).AsTask())).Message, StringComparison.Ordinal);
        // A version key that points at the record of another version: refused naming the store; as the current version it
        // is skipped and reported (since 2026-11-27), and version 1 below it is current.
        await raw.PutAsync(a.Store.VersionKey(Ns, 2), """{"namespace":"travel.inventory.hotels","version":2,"id":41}""");
        var skipped = new List<string>();
        a.Store.RecordSkipped += skipped.Add;
        Assert.Equal(1, (await a.Store.GetCurrentAsync(Ns))!.Version);
        string mismatch = Assert.Single(skipped);
        output.WriteLine(mismatch);
        Assert.Contains(a.Store.Location, mismatch, StringComparison.Ordinal);
        Assert.Contains("version 1", mismatch, StringComparison.Ordinal);
        await Assert.ThrowsAsync<InvalidDataException>(() => a.Store.PublishAsync(Record(45, 2)).AsTask()); // its slot: the record that does not fit
    }

    [Fact]
    public async Task A_namespace_longer_than_a_couchbase_key_allows_gets_a_hashed_key()
    {
        Client a = await _target.ConnectAsync();
        string ns = "bucket." + new string('s', 200) + "." + new string('c', 200);

        await a.Store.PublishAsync(Record(51, 1, ns));

        Assert.True(Encoding.UTF8.GetByteCount(a.Store.VersionKey(ns, 1)) <= 250);
        Assert.Equal(51u, (await (await _target.ConnectAsync()).Store.GetCurrentAsync(ns))!.Id);
    }

    /// <summary>Writes hand-made JSON bodies, to arrange damaged records.</summary>
    private sealed class RawJsonWriter(ICouchbaseCollection plain)
    {
        public Task PutAsync(string key, string json) =>
            plain.UpsertAsync(key, Encoding.UTF8.GetBytes(json), new UpsertOptions().Transcoder(new global::Couchbase.Core.IO.Transcoders.RawJsonTranscoder()));
    }
}
