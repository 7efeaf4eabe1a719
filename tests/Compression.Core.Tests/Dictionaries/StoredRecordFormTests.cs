using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>
/// Records already stored keep their exact form: the folder store reads the records an earlier version wrote (the
/// JavaScript reader's fixture, clients/js/test/fixtures/dotnet/files) and writes them again byte for byte.
/// </summary>
public sealed class StoredRecordFormTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("stored-form-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    internal static string FixtureFiles()
    {
        string? directory = AppContext.BaseDirectory;
        while (directory is not null && !File.Exists(Path.Combine(directory, "Compression.sln"))) directory = Path.GetDirectoryName(directory);
        Assert.NotNull(directory);
        return Path.Combine(directory, "clients", "js", "test", "fixtures", "dotnet", "files");
    }

    [Fact]
    public async Task FolderRecords_WrittenBeforeTheCodec_ReadAndAreWrittenAgainByteForByte()
    {
        string fixture = FixtureFiles();
        string[] records = Directory.GetFiles(fixture, "*.dict.json");
        Assert.Equal(4, records.Length);
        var old = new FileDictionaryStore(fixture);
        var copy = new FileDictionaryStore(_directory);
        int withShapes = 0;
        foreach (string path in records)
        {
            uint id = uint.Parse(Path.GetFileName(path).Split('.')[0], System.Globalization.CultureInfo.InvariantCulture);
            DictionaryRecord record = old.Get(id)!;
            Assert.Equal(id, record.Id);
            Assert.Equal(DictionaryRecord.ComputeContentHash(record.Content.Span), record.ContentHash);
            if (!record.Shapes.IsEmpty) withShapes++;
            Assert.Same(record, await copy.PublishAsync(record));
            Assert.Equal(File.ReadAllBytes(path), File.ReadAllBytes(Path.Combine(_directory, Path.GetFileName(path))));
        }
        Assert.Equal(3, withShapes); // and one written before shape tables: "Shapes":null,"ShapesHash":0

        var listed = new List<DictionaryRecord>();
        await foreach (DictionaryRecord record in old.ListAsync()) listed.Add(record);
        Assert.Equal([1, 2, 3, 4], listed.Select(r => r.Version));
        foreach (string version in Directory.GetFiles(fixture, "*.id"))
            Assert.Equal(File.ReadAllBytes(version), File.ReadAllBytes(Path.Combine(_directory, Path.GetFileName(version))));
    }
}
