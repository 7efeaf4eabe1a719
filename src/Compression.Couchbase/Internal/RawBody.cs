using Couchbase.Core.IO.Operations;

namespace Compression.Couchbase.Internal;

/// <summary>
/// A document's body and flags as the server sent them, decoded by <see cref="CompressingTranscoder"/> or
/// <see cref="RawBodyTranscoder"/> when this type is asked for. <see cref="Data"/> points into the SDK's buffer: valid only
/// until the result it came from is disposed, so it is read at once and never kept.
/// </summary>
internal sealed class RawBody(ReadOnlyMemory<byte> data, Flags flags)
{
    public ReadOnlyMemory<byte> Data { get; } = data;

    public Flags Flags { get; } = flags;

    public bool IsEnvelope => BodyForm.IsEnvelope(Data.Span, Flags);
}
