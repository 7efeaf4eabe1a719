using System.Diagnostics;
using System.Globalization;
using Compression;
using Compression.Couchbase;
using Compression.Dictionaries;
using Couchbase.Core.IO.Transcoders;
using Couchbase.Extensions.DependencyInjection;
using Couchbase.KeyValue;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace CouchbaseSample;

/// <summary>No cluster answered at the configured address; the message names it and the cause, in one line.</summary>
internal sealed class ClusterUnreachableException(string message) : Exception(message);

/// <summary>What the sample measured.</summary>
internal sealed record SampleReport(int Documents, long JsonBytes, long PlainStoredBytes, long CompressedStoredBytes, int Mismatches, int? DictionaryVersion, int WithoutDictionary);

/// <summary>
/// Writes a JSON Lines corpus to a bucket twice, plain (<c>plain::N</c>) and compressed (<c>z::N</c>), reads the compressed
/// copy back and compares it with the plain one, and prints documents, stored bytes, bytes on the wire and dictionary versions.
/// The compressed side is a bulk load done as docs/dictionary-engine.md ("Bulk loads") says: a dictionary trained from
/// the documents before they are written, so none goes out without one and a run's figures do not depend on how far
/// background training got.
/// </summary>
internal static class SampleRunner
{
    /// <param name="configuration">Sections <c>Couchbase</c> (the SDK's ClusterOptions), <c>Sample</c> and <c>Compression</c>.</param>
    /// <param name="output">Where the report goes.</param>
    /// <param name="wire">Bytes sent and received so far by the server (a loopback server's counters); null prints n/a.</param>
    public static async Task<SampleReport> RunAsync(IConfiguration configuration, TextWriter output, Func<(long Sent, long Received)>? wire = null)
    {
        string bucketName = configuration["Sample:Bucket"] ?? "default";
        string corpus = configuration["Sample:Corpus"] ?? "samples/data/movies.jsonl";
        int limit = int.TryParse(configuration["Sample:Limit"], NumberStyles.Integer, CultureInfo.InvariantCulture, out int l) ? l : 0;

        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddConfiguration(configuration);
        builder.Services.AddCouchbase(builder.Configuration.GetSection("Couchbase"));
        builder.Services.AddDocumentCompression(builder.Configuration).AddCouchbase(bucketName);
        using IHost host = builder.Build();
        bool started = false;
        try
        {
            var buckets = host.Services.GetRequiredService<IBucketProvider>();
            ICouchbaseCollection plain;
            try
            {
                plain = (await buckets.GetBucketAsync(bucketName).ConfigureAwait(false)).DefaultCollection();
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                string address = configuration["Couchbase:ConnectionString"] ?? "couchbase://localhost";
                // The SDK says only that the cluster did not bootstrap; a connection to the first node says why.
                string why = await ProbeAsync(address).ConfigureAwait(false) ?? Innermost(ex).Message;
                throw new ClusterUnreachableException(
                    $"no Couchbase cluster answered at {address} (bucket '{bucketName}'): {why}. " +
                    "Start one, pass Couchbase:ConnectionString=..., or run with --loopback (an in-process test double).");
            }
            // Started once the cluster answered: start-up creates and checks the dictionaries' collection (docs/couchbase.md).
            await host.StartAsync().ConfigureAwait(false);
            started = true;
            ICouchbaseCollection compressed = await host.Services.GetRequiredService<CompressedCollectionProvider>().GetCollectionAsync(bucketName).ConfigureAwait(false);
            CompressionNamespace ns = compressed.GetCompressingTranscoder()!.Namespace;

            List<JObject> docs = [];
            long jsonBytes = 0;
            foreach (string line in File.ReadLines(corpus))
            {
                if (string.IsNullOrWhiteSpace(line)) continue;
                using var reader = new JsonTextReader(new StringReader(line)) { DateParseHandling = DateParseHandling.None };
                docs.Add(JObject.Load(reader));
                jsonBytes += System.Text.Encoding.UTF8.GetByteCount(line);
                if (limit > 0 && docs.Count >= limit) break;
            }
            output.WriteLine($"Corpus {corpus}: {docs.Count} documents, {jsonBytes:N0} bytes of JSON; bucket '{bucketName}', namespace '{ns.Name}' ({ns.Codec})");
            output.WriteLine();
            output.WriteLine($"{"phase",-34} {"documents",9} {"ms",7} {"wire sent",12} {"wire received",14}  dictionary");

            // Both sides warm up (connections, the SDK's first-use costs) before anything is timed.
            await plain.UpsertAsync("warm-up", new JObject()).ConfigureAwait(false);
            await compressed.UpsertAsync("warm-up", new JObject()).ConfigureAwait(false);
            await plain.RemoveAsync("warm-up").ConfigureAwait(false);

            await Phase("plain upsert", docs.Count, output, wire, async () =>
            {
                for (int i = 0; i < docs.Count; i++) await plain.UpsertAsync($"plain::{i}", docs[i]).ConfigureAwait(false);
            }, ns).ConfigureAwait(false);
            // A bulk load: the dictionary is trained from the documents before they are written (the JSON each one is
            // compressed as). Training from all of them also means the writes below do not retrain while they run.
            TrainingResult training = await compressed.TrainCompressionAsync(docs).ConfigureAwait(false);
            output.WriteLine($"{"  trained from the documents",-34} {training.Outcome}");
            await Phase("compressed upsert", docs.Count, output, wire, async () =>
            {
                for (int i = 0; i < docs.Count; i++) await compressed.UpsertAsync($"z::{i}", docs[i]).ConfigureAwait(false);
            }, ns).ConfigureAwait(false);
            await Phase("plain get", docs.Count, output, wire, async () =>
            {
                for (int i = 0; i < docs.Count; i++) (await plain.GetAsync($"plain::{i}").ConfigureAwait(false)).Dispose();
            }, ns).ConfigureAwait(false);
            int mismatches = 0;
            await Phase("compressed get", docs.Count, output, wire, async () =>
            {
                for (int i = 0; i < docs.Count; i++)
                {
                    using IGetResult read = await compressed.GetAsync($"z::{i}").ConfigureAwait(false);
                    if (!JToken.DeepEquals(docs[i], read.ContentAs<JObject>())) mismatches++;
                }
            }, ns).ConfigureAwait(false);

            long plainStored = 0, compressedStored = 0;
            int withoutDictionary = 0;
            var raw = new RawBinaryTranscoder();
            for (int i = 0; i < docs.Count; i++)
            {
                using (IGetResult p = await plain.GetAsync($"plain::{i}", new GetOptions().Transcoder(raw)).ConfigureAwait(false)) plainStored += p.ContentAs<byte[]>()!.Length;
                using IGetResult z = await plain.GetAsync($"z::{i}", new GetOptions().Transcoder(raw)).ConfigureAwait(false);
                byte[] body = z.ContentAs<byte[]>()!;
                compressedStored += body.Length;
                if (!DocumentEnvelope.TryReadHeader(body, out EnvelopeHeader header) || header.DictionaryId is null) withoutDictionary++;
            }
            output.WriteLine();
            output.WriteLine($"Stored bodies: plain {plainStored:N0} bytes, compressed {compressedStored:N0} bytes ({(double)plainStored / Math.Max(1, compressedStored):F2}x)");
            output.WriteLine($"Dictionary: {(ns.CurrentDictionary is { } d ? $"version {d.Version}, id {d.Id}, {d.Content.Length:N0} bytes, {d.SampleCount} samples, ratio {d.Ratio:F2} on held-out documents" : "none")}");
            output.WriteLine($"Written without a dictionary: {withoutDictionary} of {docs.Count} compressed documents");
            output.WriteLine($"Read back: {docs.Count - mismatches} of {docs.Count} compressed documents equal to the originals");
            return new SampleReport(docs.Count, jsonBytes, plainStored, compressedStored, mismatches, ns.CurrentDictionary?.Version, withoutDictionary);
        }
        finally
        {
            if (started) await host.StopAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Why the first node of <paramref name="connectionString"/> does not take a connection on its key-value port (11210,
    /// 11207 for couchbases://, or the port given), in a few words; null when it does (the SDK's reason stands then).
    /// </summary>
    private static async Task<string?> ProbeAsync(string connectionString)
    {
        bool tls = connectionString.StartsWith("couchbases://", StringComparison.OrdinalIgnoreCase);
        string hosts = connectionString[(connectionString.IndexOf("://", StringComparison.Ordinal) is int s and >= 0 ? s + 3 : 0)..];
        string first = hosts.Split(',', '/', '?')[0];
        int colon = first.LastIndexOf(':');
        string host = colon > 0 ? first[..colon] : first;
        int port = colon > 0 && int.TryParse(first[(colon + 1)..], NumberStyles.None, CultureInfo.InvariantCulture, out int p) ? p : tls ? 11207 : 11210;
        using var client = new System.Net.Sockets.TcpClient();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        try
        {
            await client.ConnectAsync(host, port, timeout.Token).ConfigureAwait(false);
            return null;
        }
        catch (OperationCanceledException)
        {
            return $"{host}:{port} did not answer within 10 s";
        }
        catch (System.Net.Sockets.SocketException socket)
        {
            return $"{host}:{port}: {socket.Message}";
        }
    }

    private static Exception Innermost(Exception ex)
    {
        while (true)
        {
            Exception? next = ex is AggregateException { InnerExceptions.Count: > 0 } all ? all.InnerExceptions[0] : ex.InnerException;
            if (next is null) return ex;
            ex = next;
        }
    }

    private static async Task Phase(string name, int count, TextWriter output, Func<(long Sent, long Received)>? wire, Func<Task> run, CompressionNamespace ns)
    {
        (long sent, long received) before = wire?.Invoke() ?? default;
        var watch = Stopwatch.StartNew();
        await run().ConfigureAwait(false);
        watch.Stop();
        string sent = "n/a", received = "n/a";
        if (wire is not null)
        {
            (long s, long r) = wire();
            // The server's counters: what it received is what the client sent.
            sent = (r - before.received).ToString("N0", CultureInfo.InvariantCulture);
            received = (s - before.sent).ToString("N0", CultureInfo.InvariantCulture);
        }
        output.WriteLine($"{name,-34} {count,9} {watch.ElapsedMilliseconds,7} {sent,12} {received,14}  {(ns.CurrentDictionary is { } d ? $"v{d.Version}" : "none")}");
    }
}
