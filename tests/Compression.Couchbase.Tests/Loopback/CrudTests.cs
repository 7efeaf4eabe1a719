using Couchbase;
using Couchbase.Core.Exceptions;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Compression.Testing.Couchbase;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>Key-value CRUD on the default collection through the real SDK, with the SDK's own exceptions.</summary>
public sealed class CrudTests(ITestOutputHelper output) : IAsyncLifetime
{
    private LoopbackCluster _loopback = null!;

    private ICouchbaseCollection Collection => _loopback.Collection;

    public async Task InitializeAsync() => _loopback = await LoopbackCluster.StartAsync(output);

    public async Task DisposeAsync()
    {
        Assert.Empty(_loopback.Server.ProtocolErrors);
        await _loopback.DisposeAsync();
    }

    public sealed record Order(int Id, string Customer, string[] Items);

    [Fact]
    public async Task Upsert_and_get_round_trip_a_poco_with_the_default_json_transcoder()
    {
        var order = new Order(7, "Ada", ["A-1", "B-2"]);

        IMutationResult first = await Collection.UpsertAsync("order::7", order);
        IMutationResult second = await Collection.UpsertAsync("order::7", order with { Customer = "Grace" });
        using IGetResult get = await Collection.GetAsync("order::7");

        Order? read = get.ContentAs<Order>();
        Assert.Equal("Grace", read!.Customer);
        Assert.Equal(order.Items, read.Items);
        Assert.True(second.Cas > first.Cas);
        Assert.Equal(second.Cas, get.Cas);
        Assert.True(_loopback.Server.TryGetDocument("order::7", out KvDocument? stored));
        Assert.Equal(2u, (stored.Flags >> 24) & 0x0f); // DataFormat.Json in the flags' high byte
        Assert.Contains("\"Grace\"", System.Text.Encoding.UTF8.GetString(stored.Value.Span), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Raw_binary_transcoder_round_trips_bytes_with_binary_flags()
    {
        byte[] body = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x01, 0x02, 0xff];
        var transcoder = new RawBinaryTranscoder();

        await Collection.UpsertAsync("bin", body, options => options.Transcoder(transcoder));
        using IGetResult get = await Collection.GetAsync("bin", options => options.Transcoder(transcoder));

        Assert.Equal(body, get.ContentAs<byte[]>());
        Assert.True(_loopback.Server.TryGetDocument("bin", out KvDocument? stored));
        Assert.Equal(3u, (stored.Flags >> 24) & 0x0f); // DataFormat.Binary
        Assert.Equal(body, stored.Value.ToArray());
    }

    [Fact]
    public async Task Replace_with_PreserveTtl_keeps_the_expiry_and_a_replace_without_it_clears_it()
    {
        await Collection.UpsertAsync("ttl", new { v = 1 }, options => options.Expiry(TimeSpan.FromHours(1)));
        Assert.True(_loopback.Server.TryGetDocument("ttl", out KvDocument? written));
        Assert.NotEqual(0u, written.Expiry);

        await Collection.ReplaceAsync("ttl", new { v = 2 }, options => options.PreserveTtl(true));
        Assert.True(_loopback.Server.TryGetDocument("ttl", out KvDocument? preserved));
        Assert.Equal(written.Expiry, preserved.Expiry);
        Assert.Contains("\"v\":2", System.Text.Encoding.UTF8.GetString(preserved.Value.Span), StringComparison.Ordinal);

        await Collection.ReplaceAsync("ttl", new { v = 3 });
        Assert.True(_loopback.Server.TryGetDocument("ttl", out KvDocument? cleared));
        Assert.Equal(0u, cleared.Expiry);
    }

    [Fact]
    public async Task A_server_older_than_7_0_makes_the_sdk_refuse_PreserveTtl_before_sending_it()
    {
        await using LoopbackCluster old = await LoopbackCluster.StartAsync(output, new CouchbaseLoopbackServerOptions { PreserveTtl = false });
        old.Server.PutDocument("ttl", "{\"v\":1}"u8.ToArray(), flags: 0x02000006, expiry: 1234);

        await Assert.ThrowsAsync<FeatureNotAvailableException>(() => old.Collection.ReplaceAsync("ttl", new { v = 2 }, options => options.PreserveTtl(true)));

        Assert.True(old.Server.TryGetDocument("ttl", out KvDocument? unchanged));
        Assert.Equal(1234u, unchanged.Expiry);
        Assert.DoesNotContain(old.Server.Commands, c => c.Name == "REPLACE");
        Assert.Empty(old.Server.ProtocolErrors);
    }

    [Fact]
    public async Task A_document_stored_on_the_server_with_json_flags_is_read_by_the_sdk()
    {
        ulong cas = _loopback.Server.PutDocument("legacy", """{"name":"Ada","n":3}"""u8.ToArray(), flags: 0x02000006);

        using IGetResult get = await Collection.GetAsync("legacy");

        Assert.Equal(cas, get.Cas);
        Assert.Equal(3L, Convert.ToInt64(get.ContentAs<Dictionary<string, object>>()!["n"], System.Globalization.CultureInfo.InvariantCulture));
    }

    [Fact]
    public async Task Insert_of_an_existing_key_throws_DocumentExistsException()
    {
        await Collection.InsertAsync("unique", new { v = 1 });

        await Assert.ThrowsAsync<DocumentExistsException>(() => Collection.InsertAsync("unique", new { v = 2 }));
        using IGetResult get = await Collection.GetAsync("unique");
        Assert.Equal(1L, Convert.ToInt64(get.ContentAs<Dictionary<string, object>>()!["v"], System.Globalization.CultureInfo.InvariantCulture));
    }

    [Fact]
    public async Task Missing_documents_throw_DocumentNotFoundException_on_get_replace_and_remove()
    {
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => Collection.GetAsync("missing"));
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => Collection.ReplaceAsync("missing", new { v = 1 }));
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => Collection.RemoveAsync("missing"));
        Assert.False(_loopback.Server.TryGetDocument("missing", out _));
    }

    [Fact]
    public async Task Replace_with_a_stale_cas_throws_CasMismatchException_and_with_the_current_cas_succeeds()
    {
        IMutationResult created = await Collection.UpsertAsync("cas", new { v = 1 });
        IMutationResult changed = await Collection.ReplaceAsync("cas", new { v = 2 });

        await Assert.ThrowsAsync<CasMismatchException>(() => Collection.ReplaceAsync("cas", new { v = 3 }, options => options.Cas(created.Cas)));
        IMutationResult replaced = await Collection.ReplaceAsync("cas", new { v = 4 }, options => options.Cas(changed.Cas));

        using IGetResult get = await Collection.GetAsync("cas");
        Assert.Equal(replaced.Cas, get.Cas);
        Assert.Equal(4L, Convert.ToInt64(get.ContentAs<Dictionary<string, object>>()!["v"], System.Globalization.CultureInfo.InvariantCulture));
    }

    [Fact]
    public async Task Remove_with_a_stale_cas_throws_CasMismatchException_and_remove_deletes()
    {
        IMutationResult created = await Collection.UpsertAsync("gone", new { v = 1 });
        await Collection.UpsertAsync("gone", new { v = 2 });

        await Assert.ThrowsAsync<CasMismatchException>(() => Collection.RemoveAsync("gone", options => options.Cas(created.Cas)));
        Assert.True(_loopback.Server.TryGetDocument("gone", out _));
        await Collection.RemoveAsync("gone");

        await Assert.ThrowsAsync<DocumentNotFoundException>(() => Collection.GetAsync("gone"));
        Assert.False(_loopback.Server.TryGetDocument("gone", out _));
    }

    [Fact]
    public async Task Sub_document_lookup_fails_clearly_as_an_unknown_command()
    {
        await Collection.UpsertAsync("sub", new { name = "Ada" });

        CouchbaseException error = await Assert.ThrowsAnyAsync<CouchbaseException>(
            () => Collection.LookupInAsync("sub", specs => specs.Get("name")));

        output.WriteLine(error.ToString());
        var context = Assert.IsType<KeyValueErrorContext>(error.Context);
        Assert.Equal(global::Couchbase.Core.IO.Operations.ResponseStatus.UnknownCommand, context.Status);
        KvUnknownCommand unknown = Assert.Single(_loopback.Server.UnknownCommands);
        Assert.Equal("SUBDOC_MULTI_LOOKUP", unknown.Name);
        Assert.Equal("sub", unknown.Key);
    }

    [Fact]
    public async Task Sub_document_mutation_fails_clearly_as_an_unknown_command()
    {
        await Collection.UpsertAsync("sub", new { name = "Ada" });

        CouchbaseException error = await Assert.ThrowsAnyAsync<CouchbaseException>(
            () => Collection.MutateInAsync("sub", specs => specs.Upsert("name", "Grace")));

        var context = Assert.IsType<KeyValueErrorContext>(error.Context);
        Assert.Equal(global::Couchbase.Core.IO.Operations.ResponseStatus.UnknownCommand, context.Status);
        Assert.Equal("SUBDOC_MULTI_MUTATION", Assert.Single(_loopback.Server.UnknownCommands).Name);
        using IGetResult get = await Collection.GetAsync("sub");
        Assert.Equal("Ada", get.ContentAs<Dictionary<string, object>>()!["name"].ToString());
    }
}
