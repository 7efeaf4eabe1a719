using System.Text.Json.Serialization;
using Compression.Dictionaries;
using Couchbase.Core.IO.Serializers;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>Faults found by review (2026-11-24, eighth session); each test failed before its fix.</summary>
public sealed class FoundByReviewTests(ITestOutputHelper output) : IAsyncLifetime
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
}
