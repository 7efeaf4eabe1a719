using Couchbase.Core.IO.Operations;
using Couchbase.Core.IO.Serializers;
using Couchbase.Core.IO.Transcoders;

namespace Compression.Couchbase.Internal;

/// <summary>
/// Writes bodies the caller already encoded (JSON flags) and reads bodies without decoding them (<see cref="RawBody"/>):
/// what the dictionary store uses, so that it checks a record's size before it parses it.
/// </summary>
internal sealed class RawBodyTranscoder : ITypeTranscoder
{
    public static RawBodyTranscoder Instance { get; } = new();

    public ITypeSerializer? Serializer { get; set; }

    public Flags GetFormat<T>(T value) =>
        typeof(T) == typeof(ReadOnlyMemory<byte>)
            ? new Flags { DataFormat = DataFormat.Json, Compression = global::Couchbase.Core.IO.Operations.Compression.None, TypeCode = TypeCode.Object }
            : throw new NotSupportedException($"{nameof(RawBodyTranscoder)} writes ReadOnlyMemory<byte> only, not {typeof(T).Name}.");

    public void Encode<T>(Stream stream, T value, Flags flags, OpCode opcode)
    {
        if (value is not ReadOnlyMemory<byte> body) throw new NotSupportedException($"{nameof(RawBodyTranscoder)} writes ReadOnlyMemory<byte> only, not {typeof(T).Name}.");
        stream.Write(body.Span);
    }

    public T? Decode<T>(ReadOnlyMemory<byte> buffer, Flags flags, OpCode opcode) =>
        typeof(T) == typeof(RawBody)
            ? (T)(object)new RawBody(buffer, flags)
            : throw new NotSupportedException($"{nameof(RawBodyTranscoder)} reads {nameof(RawBody)} only, not {typeof(T).Name}.");
}
