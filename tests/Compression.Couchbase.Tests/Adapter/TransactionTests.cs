using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Couchbase.Client.Transactions;
using Couchbase.Client.Transactions.Config;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// The SDK's distributed transactions through the compressed collection (issue #39 item 3). A transaction reads a document
/// with a sub-document lookup of its xattrs and its whole body (<c>GetFull</c>), which the compressed collection refuses:
/// the body it would hand the transaction is an envelope the transaction's own transcoder cannot read, and on commit
/// it would write the staged body plain, past our transcoder (<c>ReplaceBodyWithXattr</c>).
/// </summary>
public sealed class TransactionTests(ITestOutputHelper output)
{
    [Fact]
    public async Task A_transaction_reading_through_the_compressed_collection_fails_with_the_collections_refusal_and_changes_nothing()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", new JObject { ["title"] = "Heat" });
        Assert.True(data.Server.TryGetDocument("doc", out var before));

        var transactions = Transactions.Create(data.Cluster, TransactionsConfigBuilder.Create()
            .ExpirationTime(TimeSpan.FromSeconds(5))
            .CleanupConfig(TransactionCleanupConfigBuilder.Create().CleanupLostAttempts(false).CleanupClientAttempts(false).Build()));
        Exception error = await Assert.ThrowsAnyAsync<Exception>(() => transactions.RunAsync(async ctx =>
        {
            TransactionGetResult doc = await ctx.GetAsync(compressed, "doc");
            await ctx.ReplaceAsync(doc, new JObject { ["title"] = "Thief" });
        }));

        output.WriteLine(error.ToString());
        NotSupportedException refusal = Assert.IsType<NotSupportedException>(Find(error));
        Assert.Contains("whole body", refusal.Message, StringComparison.Ordinal);
        Assert.True(data.Server.TryGetDocument("doc", out var after));
        Assert.Equal(before.Cas, after.Cas);
    }

    private static Exception? Find(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is NotSupportedException) return e;
        }
        return null;
    }
}
