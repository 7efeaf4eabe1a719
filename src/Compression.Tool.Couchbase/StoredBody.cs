using System.Runtime.CompilerServices;
using System.Text;
using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Compression.Tool.Live;
using Couchbase.Core.Exceptions.KeyValue;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Serializers;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Couchbase.KeyValue.RangeScan;

namespace Compression.Tool.Couchbase;

/// <summary>What a stored body is, to the compressed collection (<c>WithCompression</c>).</summary>
internal enum BodyKind
{
    /// <summary>JSON flags (or JSON text under binary flags): a plain document, which <c>migrate</c> compresses.</summary>
    Plain,

    /// <summary>An envelope (binary flags, or a whole envelope header under JSON or no flags): a compressed document.</summary>
    Compressed,

    /// <summary>Neither JSON nor binary flags (a string, a private or legacy format): read as it is by the application's transcoder; never touched.</summary>
    Other,

    /// <summary>Binary flags but neither an envelope nor JSON text: the compressed collection cannot read it (InvalidDataException).</summary>
    Foreign,
}

/// <summary>A document as stored: its key, exact body, flags and CAS.</summary>
internal sealed record StoredBody(string Key, byte[] Body, Flags Flags, ulong Cas)
{
    /// <remarks>
    /// As the compressed collection reads it (<see cref="BodyForm"/>): an envelope under JSON or no flags (a sub-document
    /// SetDoc's) is compressed; JSON text under binary flags (what a transaction's commit leaves on a server that keeps
    /// the old flags) is plain.
    /// </remarks>
    public BodyKind Kind => BodyForm.IsEnvelope(Body, Flags) ? BodyKind.Compressed : Flags.DataFormat switch
    {
        DataFormat.Json => BodyKind.Plain,
        DataFormat.Binary => BodyForm.IsJsonText(Body) ? BodyKind.Plain : BodyKind.Foreign,
        _ => BodyKind.Other,
    };

    /// <summary>The flags of this document's other form: binary for the envelope of a JSON one, JSON for the JSON of an envelope (type code kept).</summary>
    public Flags With(DataFormat format) => new() { DataFormat = format, Compression = Flags.Compression, TypeCode = Flags.TypeCode };

    public const string ForeignMessage = "it has binary flags but its body is neither a compressed envelope nor JSON text, so the compressed collection cannot read it";
}

/// <summary>Reads bodies as they are (<see cref="Body"/>) and writes given bytes with given flags: no serializer in between.</summary>
internal sealed class BodyTranscoder(Flags write) : ITypeTranscoder
{
    public static BodyTranscoder Reader { get; } = new(default);

    public ITypeSerializer? Serializer { get; set; }

    public Flags GetFormat<T>(T value) => write;

    public void Encode<T>(Stream stream, T value, Flags flags, OpCode opcode)
    {
        if (value is not ReadOnlyMemory<byte> body) throw new NotSupportedException($"{nameof(BodyTranscoder)} writes ReadOnlyMemory<byte> only.");
        stream.Write(body.Span);
    }

    public T? Decode<T>(ReadOnlyMemory<byte> buffer, Flags flags, OpCode opcode) =>
        typeof(T) == typeof(Body) ? (T)(object)new Body(buffer.ToArray(), flags) : throw new NotSupportedException($"{nameof(BodyTranscoder)} reads {nameof(Body)} only.");

    public sealed record Body(byte[] Bytes, Flags Flags);
}

/// <summary>Key-value access of the commands: read a body as stored, replace it only if unchanged (CAS), list keys.</summary>
internal static class BodyAccess
{
    /// <summary>Keys of the library's own documents (dictionaries, checkpoints); never scanned as data.</summary>
    public const string ReservedPrefix = "_compression::";

    /// <summary>The document as stored, or null when it does not exist.</summary>
    public static async Task<StoredBody?> ReadAsync(ICouchbaseCollection collection, string key, CancellationToken cancellationToken)
    {
        try
        {
            using IGetResult result = await collection.GetAsync(key, new GetOptions().Transcoder(BodyTranscoder.Reader).CancellationToken(cancellationToken)).ConfigureAwait(false);
            BodyTranscoder.Body body = result.ContentAs<BodyTranscoder.Body>()!;
            return new StoredBody(key, body.Bytes, body.Flags, result.Cas);
        }
        catch (DocumentNotFoundException)
        {
            return null;
        }
    }

    /// <summary>
    /// Replaces the document if it is still exactly the version read (its CAS), keeping its expiry: true when replaced,
    /// false when it changed or was removed since.
    /// </summary>
    /// <exception cref="UsageException">
    /// The server cannot keep a document's expiry on replace (before Couchbase Server 7.0). The SDK refuses such a
    /// replace before sending it, so no document was changed; a replace without it would remove the document's expiry.
    /// </exception>
    public static async Task<bool> ReplaceAsync(ICouchbaseCollection collection, StoredBody read, byte[] body, Flags flags, CancellationToken cancellationToken)
    {
        try
        {
            var options = new ReplaceOptions().Cas(read.Cas).Transcoder(new BodyTranscoder(flags)).PreserveTtl(true).CancellationToken(cancellationToken);
            await collection.ReplaceAsync(read.Key, (ReadOnlyMemory<byte>)body, options).ConfigureAwait(false);
            return true;
        }
        catch (global::Couchbase.Core.Exceptions.FeatureNotAvailableException ex)
        {
            throw Refusal(ex);
        }
        catch (Exception ex) when (ex is global::Couchbase.Core.Exceptions.CasMismatchException or DocumentNotFoundException or DocumentExistsException)
        {
            return false;
        }
    }

    /// <summary>
    /// Refuses the run up front when the server cannot keep a document's expiry on replace, before anything (a first
    /// dictionary, a checkpoint) is written: a replace with PreserveTtl of a key that does not exist, under a CAS that
    /// cannot match, which the SDK refuses before sending when the server lacks PRESERVE_TTL and the server answers
    /// "not found" otherwise. Nothing is written either way.
    /// </summary>
    /// <exception cref="UsageException">The server cannot keep a document's expiry on replace.</exception>
    public static async Task EnsureExpiryKeptAsync(ICouchbaseCollection collection, CancellationToken cancellationToken)
    {
        try
        {
            var options = new ReplaceOptions().Cas(1).Transcoder(new BodyTranscoder(new Flags { DataFormat = DataFormat.Binary }))
                .PreserveTtl(true).CancellationToken(cancellationToken);
            await collection.ReplaceAsync($"{ReservedPrefix}docz-preserve-ttl-probe::{Guid.NewGuid():N}", (ReadOnlyMemory<byte>)Array.Empty<byte>(), options)
                .ConfigureAwait(false);
        }
        catch (global::Couchbase.Core.Exceptions.FeatureNotAvailableException ex)
        {
            throw Refusal(ex);
        }
        catch (Exception ex) when (ex is global::Couchbase.Core.Exceptions.CasMismatchException or DocumentNotFoundException or DocumentExistsException)
        {
            // the expected answer: the server reads PRESERVE_TTL, and nothing was written
        }
    }

    private static UsageException Refusal(Exception ex) =>
        new("This server cannot keep a document's expiry on replace (PRESERVE_TTL, Couchbase Server 7.0 or later), " +
            $"and replacing without it would remove the expiry of every document rewritten: the run is refused, and no document was replaced ({ex.Message}).");

    /// <summary>
    /// Every key of the collection after <paramref name="after"/> (all when null), by a KV range scan (ids only), in byte
    /// order of their UTF-8 form (the order resuming relies on). The library's own keys are left out.
    /// </summary>
    public static async Task<List<string>> KeysAsync(ICouchbaseCollection collection, string? after, CancellationToken cancellationToken)
    {
        var scan = after is null ? new RangeScan() : new RangeScan(ScanTerm.Exclusive(after));
        var keys = new List<(byte[] Utf8, string Key)>();
        await foreach (IScanResult result in collection.ScanAsync(scan, new ScanOptions().IdsOnly(true).Token(cancellationToken)).ConfigureAwait(false))
        {
            if (result.Id.StartsWith(ReservedPrefix, StringComparison.Ordinal)) continue;
            keys.Add((Encoding.UTF8.GetBytes(result.Id), result.Id));
        }
        keys.Sort(static (a, b) => a.Utf8.AsSpan().SequenceCompareTo(b.Utf8));
        return [.. keys.Select(k => k.Key)];
    }

    /// <summary>The documents of <paramref name="keys"/> in batches, read with up to 16 gets at a time; removed ones left out.</summary>
    public static async IAsyncEnumerable<IReadOnlyList<StoredBody>> BatchesAsync(ICouchbaseCollection collection, IReadOnlyList<string> keys, int batchSize,
        [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        for (int start = 0; start < keys.Count; start += batchSize)
        {
            string[] batch = [.. keys.Skip(start).Take(batchSize)];
            var read = new StoredBody?[batch.Length];
            await Parallel.ForAsync(0, batch.Length, new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = cancellationToken },
                async (i, token) => read[i] = await ReadAsync(collection, batch[i], token).ConfigureAwait(false)).ConfigureAwait(false);
            yield return [.. read.OfType<StoredBody>()];
        }
    }

    /// <summary>The dictionary id an envelope names, if any.</summary>
    public static uint? DictionaryOf(byte[] envelope) => DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header) ? header.DictionaryId : null;
}
