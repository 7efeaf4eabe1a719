using System.Text;
using Compression.Dictionaries;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>
/// <c>cat</c>, <c>export</c> and <c>import</c> as every database runs them (docs/docz.md, "cat", "export and import"):
/// one namespace, its documents decoded to JSON Lines and back. A database provides its query, its scan after a key,
/// its JSON form of a document and its write of one (<see cref="LiveCollection{TDocument}"/>); the flow, the files
/// and the checkpoints (<see cref="TransferCheckpoint"/>) are here.
/// </summary>
internal abstract partial class LiveBackend<TSession, TNamespace, TDocument>
{
    /// <summary>The checkpoint of an export, beside its file.</summary>
    public static string ExportCheckpointPath(string file) => file + ".docz-checkpoint";

    /// <summary>The checkpoint of an import of <paramref name="file"/> into <paramref name="ns"/>, beside the file.</summary>
    public static string ImportCheckpointPath(string file, string ns) => $"{file}.docz-import-{ns}.checkpoint";

    public async Task<int> CatAsync(LiveSettings settings, DocumentQuery query, long limit, TextWriter documents, LiveOutput console,
        CancellationToken cancellationToken)
    {
        await using TSession session = Open(settings, @override: null);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        LiveCollection<TDocument> collection = await OpenOneAsync(session, "cat", cancellationToken).ConfigureAwait(false);
        BatchScan<TDocument> scan = await collection.FindAsync(query, limit, (int)Math.Min(settings.BatchSize, limit), cancellationToken).ConfigureAwait(false);
        long read = 0, failed = 0;
        await foreach (IReadOnlyList<TDocument> batch in scan.Batches.ConfigureAwait(false))
        {
            foreach (TDocument document in batch)
            {
                if (read == limit) break;
                read++;
                string line;
                try
                {
                    line = await collection.ToJsonLineAsync(document, cancellationToken).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                {
                    failed++;
                    await console.Error.WriteLineAsync($"cat: {collection.Describe(document)} cannot be read: {LiveRunner.FirstLine(ex.Message)}").ConfigureAwait(false);
                    continue;
                }
                await documents.WriteAsync(line).ConfigureAwait(false);
                await documents.WriteAsync('\n').ConfigureAwait(false);
            }
            await documents.FlushAsync(cancellationToken).ConfigureAwait(false);
            if (read == limit) break;
        }
        if (failed > 0) await console.Error.WriteLineAsync($"cat: {failed:N0} of {read:N0} document(s) cannot be read (named above; not printed).").ConfigureAwait(false);
        return failed > 0 ? 1 : 0;
    }

    public async Task<int> ExportAsync(LiveSettings settings, TransferOptions options, LiveOutput console, CancellationToken cancellationToken)
    {
        await using TSession session = Open(settings, @override: null);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        LiveCollection<TDocument> collection = await OpenOneAsync(session, "export", cancellationToken).ConfigureAwait(false);
        string path = ExportCheckpointPath(options.File);
        TransferCheckpoint checkpoint = TransferCheckpoint.Load(path, "export", collection.Name, options.File, options.Restart);
        if (!checkpoint.Resumed && File.Exists(options.File) && !options.Restart)
            throw new UsageException($"--to {options.File} exists and no unfinished export of {collection.Name} into it does: remove it, or give --restart to overwrite it.");

        await using var stream = new FileStream(options.File, checkpoint.Resumed ? FileMode.Open : FileMode.Create, FileAccess.Write, FileShare.Read);
        if (checkpoint.Resumed)
        {
            // Lines written after the last checkpoint (a batch, a torn line) are cut off: the scan writes them again.
            if (stream.Length < checkpoint.Bytes)
                throw new InvalidDataException($"--to {options.File} has {stream.Length:N0} bytes, fewer than its checkpoint's {checkpoint.Bytes:N0}: it was changed since; give --restart to start over.");
            stream.SetLength(checkpoint.Bytes);
            stream.Position = checkpoint.Bytes;
        }
        else
        {
            checkpoint.Save(); // from now on, a crash resumes (and cuts the file back to its checkpointed length)
        }

        await using var writer = new StreamWriter(stream, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false), 64 * 1024, leaveOpen: true);
        BatchScan<TDocument> scan = await collection.ScanAfterAsync(checkpoint.After, settings.BatchSize, cancellationToken).ConfigureAwait(false);
        await console.ProgressAsync($"export {collection.Name}", scan.Expected, async progress =>
        {
            await foreach (IReadOnlyList<TDocument> batch in scan.Batches.ConfigureAwait(false))
            {
                if (batch.Count == 0) continue;
                foreach (TDocument document in batch)
                {
                    try
                    {
                        string line = await collection.ToJsonLineAsync(document, cancellationToken).ConfigureAwait(false);
                        await writer.WriteAsync(line).ConfigureAwait(false);
                        await writer.WriteAsync('\n').ConfigureAwait(false);
                        checkpoint.Documents++;
                    }
                    catch (Exception ex) when (ex is InvalidDataException or DictionaryNotFoundException)
                    {
                        checkpoint.Fail(collection.Describe(document), LiveRunner.FirstLine(ex.Message), settings.MaxFailures);
                    }
                }
                await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
                stream.Flush(flushToDisk: true);
                checkpoint.After = collection.KeyText(batch[^1]);
                checkpoint.Bytes = stream.Position;
                if (options.BeforeCheckpoint is { } hook) await hook(checkpoint).ConfigureAwait(false);
                checkpoint.Save();
                progress(batch.Count);
            }
            return true;
        }).ConfigureAwait(false);
        checkpoint.Remove();
        var report = new TransferReport("export", collection.Name, options.File, checkpoint.Resumed, checkpoint.Runs, checkpoint.Documents + checkpoint.Failed,
            checkpoint.Documents, checkpoint.Failed, checkpoint.Failures, [], checkpoint.Failed > 0 ? 1 : 0);
        console.Write(report, ExportCommand.ToTable);
        return report.ExitCode;
    }

    public async Task<int> ImportAsync(LiveSettings settings, TransferOptions options, LiveOutput console, CancellationToken cancellationToken)
    {
        await using TSession session = Open(settings, @override: null);
        await ConnectAsync(session, cancellationToken).ConfigureAwait(false);
        LiveCollection<TDocument> collection = await OpenOneAsync(session, "import", cancellationToken).ConfigureAwait(false);
        await collection.CheckImportAsync(cancellationToken).ConfigureAwait(false);
        TransferCheckpoint checkpoint = TransferCheckpoint.Load(ImportCheckpointPath(options.File, collection.Name), "import", collection.Name, options.File,
            options.Restart);
        await using var stream = new FileStream(options.File, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
        if (checkpoint.Resumed && (checkpoint.Input != stream.Length || checkpoint.Bytes > stream.Length))
        {
            throw new InvalidDataException(
                $"--from {options.File} has {stream.Length:N0} bytes, not the {checkpoint.Input:N0} its import checkpoint was made with: it changed since; give --restart to import it from the first line.");
        }
        checkpoint.Input = stream.Length;

        var trained = new List<TrainResult>();
        CompressionNamespace handle = collection.Handle;
        if (options.Train && handle.State.UsesDictionary && handle.CurrentDictionary is null)
        {
            trained.Add(await TrainFromExportAsync(collection, stream, FirstDictionarySamples, cancellationToken).ConfigureAwait(false));
        }

        using var reader = new JsonLineReader(stream, checkpoint.Bytes, checkpoint.Lines);
        await console.ProgressAsync($"import {collection.Name}", stream.Length - checkpoint.Bytes, async progress =>
        {
            var batch = new List<ImportLine>(settings.BatchSize);
            long start = reader.Offset;
            while (true)
            {
                ReadOnlyMemory<byte>? line = await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false);
                if (line is { } bytes && !IsBlank(bytes.Span)) batch.Add(new ImportLine(reader.LineNumber, bytes.ToArray()));
                if (line is not null && batch.Count < settings.BatchSize) continue;
                if (batch.Count > 0 || line is null)
                {
                    IReadOnlyList<RewriteFailure> failures = batch.Count == 0 ? [] : await collection.ImportAsync(batch, cancellationToken).ConfigureAwait(false);
                    foreach (RewriteFailure failure in failures) checkpoint.Fail(failure.Id, failure.Error, settings.MaxFailures);
                    checkpoint.Documents += batch.Count - failures.Count;
                    checkpoint.Bytes = reader.Offset;
                    checkpoint.Lines = reader.LineNumber;
                    if (options.BeforeCheckpoint is { } hook && batch.Count > 0) await hook(checkpoint).ConfigureAwait(false);
                    checkpoint.Save();
                    progress(reader.Offset - start);
                    start = reader.Offset;
                    batch.Clear();
                }
                if (line is null) return true;
            }
        }).ConfigureAwait(false);
        checkpoint.Remove();
        var report = new TransferReport("import", collection.Name, options.File, checkpoint.Resumed, checkpoint.Runs, checkpoint.Lines, checkpoint.Documents,
            checkpoint.Failed, checkpoint.Failures, trained, checkpoint.Failed > 0 ? 1 : 0);
        console.Write(report, ExportCommand.ToTable);
        return report.ExitCode;
    }

    /// <summary>The one namespace of a command that works on one (<c>cat</c>, <c>export</c>, <c>import</c>), opened.</summary>
    /// <exception cref="UsageException">Not exactly one.</exception>
    private async Task<LiveCollection<TDocument>> OpenOneAsync(TSession session, string command, CancellationToken cancellationToken)
    {
        if (session.Namespaces.Count != 1)
            throw new UsageException($"{command} works on one namespace: give exactly one --namespace ({session.Namespaces.Count} given or configured).");
        return await OpenAsync(session, session.Namespaces[0], cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Offers up to <paramref name="max"/> documents of an exported file to the namespace's sample, then trains (the stream is read from its start).</summary>
    private static async Task<TrainResult> TrainFromExportAsync(LiveCollection<TDocument> collection, FileStream stream, int max, CancellationToken cancellationToken)
    {
        long read = 0, skipped = 0;
        using (var reader = new JsonLineReader(stream, 0, 0))
        {
            while (read < max && await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
            {
                if (IsBlank(line.Span)) continue;
                read++;
                try
                {
                    if (collection.SampleOfLine(line) is { } sample) collection.Handle.State.Reservoir.Offer(sample);
                    else skipped++;
                }
                catch (InvalidDataException)
                {
                    skipped++; // the import names it
                }
            }
        }
        return await TrainAsync(collection, stream.Name, read, skipped, cancellationToken).ConfigureAwait(false);
    }

    private static bool IsBlank(ReadOnlySpan<byte> line) => line.Trim(" \t\r"u8).IsEmpty;
}
