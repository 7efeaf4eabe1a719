using Compression.Couchbase.Internal;
using Compression.Dictionaries;
using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Serializers;
using Couchbase.Core.IO.Transcoders;

namespace Compression.Couchbase;

/// <summary>
/// An <see cref="ITypeTranscoder"/> that stores JSON documents compressed: the document is serialized by the inner
/// transcoder (JSON), compressed with the collection's <see cref="CompressionNamespace"/> into an envelope, and written
/// as the body with <see cref="DataFormat.Binary"/> flags. It reads both forms: a binary body that is an envelope (magic
/// 0xC5) is decompressed and then deserialized by the inner transcoder; a JSON-flagged body (a legacy document, or one
/// written with <see cref="Compress"/> off) goes to the inner transcoder as it is. So compression can be switched on and
/// off at will. It also reads the two forms whole-body sub-document writes leave on a server the SDK sends no new flags
/// to: an envelope under JSON or no flags (a <c>SetDoc</c>), known by its whole header, and JSON text under binary flags
/// (a <c>ReplaceBodyWithXattr</c>, as distributed transactions commit). Values the inner transcoder does not write as
/// JSON (byte arrays, for instance) pass through untouched.
/// </summary>
/// <remarks>
/// <see cref="ITypeTranscoder.Decode{T}"/> is synchronous: an envelope that names a dictionary not yet in memory can
/// only be decoded if it was loaded first (<see cref="CompressionNamespace.PreloadDictionaryAsync"/>). The collection
/// decorator (<see cref="CouchbaseCollectionCompressionExtensions.WithCompression"/>) does that before every decode; use
/// this transcoder on its own only where that is taken care of. Thread-safe.
/// </remarks>
public sealed class CompressingTranscoder : ITypeTranscoder
{
    private readonly ITypeTranscoder _inner;

    /// <summary>Creates a transcoder for one collection.</summary>
    /// <param name="namespace">The collection's namespace (<c>bucket.scope.collection</c>) from the engine.</param>
    /// <param name="inner">The transcoder that turns values into JSON and back; the SDK's <see cref="JsonTranscoder"/> when null.</param>
    /// <param name="compress">Whether new documents are compressed (<see langword="false"/> writes plain JSON; both are read).</param>
    public CompressingTranscoder(CompressionNamespace @namespace, ITypeTranscoder? inner = null, bool compress = true)
    {
        ArgumentNullException.ThrowIfNull(@namespace);
        Namespace = @namespace;
        _inner = inner ?? new JsonTranscoder();
        Compress = compress;
    }

    /// <summary>The namespace documents are compressed with.</summary>
    public CompressionNamespace Namespace { get; }

    /// <summary>Whether new documents are written compressed.</summary>
    /// <value><see langword="true"/> unless the transcoder was created with compression off.</value>
    public bool Compress { get; }

    /// <summary>The inner transcoder's serializer (the one JSON is written and read with).</summary>
    public ITypeSerializer? Serializer
    {
        get => _inner.Serializer;
        set => _inner.Serializer = value;
    }

    /// <summary>Binary flags for a value the inner transcoder would write as JSON, when compressing; the inner flags otherwise.</summary>
    public Flags GetFormat<T>(T value)
    {
        Flags inner = _inner.GetFormat(value);
        return Compress && inner.DataFormat == DataFormat.Json
            ? new Flags { DataFormat = DataFormat.Binary, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = inner.TypeCode }
            : inner;
    }

    /// <summary>Serializes <paramref name="value"/> to JSON and writes its envelope (or, when not compressing, the JSON).</summary>
    /// <exception cref="ArgumentException">The JSON nests deeper than 128 levels of objects and arrays (readers refuse that).</exception>
    public void Encode<T>(Stream stream, T value, Flags flags, OpCode opcode)
    {
        ArgumentNullException.ThrowIfNull(stream);
        Flags inner = _inner.GetFormat(value);
        if (!Compress || inner.DataFormat != DataFormat.Json || flags.DataFormat != DataFormat.Binary)
        {
            _inner.Encode(stream, value, flags, opcode);
            return;
        }
        using var json = new PooledBufferStream();
        _inner.Encode(json, value, inner, opcode);
        // Readers refuse what nests deeper (see Decode): refused here, before anything is written, so nothing is lost.
        if (!DocumentLimits.IsJsonDepthWithinLimit(json.WrittenSpan))
            throw new ArgumentException($"The document nests deeper than {DocumentLimits.MaxJsonDepth} levels of objects and arrays; a compressed collection does not store it (its readers would refuse it).", nameof(value));
        if (stream is System.Buffers.IBufferWriter<byte> writer)
        {
            // The SDK's operation builder is a buffer writer: the envelope goes straight into the request.
            Namespace.Compress(json.WrittenSpan, writer);
            return;
        }
        using var envelope = new PooledBufferStream(CompressionNamespace.GetMaxCompressedLength(json.WrittenSpan.Length));
        Namespace.Compress(json.WrittenSpan, envelope);
        stream.Write(envelope.WrittenSpan);
    }

    /// <summary>
    /// The bytes <see cref="Encode"/> would compress for <paramref name="value"/> (its JSON from the inner transcoder), or
    /// null for a value it would write as it is (not JSON): what training is given for a bulk load.
    /// </summary>
    internal byte[]? CompressedPart<T>(T value)
    {
        Flags inner = _inner.GetFormat(value);
        if (inner.DataFormat != DataFormat.Json) return null;
        using var json = new PooledBufferStream();
        _inner.Encode(json, value, inner, OpCode.Set);
        return json.WrittenSpan.ToArray();
    }

    /// <summary>Decompresses an envelope and deserializes the document, or hands a JSON (legacy) body to the inner transcoder.</summary>
    /// <exception cref="InvalidDataException">A binary body that is neither an envelope nor JSON text, a corrupt envelope, or JSON nested deeper than 128 levels.</exception>
    /// <exception cref="DictionaryNotFoundException">The envelope names a dictionary that is not in memory (load it first).</exception>
    public T? Decode<T>(ReadOnlyMemory<byte> buffer, Flags flags, OpCode opcode)
    {
        // SDK 3.9.5 reads the flags of a get-and-touch (GAT) reply as a new expiry (GetT.ReadExtras, since NCBC-3852) and
        // hands the body over with no flags at all: an envelope is then known by its magic byte alone (no JSON text starts with 0xC5).
        if (opcode == OpCode.GAT && flags.DataFormat == DataFormat.Reserved && DocumentEnvelope.IsEnvelope(buffer.Span))
        {
            flags.DataFormat = DataFormat.Binary;
        }
        // A whole body a sub-document SetDoc wrote keeps the document's old flags (JSON, or none for a new one) on a
        // server the SDK sends no flags to: an envelope is then known by its header (BodyForm).
        if (flags.DataFormat != DataFormat.Binary && BodyForm.IsEnvelope(buffer.Span, flags))
        {
            flags.DataFormat = DataFormat.Binary;
        }

        if (typeof(T) == typeof(RawBody)) return (T)(object)new RawBody(buffer, flags);
        if (flags.DataFormat != DataFormat.Binary || ReadsRaw<T>()) return _inner.Decode<T>(buffer, flags, opcode);
        if (!DocumentEnvelope.IsEnvelope(buffer.Span))
        {
            // A body made plain in place, under the binary flags its envelope had: ReplaceBodyWithXattr (distributed
            // transactions commit with it) keeps the old flags on a server that does not take new ones with it (before
            // the binary-xattr feature). Read as the JSON it is; anything else is refused below.
            if (BodyForm.IsJsonText(buffer.Span))
            {
                Flags plain = flags;
                plain.DataFormat = DataFormat.Json;
                return _inner.Decode<T>(buffer, plain, opcode);
            }
            throw new InvalidDataException(
                $"The body has binary flags but is neither a compressed envelope nor JSON text (its first byte is 0x{(buffer.IsEmpty ? 0 : buffer.Span[0]):X2}, not 0x{DocumentEnvelope.Magic:X2}); it cannot be read as {typeof(T).Name}.");
        }
        using var json = new PooledBufferStream(Math.Max(256, buffer.Length * 4));
        Namespace.Decompress(buffer.Span, json);
        // Before the inner transcoder's deserializer, which recurses once per level: the server never sees inside a body.
        if (!DocumentLimits.IsJsonDepthWithinLimit(json.WrittenSpan))
            throw new InvalidDataException($"The document nests deeper than {DocumentLimits.MaxJsonDepth} levels of objects and arrays (the most a compressed collection writes); it was not read.");
        Flags jsonFlags = flags;
        jsonFlags.DataFormat = DataFormat.Json;
        return _inner.Decode<T>(json.WrittenMemory, jsonFlags, opcode);
    }

    /// <summary>
    /// Whether a binary body read as <typeparamref name="T"/> is handed over as it is stored: <see cref="RawBody"/>, and the
    /// raw types (<c>byte[]</c>, <c>IMemoryOwner&lt;byte&gt;</c>) when the inner transcoder writes them as binary, so
    /// <see cref="Encode"/> passed them through. When it writes them as JSON (<c>RawJsonTranscoder</c>: raw JSON bytes),
    /// <see cref="Encode"/> compressed them, and they are decompressed like any document.
    /// </summary>
    internal bool ReadsRaw<T>()
    {
        if (typeof(T) == typeof(RawBody)) return true;
        if (typeof(T) != typeof(byte[]) && typeof(T) != typeof(System.Buffers.IMemoryOwner<byte>)) return false;
        try
        {
            // What decides is how the inner transcoder WROTE the bytes (as byte[]), not whether it can write the read type.
            return _inner.GetFormat(default(byte[])!).DataFormat != DataFormat.Json;
        }
        catch (Exception ex) when (ex is InvalidOperationException or NotSupportedException or ArgumentException)
        {
            return true; // the inner transcoder does not write the type at all: nothing of it was compressed
        }
    }
}
