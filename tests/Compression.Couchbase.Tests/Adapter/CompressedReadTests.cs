using System.Text.Json.Serialization;
using Compression.Dictionaries;
using Couchbase.Core.IO.Serializers;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Reads through the compressed collection stay right where review found them wrong (from 2026-11-24; each test failed
/// before its fix): legacy documents, a current-version hint that lies, a preloaded dictionary evicted before
/// <c>ContentAs</c>.
/// </summary>
public sealed class CompressedReadTests(ITestOutputHelper output) : IAsyncLifetime
{
    private CouchbaseTarget _target = null!;

    public async Task InitializeAsync() => _target = await CouchbaseTarget.StartAsync(output);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    public sealed record Person([property: JsonPropertyName("first_name")] string? FirstName, [property: JsonPropertyName("born")] int Born);

    [Fact]
    public async Task A_legacy_document_written_with_the_clusters_serializer_reads_the_same_through_the_compressed_collection()
    {
        // The application configured the SDK with System.Text.Json (an option the SDK offers); its plain
        // collection writes and reads with it. The compressed collection's inner JsonTranscoder should be the same.
        Client client = await _target.ConnectAsync(configure: o => o.WithSerializer(SystemTextJsonSerializer.Create()));
        string key = _target.Key("person::1");
        await client.Plain.UpsertAsync(key, new Person("Ada", 1815));
        using (IGetResult plain = await client.Plain.GetAsync(key)) Assert.Equal(new Person("Ada", 1815), plain.ContentAs<Person>());

        Person? read;
        using (IGetResult compressed = await client.Compressed.GetAsync(key)) read = compressed.ContentAs<Person>();
        // Read-modify-write through the compressed collection: whatever was not read is lost.
        await client.Compressed.ReplaceAsync(key, read! with { Born = 1816 });
        using IGetResult after = await client.Compressed.GetAsync(key);
        output.WriteLine($"read {read}; after the replace {after.ContentAs<Person>()}");
        Assert.Equal(new Person("Ada", 1815), read);
    }

    [Fact]
    public async Task An_oversized_current_hint_is_only_a_hint_and_does_not_stop_a_client_from_finding_the_dictionary()
    {
        Client writer = await _target.ConnectAsync();
        var random = new Random(4);
        for (int i = 0; i < 200; i++) await writer.Compressed.UpsertAsync(_target.Key($"m::{i}"), Docs.Movie(random));
        await writer.Engine.WhenIdleAsync();
        if (writer.Namespace.CurrentDictionary is null) await writer.Namespace.TrainAsync();
        DictionaryRecord dictionary = Assert.IsType<DictionaryRecord>(writer.Namespace.CurrentDictionary);
        string ns = CouchbaseCollectionCompressionExtensions.NamespaceName(writer.Plain);
        // The hint, tampered with: valid JSON, but over the 64 KiB the store reads of a small document.
        await writer.Plain.UpsertAsync(writer.Store.HintKey(ns), "{\"version\":1}" + new string(' ', 70_000),
            new UpsertOptions().Transcoder(new RawJsonTranscoder()));

        Client reader = await _target.ConnectAsync();
        DictionaryRecord? current = await reader.Store.GetCurrentAsync(ns);
        Assert.Equal(dictionary.Id, current?.Id);
    }

    [Fact]
    public async Task A_read_whose_preloaded_dictionary_another_read_evicts_before_ContentAs_still_decodes()
    {
        // Found by review (2026-11-25, tenth session): the decorator pre-loads the dictionary a document names, then the
        // SDK decodes synchronously in ContentAs; when other reads' loads evicted it from the bounded cache in between,
        // the decode threw DictionaryNotFoundException (the store has no synchronous read). The result now holds it.
        Client writer = await _target.ConnectAsync();
        await using var elsewhere = new CompressionEngine(writer.Store, Core.Tests.Dictionaries.CompressionEngineOptionsBuilder.Fast(), timeProvider: writer.Time);
        var random = new Random(9);
        var raw = new RawBinaryTranscoder();
        var expected = new Dictionary<string, Newtonsoft.Json.Linq.JObject>();
        foreach (string ns in new[] { "elsewhere.a", "elsewhere.b" }) // documents moved here from collections with their own dictionaries
        {
            CompressionNamespace source = elsewhere.GetNamespace(ns);
            for (int i = 0; i < 400; i++) source.Compress(Core.Tests.Dictionaries.TestDocuments.Movie(random));
            await elsewhere.WhenIdleAsync();
            if (source.CurrentDictionary is null) await source.TrainAsync();
            Assert.NotNull(source.CurrentDictionary);
            byte[] json = Core.Tests.Dictionaries.TestDocuments.Movie(random);
            expected[ns] = Docs.Parse(json);
            await writer.Plain.UpsertAsync(_target.Key(ns), source.Compress(json), new UpsertOptions().Transcoder(raw));
        }
        Assert.NotEqual(elsewhere.GetNamespace("elsewhere.a").CurrentDictionary!.Id, elsewhere.GetNamespace("elsewhere.b").CurrentDictionary!.Id);

        var options = Core.Tests.Dictionaries.CompressionEngineOptionsBuilder.Fast();
        options.MaxCachedDictionaries = 1;
        Client reader = await _target.ConnectAsync(options);
        using IGetResult a = await reader.Compressed.GetAsync(_target.Key("elsewhere.a")); // pre-loads a's dictionary
        using IGetResult b = await reader.Compressed.GetAsync(_target.Key("elsewhere.b")); // pre-loads b's: the bound evicts a's
        Docs.Equal(expected["elsewhere.a"], a.ContentAs<Newtonsoft.Json.Linq.JObject>());
        Docs.Equal(expected["elsewhere.b"], b.ContentAs<Newtonsoft.Json.Linq.JObject>());
    }
}
