using System.Text;
using System.Text.Json.Nodes;
using Compression.Testing.Couchbase;
using Couchbase.Client.Transactions;
using Couchbase.Client.Transactions.Config;
using Couchbase.Client.Transactions.Error;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>
/// SDK 3.9.5's distributed ACID transactions (<c>Couchbase.Client.Transactions</c>) on a plain collection of the loopback
/// server, end to end: the staged mutations (xattrs with macros, create-as-deleted, access-deleted lookups), the ATR and
/// the commit (REPLACE_BODY_WITH_XATTR and revive, or INSERT and a whole-body SET on a server without revive).
/// </summary>
public sealed class TransactionLoopbackTests(ITestOutputHelper output)
{
    // Generous: a loaded 2-core machine; the transaction expires (and fails) only after this long.
    private static readonly TimeSpan Expiration = TimeSpan.FromSeconds(60);

    private static TransactionsConfigBuilder Config(bool cleanup = false)
    {
        TransactionsConfigBuilder config = TransactionsConfigBuilder.Create().ExpirationTime(Expiration);
        return cleanup
            ? config
            : config.CleanupConfig(TransactionCleanupConfigBuilder.Create().CleanupLostAttempts(false).CleanupClientAttempts(false).Build());
    }

    private CouchbaseLoopbackServerOptions Options(bool reviveDocument = true) => new()
    {
        Collections = [new KvCollectionDefinition("inventory", "hotels")],
        ReviveDocument = reviveDocument,
        Log = new TestLog(output).Write,
    };

    [Fact]
    public async Task A_transaction_replaces_inserts_and_removes_in_the_default_collection_and_commits()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        await RunAndCheckCommitAsync(loopback, loopback.Collection, "_default", "_default", cleanup: false);

        // The commit went the way of a 7.1+ server: the staged body moved into place by REPLACE_BODY_WITH_XATTR, and the
        // insert's tombstone revived; no plain INSERT.
        Assert.Equal(0, loopback.Server.CommandCount(KvProtocol.Opcodes.Add));
        Assert.Contains(loopback.Server.KeysIn("_default", "_default"), k => k.StartsWith("_txn:atr-", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_transaction_commits_in_a_named_collection_with_cleanup_running()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        ICouchbaseCollection hotels = (await loopback.Bucket.ScopeAsync("inventory")).Collection("hotels");
        await RunAndCheckCommitAsync(loopback, hotels, "inventory", "hotels", cleanup: true);

        // With no metadata collection configured, the ATR is in the default collection of the document's bucket.
        Assert.Contains(loopback.Server.KeysIn("_default", "_default"), k => k.StartsWith("_txn:atr-", StringComparison.Ordinal));
        Assert.DoesNotContain(loopback.Server.KeysIn("inventory", "hotels"), k => k.StartsWith("_txn:", StringComparison.Ordinal));

        // Lost-attempts cleanup ran against the double: it created the placeholder client record (insert semantics,
        // DICT_ADD records.clients without create-path, and a whole-body SET of new byte?[] { null } through the
        // metadata transcoder: one zero byte, the SDK's "ExtBinaryMetadata").
        using var patience = new CancellationTokenSource(Expiration);
        await loopback.Server.WaitUntilAsync(s => s.TryGetDocument("_txn:client-record", out KvDocument? record) && record.Xattrs?.Contains("\"clients\"", StringComparison.Ordinal) == true, patience.Token);
        Assert.True(loopback.Server.TryGetDocument("_txn:client-record", out KvDocument? clientRecord));
        Assert.Equal(new byte[] { 0 }, clientRecord.Value.ToArray());
        output.WriteLine("client record xattrs: " + clientRecord.Xattrs);
    }

    /// <summary>
    /// A server without <c>subdoc.ReviveDocument</c>: the SDK commits the replace with a sub-document whole-body SET and
    /// the insert with a plain INSERT (ADD over the staged insert's tombstone). SDK 3.9.5 then writes the insert's staged
    /// bytes (a <c>byte[]</c> passed as <c>object</c>) through its JSON transcoder, so the committed body is a JSON string
    /// holding the staged JSON in base64 (DocumentRepository.UnstageInsertOrReplace, insert mode): an SDK bug, pinned here
    /// so that a fixed SDK shows up as this test failing.
    /// </summary>
    [Fact]
    public async Task Without_revive_document_the_sdk_commits_with_insert_and_a_whole_body_set_and_writes_the_insert_base64_encoded()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options(reviveDocument: false));
        await RunAndCheckCommitAsync(loopback, loopback.Collection, "_default", "_default", cleanup: false, insertCommittedAsBase64: true);

        Assert.True(loopback.Server.CommandCount(KvProtocol.Opcodes.Add) >= 1);
    }

    [Fact]
    public async Task A_transaction_that_throws_rolls_back_and_leaves_the_documents_unchanged()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        ICouchbaseCollection collection = loopback.Collection;
        await collection.UpsertAsync("hotel::1", new { name = "Grand", rooms = 10 });
        await collection.UpsertAsync("hotel::3", new { name = "Closing" });
        Assert.True(loopback.Server.TryGetDocument("hotel::1", out KvDocument? before1));
        Assert.True(loopback.Server.TryGetDocument("hotel::3", out KvDocument? before3));

        await using Transactions transactions = Transactions.Create(loopback.Cluster, Config());
        TransactionFailedException failed = await Assert.ThrowsAsync<TransactionFailedException>(() => transactions.RunAsync(async ctx =>
        {
            TransactionGetResult one = await ctx.GetAsync(collection, "hotel::1");
            await ctx.ReplaceAsync(one, new { name = "Grand", rooms = 11 });
            await ctx.InsertAsync(collection, "hotel::2", new { name = "New" });
            await ctx.RemoveAsync(await ctx.GetAsync(collection, "hotel::3"));
            throw new InvalidOperationException("the application changes its mind");
        }));

        output.WriteLine(failed.ToString());
        Assert.IsType<InvalidOperationException>(failed.InnerException);
        using (IGetResult one = await collection.GetAsync("hotel::1")) Assert.Equal(10, one.ContentAs<JObject>()!["rooms"]!.Value<int>());
        using (IGetResult three = await collection.GetAsync("hotel::3")) Assert.Equal("Closing", three.ContentAs<JObject>()!["name"]!.Value<string>());
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => collection.GetAsync("hotel::2"));

        // Bodies as they were and no staged mutation left behind (the rollback removed the txn xattrs).
        Assert.True(loopback.Server.TryGetDocument("hotel::1", out KvDocument? after1));
        Assert.True(loopback.Server.TryGetDocument("hotel::3", out KvDocument? after3));
        Assert.Equal(before1.Value.ToArray(), after1.Value.ToArray());
        Assert.Equal(before3.Value.ToArray(), after3.Value.ToArray());
        Assert.False(HasTxnXattr(after1));
        Assert.False(HasTxnXattr(after3));
        Assert.False(loopback.Server.TryGetDocument("hotel::2", out _));
        Assert.Empty(loopback.Server.UnknownCommands);
        Assert.Empty(loopback.Server.ProtocolErrors);
    }

    [Fact]
    public async Task A_transaction_sees_a_removed_document_as_missing_and_inserts_over_its_tombstone()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output, Options());
        ICouchbaseCollection collection = loopback.Collection;
        await collection.UpsertAsync("hotel::9", new { name = "Old" });
        await collection.RemoveAsync("hotel::9");
        Assert.True(loopback.Server.TryGetTombstone("hotel::9", out _));

        await using Transactions transactions = Transactions.Create(loopback.Cluster, Config());
        await transactions.RunAsync(async ctx =>
        {
            Assert.Null(await ctx.GetOptionalAsync(collection, "hotel::9")); // the access-deleted lookup finds the tombstone: no document
            await ctx.InsertAsync(collection, "hotel::9", new { name = "Reborn" });
        });

        using (IGetResult reborn = await collection.GetAsync("hotel::9")) Assert.Equal("Reborn", reborn.ContentAs<JObject>()!["name"]!.Value<string>());
        Assert.True(loopback.Server.TryGetDocument("hotel::9", out KvDocument? stored));
        Assert.False(HasTxnXattr(stored));
        Assert.False(loopback.Server.TryGetTombstone("hotel::9", out _));
        Assert.Empty(loopback.Server.UnknownCommands);
    }

    /// <summary>
    /// Seeds hotel::1 (replaced) and hotel::3 (removed), runs a transaction that gets and replaces hotel::1, inserts
    /// hotel::2 and removes hotel::3, and checks the committed state through the SDK and the server.
    /// </summary>
    private async Task RunAndCheckCommitAsync(LoopbackCluster loopback, ICouchbaseCollection collection, string scope, string name, bool cleanup, bool insertCommittedAsBase64 = false)
    {
        CouchbaseLoopbackServer server = loopback.Server;
        await collection.UpsertAsync("hotel::1", new { name = "Grand", rooms = 10 });
        await collection.UpsertAsync("hotel::3", new { name = "Closing" });

        await using (Transactions transactions = Transactions.Create(loopback.Cluster, Config(cleanup)))
        {
            TransactionResult result = await transactions.RunAsync(async ctx =>
            {
                TransactionGetResult one = await ctx.GetAsync(collection, "hotel::1");
                Assert.Equal(10, one.ContentAs<JObject>()!["rooms"]!.Value<int>());
                await ctx.ReplaceAsync(one, new { name = "Grand", rooms = 11 });
                await ctx.InsertAsync(collection, "hotel::2", new { name = "New", rooms = 2 });
                TransactionGetResult three = await ctx.GetAsync(collection, "hotel::3");
                await ctx.RemoveAsync(three);
            });
            Assert.True(result.UnstagingComplete);
        }

        using (IGetResult one = await collection.GetAsync("hotel::1")) Assert.Equal(11, one.ContentAs<JObject>()!["rooms"]!.Value<int>());
        using (IGetResult two = await collection.GetAsync("hotel::2"))
        {
            JObject inserted = insertCommittedAsBase64
                ? JObject.Parse(Encoding.UTF8.GetString(Convert.FromBase64String(two.ContentAs<string>()!)))
                : two.ContentAs<JObject>()!;
            Assert.Equal("New", inserted["name"]!.Value<string>());
        }

        await Assert.ThrowsAsync<DocumentNotFoundException>(() => collection.GetAsync("hotel::3"));
        Assert.False((await collection.ExistsAsync("hotel::3")).Exists);

        // On the server: the bodies are plain JSON, no txn xattr is left, the removed document is a tombstone.
        Assert.True(server.TryGetDocument(scope, name, "hotel::1", out KvDocument? stored1));
        Assert.True(server.TryGetDocument(scope, name, "hotel::2", out KvDocument? stored2));
        Assert.Equal(11, JsonNode.Parse(Encoding.UTF8.GetString(stored1.Value.Span))!["rooms"]!.GetValue<int>());
        string body2 = Encoding.UTF8.GetString(stored2.Value.Span);
        if (insertCommittedAsBase64) body2 = Encoding.UTF8.GetString(Convert.FromBase64String(JsonNode.Parse(body2)!.GetValue<string>()));
        Assert.Equal("New", JsonNode.Parse(body2)!["name"]!.GetValue<string>());
        Assert.False(HasTxnXattr(stored1));
        Assert.False(HasTxnXattr(stored2));
        Assert.False(server.TryGetDocument(scope, name, "hotel::3", out _));
        Assert.True(server.TryGetTombstone(scope, name, "hotel::3", out KvDocument? tombstone));
        Assert.False(HasTxnXattr(tombstone));
        Assert.DoesNotContain("hotel::3", server.KeysIn(scope, name));
        Assert.Contains("hotel::3", server.TombstonesIn(scope, name));
        Assert.Empty(server.UnknownCommands);
        Assert.Empty(server.ProtocolErrors);
    }

    private static bool HasTxnXattr(KvDocument document)
        => document.Xattrs is not null && JsonNode.Parse(document.Xattrs)!.AsObject().ContainsKey("txn");
}
