using System.Text.Json;
using Compression.MongoDB;
using Compression.Tool.Backends.MongoDB;
using Compression.Tool.Live;
using MongoDB.Bson;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>Runs a child <c>docz</c> through a <see cref="KillSwitchProxy"/>, killed at seeded random operation boundaries until a run ends.</summary>
internal static class KilledRuns
{
    /// <summary>
    /// Starts the child again and again, each run armed to be killed at a random counted command from 1 to
    /// <paramref name="maxKillAt"/> (before the request reaches the server, or after its reply was lost), until a run
    /// ends before its kill; that run must exit 0. Returns its first namespace's summary; every kill's place is added to
    /// <paramref name="kills"/>. A child that runs past <see cref="RunGuard"/> is a hang (a defect); the whole series is
    /// bounded by its run count and by <paramref name="cancellationToken"/>, never by the machine's speed: under load the
    /// series takes longer, it does not fail.
    /// </summary>
    /// <summary>How long one child run may take before it counts as hung: minutes, where a run takes seconds.</summary>
    public static readonly TimeSpan RunGuard = TimeSpan.FromMinutes(5);

    public static async Task<JsonElement> RunUntilDoneAsync(KillSwitchProxy proxy, List<string> kills, Random random, int maxKillAt,
        CancellationToken cancellationToken, params string[] args)
    {
        for (int run = 1; ; run++)
        {
            Assert.True(run <= 300, $"docz {args[0]} did not finish in 300 runs ({kills.Count} kills)");
            using ChildDocz child = ChildDocz.Start(args);
            proxy.Arm(random.Next(1, maxKillAt + 1), random.Next(2) == 0, child.Kill);
            using var runGuard = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            runGuard.CancelAfter(RunGuard);
            int exit;
            string output, error;
            try
            {
                (exit, output, error) = await child.WaitAsync(runGuard.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new Xunit.Sdk.XunitException($"run {run}: docz {args[0]} ran past {RunGuard.TotalMinutes} minutes: a hang ({kills.Count} kills before it)");
            }
            string? killedAt = proxy.KilledAt;
            proxy.Arm(0, false, null);
            proxy.DropAll();
            if (killedAt is not null)
            {
                kills.Add(killedAt);
                continue;
            }
            Assert.True(exit == 0, $"run {run}: exit {exit}: {error}{output}");
            return JsonDocument.Parse(output).RootElement.GetProperty("namespaces")[0].Clone();
        }
    }
}

/// <summary>Interrupts a rewrite in process, before its second batch is written (its first batch and checkpoint are kept).</summary>
internal static class RewriteInterruption
{
    public static async Task AtSecondBatchAsync(string config, RewriteMode mode, BsonDocument? filter = null)
    {
        var settings = new LiveSettings { ConfigPath = config, BatchSize = 5 };
        await using MongoSession session = MongoSession.Open(settings);
        MongoNamespace live = Assert.Single(session.Namespaces);
        StoredDocumentCodec codec = await session.OpenAsync(live, CancellationToken.None);
        int batches = 0;
        var rewriter = new CollectionRewriter(session, live, codec, new RewriteOptions { Mode = mode }, settings, filter)
        {
            BeforeWrite = _ => ++batches == 2 ? throw new IOException("interrupted (test)") : Task.CompletedTask,
        };
        await Assert.ThrowsAsync<IOException>(() => rewriter.RunAsync(new LiveOutput(TextWriter.Null, TextWriter.Null, settings), CancellationToken.None));
    }
}
