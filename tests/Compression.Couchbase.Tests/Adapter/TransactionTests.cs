using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase.Client.Transactions;
using Couchbase.Client.Transactions.Config;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// The SDK's distributed transactions through the compressed collection (issue #39 item 3). A transaction reads a
/// document with one sub-document lookup of its xattrs and its whole body (<c>GetFull</c>), which the compressed
/// collection decodes in the result; it stages its writes in xattrs (plain JSON, as every client stages them) and commits
/// with <c>ReplaceBodyWithXattr</c>, which makes the staged JSON the body: a document a transaction writes is stored
/// plain, readable by every client, and compressed again by its next write through the compressed collection.
/// </summary>
public sealed class TransactionTests(ITestOutputHelper output)
{
    private static readonly JObject Heat = JObject.Parse("""{"title":"Heat","year":1995,"genres":["Crime","Drama"]}""");
    private static readonly JObject Thief = JObject.Parse("""{"title":"Thief","year":1981,"genres":["Crime"]}""");
    private static readonly JObject Collateral = JObject.Parse("""{"title":"Collateral","year":2004}""");

    [Fact]
    public async Task A_transaction_reads_compressed_documents_decoded_replaces_inserts_and_removes_and_every_client_reads_the_result()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("heat", Heat);
        await compressed.UpsertAsync("gone", Thief);
        Assert.True(data.Server.TryGetDocument("heat", out KvDocument? before) && DocumentEnvelope.IsEnvelope(before.Value.Span));

        JObject? read = null;
        await using Transactions transactions = Transactions(data);
        TransactionResult result = await transactions.RunAsync(async ctx =>
        {
            TransactionGetResult heat = await ctx.GetAsync(compressed, "heat");
            read = heat.ContentAs<JObject>();
            JObject changed = (JObject)read!.DeepClone();
            changed["year"] = 1996;
            await ctx.ReplaceAsync(heat, changed);
            await ctx.InsertAsync(compressed, "new", Collateral);
            await ctx.RemoveAsync(await ctx.GetAsync(compressed, "gone"));
        });

        output.WriteLine($"transaction {result.TransactionId}: unstaging complete {result.UnstagingComplete}");
        Assert.Equal(Heat.ToString(), read!.ToString());
        JObject expected = (JObject)Heat.DeepClone();
        expected["year"] = 1996;
        using (IGetResult heat = await compressed.GetAsync("heat")) Assert.Equal(expected.ToString(), heat.ContentAs<JObject>()!.ToString());
        using (IGetResult added = await compressed.GetAsync("new")) Assert.Equal(Collateral.ToString(), added.ContentAs<JObject>()!.ToString());
        using (IGetResult plain = await data.Collection.GetAsync("heat")) Assert.Equal(expected.ToString(), plain.ContentAs<JObject>()!.ToString());
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => compressed.GetAsync("gone"));
        // Committed by ReplaceBodyWithXattr: the staged JSON is the body, stored plain, with no transaction metadata left.
        Assert.True(data.Server.TryGetDocument("heat", out KvDocument? committed));
        output.WriteLine($"committed: flags 0x{committed.Flags:x8}, body {System.Text.Encoding.UTF8.GetString(committed.Value.Span)}");
        Assert.False(DocumentEnvelope.IsEnvelope(committed.Value.Span));
        Assert.Equal(expected.ToString(), JObject.Parse(System.Text.Encoding.UTF8.GetString(committed.Value.Span)).ToString());
        Assert.Null(committed.Xattrs);

        await compressed.ReplaceAsync("heat", expected); // its next write through the compressed collection compresses it again
        Assert.True(data.Server.TryGetDocument("heat", out KvDocument? rewritten) && DocumentEnvelope.IsEnvelope(rewritten.Value.Span));
    }

    [Fact]
    public async Task A_transaction_that_fails_in_its_lambda_changes_nothing_in_the_compressed_collection()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("heat", Heat);
        Assert.True(data.Server.TryGetDocument("heat", out KvDocument? before));

        await using Transactions transactions = Transactions(data);
        await Assert.ThrowsAnyAsync<Exception>(() => transactions.RunAsync(async ctx =>
        {
            TransactionGetResult heat = await ctx.GetAsync(compressed, "heat");
            await ctx.ReplaceAsync(heat, Thief);
            await ctx.InsertAsync(compressed, "new", Collateral);
            throw new InvalidOperationException("the application changed its mind");
        }));

        Assert.True(data.Server.TryGetDocument("heat", out KvDocument? after));
        Assert.Equal(before.Value.ToArray(), after.Value.ToArray());
        Assert.Null(after.Xattrs);
        using (IGetResult heat = await compressed.GetAsync("heat")) Assert.Equal(Heat.ToString(), heat.ContentAs<JObject>()!.ToString());
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => compressed.GetAsync("new"));
    }

    [Fact]
    public async Task On_a_server_without_ReplaceBodyWithXattr_a_transaction_commits_replaces_compressed_under_the_flags_the_documents_had()
    {
        // Before 7.1 (no subdoc.ReviveDocument), SDK 3.9.5 commits a replace with a sub-document SetDoc of the value given
        // to ReplaceAsync, which the compressed collection writes through its transcoder: an envelope. The server keeps the
        // document's flags (the SDK sends none before the binary-xattr feature): binary for a compressed one, JSON for a
        // legacy one, under which the envelope is known by its header. (Its commit of an insert there is an SDK bug,
        // plain collection or not: the staged bytes are written as a base64 JSON string; the double's README.)
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output, new CouchbaseLoopbackServerOptions { ReviveDocument = false });
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("heat", Heat);
        await data.Collection.UpsertAsync("legacy", Thief); // plain, JSON flags
        await using Transactions transactions = Transactions(data);

        TransactionResult result = await transactions.RunAsync(async ctx =>
        {
            await ctx.ReplaceAsync(await ctx.GetAsync(compressed, "heat"), Thief);
            await ctx.ReplaceAsync(await ctx.GetAsync(compressed, "legacy"), Heat);
        });

        Assert.True(result.UnstagingComplete);
        foreach ((string key, JObject expected, uint flags) in new[] { ("heat", Thief, 0x03000001u), ("legacy", Heat, 0x02000001u) })
        {
            Assert.True(data.Server.TryGetDocument(key, out KvDocument? stored));
            output.WriteLine($"{key}: flags 0x{stored.Flags:x8}, body {System.Text.Encoding.UTF8.GetString(stored.Value.Span)}");
            Assert.Equal(flags, stored.Flags);
            Assert.True(DocumentEnvelope.IsEnvelope(stored.Value.Span), key);
            Assert.Null(stored.Xattrs);
            using IGetResult read = await compressed.GetAsync(key);
            Assert.Equal(expected.ToString(), read.ContentAs<JObject>()!.ToString());
        }
    }

    private static Transactions Transactions(LoopbackCluster data) => global::Couchbase.Client.Transactions.Transactions.Create(data.Cluster,
        TransactionsConfigBuilder.Create()
            .ExpirationTime(TimeSpan.FromSeconds(60))
            .CleanupConfig(TransactionCleanupConfigBuilder.Create().CleanupLostAttempts(false).CleanupClientAttempts(false).Build()));
}
