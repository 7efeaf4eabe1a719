using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase.Core.Exceptions;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Operations that do not touch a body pass through the compressed collection to the SDK's own, and those that return
/// one decode it (issue #39 item 3): exists, touch, get-and-touch, get-and-lock, unlock, replica reads; they answer for
/// compressed and plain documents alike.
/// </summary>
public sealed class PassThroughTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Exists_answers_for_compressed_plain_and_missing_documents()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("compressed", JObject.Parse("""{"title":"Heat","plot":"A group of professional bank robbers start to feel the heat from police."}"""));
        await data.Collection.UpsertAsync("plain", new JObject { ["title"] = "Ronin" });

        Assert.True((await compressed.ExistsAsync("compressed")).Exists);
        Assert.True((await compressed.ExistsAsync("plain")).Exists);
        Assert.False((await compressed.ExistsAsync("missing")).Exists);
        Assert.True(data.Server.TryGetDocument("compressed", out var stored) && stored.Flags == 0x03000001, "the document was not stored compressed");
    }

    private static readonly JObject Heat = JObject.Parse("""{"title":"Heat","plot":"A group of professional bank robbers start to feel the heat from police."}""");

    [Fact]
    public async Task Touch_sets_the_expiry_of_a_compressed_document_and_leaves_its_body_compressed()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? before));

        await compressed.TouchAsync("doc", TimeSpan.FromHours(1));
        IMutationResult? touched = await compressed.TouchWithCasAsync("doc", TimeSpan.FromHours(2));

        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? after));
        Assert.NotEqual(0u, after.Expiry);
        Assert.Equal(touched!.Cas, after.Cas);
        Assert.Equal(before.Value.ToArray(), after.Value.ToArray()); // the envelope as it was
        Assert.Equal(0x03000001u, after.Flags);
        using IGetResult read = await compressed.GetAsync("doc");
        Assert.Equal("Heat", read.ContentAs<JObject>()!["title"]!.ToString());
        await Assert.ThrowsAsync<DocumentNotFoundException>(() => compressed.TouchAsync("missing", TimeSpan.FromHours(1)));
    }

    [Fact]
    public async Task Get_and_touch_decodes_the_compressed_body_and_reads_a_plain_one()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("compressed", Heat);
        await data.Collection.UpsertAsync("plain", new JObject { ["title"] = "Ronin" });

        using IGetResult got = await compressed.GetAndTouchAsync("compressed", TimeSpan.FromMinutes(10));
        using IGetResult plain = await compressed.GetAndTouchAsync("plain", TimeSpan.FromMinutes(10));

        Assert.Equal(Heat.ToString(), got.ContentAs<JObject>()!.ToString());
        Assert.Equal("Ronin", plain.ContentAs<JObject>()!["title"]!.ToString());
        Assert.True(data.Server.TryGetDocument("compressed", out KvDocument? stored) && stored.Expiry != 0 && stored.Flags == 0x03000001);
        Assert.Equal(got.Cas, stored.Cas);
    }

    [Fact]
    public async Task Get_and_lock_decodes_and_the_lock_holds_until_its_cas_writes_or_unlock_releases_it()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);

        using (IGetResult locked = await compressed.GetAndLockAsync("doc", TimeSpan.FromSeconds(10)))
        {
            Assert.Equal("Heat", locked.ContentAs<JObject>()!["title"]!.ToString());
            Assert.True(data.Server.IsLocked("doc"));

            // Without the lock's CAS a write fails: the server says LOCKED, which the SDK retries until its timeout, or,
            // failing fast, raises as DocumentLockedException.
            await Assert.ThrowsAsync<DocumentLockedException>(() => compressed.ReplaceAsync("doc", new JObject { ["title"] = "Thief" },
                new ReplaceOptions().RetryStrategy(new global::Couchbase.Core.Retry.FailFastRetryStrategy())));

            // With it the write goes through, compressed, and releases the lock.
            await compressed.ReplaceAsync("doc", new JObject { ["title"] = "Thief" }, new ReplaceOptions().Cas(locked.Cas));
        }

        Assert.False(data.Server.IsLocked("doc"));
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? stored) && stored.Flags == 0x03000001);
        using IGetResult again = await compressed.GetAndLockAsync("doc", TimeSpan.FromSeconds(10));
        await compressed.UnlockAsync("doc", again.Cas);
        Assert.False(data.Server.IsLocked("doc"));
        await compressed.UpsertAsync("doc", Heat); // takes writes again
        using IGetResult read = await compressed.GetAsync("doc");
        Assert.Equal("Heat", read.ContentAs<JObject>()!["title"]!.ToString());
    }

    [Fact]
    public async Task Unlock_passes_through_and_a_wrong_cas_or_an_unlocked_document_fails_as_the_sdk_says()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);
        using IGetResult locked = await compressed.GetAndLockAsync("doc", TimeSpan.FromSeconds(10));

        await Assert.ThrowsAsync<CasMismatchException>(() => compressed.UnlockAsync("doc", locked.Cas + 1));
        Assert.True(data.Server.IsLocked("doc"));
        await compressed.UnlockAsync("doc", locked.Cas);
        Assert.False(data.Server.IsLocked("doc"));
        await Assert.ThrowsAsync<DocumentNotLockedException>(() => compressed.UnlockAsync("doc", locked.Cas));
    }

    [Fact]
    public async Task Replica_reads_decode_compressed_documents_from_any_and_every_replica()
    {
        var log = new TestLog(output);
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output, new CouchbaseLoopbackServerOptions { Replicas = 1, Log = log.Write });
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("compressed", Heat);
        await data.Collection.UpsertAsync("plain", new JObject { ["title"] = "Ronin" });

        using IGetReplicaResult any = await compressed.GetAnyReplicaAsync("compressed");
        Assert.Equal(Heat.ToString(), any.ContentAs<JObject>()!.ToString());

        IGetReplicaResult[] all = await Task.WhenAll(compressed.GetAllReplicasAsync("compressed"));
        try
        {
            Assert.Equal(2, all.Length); // the active copy and one replica
            Assert.Single(all, r => r.IsActive);
            Assert.All(all, r => Assert.Equal(Heat.ToString(), r.ContentAs<JObject>()!.ToString()));
        }
        finally
        {
            foreach (IGetReplicaResult result in all) result.Dispose();
        }

        using IGetReplicaResult plain = await compressed.GetAnyReplicaAsync("plain");
        Assert.Equal("Ronin", plain.ContentAs<JObject>()!["title"]!.ToString());
        Assert.True(data.Server.CommandCount(KvProtocol.Opcodes.GetReplica) >= 2);
    }
}
