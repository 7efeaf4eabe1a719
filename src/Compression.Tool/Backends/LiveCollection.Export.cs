using Compression.Dictionaries;
using Compression.Tool.Live;

namespace Compression.Tool.Backends;

/// <summary>One line of an <c>import</c>: its number in the file and its bytes (UTF-8, without the line break).</summary>
internal readonly record struct ImportLine(long Number, byte[] Utf8)
{
    /// <summary>How a report names the line.</summary>
    public string Name => $"line {Number}";
}

/// <summary>What <c>cat</c>, <c>export</c> and <c>import</c> need of a namespace's collection (<see cref="LiveBackend{TSession, TNamespace, TDocument}"/>).</summary>
internal abstract partial class LiveCollection<TDocument>
{
    /// <summary>
    /// <c>cat</c>: the documents <paramref name="query"/> selects, at most <paramref name="limit"/>, in the scan's order.
    /// </summary>
    /// <exception cref="UsageException">The query is not one the database can match without decompressing (a compressed field, another database's way).</exception>
    public abstract Task<BatchScan<TDocument>> FindAsync(DocumentQuery query, long limit, int batchSize, CancellationToken cancellationToken);

    /// <summary><c>export</c>: every document after the key <paramref name="after"/> (in <see cref="KeyText"/>'s form; all when null), in the scan's order.</summary>
    public abstract Task<BatchScan<TDocument>> ScanAfterAsync(string? after, int batchSize, CancellationToken cancellationToken);

    /// <summary>The document's key as an export checkpoint keeps it (text that <see cref="ScanAfterAsync"/> reads back).</summary>
    public abstract string KeyText(TDocument document);

    /// <summary>
    /// The document as the application reads it, as one line of JSON (no line break) that <see cref="ImportAsync"/> writes
    /// back to the same document: its id, and its decoded form, exactly.
    /// </summary>
    /// <exception cref="InvalidDataException">It cannot be read.</exception>
    /// <exception cref="DictionaryNotFoundException">Its dictionary cannot be found.</exception>
    public abstract Task<string> ToJsonLineAsync(TDocument document, CancellationToken cancellationToken);

    /// <summary><c>import</c>: refuses, before anything is written, an import the collection cannot take (as bad usage).</summary>
    public virtual Task CheckImportAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary><c>import</c>'s first dictionary: what of one exported line goes into the namespace's sample, or null when it would not be compressed.</summary>
    /// <exception cref="InvalidDataException">The line is not a document (skipped).</exception>
    public abstract byte[]? SampleOfLine(ReadOnlyMemory<byte> line);

    /// <summary>
    /// <c>import</c>: writes each line's document, compressed as the application's serializer or transcoder would, over any
    /// document of its id (an upsert: a line written twice leaves one document). Returns the lines that were not written,
    /// each named (<see cref="ImportLine.Name"/>) with why, in line order.
    /// </summary>
    public abstract Task<IReadOnlyList<RewriteFailure>> ImportAsync(IReadOnlyList<ImportLine> lines, CancellationToken cancellationToken);
}
