using Compression.Dictionaries;

namespace Compression.Tests.Conformance;

/// <summary>
/// What an adapter gives the conformance suite (<see cref="AdapterConformanceTests"/>): its dictionary store and its stored
/// layout over one empty place in its database (a database, a bucket, a key space), made for one test and dropped after
/// it. Documents cross this boundary as UTF-8 JSON; each adapter maps them to its own form.
/// </summary>
public abstract class AdapterUnderTest : IAsyncDisposable
{
    /// <summary>The namespace the adapter's documents are compressed in (what its stored layout asks the engine for).</summary>
    public abstract string NamespaceName { get; }

    /// <summary>A new store object over this test's data, as another client of the database would open it.</summary>
    public abstract DictionaryStore OpenStore();

    /// <summary>
    /// Writes a dictionary record straight into the database, past the store, as a broken or hostile peer could: the
    /// fields <paramref name="writeFields"/> gives, mapped to the store's form exactly as its own writer maps them (a field
    /// given as text where the store writes a number is stored as text). <paramref name="id"/>, <paramref name="namespace"/>
    /// and <paramref name="version"/> are where the record is filed (its key, the version index), whatever the fields say.
    /// </summary>
    public abstract Task WriteRawRecordAsync(uint id, string @namespace, int version, Action<IDictionaryRecordWriter> writeFields);

    /// <summary>Writes <paramref name="json"/> under <paramref name="key"/> through the adapter's stored layout, compressed unless <paramref name="compress"/> is off.</summary>
    public abstract Task WriteAsync(CompressionEngine engine, string key, byte[] json, bool compress = true);

    /// <summary>Reads the document under <paramref name="key"/> through the adapter (with compression on or off for new writes), as <see cref="Canonical"/> text.</summary>
    public abstract Task<string> ReadAsync(CompressionEngine engine, string key, bool compress = true);

    /// <summary>Writes <paramref name="json"/> as the application did before it used compression: a plain document, past the adapter.</summary>
    public abstract Task WritePlainAsync(string key, byte[] json);

    /// <summary>The envelope stored for <paramref name="key"/>, or <see langword="null"/> when the stored document is plain.</summary>
    public abstract Task<byte[]?> ReadStoredEnvelopeAsync(string key);

    /// <summary>Stores <paramref name="envelope"/> as the envelope of <paramref name="key"/> (creating the document when there is none), past the adapter.</summary>
    public abstract Task WriteStoredEnvelopeAsync(string key, byte[] envelope);

    /// <summary>
    /// The document as the database gives it back, for comparison: the JSON itself (byte for byte) by default; an adapter
    /// whose database normalizes documents (BSON, a JSON object model) gives its normal form.
    /// </summary>
    public virtual string Canonical(byte[] json) => System.Text.Encoding.UTF8.GetString(json);

    /// <inheritdoc/>
    public virtual ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        return ValueTask.CompletedTask;
    }
}
