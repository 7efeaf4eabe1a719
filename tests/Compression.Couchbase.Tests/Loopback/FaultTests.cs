using System.Collections.Concurrent;
using Compression.Testing.Couchbase;
using Couchbase;
using Couchbase.Core.Exceptions;
using Couchbase.KeyValue;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Loopback;

/// <summary>Faults on demand (dropped, stalled and refused connections; restarts) with the real SDK as the client.</summary>
public sealed class FaultTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Connections_dropped_mid_load_are_reopened_by_the_sdk_and_every_acknowledged_write_is_readable()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        const int writers = 8;
        const int perWriter = 150;
        const int dropAfter = 300;
        long acceptedBefore = loopback.Server.ConnectionsAccepted;
        var acknowledged = new ConcurrentDictionary<string, ulong>();
        var failures = new ConcurrentQueue<Exception>();
        int completed = 0;

        await Task.WhenAll(Enumerable.Range(0, writers).Select(writer => Task.Run(async () =>
        {
            for (int i = 0; i < perWriter; i++)
            {
                string key = $"load::{writer}::{i}";
                try
                {
                    IMutationResult result = await loopback.Collection.UpsertAsync(key, new { writer, i });
                    acknowledged[key] = result.Cas;
                }
                catch (CouchbaseException e)
                {
                    failures.Enqueue(e);
                }

                if (Interlocked.Increment(ref completed) == dropAfter)
                {
                    loopback.Server.DropAllConnections();
                }
            }
        })));

        foreach (IGrouping<string, Exception> kind in failures.GroupBy(e => e.GetType().Name))
        {
            output.WriteLine($"{kind.Count()} x {kind.Key}: {kind.First().Message}");
        }

        output.WriteLine($"{acknowledged.Count} acknowledged, {failures.Count} failed, connections accepted {acceptedBefore} -> {loopback.Server.ConnectionsAccepted}");
        Assert.True(loopback.Server.ConnectionsAccepted > acceptedBefore, "the SDK did not reconnect");
        // Upserts are not idempotent, so only the ones in flight when the sockets closed may fail (at most one per writer).
        Assert.True(failures.Count <= writers, $"{failures.Count} writes failed");
        Assert.All(failures, e => Assert.True(e is RequestCanceledException or AmbiguousTimeoutException, e.ToString()));
        Assert.Equal(writers * perWriter, acknowledged.Count + failures.Count);
        foreach ((string key, ulong cas) in acknowledged)
        {
            Assert.True(loopback.Server.TryGetDocument(key, out KvDocument? stored), key);
            Assert.Equal(cas, stored.Cas);
        }

        using IGetResult last = await loopback.Collection.GetAsync($"load::{writers - 1}::{perWriter - 1}");
        Assert.Equal(perWriter - 1, last.ContentAs<Dictionary<string, object>>()!["i"] is var v ? Convert.ToInt32(v, System.Globalization.CultureInfo.InvariantCulture) : -1);
    }

    [Fact]
    public async Task Stalled_replies_time_out_in_the_sdk_and_operations_work_again_once_replies_flow()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        await loopback.Collection.UpsertAsync("stall", new { v = 1 });

        loopback.Server.StallReplies = true;
        await Assert.ThrowsAnyAsync<global::Couchbase.Core.Exceptions.TimeoutException>(
            () => loopback.Collection.GetAsync("stall", options => options.Timeout(TimeSpan.FromMilliseconds(500))));
        Assert.True(loopback.Server.StallReplies);
        loopback.Server.StallReplies = false;

        using IGetResult get = await loopback.Collection.GetAsync("stall", options => options.Timeout(Patience));
        Assert.Equal(1, Convert.ToInt32(get.ContentAs<Dictionary<string, object>>()!["v"], System.Globalization.CultureInfo.InvariantCulture));
    }

    [Fact]
    public async Task Refused_connections_fail_the_sdks_bootstrap_until_the_server_accepts_again()
    {
        var log = new TestLog(output);
        await using CouchbaseLoopbackServer server = await CouchbaseLoopbackServer.StartAsync(new CouchbaseLoopbackServerOptions { Log = log.Write });
        ClusterOptions options = LoopbackCluster.Options(server, log);
        options.KvConnectTimeout = TimeSpan.FromSeconds(1);

        server.RefuseConnections = true; // every connection is reset as soon as it is accepted
        Exception refused = await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using ICluster cluster = await Cluster.ConnectAsync(server.ConnectionString, options);
            IBucket bucket = await cluster.BucketAsync(server.BucketName);
            await bucket.DefaultCollection().GetAsync("any", o => o.Timeout(TimeSpan.FromSeconds(1)));
        });
        output.WriteLine($"while refusing: {refused.GetType().Name}: {refused.Message}");
        // The SDK's Cluster.BucketAsync builds its AggregateException from a List<Exception> that its bootstrap loop clears
        // and fills at the same time (Cluster.cs, _deferredExceptions, 3.9.5): now and then the copy holds a null ("An
        // element of innerExceptions was null.") or the list grows while it is copied ("Destination array was not long
        // enough."), and the AggregateException's constructor throws ArgumentException instead. It is still the failed
        // bootstrap this test shows; the race is the SDK's. Recognized by where it is thrown, not by its message.
        bool sdkListRace = refused is ArgumentException
            && refused.StackTrace?.Contains("System.AggregateException..ctor", StringComparison.Ordinal) == true
            && refused.StackTrace.Contains("Couchbase.Cluster.BucketAsync", StringComparison.Ordinal);
        Assert.True(refused is AggregateException or CouchbaseException || sdkListRace, refused.ToString());
        Assert.True(server.ConnectionsRefused > 0);
        Assert.Equal(0, server.ConnectionsAccepted);

        server.RefuseConnections = false;
        // A new ClusterOptions: the SDK keeps state in the instance a cluster was made from.
        await using ICluster accepted = await Cluster.ConnectAsync(server.ConnectionString, LoopbackCluster.Options(server, log));
        IBucket reachable = await accepted.BucketAsync(server.BucketName);
        IMutationResult result = await reachable.DefaultCollection().UpsertAsync("after-refusal", new { v = 1 });
        Assert.NotEqual(0UL, result.Cas);
        Assert.True(server.ConnectionsAccepted > 0);
    }

    [Fact]
    public async Task A_restart_on_the_same_port_keeps_the_documents_and_the_sdk_reconnects()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        IMutationResult written = await loopback.Collection.UpsertAsync("survivor", new { v = 42 });
        int port = loopback.Server.Port;

        await loopback.Server.StopAsync();
        Assert.False(loopback.Server.IsRunning);
        Assert.Equal(0, loopback.Server.OpenConnections);
        await loopback.Server.StartAsync();

        Assert.Equal(port, loopback.Server.Port);
        // The SDK may cancel a request it dispatched while its connections were being re-established (seen in CI:
        // RequestCanceledException 455 ms after the restart); an application retries such a read, and so does this test.
        IGetResult? got = null;
        for (int attempt = 1; got is null; attempt++)
        {
            try
            {
                got = await loopback.Collection.GetAsync("survivor", options => options.Timeout(Patience));
            }
            catch (global::Couchbase.Core.Exceptions.RequestCanceledException) when (attempt < 5)
            {
                output.WriteLine($"attempt {attempt}: request canceled while the SDK reconnected; retrying");
            }
        }
        using IGetResult get = got;
        Assert.Equal(written.Cas, get.Cas);
        Assert.Equal(42, Convert.ToInt32(get.ContentAs<Dictionary<string, object>>()!["v"], System.Globalization.CultureInfo.InvariantCulture));
        IMutationResult after = await loopback.Collection.UpsertAsync("survivor", new { v = 43 }, options => options.Timeout(Patience));
        Assert.True(after.Cas > written.Cas, "CAS must stay monotonic across a restart");
    }

    [Fact]
    public async Task Byte_counters_count_request_and_reply_bytes_on_the_wire()
    {
        await using LoopbackCluster loopback = await LoopbackCluster.StartAsync(output);
        byte[] body = new byte[10_000];
        new Random(7).NextBytes(body);
        var raw = new global::Couchbase.Core.IO.Transcoders.RawBinaryTranscoder();
        await loopback.Collection.UpsertAsync("warm", new { v = 1 });

        long inBefore = loopback.Server.BytesReceived;
        await loopback.Collection.UpsertAsync("big", body, options => options.Transcoder(raw));
        long upsertIn = loopback.Server.BytesReceived - inBefore;
        long outBefore = loopback.Server.BytesSent;
        using IGetResult get = await loopback.Collection.GetAsync("big", options => options.Transcoder(raw));
        long getOut = loopback.Server.BytesSent - outBefore;

        output.WriteLine($"upsert of {body.Length} B: {upsertIn} B in; get: {getOut} B out");
        // header 24 + extras 8 + key 3 + body; background config polls may add a few small requests.
        Assert.InRange(upsertIn, 24 + 8 + 3 + body.Length, 24 + 8 + 3 + body.Length + 1_000);
        Assert.InRange(getOut, 24 + 4 + body.Length, 24 + 4 + body.Length + 40_000);
        Assert.Equal(body, get.ContentAs<byte[]>());
    }
}
