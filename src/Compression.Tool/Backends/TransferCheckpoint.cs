using System.Text.Json;
using System.Text.Json.Nodes;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>
/// Where an <c>export</c> or an <c>import</c> stands, kept in a small JSON file beside its JSON Lines file (an export may
/// run with read-only access to the database, so nothing is kept there):
/// <c>{ command, ns, file, after, bytes, lines, input, documents, failed, failures, runs, started, updated }</c>.
/// Like a rewrite's <see cref="RewriteCheckpoint{TKey}"/>, it is written only once the batch it follows is settled:
/// for <c>export</c>, once the batch's lines are flushed to disk (<c>bytes</c>: the file's length then; <c>after</c>:
/// the key the scan resumes after, in the backend's text form); for <c>import</c>, once the batch's writes are
/// acknowledged (<c>bytes</c>: the offset of the next line; <c>lines</c>: lines read; <c>input</c>: the input's length,
/// which a resumed run checks). It is replaced atomically (written beside, then renamed) and removed when the run is done.
/// </summary>
internal sealed class TransferCheckpoint
{
    private TransferCheckpoint(string path, string command, string ns, string file) => (Path, Command, Namespace, File) = (path, command, ns, file);

    /// <summary>The checkpoint file.</summary>
    public string Path { get; }

    /// <summary><c>export</c> or <c>import</c>.</summary>
    public string Command { get; }

    public string Namespace { get; }

    /// <summary>The JSON Lines file, full path.</summary>
    public string File { get; }

    /// <summary><c>export</c>: the key of the last document of the last batch settled (the backend's text form); null before the first.</summary>
    public string? After { get; set; }

    /// <summary><c>export</c>: the file's length once the last batch settled was flushed; <c>import</c>: the offset of the next line to read.</summary>
    public long Bytes { get; set; }

    /// <summary><c>import</c>: lines read up to <see cref="Bytes"/> (blank ones included), so that line numbers go on.</summary>
    public long Lines { get; set; }

    /// <summary><c>import</c>: the input's length when the import started; a resumed run refuses an input of another length.</summary>
    public long Input { get; set; }

    /// <summary>Documents written (exported lines, or imported documents).</summary>
    public long Documents { get; set; }

    public long Failed { get; set; }

    public List<RewriteFailure> Failures { get; } = [];

    public int Runs { get; private set; } = 1;

    public bool Resumed { get; private set; }

    public DateTime Started { get; private set; } = DateTime.UtcNow;

    /// <summary>A failure counted; the first <paramref name="keep"/> are kept with what names them and why.</summary>
    public void Fail(string id, string error, int keep)
    {
        Failed++;
        if (Failures.Count < keep) Failures.Add(new RewriteFailure(id, error));
    }

    /// <summary>
    /// The unfinished checkpoint at <paramref name="path"/> for this command, namespace and file (resumed), or a fresh one
    /// when there is none or <paramref name="restart"/> is set.
    /// </summary>
    /// <exception cref="InvalidDataException">The checkpoint is damaged, or was made for another namespace or file; the message says how to start over.</exception>
    public static TransferCheckpoint Load(string path, string command, string ns, string file, bool restart)
    {
        var fresh = new TransferCheckpoint(path, command, ns, file);
        if (restart || !System.IO.File.Exists(path)) return fresh;
        try
        {
            JsonObject json = JsonNode.Parse(System.IO.File.ReadAllBytes(path))?.AsObject() ?? throw new FormatException("not a JSON object");
            string storedCommand = json["command"]!.GetValue<string>(), storedNs = json["ns"]!.GetValue<string>(), storedFile = json["file"]!.GetValue<string>();
            if (storedCommand != command || storedNs != ns || storedFile != file)
            {
                throw new InvalidDataException(
                    $"The checkpoint {path} is of '{storedCommand}' of {storedNs} with {storedFile}, not of this run; give --restart to start over (or remove it).");
            }
            var checkpoint = new TransferCheckpoint(path, command, ns, file)
            {
                After = json["after"]?.GetValue<string>(),
                Bytes = NotNegative(json, "bytes"),
                Lines = NotNegative(json, "lines"),
                Input = NotNegative(json, "input"),
                Documents = NotNegative(json, "documents"),
                Failed = NotNegative(json, "failed"),
                Runs = checked((int)NotNegative(json, "runs") + 1),
                Started = json["started"]!.GetValue<DateTime>(),
                Resumed = true,
            };
            checkpoint.Failures.AddRange(json["failures"]!.AsArray()
                .Select(f => new RewriteFailure(f!["id"]!.GetValue<string>(), f["error"]!.GetValue<string>())));
            return checkpoint;
        }
        catch (Exception ex) when (ex is JsonException or FormatException or InvalidOperationException or NullReferenceException or OverflowException or ArgumentException)
        {
            throw new InvalidDataException($"The checkpoint {path} is damaged ({ex.Message}); give --restart to start over.", ex);
        }
    }

    /// <summary>Writes the checkpoint: to a file beside it, flushed to disk, then renamed over it (a crash leaves the old one or the new one whole).</summary>
    public void Save()
    {
        var json = new JsonObject
        {
            ["command"] = Command,
            ["ns"] = Namespace,
            ["file"] = File,
            ["after"] = After,
            ["bytes"] = Bytes,
            ["lines"] = Lines,
            ["input"] = Input,
            ["documents"] = Documents,
            ["failed"] = Failed,
            ["failures"] = new JsonArray([.. Failures.Select(f => (JsonNode)new JsonObject { ["id"] = f.Id, ["error"] = f.Error })]),
            ["runs"] = Runs,
            ["started"] = Started,
            ["updated"] = DateTime.UtcNow,
        };
        string temporary = Path + ".tmp";
        using (var stream = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            JsonSerializer.Serialize(stream, json);
            stream.Flush(flushToDisk: true);
        }
        System.IO.File.Move(temporary, Path, overwrite: true);
    }

    /// <summary>The run is done: the checkpoint is removed (a next run starts over).</summary>
    public void Remove() => System.IO.File.Delete(Path);

    private static long NotNegative(JsonObject json, string name)
    {
        long value = json[name]!.GetValue<long>();
        return value >= 0 ? value : throw new FormatException($"'{name}' is negative ({value})");
    }
}
