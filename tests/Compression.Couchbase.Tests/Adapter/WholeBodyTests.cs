using Compression.Couchbase.Internal;
using Compression.Core.Tests.Dictionaries;
using Compression.Dictionaries;
using Couchbase.Core.IO.Operations.SubDocument;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// The whole body in sub-document calls through the compressed collection (issue #39 item 3, what distributed
/// transactions need): a lookup may read it beside xattrs (<c>GetFull</c>) and gets the document decoded, whatever
/// transcoder it reads with; a body made plain under the envelope's binary flags (what <c>ReplaceBodyWithXattr</c> leaves
/// on a server that keeps the old flags) reads as the JSON it is.
/// </summary>
public sealed class WholeBodyTests(ITestOutputHelper output) : IAsyncLifetime
{
    private CouchbaseTarget _target = null!;

    public async Task InitializeAsync() => _target = await CouchbaseTarget.StartAsync(output);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    [Fact]
    public async Task A_whole_body_lookup_beside_xattrs_gets_the_document_decoded_by_a_cold_reader_through_any_transcoder()
    {
        Client writer = await _target.ConnectAsync();
        var random = new Random(12);
        for (int i = 0; i < 300; i++) await writer.Compressed.UpsertAsync(_target.Key($"m::{i}"), Docs.Movie(random));
        await writer.Engine.WhenIdleAsync();
        if (writer.Namespace.CurrentDictionary is null) await writer.Namespace.TrainAsync();
        Assert.NotNull(writer.Namespace.CurrentDictionary);
        JObject movie = Docs.Movie(random);
        string key = _target.Key("doc");
        await writer.Compressed.UpsertAsync(key, movie);
        await writer.Compressed.MutateInAsync(key, specs => specs.Upsert("audit.editor", "Ada", createPath: true, isXattr: true));
        RawBody stored = await CouchbaseTarget.ReadRawAsync(writer.Plain, key);
        Assert.True(stored.IsEnvelope);
        Assert.True(DocumentEnvelope.TryReadHeader(stored.Data.Span, out EnvelopeHeader header) && header.DictionaryId is not null, "compressed with a dictionary");

        Client reader = await _target.ConnectAsync(); // a cold reader: the dictionary is read from the store during the lookup
        using ILookupInResult lookup = await reader.Compressed.LookupInAsync(key, specs => specs
            .Get("audit.editor", isXattr: true)
            .GetFull()
            .Get("$document", isXattr: true));
        using ILookupInResult viaJson = await reader.Compressed.LookupInAsync(key, specs => specs.GetFull(),
            new LookupInOptions().Transcoder(new JsonTranscoder()));

        Assert.Equal("Ada", lookup.ContentAs<string>(0));
        Docs.Equal(movie, lookup.ContentAs<JObject>(1));
        Assert.Equal(0x03000001u, lookup.ContentAs<JObject>(2)!["flags"]!.Value<uint>());
        Docs.Equal(movie, viaJson.ContentAs<JObject>(0));
        RawBody after = await CouchbaseTarget.ReadRawAsync(writer.Plain, key);
        Assert.Equal(stored.Data.ToArray(), after.Data.ToArray()); // the stored envelope, untouched
    }

    [Fact]
    public async Task A_whole_body_lookup_reads_legacy_plain_documents_as_they_are_and_names_a_corrupt_envelope()
    {
        Client client = await _target.ConnectAsync();
        JObject legacy = JObject.Parse("""{"title":"Heat","year":1995}""");
        await client.Plain.UpsertAsync(_target.Key("legacy"), legacy);
        byte[] corrupt = [DocumentEnvelope.Magic, 0x7f, 0x01, 0x02, 0x03];
        await client.Plain.UpsertAsync(_target.Key("corrupt"), corrupt, new UpsertOptions().Transcoder(new RawBinaryTranscoder()));

        using ILookupInResult plain = await client.Compressed.LookupInAsync(_target.Key("legacy"), specs => specs.GetFull());
        InvalidDataException error = await Assert.ThrowsAsync<InvalidDataException>(
            () => client.Compressed.LookupInAsync(_target.Key("corrupt"), specs => specs.Get("$document", isXattr: true).GetFull()));

        output.WriteLine(error.Message);
        Docs.Equal(legacy, plain.ContentAs<JObject>(0));
        Assert.Contains($"Document '{_target.Key("corrupt")}'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_whole_body_lookup_on_a_replica_is_decoded_and_on_every_copy_at_once_is_refused()
    {
        Client client = await _target.ConnectAsync();
        JObject movie = Docs.Movie(new Random(3));
        string key = _target.Key("doc");
        await client.Compressed.UpsertAsync(key, movie);

        using ILookupInReplicaResult any = await client.Compressed.LookupInAnyReplicaAsync(key, specs => specs.GetFull());
        NotSupportedException refused = Assert.Throws<NotSupportedException>(() => client.Compressed.LookupInAllReplicasAsync(key, specs => specs.GetFull()));

        Docs.Equal(movie, any.ContentAs<JObject>(0));
        Assert.StartsWith("LookupInAllReplicas (sub-document) on the whole body of every copy", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_plain_json_body_under_binary_flags_reads_as_json_and_other_bytes_under_them_are_still_refused()
    {
        Client client = await _target.ConnectAsync();
        JObject movie = Docs.Movie(new Random(5));
        await client.Compressed.UpsertAsync(_target.Key("doc"), movie);
        Assert.True((await CouchbaseTarget.ReadRawAsync(client.Plain, _target.Key("doc"))).IsEnvelope);
        // What ReplaceBodyWithXattr leaves when the server keeps the document's flags: the staged JSON, binary flags.
        var raw = new RawBinaryTranscoder();
        await client.Plain.UpsertAsync(_target.Key("made-plain"), System.Text.Encoding.UTF8.GetBytes(movie.ToString()), new UpsertOptions().Transcoder(raw));
        await client.Plain.UpsertAsync(_target.Key("not-json"), "not an envelope"u8.ToArray(), new UpsertOptions().Transcoder(raw));

        using IGetResult madePlain = await client.Compressed.GetAsync(_target.Key("made-plain"));
        using IGetResult notJson = await client.Compressed.GetAsync(_target.Key("not-json"));

        Docs.Equal(movie, madePlain.ContentAs<JObject>());
        InvalidDataException error = Assert.Throws<InvalidDataException>(() => notJson.ContentAs<JObject>());
        Assert.Contains("neither a compressed envelope nor JSON text", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_whole_body_SetDoc_beside_xattrs_is_written_compressed_over_a_compressed_a_legacy_and_no_document()
    {
        Client client = await _target.ConnectAsync();
        JObject movie = Docs.Movie(new Random(8));
        await client.Compressed.UpsertAsync(_target.Key("compressed"), Docs.Movie(new Random(9)));
        await client.Plain.UpsertAsync(_target.Key("legacy"), Docs.Movie(new Random(10)));

        foreach (string name in new[] { "compressed", "legacy", "new" })
        {
            string key = _target.Key(name);
            await client.Compressed.MutateInAsync(key, specs => specs.Upsert("audit.editor", "Ada", createPath: true, isXattr: true).SetDoc(movie),
                new MutateInOptions().StoreSemantics(StoreSemantics.Upsert));

            RawBody stored = await CouchbaseTarget.ReadRawAsync(client.Plain, key);
            output.WriteLine($"{name}: {stored.Data.Length} bytes, format {stored.Flags.DataFormat}");
            Assert.True(stored.IsEnvelope, name);
            using IGetResult read = await client.Compressed.GetAsync(key);
            Docs.Equal(movie, read.ContentAs<JObject>());
            using ILookupInResult lookup = await client.Compressed.LookupInAsync(key, specs => specs.Get("audit.editor", isXattr: true).GetFull());
            Assert.Equal("Ada", lookup.ContentAs<string>(0));
            Docs.Equal(movie, lookup.ContentAs<JObject>(1));
        }
    }

    [Fact]
    public async Task A_whole_document_delete_in_a_sub_document_mutation_passes_through()
    {
        Client client = await _target.ConnectAsync();
        string key = _target.Key("doc");
        await client.Compressed.UpsertAsync(key, Docs.Movie(new Random(11)));

        await client.Compressed.MutateInAsync(key, specs => specs.Remove(""));

        await Assert.ThrowsAsync<global::Couchbase.Core.Exceptions.KeyValue.DocumentNotFoundException>(() => client.Compressed.GetAsync(key));
    }

    [Fact]
    public void The_sdk_has_the_internal_member_whole_body_lookups_decode_into()
    {
        // OperationSpec.Bytes (internal): where the SDK keeps a spec's reply, and where its transactions read a body.
        Assert.True(CompressedCollection.SpecBytes.IsAvailable, $"CouchbaseNetClient {typeof(OperationSpec).Assembly.GetName().Version} has no OperationSpec.Bytes");
        var spec = LookupInSpec.GetFull();
        CompressedCollection.SpecBytes.Set(spec, new byte[] { 1, 2, 3 });
        Assert.Equal(new byte[] { 1, 2, 3 }, CompressedCollection.SpecBytes.Get(spec).ToArray());
    }
}
