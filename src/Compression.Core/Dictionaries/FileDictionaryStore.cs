using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Microsoft.Win32.SafeHandles;

namespace Compression.Dictionaries;

/// <summary>
/// A <see cref="DictionaryStore"/> in a folder: for single-host applications, tools and tests that must survive a
/// restart. Every version is two files, each written aside and then linked into place, which fails if the name exists,
/// so publication is atomic and insert-only even between processes: <c>{id}.dict.json</c> (the record) and
/// <c>{namespace key}.v{version}.id</c> (which id won that version). Nothing is ever deleted, except a record file whose
/// version could not be claimed, which no envelope can name. Shared by several hosts only through a file system whose
/// hard links are atomic (local file systems are).
/// </summary>
/// <remarks>
/// Any namespace name works: a name whose escaped form is short is used as is (lower-case letters, digits, '-' and '_'
/// kept, every other byte of its UTF-8 form %-escaped, so names that differ only in case stay apart where the file system
/// ignores case); a longer one is cut and suffixed with a hash of the whole name, so file
/// names stay within every file system's limit. Files are checked when read: a record larger than the dictionary size
/// allows is refused before it is read, and a version file must agree with the record it names.
/// </remarks>
public sealed partial class FileDictionaryStore : DictionaryStore
{
    /// <summary>Escaped namespace names longer than this are cut and hashed (file names must stay under 255 bytes).</summary>
    internal const int MaxPlainKeyLength = 120;

    private const int MaxVersionFileBytes = 32;
    private readonly string _directory;
    private readonly long _maxRecordFileBytes;
    private readonly int _maxDictionaryBytes;

    /// <summary>Creates the store over <paramref name="directory"/>, creating the folder if needed.</summary>
    /// <param name="directory">The folder.</param>
    /// <param name="maxDictionaryBytes">The largest dictionary a record may hold; larger record files are refused before they are read.</param>
    public FileDictionaryStore(string directory, int maxDictionaryBytes = ZstdDictionary.DefaultMaximumSize)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDictionaryBytes, ZstdDictionary.MinimumSize);
        _directory = Directory.CreateDirectory(directory).FullName;
        _maxDictionaryBytes = maxDictionaryBytes;
        _maxRecordFileBytes = DictionaryRecordCodec.MaxRecordBytes(maxDictionaryBytes, base64: true);
    }

    /// <inheritdoc/>
    public override string Location => $"the dictionary folder {_directory}";

    /// <inheritdoc/>
    public override bool CanGetSynchronously => true;

    /// <inheritdoc/>
    public override DictionaryRecord? Get(uint id)
    {
        string path = RecordPath(id);
        byte[]? bytes = ReadLimited(path, _maxRecordFileBytes);
        if (bytes is null) return null;
        JsonDocument json;
        try
        {
            json = JsonDocument.Parse(bytes, new JsonDocumentOptions { MaxDepth = 8 });
        }
        catch (JsonException ex)
        {
            throw new InvalidDataException($"Dictionary record {path} is not a record: {ex.Message}", ex);
        }
        using (json)
        {
            if (json.RootElement.ValueKind != JsonValueKind.Object)
                throw new InvalidDataException($"Dictionary record {path} is not a record: it holds a JSON {json.RootElement.ValueKind}, not an object.");
            return DictionaryRecordCodec.Read(new RecordReader(json.RootElement, $"Dictionary record {path}"), _maxDictionaryBytes);
        }
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(Get(id));
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(Newest(@namespace, DictionaryRecord.MaxVersion + 1));
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetNewestBelowAsync(string @namespace, int version, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(Newest(@namespace, Math.Min(version, DictionaryRecord.MaxVersion + 1)));
    }

    /// <summary>The newest readable version below <paramref name="below"/>; unreadable ones are reported and skipped (a bounded number).</summary>
    private DictionaryRecord? Newest(string @namespace, int below)
    {
        InvalidDataException? newestProblem = null;
        int skipped = 0;
        foreach ((int version, string key) in Versions(@namespace).Where(v => v.Version < below).OrderByDescending(v => v.Version))
        {
            try
            {
                return ReadWinner(VersionPath(key, version), version, @namespace);
            }
            catch (InvalidDataException ex) when (++skipped <= MaxSkippedRecords)
            {
                newestProblem ??= ex;
                ReportSkippedRecord(ex.Message);
            }
        }
        return newestProblem is null ? null : throw newestProblem;
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        ArgumentException.ThrowIfNullOrEmpty(candidate.Namespace, nameof(candidate));
        cancellationToken.ThrowIfCancellationRequested();
        string key = Key(candidate.Namespace);
        // Taken (published meanwhile, or held by a record that is not valid): the winner, or why it cannot be read.
        if (Versions(candidate.Namespace).Any(v => v.Version == candidate.Version)) return ValueTask.FromResult(ReadVersion(candidate.Namespace, candidate.Version));

        string recordPath = RecordPath(candidate.Id);
        if (!TryCreateNew(recordPath, RecordWriter.Write(candidate)))
            throw new DictionaryIdConflictException(candidate.Id);

        bool claimed = false;
        try
        {
            claimed = TryCreateNew(VersionPath(key, candidate.Version), Encoding.ASCII.GetBytes(candidate.Id.ToString(CultureInfo.InvariantCulture)));
        }
        finally
        {
            // Lost the race for this version, or could not write: no envelope names this id, so the record goes.
            if (!claimed) File.Delete(recordPath);
        }
        return ValueTask.FromResult(claimed ? candidate : ReadVersion(candidate.Namespace, candidate.Version));
    }

    /// <inheritdoc/>
    public override async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        IEnumerable<string> paths = @namespace is null
            ? Directory.EnumerateFiles(_directory, "*.id")
            : Keys(@namespace).SelectMany(k => Directory.EnumerateFiles(_directory, k + ".v*.id"));
        var versions = new List<(DictionaryRecord Record, string Path)>();
        foreach (string path in paths)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (!TryParseVersionFile(Path.GetFileName(path), out string key, out int version)) continue;
            DictionaryRecord record = ReadWinner(path, version, expectedNamespace: null);
            if (!Keys(record.Namespace).Contains(key, StringComparer.Ordinal))
                throw new InvalidDataException($"Version file {path} names dictionary {record.Id} of namespace '{record.Namespace}', which belongs elsewhere.");
            if (@namespace is null || record.Namespace == @namespace) versions.Add((record, path));
        }
        foreach (var (record, _) in versions.OrderBy(v => v.Record.Namespace, StringComparer.Ordinal).ThenBy(v => v.Record.Version))
        {
            cancellationToken.ThrowIfCancellationRequested();
            yield return record;
        }
        await Task.CompletedTask.ConfigureAwait(false);
    }

    /// <summary>The winner of a version: under the namespace's key, or under its 0.1.0 key when only that one has it.</summary>
    private DictionaryRecord ReadVersion(string @namespace, int version)
    {
        string path = VersionPath(Key(@namespace), version);
        if (!File.Exists(path))
        {
            foreach ((int v, string key) in Versions(@namespace))
            {
                if (v == version) path = VersionPath(key, version);
            }
        }
        return ReadWinner(path, version, @namespace);
    }

    /// <summary>The record a version file names, checked against it: same id, version and (when known) namespace.</summary>
    private DictionaryRecord ReadWinner(string versionPath, int version, string? expectedNamespace)
    {
        byte[] bytes = ReadLimited(versionPath, MaxVersionFileBytes)
            ?? throw new InvalidDataException($"Version file {versionPath} disappeared; this store never deletes one.");
        if (!uint.TryParse(Encoding.ASCII.GetString(bytes), NumberStyles.None, CultureInfo.InvariantCulture, out uint id))
            throw new InvalidDataException($"Version file {versionPath} does not hold a dictionary id.");
        DictionaryRecord record = Get(id) ?? throw new InvalidDataException($"Version file {versionPath} names dictionary {id}, whose record {RecordPath(id)} is missing.");
        if (record.Id != id || record.Version != version || (expectedNamespace is not null && record.Namespace != expectedNamespace))
            throw new InvalidDataException(
                $"Dictionary record {RecordPath(id)} says id {record.Id}, version {record.Version} of '{record.Namespace}', but {versionPath} names it as id {id}, version {version}"
                + (expectedNamespace is null ? "." : $" of '{expectedNamespace}'."));
        return record;
    }

    /// <summary>
    /// The file's bytes, or <see langword="null"/> when it does not exist; a file over <paramref name="limit"/> bytes is
    /// refused unread, and so is anything but a regular file (a FIFO planted under a record's name would otherwise block
    /// the reader in open(2) forever, and with it every synchronous decode that misses the cache: found by review).
    /// </summary>
    private static byte[]? ReadLimited(string path, long limit)
    {
        FileStream? stream = OpenRegularFile(path);
        if (stream is null) return null;
        using (stream)
        {
            long length = stream.Length;
            if (length > limit) throw new InvalidDataException($"{path} has {length} bytes, over the {limit} a valid file can have; it was not read.");
            byte[] bytes = new byte[length];
            stream.ReadExactly(bytes);
            return bytes;
        }
    }

    /// <summary>Opens <paramref name="path"/> for reading without blocking, or <see langword="null"/> when it does not exist.</summary>
    /// <exception cref="InvalidDataException">It is not a regular file (a FIFO, a directory, a socket).</exception>
    private static FileStream? OpenRegularFile(string path)
    {
        int nonBlocking = OperatingSystem.IsLinux() ? 0x800 | 0x80000 // O_NONBLOCK | O_CLOEXEC
            : OperatingSystem.IsMacOS() ? 0x4 | 0x1000000
            : 0; // Windows has no FIFOs among files; other systems keep the plain open
        FileStream stream;
        if (nonBlocking == 0)
        {
            try
            {
                stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read | FileShare.Delete);
            }
            catch (FileNotFoundException)
            {
                return null;
            }
        }
        else
        {
            int fd = Open(path, nonBlocking);
            if (fd < 0)
            {
                int errno = Marshal.GetLastPInvokeError();
                if (errno == ENoEnt) return null;
                throw new IOException($"Could not open {path}: {Marshal.GetPInvokeErrorMessage(errno)} (errno {errno}).");
            }
            var handle = new SafeFileHandle(fd, ownsHandle: true);
            try
            {
                stream = new FileStream(handle, FileAccess.Read, bufferSize: 0);
            }
            catch
            {
                handle.Dispose();
                throw;
            }
        }
        if (stream.CanSeek && (File.GetAttributes(stream.SafeFileHandle) & FileAttributes.Directory) == 0) return stream;
        stream.Dispose();
        throw new InvalidDataException($"{path} is not a regular file; it was not read.");
    }

    private const int ENoEnt = 2; // the same on Linux and macOS

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    /// <summary>
    /// Creates <paramref name="path"/> with <paramref name="content"/> if it does not exist, atomically: the content is
    /// written to a temporary file first and then linked into place, so readers never see a partial file and of two
    /// writers exactly one succeeds.
    /// </summary>
    private bool TryCreateNew(string path, ReadOnlySpan<byte> content)
    {
        string temporary = Path.Combine(_directory, $".tmp-{Guid.NewGuid():N}");
        using (var stream = new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None))
        {
            stream.Write(content);
            stream.Flush(flushToDisk: true);
        }
        try
        {
            if (OperatingSystem.IsWindows())
            {
                // MoveFileEx without MOVEFILE_REPLACE_EXISTING fails atomically when the target exists.
                try
                {
                    File.Move(temporary, path, overwrite: false);
                    return true;
                }
                catch (IOException) when (File.Exists(path))
                {
                    return false;
                }
            }
            // On Unix File.Move(overwrite: false) checks, then renames, which can overwrite a file created in between;
            // link(2) fails atomically with EEXIST instead.
            if (Link(temporary, path) == 0) return true;
            int errno = Marshal.GetLastPInvokeError();
            if (errno == EExist) return false;
            throw new IOException($"Could not create {path} (errno {errno}).");
        }
        finally
        {
            File.Delete(temporary);
        }
    }

    private const int EExist = 17; // the same on Linux and macOS

    [LibraryImport("libc", EntryPoint = "link", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Link(string existingPath, string newPath);

    /// <summary>The versions of a namespace with the key each was found under (its key, or its 0.1.0 key: see <see cref="Key(string)"/>).</summary>
    private IEnumerable<(int Version, string Key)> Versions(string @namespace) =>
        Keys(@namespace).SelectMany(key => Directory.EnumerateFiles(_directory, key + ".v*.id")
            .Select(p => (Version: TryParseVersionFile(Path.GetFileName(p), out string k, out int v) && k == key ? v : 0, Key: key))
            .Where(v => v.Version > 0));

    /// <summary>The keys a namespace's version files may have: <see cref="Key(string)"/>, then the 0.1.0 key when it differs.</summary>
    private static string[] Keys(string @namespace)
    {
        string key = Key(@namespace);
        string legacy = Key(@namespace, keepUpperCase: true);
        return key == legacy ? [key] : [key, legacy];
    }

    private string RecordPath(uint id) => Path.Combine(_directory, id.ToString(CultureInfo.InvariantCulture) + ".dict.json");

    private string VersionPath(string key, int version) => Path.Combine(_directory, $"{key}.v{version.ToString(CultureInfo.InvariantCulture)}.id");

    private static bool TryParseVersionFile(string fileName, out string key, out int version)
    {
        key = "";
        version = 0;
        if (!fileName.EndsWith(".id", StringComparison.Ordinal)) return false;
        string name = fileName[..^3];
        int dot = name.LastIndexOf(".v", StringComparison.Ordinal);
        if (dot <= 0 || !int.TryParse(name.AsSpan(dot + 2), NumberStyles.None, CultureInfo.InvariantCulture, out version) || version < 1) return false;
        // Only the form this store writes: "v01" would list version 1 twice (found by review).
        if (name[dot + 2] == '0')
        {
            version = 0;
            return false;
        }
        key = name[..dot];
        return true;
    }

    /// <summary>
    /// A namespace's file-name key: lower-case letters, digits, '-' and '_' kept, every other UTF-8 byte %-escaped with
    /// upper-case hex digits (dots too, so the key never holds ".v"); when that is longer than <see cref="MaxPlainKeyLength"/>,
    /// its first 80 characters, '~', and 32 hex digits of the SHA-256 of the name ('~' is always escaped, so hashed keys never
    /// meet plain ones). Upper-case letters are escaped so that two names that differ only in case ("db.Orders" and
    /// "db.orders", two collections to MongoDB and Couchbase) keep different keys on file systems that ignore case
    /// (Windows', macOS's), where they shared their version files (found by review). Version 0.1.0 kept upper-case letters:
    /// the versions it claimed are still found (under either key), and new ones are claimed under this key, which 0.1.0
    /// does not read; records are found by id, so every document stays readable either way.
    /// </summary>
    internal static string Key(string @namespace) => Key(@namespace, keepUpperCase: false);

    /// <summary><see cref="Key(string)"/>, or with <paramref name="keepUpperCase"/> the key 0.1.0 wrote (letters of either case kept).</summary>
    private static string Key(string @namespace, bool keepUpperCase)
    {
        var sb = new StringBuilder(@namespace.Length);
        foreach (byte b in Encoding.UTF8.GetBytes(@namespace))
        {
            char c = (char)b;
            if (char.IsAsciiLetterLower(c) || char.IsAsciiDigit(c) || c is '-' or '_' || (keepUpperCase && char.IsAsciiLetterUpper(c))) sb.Append(c);
            else sb.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
        }
        if (sb.Length <= MaxPlainKeyLength) return sb.ToString();
        string hash = Convert.ToHexString(SHA256.HashData(Encoding.UTF8.GetBytes(@namespace)), 0, 16);
        return sb.ToString(0, 80) + "~" + hash;
    }

    /// <summary>
    /// A record file's JSON, as every version wrote it: the fields under their .NET names in the codec's order, integers and
    /// hashes as JSON numbers, the codec as its number, bytes in base64, and <c>"Shapes":null,"ShapesHash":0</c> when the
    /// record has no shape table (the JavaScript reader reads these files too).
    /// </summary>
    private sealed class RecordWriter : IDictionaryRecordWriter
    {
        private readonly System.Buffers.ArrayBufferWriter<byte> _buffer;
        private readonly Utf8JsonWriter _json;

        private RecordWriter(int capacity)
        {
            _buffer = new System.Buffers.ArrayBufferWriter<byte>(capacity);
            _json = new Utf8JsonWriter(_buffer, new JsonWriterOptions { Encoder = JsonSerializerOptions.Default.Encoder });
        }

        public static byte[] Write(DictionaryRecord record)
        {
            var writer = new RecordWriter((record.Content.Length + record.Shapes.Length) * 4 / 3 + 512);
            using (writer._json)
            {
                writer._json.WriteStartObject();
                DictionaryRecordCodec.Write(record, writer);
                writer._json.WriteEndObject();
            }
            return writer._buffer.WrittenSpan.ToArray();
        }

        public void WriteInteger(DictionaryRecordField field, long value) => _json.WriteNumber(field.ToString(), value);

        public void WriteText(DictionaryRecordField field, string value)
        {
            if (field == DictionaryRecordField.Codec) _json.WriteNumber(field.ToString(), (int)Enum.Parse<CompressionCodec>(value));
            else _json.WriteString(field.ToString(), value);
        }

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) => _json.WriteBase64String(field.ToString(), value.Span);

        public void WriteHash(DictionaryRecordField field, ulong value) => _json.WriteNumber(field.ToString(), value);

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => _json.WriteString(field.ToString(), value);

        public void WriteNumber(DictionaryRecordField field, double value) => _json.WriteNumber(field.ToString(), value);

        public void WriteAbsent(DictionaryRecordField field)
        {
            if (field == DictionaryRecordField.Shapes) _json.WriteNull(field.ToString());
            else _json.WriteNumber(field.ToString(), 0);
        }
    }

    /// <summary>A record file's fields, of the JSON types <see cref="RecordWriter"/> writes; <c>null</c> (and a zero <c>ShapesHash</c> without <c>Shapes</c>) is absent.</summary>
    private sealed class RecordReader(JsonElement root, string description) : IDictionaryRecordReader
    {
        public string Description => description;

        public string NameOf(DictionaryRecordField field) => field.ToString();

        public bool Contains(DictionaryRecordField field)
        {
            if (!root.TryGetProperty(field.ToString(), out JsonElement value) || value.ValueKind == JsonValueKind.Null) return false;
            // What the store writes for a record without a shape table.
            return field != DictionaryRecordField.ShapesHash || Contains(DictionaryRecordField.Shapes)
                || value.ValueKind != JsonValueKind.Number || !value.TryGetUInt64(out ulong hash) || hash != 0;
        }

        public long ReadInteger(DictionaryRecordField field)
        {
            if (field == DictionaryRecordField.Codec) throw new InvalidOperationException("The codec is text.");
            return Get(field, JsonValueKind.Number).TryGetInt64(out long value) ? value : throw Wrong(field, "a 64-bit integer");
        }

        public string ReadText(DictionaryRecordField field)
        {
            if (field != DictionaryRecordField.Codec) return Get(field, JsonValueKind.String).GetString()!;
            // The codec is stored as its number: the codec checks the name it stands for (an unknown number has none).
            return Get(field, JsonValueKind.Number).TryGetInt32(out int number) ? ((CompressionCodec)number).ToString() : throw Wrong(field, "a codec number");
        }

        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field) =>
            Get(field, JsonValueKind.String).TryGetBytesFromBase64(out byte[]? bytes) ? bytes : throw Wrong(field, "base64");

        public ulong ReadHash(DictionaryRecordField field) =>
            Get(field, JsonValueKind.Number).TryGetUInt64(out ulong value) ? value : throw Wrong(field, "an unsigned 64-bit integer");

        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) =>
            Get(field, JsonValueKind.String).TryGetDateTimeOffset(out DateTimeOffset value) ? value : throw Wrong(field, "a date");

        public double ReadNumber(DictionaryRecordField field) =>
            Get(field, JsonValueKind.Number).TryGetDouble(out double value) ? value : throw Wrong(field, "a number");

        private JsonElement Get(DictionaryRecordField field, JsonValueKind kind)
        {
            JsonElement value = root.GetProperty(field.ToString());
            return value.ValueKind == kind ? value : throw new InvalidDataException($"field '{field}' is a JSON {value.ValueKind}, not a {kind}");
        }

        private static InvalidDataException Wrong(DictionaryRecordField field, string expected) => new($"field '{field}' is not {expected}");
    }
}
