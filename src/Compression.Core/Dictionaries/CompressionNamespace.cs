using System.Buffers;
using System.Runtime.CompilerServices;
using Compression.Internal;

namespace Compression.Dictionaries;

/// <summary>
/// One namespace of a <see cref="CompressionEngine"/> (a collection: <c>database.collection</c> or
/// <c>bucket.scope.collection</c>): compresses its documents with its current shared dictionary, samples them for
/// training, and decompresses envelopes whatever dictionary version they name. Get it once with
/// <see cref="CompressionEngine.GetNamespace"/> and keep it; thread-safe.
/// </summary>
/// <remarks>
/// The API comes in steps, as in Snappier: span in and span out (<see cref="TryCompress"/>, <see cref="TryDecompress"/>),
/// <see cref="IBufferWriter{T}"/> out, <see cref="ReadOnlySequence{T}"/> in, and allocating <see cref="byte"/>[] methods last.
/// Each call works on one snapshot of the namespace's state: the dictionary a write uses is the one its envelope names.
/// </remarks>
public sealed class CompressionNamespace
{
    private readonly CompressionEngine _engine;
    private NamespaceState _state;

    internal CompressionNamespace(CompressionEngine engine, NamespaceState state)
    {
        _engine = engine;
        _state = state;
        var adapterSettings = new Dictionary<string, IReadOnlyList<string>>(StringComparer.OrdinalIgnoreCase);
        foreach ((string name, IList<string> values) in state.Settings.AdapterSettings) adapterSettings[name] = [.. values ?? []];
        AdapterSettings = adapterSettings;
    }

    /// <summary>The namespace's name.</summary>
    public string Name => _state.Name;

    /// <summary>The codec new documents are compressed with.</summary>
    public CompressionCodec Codec => _state.Compressor.Codec;

    /// <summary>The envelope format new documents are written in (every format is read). Adapters may tie their own layout to it.</summary>
    public EnvelopeFormat Format => _state.Compressor.Format;

    /// <summary>The adapters' settings of the namespace, by name (see <see cref="NamespaceOptions.AdapterSettings"/>): a copy taken when the handle was made.</summary>
    public IReadOnlyDictionary<string, IReadOnlyList<string>> AdapterSettings { get; }

    /// <summary>The dictionary new documents are compressed with, or <see langword="null"/> while there is none.</summary>
    public DictionaryRecord? CurrentDictionary => State.Current?.Record;

    /// <summary>The state this handle holds now, without resolving an evicted one or marking it used (for the engine's sweeps).</summary>
    internal NamespaceState State0 => _state;

    internal NamespaceState State
    {
        get
        {
            NamespaceState state = _state;
            if (state.Evicted) _state = state = _engine.ResolveState(state.Name);
            state.Touch(_engine.UseClock);
            return state;
        }
    }

    /// <summary>The largest envelope a document of <paramref name="documentLength"/> bytes can take.</summary>
    public static int GetMaxCompressedLength(int documentLength) => DocumentCompressor.GetMaxEnvelopeLength(documentLength);

    /// <summary>
    /// Compresses <paramref name="document"/> into an envelope in <paramref name="destination"/> with the namespace's current
    /// dictionary, samples it, and starts a background training run when one is due (it never waits for one).
    /// </summary>
    /// <returns><see langword="false"/> when <paramref name="destination"/> is too small (<see cref="GetMaxCompressedLength"/> always suffices).</returns>
    /// <exception cref="ArgumentException">The document is longer than the namespace's <c>MaxUncompressedLength</c>.</exception>
    public bool TryCompress(ReadOnlySpan<byte> document, Span<byte> destination, out int bytesWritten)
    {
        NamespaceState state = State;
        if (!state.Compressor.TryCompress(document, destination, out bytesWritten, state.Current?.Dictionary)) return false;
        _engine.AfterWrite(state, document, destination[1], bytesWritten);
        return true;
    }

    /// <summary>Compresses <paramref name="document"/> into an envelope appended to <paramref name="destination"/>.</summary>
    /// <inheritdoc cref="TryCompress" path="/exception"/>
    public void Compress(ReadOnlySpan<byte> document, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        Span<byte> span = destination.GetSpan(GetMaxCompressedLength(document.Length));
        if (!TryCompress(document, span, out int written)) ThrowHelper.ThrowDestinationTooSmall(nameof(destination));
        destination.Advance(written);
    }

    /// <summary>Compresses a document held in a sequence (copied once into a pooled buffer when it has several segments).</summary>
    /// <inheritdoc cref="TryCompress" path="/exception"/>
    public void Compress(in ReadOnlySequence<byte> document, IBufferWriter<byte> destination) => Contiguous(document, destination, compress: true);

    /// <summary>Compresses into a new array. Allocates; prefer the span or buffer-writer overloads on hot paths.</summary>
    /// <inheritdoc cref="TryCompress" path="/exception"/>
    public byte[] Compress(ReadOnlySpan<byte> document)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(GetMaxCompressedLength(document.Length));
        try
        {
            TryCompress(document, rented, out int written);
            return rented.AsSpan(0, written).ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented, clearArray: true);
        }
    }

    /// <summary>
    /// Decompresses an envelope of this namespace into <paramref name="destination"/>, synchronously. A dictionary that is
    /// not in memory is read through the store's synchronous API when it has one (<see cref="DictionaryStore.CanGetSynchronously"/>);
    /// otherwise call <see cref="PreloadDictionaryAsync"/> first, or use <see cref="DecompressAsync"/>.
    /// </summary>
    /// <returns><see langword="false"/> when <paramref name="destination"/> is shorter than the document.</returns>
    /// <exception cref="InvalidDataException">The value is not an envelope, or it is corrupt, or the dictionary record it names is damaged.</exception>
    /// <exception cref="DictionaryNotFoundException">The dictionary it names cannot be found.</exception>
    public bool TryDecompress(ReadOnlySpan<byte> envelope, Span<byte> destination, out int bytesWritten)
    {
        NamespaceState state = State;
        try
        {
            return TryDecompressCore(state, envelope, destination, out bytesWritten);
        }
        catch (Exception ex) when (_engine.CountDecodeFailure(state, ex))
        {
            throw;
        }
    }

    /// <summary>Decompresses an envelope and appends the document to <paramref name="destination"/>.</summary>
    /// <inheritdoc cref="TryDecompress" path="/exception"/>
    public void Decompress(ReadOnlySpan<byte> envelope, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        NamespaceState state = State;
        try
        {
            DecompressCore(state, envelope, destination);
        }
        catch (Exception ex) when (_engine.CountDecodeFailure(state, ex))
        {
            throw;
        }
    }

    /// <summary>Decompresses an envelope held in a sequence (copied once into a pooled buffer when it has several segments).</summary>
    /// <inheritdoc cref="TryDecompress" path="/exception"/>
    public void Decompress(in ReadOnlySequence<byte> envelope, IBufferWriter<byte> destination) => Contiguous(envelope, destination, compress: false);

    /// <summary>Decompresses into a new array. Allocates.</summary>
    /// <inheritdoc cref="TryDecompress" path="/exception"/>
    public byte[] Decompress(ReadOnlySpan<byte> envelope)
    {
        NamespaceState state = State;
        try
        {
            return DecompressCore(state, envelope);
        }
        catch (Exception ex) when (_engine.CountDecodeFailure(state, ex))
        {
            throw;
        }
    }

    /// <summary>
    /// Makes sure the dictionary <paramref name="envelope"/> names is in memory, reading it from the store when not (one
    /// read however many callers ask at once, retried, and validated), and returns it. Values that are not envelopes, or
    /// name no dictionary, need nothing. An adapter whose database client reads asynchronously but decodes synchronously (a transcoder, a serializer)
    /// calls it after the read and holds the result until its synchronous decode, which is then sure to find the
    /// dictionary in memory even if other readers' loads evicted it in between.
    /// </summary>
    /// <param name="envelope">The stored value, or at least its envelope header.</param>
    /// <param name="cancellationToken">Cancels the wait for the store (the read itself goes on for the other callers waiting on it).</param>
    /// <returns>
    /// The dictionary, or <see langword="null"/> when the value is not an envelope or names no dictionary. Completes
    /// synchronously when the dictionary is in memory.
    /// </returns>
    /// <exception cref="DictionaryNotFoundException">The store has no such dictionary, or could not be read after the configured attempts.</exception>
    /// <exception cref="InvalidDataException">The envelope's header is corrupt, or the store's record is damaged.</exception>
    public ValueTask<ZstdDictionary?> PreloadDictionaryAsync(ReadOnlySpan<byte> envelope, CancellationToken cancellationToken = default)
    {
        NamespaceState state = State;
        if (!DocumentEnvelope.TryReadHeader(envelope, out EnvelopeHeader header, state.Settings.MaxUncompressedLength)
            || header.DictionaryId is not uint id)
        {
            return ValueTask.FromResult<ZstdDictionary?>(null);
        }
        if (_engine.Catalog.TryGetCached(id, out ZstdDictionary cached)) return ValueTask.FromResult<ZstdDictionary?>(cached);
        ValueTask<ZstdDictionary> load = _engine.Catalog.GetAsync(id, state.Name, cancellationToken);
        return load.IsCompletedSuccessfully ? ValueTask.FromResult<ZstdDictionary?>(load.Result) : Widen(load);

        static async ValueTask<ZstdDictionary?> Widen(ValueTask<ZstdDictionary> load) => await load.ConfigureAwait(false);
    }

    /// <summary>Reads the dictionary the envelope names if needed, then decompresses with it. Allocates the result.</summary>
    /// <inheritdoc cref="PreloadDictionaryAsync" path="/exception"/>
    public async ValueTask<byte[]> DecompressAsync(ReadOnlyMemory<byte> envelope, CancellationToken cancellationToken = default)
    {
        NamespaceState state = State;
        try
        {
            EnvelopeHeader header = state.Compressor.ReadHeader(envelope.Span);
            ZstdDictionary? dictionary = null;
            if (header.DictionaryId is uint id)
            {
                // Decoded with the dictionary the load returned: looked up again in the bounded cache, it could be gone
                // already when other readers' loads evicted it (found by review).
                ZstdDictionary? adopted = state.Current?.Dictionary;
                dictionary = adopted is not null && adopted.Id == id ? adopted
                    : await _engine.Catalog.GetAsync(id, state.Name, cancellationToken).ConfigureAwait(false);
            }
            return DocumentCompressor.DecompressWithHeader(envelope.Span, header, dictionary);
        }
        catch (Exception ex) when (_engine.CountDecodeFailure(state, ex))
        {
            throw;
        }
    }

    /// <summary>Reads the namespace's newest dictionary version from the store now and adopts it when it is newer.</summary>
    /// <exception cref="IOException">The store could not be read after the configured attempts.</exception>
    /// <exception cref="InvalidDataException">The store's record is damaged (it is not adopted).</exception>
    public Task RefreshAsync(CancellationToken cancellationToken = default) => _engine.Coordinator.RefreshAsync(State, cancellationToken);

    /// <summary>
    /// Runs a training run now from the samples the namespace has, whatever the triggers say (the rate limit does not
    /// apply). For tools and tests: the write path trains on its own.
    /// </summary>
    public Task<TrainingResult> TrainAsync(CancellationToken cancellationToken = default) => _engine.Coordinator.TrainNowAsync(State, cancellationToken);

    /// <summary>
    /// Runs a training run now from <paramref name="documents"/> as well as the samples the namespace has: for a bulk
    /// load, call it with the first batch before writing it, and the batch (and what follows) is compressed with a
    /// dictionary instead of alone while the write path gathers samples (measured in docs/benchmarks.md, "Bulk loads").
    /// The documents are what the adapter compresses (for MongoDB, the compressed part of each document: use the
    /// adapter's own method), bounded as samples are (<see cref="DictionaryOptions.MaxSampleCount"/>,
    /// <see cref="DictionaryOptions.MaxSampleBytes"/>, <see cref="DictionaryOptions.MaxSampleDocumentSize"/>: a uniform
    /// sample of them when they are more); they are not kept. The result is adopted and published by the usual rule
    /// (better than the current dictionary on held-out documents), and counts as seen for the next retraining.
    /// </summary>
    /// <returns>The outcome; <see cref="TrainingOutcome.AlreadyRunning"/> when a training run of the namespace is under way.</returns>
    public Task<TrainingResult> TrainAsync(IEnumerable<ReadOnlyMemory<byte>> documents, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(documents);
        return _engine.Coordinator.TrainNowAsync(State, cancellationToken, documents);
    }

    /// <inheritdoc/>
    public override string ToString() => Name;

    // The decode bodies stay outside the try regions of the public methods (which only count failures): code inside a
    // protected region is optimized far less (measured: the read path took twice as long with its body there).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryDecompressCore(NamespaceState state, ReadOnlySpan<byte> envelope, Span<byte> destination, out int bytesWritten)
    {
        EnvelopeHeader header = state.Compressor.ReadHeader(envelope);
        return DocumentCompressor.TryDecompressWithHeader(envelope, header, destination, out bytesWritten, GetDictionary(state, header));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void DecompressCore(NamespaceState state, ReadOnlySpan<byte> envelope, IBufferWriter<byte> destination)
    {
        EnvelopeHeader header = state.Compressor.ReadHeader(envelope);
        DocumentCompressor.DecompressWithHeader(envelope, header, destination, GetDictionary(state, header));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private byte[] DecompressCore(NamespaceState state, ReadOnlySpan<byte> envelope)
    {
        EnvelopeHeader header = state.Compressor.ReadHeader(envelope);
        return DocumentCompressor.DecompressWithHeader(envelope, header, GetDictionary(state, header));
    }

    // Most envelopes name the namespace's adopted dictionary (pinned in the catalog): it is taken from the state without
    // a catalog look-up.
    private ZstdDictionary? GetDictionary(NamespaceState state, in EnvelopeHeader header)
    {
        if (header.DictionaryId is not uint id) return null;
        ZstdDictionary? adopted = state.Current?.Dictionary;
        return adopted is not null && adopted.Id == id ? adopted : _engine.Catalog.Get(id, state.Name);
    }

    /// <summary>Runs the span form on a sequence: as is when it has one segment, else copied once into a pooled buffer.</summary>
    private void Contiguous(in ReadOnlySequence<byte> value, IBufferWriter<byte> destination, bool compress)
    {
        if (value.IsSingleSegment)
        {
            if (compress) Compress(value.FirstSpan, destination);
            else Decompress(value.FirstSpan, destination);
            return;
        }
        if (value.Length > Array.MaxLength) throw new ArgumentException($"The value has {value.Length} bytes, more than an array holds.", nameof(value));
        int length = (int)value.Length;
        byte[] rented = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            value.CopyTo(rented);
            if (compress) Compress(rented.AsSpan(0, length), destination);
            else Decompress(rented.AsSpan(0, length), destination);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented, clearArray: true);
        }
    }
}
