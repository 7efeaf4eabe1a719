using Compression.Dictionaries;

namespace Compression.Tool.Live;

/// <summary>What a rewrite does to each document.</summary>
internal enum RewriteMode
{
    /// <summary><c>migrate</c>: plain documents are compressed; compressed ones are left alone.</summary>
    Compress,

    /// <summary><c>migrate --decompress</c>: compressed documents are written back plain, byte for byte as they were.</summary>
    Decompress,

    /// <summary><c>recompress</c>: compressed documents are compressed again with the current dictionary (and level) when that makes them smaller.</summary>
    Recompress,
}

/// <summary>Settings of one rewrite.</summary>
internal sealed record RewriteOptions
{
    public required RewriteMode Mode { get; init; }

    /// <summary>The level given on the command line (<c>recompress --level</c>): every compressed document is a candidate, not only those with an older dictionary.</summary>
    public int? Level { get; init; }

    /// <summary>Ignore an unfinished checkpoint and start over.</summary>
    public bool Restart { get; init; }

    /// <summary>
    /// What a checkpoint must have been made with to be resumed: the level, the backend's filter when the run covers part
    /// of the collection only (<paramref name="filter"/>, as the backend writes it: a run over part of the collection
    /// leaves a checkpoint among its documents only, which says nothing of the others), and for <c>recompress</c> the
    /// dictionary it writes with (documents before the checkpoint were rewritten with that one).
    /// </summary>
    public string ParametersFor(DictionaryRecord? current, string? filter = null)
    {
        var parts = new List<string>(3);
        if (Level is int level) parts.Add($"level={level}");
        if (filter is not null) parts.Add($"filter={filter}");
        if (Mode == RewriteMode.Recompress && current is not null) parts.Add($"dictionary={current.Id}");
        return string.Join(',', parts);
    }

    public string ModeName => Mode switch
    {
        RewriteMode.Compress => "compress",
        RewriteMode.Decompress => "decompress",
        _ => "recompress",
    };
}

/// <summary>The outcome of a rewrite of one namespace (this run and, when it resumed, the runs before it).</summary>
internal sealed record RewriteResult(string Namespace, string Mode, bool Resumed, int Runs, long Scanned, long Written, long Skipped,
    long Unchanged, long Failed, IReadOnlyList<RewriteFailure> Failures, uint? DictionaryId, int? DictionaryVersion);

/// <summary>A document that could not be handled: its <c>_id</c> (shell syntax) and why.</summary>
internal sealed record RewriteFailure(string Id, string Error);
