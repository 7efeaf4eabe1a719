using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Couchbase.Core.Exceptions;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>The compressed collection through the real SDK: on the loopback server, or a real cluster when one is configured.</summary>
public sealed class CompressedCollectionTests(ITestOutputHelper output) : IAsyncLifetime
{
    private CouchbaseTarget _target = null!;

    public async Task InitializeAsync() => _target = await CouchbaseTarget.StartAsync(output);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    public sealed record Order(int Id, string Customer, string[] Items, decimal Total);

    [Fact]
    public async Task Upsert_and_get_round_trip_and_the_stored_body_is_an_envelope_with_binary_flags()
    {
        Client client = await _target.ConnectAsync();
        var order = new Order(7, "Ada Lovelace", ["A-1", "B-2", "C-3"], 12.50m);
        string key = _target.Key("order::7");

        IMutationResult written = await client.Compressed.UpsertAsync(key, order);
        using IGetResult read = await client.Compressed.GetAsync(key);

        Assert.Equal(order with { Items = order.Items }, read.ContentAs<Order>() is { } o ? o with { Items = order.Items } : null);
        Assert.Equal(order.Items, read.ContentAs<Order>()!.Items);
        Assert.Equal(written.Cas, read.Cas);
        RawBody stored = await CouchbaseTarget.ReadRawAsync(client.Plain, key);
        Assert.Equal(DataFormat.Binary, stored.Flags.DataFormat);
        Assert.True(DocumentEnvelope.IsEnvelope(stored.Data.Span));
        Assert.Equal(Docs.Serialized(order), await client.Namespace.DecompressAsync(stored.Data));
        if (_target.Loopback is { } server)
        {
            Assert.True(server.TryGetDocument(key, out var raw));
            Assert.Equal(3u, (raw.Flags >> 24) & 0x0f); // DataFormat.Binary in the flags' high byte
        }
    }

    [Fact]
    public async Task Insert_replace_and_remove_round_trip_and_conflicts_are_the_sdks_own_exceptions()
    {
        Client client = await _target.ConnectAsync();
        ICouchbaseCollection c = client.Compressed;
        string key = _target.Key("crud");

        IMutationResult inserted = await c.InsertAsync(key, new Order(1, "Ada", ["A"], 1m));
        await Assert.ThrowsAsync<DocumentExistsException>(() => c.InsertAsync(key, new Order(2, "Bob", ["B"], 2m)));
        IMutationResult replaced = await c.ReplaceAsync(key, new Order(1, "Grace", ["A", "B"], 3m), new ReplaceOptions().Cas(inserted.Cas));
        await Assert.ThrowsAsync<CasMismatchException>(() => c.ReplaceAsync(key, new Order(1, "Stale", [], 0m), new ReplaceOptions().Cas(inserted.Cas)));
        await Assert.ThrowsAsync<CasMismatchException>(() => c.RemoveAsync(key, new RemoveOptions().Cas(inserted.Cas)));

        using (IGetResult read = await c.GetAsync(key))
        {
            Assert.Equal(replaced.Cas, read.Cas);
            Assert.Equal("Grace", read.ContentAs<Order>()!.Customer);
        }
        await c.RemoveAsync(key, new RemoveOptions().Cas(replaced.Cas));
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => c.GetAsync(key));
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => c.ReplaceAsync(key, new Order(1, "Gone", [], 0m)));
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => c.RemoveAsync(key));
    }

    [Fact]
    public async Task Legacy_json_documents_written_by_the_plain_collection_are_read_and_stay_json_until_rewritten()
    {
        Client client = await _target.ConnectAsync();
        var random = new Random(1);
        JObject[] docs = [.. Enumerable.Range(0, 20).Select(_ => Docs.Movie(random))];
        for (int i = 0; i < docs.Length; i++) await client.Plain.UpsertAsync(_target.Key($"legacy::{i}"), docs[i]);

        for (int i = 0; i < docs.Length; i++)
        {
            using IGetResult read = await client.Compressed.GetAsync(_target.Key($"legacy::{i}"));
            Docs.Equal(docs[i], read.ContentAs<JObject>());
        }
        Assert.Equal(DataFormat.Json, (await CouchbaseTarget.ReadRawAsync(client.Plain, _target.Key("legacy::0"))).Flags.DataFormat);

        await client.Compressed.ReplaceAsync(_target.Key("legacy::0"), docs[0]);
        RawBody rewritten = await CouchbaseTarget.ReadRawAsync(client.Plain, _target.Key("legacy::0"));
        Assert.Equal(DataFormat.Binary, rewritten.Flags.DataFormat);
        Assert.True(DocumentEnvelope.IsEnvelope(rewritten.Data.Span));
    }

    [Fact]
    public async Task Compression_switched_off_and_on_again_keeps_every_document_readable_by_every_client()
    {
        Client on = await _target.ConnectAsync();
        Client off = await _target.ConnectAsync(collectionOptions: new CompressedCollectionOptions { Compress = false });
        var random = new Random(2);
        JObject[] docs = [.. Enumerable.Range(0, 30).Select(_ => Docs.Movie(random))];

        for (int i = 0; i < docs.Length; i++)
        {
            ICouchbaseCollection writer = (i / 10) switch { 0 => on.Compressed, 1 => off.Compressed, _ => on.Compressed };
            await writer.UpsertAsync(_target.Key($"switch::{i}"), docs[i]);
        }

        for (int i = 0; i < docs.Length; i++)
        {
            DataFormat expected = i is >= 10 and < 20 ? DataFormat.Json : DataFormat.Binary;
            Assert.Equal(expected, (await CouchbaseTarget.ReadRawAsync(on.Plain, _target.Key($"switch::{i}"))).Flags.DataFormat);
            foreach (Client reader in new[] { on, off })
            {
                using IGetResult read = await reader.Compressed.GetAsync(_target.Key($"switch::{i}"));
                Docs.Equal(docs[i], read.ContentAs<JObject>());
            }
        }
        // Written with compression off: plain JSON, so the plain collection (and N1QL) reads it too.
        using IGetResult plain = await on.Plain.GetAsync(_target.Key("switch::15"));
        Docs.Equal(docs[15], plain.ContentAs<JObject>());
    }

    [Fact]
    public async Task A_dictionary_is_trained_published_in_the_bucket_and_a_cold_client_reads_every_document_byte_for_byte()
    {
        Client writer = await _target.ConnectAsync();
        var random = new Random(3);
        JObject[] docs = [.. Enumerable.Range(0, 400).Select(_ => Docs.Movie(random))];
        for (int i = 0; i < 200; i++) await writer.Compressed.UpsertAsync(_target.Key($"movie::{i}"), docs[i]);
        await writer.Engine.WhenIdleAsync();
        if (writer.Namespace.CurrentDictionary is null) await writer.Namespace.TrainAsync();
        DictionaryRecord dictionary = Assert.IsType<DictionaryRecord>(writer.Namespace.CurrentDictionary);
        for (int i = 200; i < docs.Length; i++) await writer.Compressed.UpsertAsync(_target.Key($"movie::{i}"), docs[i]);
        await writer.Engine.WhenIdleAsync();

        Client reader = await _target.ConnectAsync();
        Assert.Null(reader.Namespace.CurrentDictionary is { } early && early.Version > dictionary.Version ? early : null);
        long rawBytes = 0, storedBytes = 0;
        for (int i = 0; i < docs.Length; i++)
        {
            string key = _target.Key($"movie::{i}");
            using IGetResult read = await reader.Compressed.GetAsync(key);
            Docs.Equal(docs[i], read.ContentAs<JObject>());
            RawBody stored = await CouchbaseTarget.ReadRawAsync(reader.Plain, key);
            byte[] json = Docs.Serialized(docs[i]);
            Assert.Equal(json, await reader.Namespace.DecompressAsync(stored.Data));
            rawBytes += json.Length;
            storedBytes += stored.Data.Length;
        }
        Assert.True(DocumentEnvelope.TryReadHeader((await CouchbaseTarget.ReadRawAsync(reader.Plain, _target.Key("movie::399"))).Data.Span, out EnvelopeHeader last));
        Assert.NotNull(last.DictionaryId);
        Assert.NotNull(await reader.Store.GetAsync(last.DictionaryId!.Value));
        output.WriteLine($"{docs.Length} documents: {rawBytes} bytes of JSON stored as {storedBytes} bytes ({(double)rawBytes / storedBytes:F2}x); dictionary v{dictionary.Version} id {dictionary.Id}");
        Assert.True(storedBytes * 2 < rawBytes, $"{storedBytes} stored bytes for {rawBytes} bytes of JSON");
    }

    [Fact]
    public async Task A_missing_dictionary_is_named_in_the_error_with_the_document_key_and_collection()
    {
        Client writer = await _target.ConnectAsync();
        var random = new Random(4);
        for (int i = 0; i < 200; i++) await writer.Compressed.UpsertAsync(_target.Key($"m::{i}"), Docs.Movie(random));
        await writer.Engine.WhenIdleAsync();
        if (writer.Namespace.CurrentDictionary is null) await writer.Namespace.TrainAsync();
        DictionaryRecord dictionary = writer.Namespace.CurrentDictionary!;
        string key = _target.Key("m::named");
        await writer.Compressed.UpsertAsync(key, Docs.Movie(random));
        // Someone deletes the dictionary record by hand (the library never does).
        await writer.Plain.RemoveAsync(writer.Store.RecordKey(dictionary.Id));

        Client reader = await _target.ConnectAsync();
        // The get itself succeeds: only the type asked for tells a document to decode from raw bytes (below).
        using IGetResult read = await reader.Compressed.GetAsync(key);
        var error = Assert.Throws<DictionaryNotFoundException>(() => read.ContentAs<JObject>());

        output.WriteLine(error.Message);
        Assert.Equal(dictionary.Id, error.DictionaryId);
        Assert.Contains(dictionary.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message, StringComparison.Ordinal);
        Assert.Contains($"'{key}'", error.Message, StringComparison.Ordinal);
        Assert.Contains(CouchbaseCollectionCompressionExtensions.NamespaceName(reader.Plain), error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Raw_json_bytes_through_a_RawJsonTranscoder_read_back_as_the_same_bytes()
    {
        // Found by review: RawJsonTranscoder writes byte[] as JSON, so it was compressed, and ContentAs<byte[]> handed
        // back the envelope instead of the document.
        Client client = await _target.ConnectAsync(collectionOptions: new CompressedCollectionOptions { JsonTranscoder = new RawJsonTranscoder() });
        byte[] json = "{\"name\":\"Ada Lovelace\",\"born\":1815,\"notes\":\"first programmer, first programmer, first programmer\"}"u8.ToArray();
        string key = _target.Key("raw-json");
        await client.Compressed.UpsertAsync(key, json);
        Assert.True((await CouchbaseTarget.ReadRawAsync(client.Plain, key)).IsEnvelope);

        using IGetResult read = await client.Compressed.GetAsync(key);
        Assert.Equal(json, read.ContentAs<byte[]>());
        Assert.Equal(System.Text.Encoding.UTF8.GetString(json), read.ContentAs<string>());
        // Found by review too (eighth session): read as an IMemoryOwner<byte> it gave the envelope.
        using (System.Buffers.IMemoryOwner<byte> owner = read.ContentAs<System.Buffers.IMemoryOwner<byte>>()!)
            Assert.Equal(json, owner.Memory.ToArray());
    }

    [Fact]
    public async Task Binary_documents_that_start_like_an_envelope_read_back_untouched()
    {
        // Found by review: a byte[] stored through a binary inner transcoder is passed through as it is, but the read's
        // dictionary pre-load took any body starting with 0xC5 for an envelope and failed the get (about 1 blob in 256).
        Client client = await _target.ConnectAsync(collectionOptions: new CompressedCollectionOptions { JsonTranscoder = new LegacyTranscoder() });
        byte[] unparsable = [0xC5, 0xFF, 0x00, 0x01, 0x02];
        byte[] validHeader = EnvelopeNamingAnUnknownDictionary();
        foreach (var (name, blob) in new[] { ("blob-unparsable", unparsable), ("blob-header", validHeader) })
        {
            string key = _target.Key(name);
            await client.Compressed.UpsertAsync(key, blob);
            Assert.False((await CouchbaseTarget.ReadRawAsync(client.Plain, key)).Flags.DataFormat == DataFormat.Json);
            using IGetResult read = await client.Compressed.GetAsync(key);
            Assert.Equal(blob, read.ContentAs<byte[]>());
            // Read as a document, the same body is the error it always was, naming the document.
            Exception error = Assert.ThrowsAny<Exception>(() => read.ContentAs<Order>());
            Assert.True(error is InvalidDataException or DictionaryNotFoundException, error.ToString());
            Assert.Contains($"'{key}'", error.Message, StringComparison.Ordinal);
        }
    }

    /// <summary>An envelope (its header parses) that names a dictionary the store does not have.</summary>
    private static byte[] EnvelopeNamingAnUnknownDictionary()
    {
        var random = new Random(9);
        byte[][] samples = [.. Enumerable.Range(0, 400).Select(i => System.Text.Encoding.UTF8.GetBytes(
            $"{{\"order\":{i},\"customer\":\"customer-{random.Next(50)}\",\"total\":{random.Next(10_000)},\"status\":\"shipped\"}}"))];
        ZstdDictionary dictionary = ZstdDictionary.Create(1_000_001, ZstdSharp.DictBuilder.TrainFromBuffer(samples, 4096));
        var compressor = new DocumentCompressor(new DocumentCompressorOptions());
        byte[] envelope = new byte[DocumentCompressor.GetMaxEnvelopeLength(samples[0].Length)];
        Assert.True(compressor.TryCompress(samples[0], envelope, out int written, dictionary));
        Assert.True(DocumentEnvelope.TryReadHeader(envelope.AsSpan(0, written), out EnvelopeHeader header));
        Assert.Equal(1_000_001u, header.DictionaryId);
        return envelope[..written];
    }

    [Fact]
    public async Task Corrupt_bodies_fail_with_InvalidDataException_naming_the_document()
    {
        Client client = await _target.ConnectAsync();
        await client.Compressed.UpsertAsync(_target.Key("good"), new Order(1, "Ada", ["A"], 1m));
        byte[] envelope = (await CouchbaseTarget.ReadRawAsync(client.Plain, _target.Key("good"))).Data.ToArray();
        envelope[^1] ^= 0xff; // the checksum no longer matches
        var raw = new RawBinaryTranscoder();
        await client.Plain.UpsertAsync(_target.Key("flipped"), envelope, new UpsertOptions().Transcoder(raw));
        await client.Plain.UpsertAsync(_target.Key("not-envelope"), new byte[] { 1, 2, 3, 4 }, new UpsertOptions().Transcoder(raw));

        foreach (string name in new[] { "flipped", "not-envelope" })
        {
            using IGetResult read = await client.Compressed.GetAsync(_target.Key(name));
            var error = Assert.Throws<InvalidDataException>(() => read.ContentAs<Order>());
            output.WriteLine(error.Message);
            Assert.Contains($"'{_target.Key(name)}'", error.Message, StringComparison.Ordinal);
            Assert.Contains(CouchbaseCollectionCompressionExtensions.NamespaceName(client.Plain), error.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task Operations_that_cannot_see_into_a_compressed_body_are_refused_naming_the_operation_and_collection()
    {
        Client client = await _target.ConnectAsync();
        string key = _target.Key("opaque");
        await client.Compressed.UpsertAsync(key, new Order(1, "Ada", ["A"], 1m));
        string collection = CouchbaseCollectionCompressionExtensions.NamespaceName(client.Plain);
        await client.Engine.WhenIdleAsync(); // the namespace's background load of its dictionary sends commands too
        long commandsBefore = _target.Loopback?.Commands.Count ?? 0;

        NotSupportedException[] errors =
        [
            await Assert.ThrowsAsync<NotSupportedException>(() => client.Compressed.LookupInAsync(key, specs => specs.Get("Customer"))),
            await Assert.ThrowsAsync<NotSupportedException>(() => client.Compressed.MutateInAsync(key, specs => specs.Upsert("Customer", "Grace"))),
            await Assert.ThrowsAsync<NotSupportedException>(() => client.Compressed.Binary.AppendAsync(key, [1])),
            await Assert.ThrowsAsync<NotSupportedException>(() => client.Compressed.Binary.PrependAsync(key, [1])),
            await Assert.ThrowsAsync<NotSupportedException>(() => client.Compressed.GetAsync(key, new GetOptions().Projection("Customer"))),
            Assert.Throws<NotSupportedException>(() => client.Compressed.ScanAsync(new global::Couchbase.KeyValue.RangeScan.RangeScan())),
        ];

        string[] operations = ["LookupIn", "MutateIn", "Append", "Prepend", "projection", "Scan"];
        for (int i = 0; i < errors.Length; i++)
        {
            output.WriteLine(errors[i].Message);
            Assert.Contains(operations[i], errors[i].Message, StringComparison.Ordinal);
            Assert.Contains($"'{collection}'", errors[i].Message, StringComparison.Ordinal);
        }
        if (_target.Loopback is { } server)
        {
            Assert.Equal(commandsBefore, server.Commands.Count); // refused before anything was sent
            Assert.Empty(server.UnknownCommands);
        }
        using IGetResult read = await client.Compressed.GetAsync(key);
        Assert.Equal("Ada", read.ContentAs<Order>()!.Customer);
    }
}
