using Compression.Dictionaries;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>
/// One namespace opened for a live command, as the shared commands (<see cref="LiveBackend{TSession, TNamespace, TDocument}"/>)
/// see it: the database's scan, its stored layout (what a stored document holds, how it reads back) and its rewrite.
/// </summary>
/// <typeparam name="TDocument">A document as the scan reads it: its id and its stored bytes.</typeparam>
internal abstract partial class LiveCollection<TDocument>(string name, CompressionNamespace handle)
{
    /// <summary>The namespace's name, as in the configuration.</summary>
    public string Name => name;

    /// <summary>The namespace's handle, with its current dictionary loaded.</summary>
    public CompressionNamespace Handle => handle;

    /// <summary>The first <paramref name="limit"/> documents in the scan's order, <paramref name="batchSize"/> at a time.</summary>
    public abstract Task<BatchScan<TDocument>> ScanAsync(long limit, int batchSize, CancellationToken cancellationToken);

    /// <summary>How a report names the document (its id).</summary>
    public abstract string Describe(TDocument document);

    /// <summary>The size of the document as stored.</summary>
    public abstract long StoredLength(TDocument document);

    /// <summary>
    /// <c>train</c>: what of the document goes into the namespace's sample, or null when the namespace would not compress
    /// it (it is then counted as skipped).
    /// </summary>
    /// <exception cref="InvalidDataException">It cannot be read (skipped; <c>verify</c> names it).</exception>
    /// <exception cref="DictionaryNotFoundException">Its dictionary cannot be found (skipped).</exception>
    public abstract Task<byte[]?> SampleAsync(TDocument document, CancellationToken cancellationToken);

    /// <summary><c>train --from</c>: what of one JSON line goes into the namespace's sample.</summary>
    /// <exception cref="InvalidDataException">The line is not a document (skipped).</exception>
    public abstract byte[] SampleOf(string line);

    /// <summary><c>verify</c>: checks that the document reads back whole; true when it is compressed, false when it is stored as it is.</summary>
    /// <exception cref="InvalidDataException">It does not read back; the message says why.</exception>
    /// <exception cref="DictionaryNotFoundException">Its dictionary cannot be found.</exception>
    public abstract Task<bool> VerifyAsync(TDocument document, CancellationToken cancellationToken);

    /// <summary><c>stats</c>: the plain form of a compressed document, or null for one stored as it is.</summary>
    /// <exception cref="InvalidDataException">It cannot be read.</exception>
    /// <exception cref="DictionaryNotFoundException">Its dictionary cannot be found.</exception>
    public abstract Task<byte[]?> DecodeAsync(TDocument document, CancellationToken cancellationToken);

    /// <summary><c>stats</c>: the dictionary a compressed document names, if any.</summary>
    public abstract uint? DictionaryOf(TDocument document);

    /// <summary>Refuses, before anything is written to it, a rewrite the collection cannot take (as bad usage).</summary>
    /// <exception cref="UsageException">The rewrite would break something; the message says what.</exception>
    public virtual Task CheckRewriteAsync(RewriteOptions options, CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>
    /// Rewrites the collection (<see cref="RewritePass{TItem, TKey}"/>); <paramref name="olderThan"/>: only documents
    /// whose keys say they were made before it (a backend whose keys carry no time refuses it up front).
    /// </summary>
    public abstract Task<RewriteResult> RewriteAsync(RewriteOptions options, DateTimeOffset? olderThan, LiveSettings settings, LiveOutput console,
        CancellationToken cancellationToken);
}
