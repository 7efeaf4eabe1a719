using Compression.Dictionaries;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>Movies written through an engine's namespace around its first training, for the structure and field model engine tests.</summary>
internal static class MovieWrites
{
    /// <summary>
    /// Writes 400 movies (the engine's options: <see cref="CompressionEngineOptionsBuilder.TrainOnceAt"/> 400), waits for
    /// training (or trains), then writes <paramref name="after"/> more with the dictionary; returns every document with its
    /// envelope, and the record in use.
    /// </summary>
    public static async Task<(List<(byte[] Document, byte[] Envelope)> Written, DictionaryRecord Record)> WriteAsync(
        CompressionEngine engine, string @namespace, int seed, int after)
    {
        var ns = engine.GetNamespace(@namespace);
        var random = new Random(seed);
        var written = new List<(byte[], byte[])>();
        for (int i = 0; i < 400; i++)
        {
            byte[] document = TestDocuments.Movie(random);
            written.Add((document, ns.Compress(document)));
        }
        await engine.WhenIdleAsync();
        DictionaryRecord record = ns.CurrentDictionary ?? (await ns.TrainAsync()).Dictionary ?? throw new InvalidOperationException("no dictionary");
        for (int i = 0; i < after; i++)
        {
            byte[] document = TestDocuments.Movie(random);
            written.Add((document, ns.Compress(document)));
        }
        return (written, record);
    }
}
