using System.Buffers;
using Compression.Dictionaries;

namespace Compression.Benchmarks;

/// <summary>The engine calls the hot-path benchmark makes, in one place (the API moved between the before and after runs).</summary>
internal sealed class EngineAdapter(CompressionEngine engine, string @namespace)
{
    private readonly CompressionNamespace _namespace = engine.GetNamespace(@namespace);

    public DictionaryRecord? Current => _namespace.CurrentDictionary;

    public void Train(byte[][] training)
    {
        engine.WhenIdleAsync().GetAwaiter().GetResult();
        foreach (byte[] document in training) _namespace.Compress(document);
        engine.WhenIdleAsync().GetAwaiter().GetResult();
        if (Current is null) _namespace.TrainAsync().GetAwaiter().GetResult();
    }

    public byte[] Compress(byte[] document) => _namespace.Compress(document);

    public void Compress(byte[] document, IBufferWriter<byte> writer) => _namespace.Compress(document, writer);

    public void Decompress(byte[] envelope, IBufferWriter<byte> writer) => _namespace.Decompress(envelope, writer);
}
