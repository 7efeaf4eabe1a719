using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using Compression.Dictionaries;
using Compression.MongoDB.Configuration;

namespace Compression.MongoDB;

/// <summary>What a stored document is, by its <c>_z</c> element.</summary>
internal enum StoredKind
{
    /// <summary>
    /// No <c>_z</c>, or a <c>_z</c> that is not BinData 0x80 or 0x81 (the application's own field): a plain document
    /// (written before compression, or while it was off).
    /// </summary>
    Plain,

    /// <summary><c>_z</c> is <c>BinData(0x81, envelope)</c> or <c>BinData(0x80, envelope)</c>.</summary>
    Compressed,
}

/// <summary>
/// A whole document as raw BSON, to and from the form <see cref="CompressedDocumentSerializer{T}"/> stores
/// (<see cref="StoredLayout"/>), with the envelope made and read by the namespace's engine. Both subtypes are read; the
/// namespace's <see cref="CompressionNamespace.Format"/> says which is written, as in the serializer. docz has no CLR type
/// for the documents, so it works on their bytes with this codec; the clear elements are <c>_id</c>, the discriminator
/// the driver's conventions give documents without a CLR type (<c>_t</c>, as the serializer keeps it for polymorphic
/// types) and the namespace's configured clear fields.
/// </summary>
/// <remarks>
/// The serializer reads a stored document as its clear elements, then the decompressed ones, a clear element winning over a
/// compressed one of the same name. A plain document whose clear fields all come before its first compressed field (the
/// usual case: <c>_id</c> is always first) splits so that this order is its own order. A clear field that comes later is
/// stored in the clear, and its place in the compressed part is kept by a placeholder (<see cref="ClearFieldPlaceholder"/>,
/// an element of its name that says what it is): the serializer drops it, and <see cref="Decode(ReadOnlySpan{byte})"/>
/// puts the clear value back at that place (or nothing, when the application removed the field), so a migrated document decompresses to its original bytes exactly. Documents migrated
/// before 2026-11-24 (seventh session) hold a copy of the value instead of the placeholder: read the same way while the
/// clear field is there, but the copy comes back if the application removes the clear field.
/// </remarks>
internal sealed class StoredDocumentCodec
{
    private const byte BinaryType = StoredLayout.BinaryType;
    private const byte DocumentSubtype = StoredLayout.DocumentSubtype;
    private const byte ElementsSubtype = StoredLayout.ElementsSubtype;
    private static ReadOnlySpan<byte> CompressedName => StoredLayout.CompressedNameUtf8;

    private readonly byte[][] _clearNames;

    /// <summary>The codec of a namespace with its configured clear fields (<c>ClearFields</c>).</summary>
    public StoredDocumentCodec(CompressionNamespace @namespace)
        : this(@namespace, MongoNamespaceSettings.ClearFieldsOf(@namespace))
    {
    }

    /// <summary>The codec of a namespace with the given clear fields (top-level element names).</summary>
    public StoredDocumentCodec(CompressionNamespace @namespace, IEnumerable<string> clearFields)
    {
        Namespace = @namespace;
        _clearNames = [.. StoredLayout.ClearNames(StoredLayout.DiscriminatorName(typeof(object)), clearFields).Select(Encoding.UTF8.GetBytes)];
    }

    public CompressionNamespace Namespace { get; }

    /// <summary>Whether a top-level field of this name is stored in the clear (<c>_id</c>, <c>_t</c> and the configured clear fields).</summary>
    public bool IsClear(string name) => IsClear(Encoding.UTF8.GetBytes(name));

    /// <summary>What a stored document is.</summary>
    public static StoredKind Classify(ReadOnlySpan<byte> stored)
    {
        var elements = new RawBsonWalker(stored);
        while (elements.TryNext(out RawBsonElement element))
        {
            if (!element.Name(stored).SequenceEqual(CompressedName)) continue;
            // A _z this library never writes (not BinData 0x80 or 0x81) is the application's own field: the serializer reads
            // such a document as plain, and so does the tool.
            return StoredLayout.IsEnvelope(element, stored) ? StoredKind.Compressed : StoredKind.Plain;
        }
        return StoredKind.Plain;
    }

    /// <summary>The envelope of a compressed document (a slice of <paramref name="stored"/>), or empty when it has none.</summary>
    public static ReadOnlySpan<byte> Envelope(ReadOnlySpan<byte> stored) => Envelope(stored, out _);

    /// <summary>The envelope, and whether it holds the elements alone (subtype 0x81) rather than a whole document (0x80).</summary>
    private static ReadOnlySpan<byte> Envelope(ReadOnlySpan<byte> stored, out bool elementsOnly)
    {
        elementsOnly = false;
        var elements = new RawBsonWalker(stored);
        while (elements.TryNext(out RawBsonElement element))
        {
            if (element.Name(stored).SequenceEqual(CompressedName) && element.Type == BinaryType)
            {
                ReadOnlySpan<byte> value = element.Value(stored);
                elementsOnly = value[4] == ElementsSubtype;
                if (value[4] is DocumentSubtype or ElementsSubtype) return value[5..];
            }
        }
        return [];
    }

    /// <summary>Whether new documents are written as subtype 0x81, the elements alone (envelope formats v2 and v3), as the serializer does.</summary>
    private bool ElementsOnly => StoredLayout.ElementsOnly(Namespace.Format);

    /// <summary>The part of a plain document that is compressed (what the engine samples and trains on).</summary>
    public byte[] CompressedPart(ReadOnlySpan<byte> plain)
    {
        var rest = new ArrayBufferWriter<byte>(plain.Length);
        Split(plain, clear: null, rest);
        return ElementsOnly ? rest.WrittenSpan[4..^1].ToArray() : rest.WrittenSpan.ToArray();
    }

    /// <summary>Compresses a plain document into its stored form.</summary>
    /// <exception cref="InvalidDataException">The document is not well-formed BSON.</exception>
    public byte[] Compress(ReadOnlySpan<byte> plain)
    {
        var clear = new ArrayBufferWriter<byte>(64);
        var rest = new ArrayBufferWriter<byte>(plain.Length);
        Split(plain, clear, rest);
        bool elementsOnly = ElementsOnly;
        byte[] envelope = Namespace.Compress(elementsOnly ? rest.WrittenSpan[4..^1] : rest.WrittenSpan);

        int length = 4 + clear.WrittenCount + 1 + CompressedName.Length + 1 + 4 + 1 + envelope.Length + 1;
        byte[] stored = new byte[length];
        BinaryPrimitives.WriteInt32LittleEndian(stored, length);
        int at = 4;
        clear.WrittenSpan.CopyTo(stored.AsSpan(at));
        at += clear.WrittenCount;
        stored[at++] = BinaryType;
        CompressedName.CopyTo(stored.AsSpan(at));
        at += CompressedName.Length;
        stored[at++] = 0;
        BinaryPrimitives.WriteInt32LittleEndian(stored.AsSpan(at), envelope.Length);
        at += 4;
        stored[at++] = StoredLayout.Subtype(elementsOnly);
        envelope.CopyTo(stored.AsSpan(at));
        at += envelope.Length;
        stored[at] = 0;
        return stored;
    }

    /// <summary>The plain document a compressed one holds (its dictionary must be loaded: see <see cref="EnsureDictionaryAsync"/>).</summary>
    /// <exception cref="InvalidDataException">The document or its envelope is corrupt.</exception>
    /// <exception cref="DictionaryNotFoundException">The dictionary it names cannot be found.</exception>
    public byte[] Decode(ReadOnlySpan<byte> stored) => Decode(stored, out _);

    /// <summary>
    /// <see cref="Decode(ReadOnlySpan{byte})"/>, saying whether the compressed part may hold placeholders of the older form
    /// (a MinKey element with a clear element of its name, see <see cref="ClearFieldPlaceholder"/>), which migrate rewrites.
    /// </summary>
    public byte[] Decode(ReadOnlySpan<byte> stored, out bool legacyPlaceholders)
    {
        ReadOnlySpan<byte> envelope = Envelope(stored, out bool elementsOnly);
        if (envelope.IsEmpty && Classify(stored) != StoredKind.Compressed)
            throw new InvalidDataException("The document has no '_z' element holding BinData(0x80 or 0x81, envelope).");
        byte[] rest = Namespace.Decompress(envelope);
        if (elementsOnly)
        {
            byte[] document = new byte[rest.Length + 5];
            BinaryPrimitives.WriteInt32LittleEndian(document, document.Length);
            rest.CopyTo(document, 4);
            rest = document;
        }
        bool tooDeep = false;
        try
        {
            // Its depth before anything recursive reads it (verify, migrate --decompress and the compare-and-swap filter
            // parse it); the stored clear elements were checked by the server.
            var elements = new RawBsonWalker(rest);
            while (!tooDeep && elements.TryNext(out RawBsonElement element)) tooDeep = !BsonNesting.IsWithinLimit(rest, element);
            if (!tooDeep) return Merge(stored, rest, out legacyPlaceholders);
        }
        catch (InvalidDataException ex)
        {
            throw new InvalidDataException($"The decompressed part is not a BSON document: {ex.Message}", ex);
        }
        throw new InvalidDataException($"The document {BsonNesting.TooDeep}.");
    }

    /// <summary>
    /// Whether a compressed document is split as the configuration splits it now: the elements stored in the clear are
    /// exactly those of its decoded form (<paramref name="plain"/>) that are configured clear. Not so when
    /// <c>ClearFields</c> changed since it was written: a field made clear later is still inside <c>_z</c>, where the
    /// server cannot see it (an <c>$inc</c> on it starts from nothing, and that clear value then wins on reading).
    /// </summary>
    public bool SplitIsCurrent(ReadOnlySpan<byte> stored, ReadOnlySpan<byte> plain)
    {
        var storedElements = new RawBsonWalker(stored);
        var plainElements = new RawBsonWalker(plain);
        while (true)
        {
            RawBsonElement s = default;
            bool hasStored;
            do
            {
                hasStored = storedElements.TryNext(out s);
            }
            while (hasStored && s.Name(stored).SequenceEqual(CompressedName) && s.Type == BinaryType); // the envelope
            RawBsonElement p = default;
            bool hasPlain;
            do
            {
                hasPlain = plainElements.TryNext(out p);
            }
            while (hasPlain && !IsClear(p.Name(plain)));
            if (hasStored != hasPlain) return false;
            if (!hasStored) return true;
            if (!s.Name(stored).SequenceEqual(p.Name(plain))) return false;
        }
    }

    /// <summary>Loads the dictionary a stored document's envelope names, when it is not in memory yet.</summary>
    public ValueTask EnsureDictionaryAsync(ReadOnlyMemory<byte> stored, CancellationToken cancellationToken)
    {
        ReadOnlySpan<byte> envelope = Envelope(stored.Span);
        if (envelope.IsEmpty) return ValueTask.CompletedTask;
        ValueTask<ZstdDictionary?> load = Namespace.PreloadDictionaryAsync(envelope, cancellationToken);
        return load.IsCompletedSuccessfully ? ValueTask.CompletedTask : new ValueTask(load.AsTask());
    }

    private void Split(ReadOnlySpan<byte> plain, ArrayBufferWriter<byte>? clear, ArrayBufferWriter<byte> rest)
    {
        Reserve(rest, 4); // the length, set at the end
        bool leading = true;
        var elements = new RawBsonWalker(plain);
        while (elements.TryNext(out RawBsonElement element))
        {
            ReadOnlySpan<byte> bytes = element.Bytes(plain);
            if (IsClear(element.Name(plain)))
            {
                clear?.Write(bytes);
                if (leading) continue; // its place is the clear part's: before every compressed element
                // Its place among the compressed elements is kept by a placeholder, not by a copy of the value: a copy came
                // back as the field's value once the application had removed the clear one ($unset).
                ClearFieldPlaceholder.Write(rest, element.Name(plain));
                continue;
            }
            leading = false;
            rest.Write(bytes);
        }
        rest.GetSpan(1)[0] = 0;
        rest.Advance(1);
        FixLength(rest);
    }

    private static void Reserve(ArrayBufferWriter<byte> writer, int count)
    {
        writer.GetSpan(count)[..count].Clear();
        writer.Advance(count);
    }

    private static void FixLength(ArrayBufferWriter<byte> document)
    {
        // WrittenMemory is the writer's own array; its first 4 bytes are the length placeholder.
        ReadOnlyMemory<byte> written = document.WrittenMemory;
        if (!System.Runtime.InteropServices.MemoryMarshal.TryGetArray(written, out ArraySegment<byte> segment))
            throw new InvalidOperationException("ArrayBufferWriter is expected to be backed by an array.");
        BinaryPrimitives.WriteInt32LittleEndian(segment.AsSpan(), written.Length);
    }

    private bool IsClear(ReadOnlySpan<byte> name)
    {
        foreach (byte[] clear in _clearNames)
        {
            if (name.SequenceEqual(clear)) return true;
        }
        return false;
    }

    /// <summary>
    /// The stored clear elements that have no place in the compressed part, then the compressed part's elements, each
    /// replaced by the stored clear element of the same name when there is one (the clear one wins, as in the serializer);
    /// a placeholder of a clear field the stored document no longer has (removed by the application) is dropped.
    /// </summary>
    private byte[] Merge(ReadOnlySpan<byte> stored, ReadOnlySpan<byte> rest, out bool legacyPlaceholders)
    {
        legacyPlaceholders = false;
        var output = new ArrayBufferWriter<byte>(stored.Length + rest.Length);
        Reserve(output, 4); // the length, set at the end

        var storedElements = new RawBsonWalker(stored);
        while (storedElements.TryNext(out RawBsonElement element))
        {
            ReadOnlySpan<byte> name = element.Name(stored);
            if (name.SequenceEqual(CompressedName) || Find(rest, name) is not null) continue;
            output.Write(element.Bytes(stored));
        }

        var restElements = new RawBsonWalker(rest);
        while (restElements.TryNext(out RawBsonElement element))
        {
            ReadOnlySpan<byte> name = element.Name(rest);
            if (!name.SequenceEqual(CompressedName) && Find(stored, name) is { } clear)
            {
                // A MinKey with a clear value of its name may be the older placeholder: the clear value wins either way,
                // and a rewrite (migrate) puts today's placeholder in its place.
                legacyPlaceholders |= element.Type == ClearFieldPlaceholder.LegacyType;
                output.Write(clear.Bytes(stored));
            }
            else if (!ClearFieldPlaceholder.Is(element, rest)) output.Write(element.Bytes(rest));
        }
        output.GetSpan(1)[0] = 0;
        output.Advance(1);
        FixLength(output);
        return output.WrittenSpan.ToArray();
    }

    private static RawBsonElement? Find(ReadOnlySpan<byte> document, ReadOnlySpan<byte> name)
    {
        var elements = new RawBsonWalker(document);
        while (elements.TryNext(out RawBsonElement element))
        {
            if (element.Name(document).SequenceEqual(name)) return element;
        }
        return null;
    }
}
