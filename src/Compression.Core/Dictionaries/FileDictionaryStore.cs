using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;

namespace Compression.Dictionaries;

/// <summary>
/// An <see cref="IDictionaryStore"/> in a folder: for single-host applications, tools and tests that must survive a
/// restart. Every version is two files, each written aside and then linked into place, which fails if the name exists,
/// so publication is atomic and insert-only even between processes: <c>{id}.dict.json</c> (the record) and <c>{namespace}.v{version}.id</c> (which id won that
/// version). Nothing is ever deleted, except a record file that lost its version race, which no envelope can name.
/// Shared by several hosts only through a file system whose hard links are atomic (local file systems are).
/// </summary>
public sealed partial class FileDictionaryStore : ISynchronousDictionaryStore
{
    private readonly string _directory;

    /// <summary>Creates the store over <paramref name="directory"/>, creating the folder if needed.</summary>
    public FileDictionaryStore(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        _directory = Directory.CreateDirectory(directory).FullName;
    }

    /// <inheritdoc/>
    public DictionaryRecord? Get(uint id)
    {
        string path = RecordPath(id);
        if (!File.Exists(path)) return null;
        var stored = JsonSerializer.Deserialize<StoredRecord>(File.ReadAllBytes(path))
            ?? throw new InvalidDataException($"Dictionary record {path} is empty.");
        return stored.ToRecord();
    }

    /// <inheritdoc/>
    public ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(Get(id));
    }

    /// <inheritdoc/>
    public ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        int newest = Versions(@namespace).DefaultIfEmpty(0).Max();
        return ValueTask.FromResult(newest == 0 ? null : Get(ReadWinner(@namespace, newest)));
    }

    /// <inheritdoc/>
    public ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        cancellationToken.ThrowIfCancellationRequested();
        string versionPath = VersionPath(candidate.Namespace, candidate.Version);
        if (File.Exists(versionPath)) return ValueTask.FromResult(Get(ReadWinner(candidate.Namespace, candidate.Version))!);
        int newest = Versions(candidate.Namespace).DefaultIfEmpty(0).Max();
        if (candidate.Version <= newest) return ValueTask.FromResult(Get(ReadWinner(candidate.Namespace, candidate.Version))!); // published meanwhile
        if (candidate.Version != newest + 1)
            throw new ArgumentException($"Version {candidate.Version} does not follow the newest version ({newest}) of '{candidate.Namespace}'.", nameof(candidate));

        string recordPath = RecordPath(candidate.Id);
        if (!TryCreateNew(recordPath, JsonSerializer.SerializeToUtf8Bytes(StoredRecord.From(candidate))))
            throw new DictionaryIdConflictException(candidate.Id);

        if (!TryCreateNew(versionPath, Encoding.ASCII.GetBytes(candidate.Id.ToString(CultureInfo.InvariantCulture))))
        {
            File.Delete(recordPath); // lost the race for this version: no envelope names this id
            return ValueTask.FromResult(Get(ReadWinner(candidate.Namespace, candidate.Version))!);
        }
        return ValueTask.FromResult(candidate);
    }

    /// <inheritdoc/>
    public async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        IEnumerable<(string Namespace, int Version)> versions = Directory.EnumerateFiles(_directory, "*.id")
            .Select(ParseVersionFile)
            .Where(v => v.Version > 0 && (@namespace is null || v.Namespace == @namespace))
            .OrderBy(v => v.Namespace, StringComparer.Ordinal)
            .ThenBy(v => v.Version);
        foreach (var (ns, version) in versions)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (Get(ReadWinner(ns, version)) is { } record) yield return record;
        }
        await Task.CompletedTask.ConfigureAwait(false);
    }

    /// <summary>
    /// Creates <paramref name="path"/> with <paramref name="content"/> if it does not exist, atomically: the content is
    /// written to a temporary file first and then linked into place, so readers never see a partial file and of two
    /// writers exactly one succeeds.
    /// </summary>
    private static bool TryCreateNew(string path, ReadOnlySpan<byte> content)
    {
        string temporary = $"{path}.{Guid.NewGuid():N}.tmp";
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

    private IEnumerable<int> Versions(string @namespace) =>
        Directory.EnumerateFiles(_directory, Escape(@namespace) + ".v*.id").Select(ParseVersionFile).Where(v => v.Namespace == @namespace).Select(v => v.Version);

    private uint ReadWinner(string @namespace, int version) =>
        uint.Parse(File.ReadAllText(VersionPath(@namespace, version)), NumberStyles.None, CultureInfo.InvariantCulture);

    private string RecordPath(uint id) => Path.Combine(_directory, id.ToString(CultureInfo.InvariantCulture) + ".dict.json");

    private string VersionPath(string @namespace, int version) =>
        Path.Combine(_directory, $"{Escape(@namespace)}.v{version.ToString(CultureInfo.InvariantCulture)}.id");

    private static (string Namespace, int Version) ParseVersionFile(string path)
    {
        string name = Path.GetFileNameWithoutExtension(path);
        int dot = name.LastIndexOf(".v", StringComparison.Ordinal);
        return dot > 0 && int.TryParse(name.AsSpan(dot + 2), NumberStyles.None, CultureInfo.InvariantCulture, out int version)
            ? (Uri.UnescapeDataString(name[..dot]), version)
            : ("", 0);
    }

    /// <summary>Namespaces become file names: everything but letters, digits, '-' and '_' is %-escaped (dots too).</summary>
    private static string Escape(string @namespace)
    {
        var sb = new StringBuilder(@namespace.Length);
        foreach (byte b in Encoding.UTF8.GetBytes(@namespace))
        {
            char c = (char)b;
            if (char.IsAsciiLetterOrDigit(c) || c is '-' or '_') sb.Append(c);
            else sb.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
        }
        return sb.ToString();
    }

    private sealed record StoredRecord(uint Id, string Namespace, int Version, byte[] Content, DateTimeOffset Created, CompressionCodec Codec, int Level, int SampleCount, double Ratio)
    {
        public static StoredRecord From(DictionaryRecord r) => new(r.Id, r.Namespace, r.Version, r.Content.ToArray(), r.Created, r.Codec, r.Level, r.SampleCount, r.Ratio);

        public DictionaryRecord ToRecord() => new()
        {
            Id = Id, Namespace = Namespace, Version = Version, Content = Content, Created = Created, Codec = Codec, Level = Level, SampleCount = SampleCount, Ratio = Ratio,
        };
    }
}
