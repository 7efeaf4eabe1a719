using System.Buffers.Binary;
using System.Text.Json;
using Compression;

namespace Compression.StorageLoad;

/// <summary>
/// Sums, over the documents, the bytes of each part of a stored <c>{_id, _z: BinData(0x81 or 0x80, envelope)}</c> document:
/// the BSON wrapper (document length and terminator, the <c>_id</c> element, the <c>_z</c> element's type, name,
/// length and subtype) and the envelope (magic, header byte, length varint, dictionary id varint, checksum, zstd frame
/// header, zstd block headers, the rest: compressed content, or the document itself when stored). Format v1 zstd
/// payloads are frames (frame and block headers counted); formats v2 and v3 ones of up to 128 KiB are raw blocks (none).
/// With a <see cref="InnerFraming"/> callback it also measures what the compressed part's own BSON framing (its int32
/// length and terminator, 5 bytes before compression) costs after compression.
/// </summary>
internal sealed class Overhead
{
    private long _documents, _plain, _stored, _envelope, _documentFraming, _idElement, _zElementHeader;
    private long _magic, _header, _lengthVarint, _dictionaryVarint, _checksum, _frameHeader, _blockHeaders, _content;
    private long _withDictionary, _storedCodec, _innerFraming, _innerFramingMeasured, _elementsOnly;

    /// <summary>Given an envelope, the bytes its content would lose if the compressed BSON document lost its int32 length and terminator (null: not measured).</summary>
    public Func<byte[], bool, long?>? InnerFraming { get; init; }

    public long Documents => _documents;

    public void Add(byte[] plain, byte[] stored)
    {
        _documents++;
        _plain += plain.Length;
        _stored += stored.Length;
        _documentFraming += 5; // int32 length + terminating 0
        int offset = 4;
        ReadOnlySpan<byte> envelope = default;
        bool elementsOnly = false;
        while (stored[offset] != 0)
        {
            int start = offset;
            byte type = stored[offset++];
            int nameEnd = Array.IndexOf(stored, (byte)0, offset);
            string name = System.Text.Encoding.UTF8.GetString(stored, offset, nameEnd - offset);
            offset = nameEnd + 1;
            int valueLength = ValueLength(type, stored.AsSpan(offset));
            if (name == "_z" && type == 0x05)
            {
                int binaryLength = BinaryPrimitives.ReadInt32LittleEndian(stored.AsSpan(offset));
                envelope = stored.AsSpan(offset + 5, binaryLength);
                elementsOnly = stored[offset + 4] == 0x81;
                _zElementHeader += offset + 5 - start;
            }
            else if (name == "_id")
            {
                _idElement += offset + valueLength - start;
            }
            else
            {
                throw new InvalidDataException($"unexpected element '{name}' in a stored document");
            }
            offset += valueLength;
        }
        if (envelope.IsEmpty) throw new InvalidDataException("stored document without _z");
        _envelope += envelope.Length;

        if (!DocumentEnvelope.TryReadHeader(envelope, out var header))
            throw new InvalidDataException("_z does not hold an envelope");
        _magic++;
        _header++;
        _lengthVarint += VarintLength((uint)header.UncompressedLength);
        if (header.DictionaryId is uint dictionaryId)
        {
            _dictionaryVarint += VarintLength(dictionaryId);
            _withDictionary++;
        }
        _checksum += header.ChecksumLength;
        ReadOnlySpan<byte> payload = envelope.Slice(header.HeaderLength, header.PayloadLength);
        bool block = header.Format != EnvelopeFormat.V1 && header.UncompressedLength <= 128 * 1024;
        if (header.Codec == CompressionCodec.Zstd && !block)
        {
            (int frameHeader, int blockHeaders) = ZstdFraming(payload);
            _frameHeader += frameHeader;
            _blockHeaders += blockHeaders;
            _content += payload.Length - frameHeader - blockHeaders;
        }
        else
        {
            if (header.Codec == CompressionCodec.Stored) _storedCodec++;
            _content += payload.Length;
        }
        if (elementsOnly) _elementsOnly++;
        if (InnerFraming?.Invoke(envelope.ToArray(), elementsOnly) is long cost)
        {
            _innerFraming += cost;
            _innerFramingMeasured++;
        }
    }

    public void Write(Utf8JsonWriter json)
    {
        json.WriteStartObject("overhead");
        json.WriteNumber("documents", _documents);
        json.WriteNumber("withDictionary", _withDictionary);
        json.WriteNumber("storedUncompressed", _storedCodec);
        json.WriteNumber("plainBytes", _plain);
        json.WriteNumber("storedBytes", _stored);
        json.WriteNumber("envelopeBytes", _envelope);
        json.WriteNumber("wrapperBytes", _stored - _envelope);
        json.WriteStartObject("wrapper");
        json.WriteNumber("documentLengthAndTerminator", _documentFraming);
        json.WriteNumber("idElement", _idElement);
        json.WriteNumber("zElementHeader", _zElementHeader);
        json.WriteEndObject();
        json.WriteStartObject("envelope");
        json.WriteNumber("magic", _magic);
        json.WriteNumber("header", _header);
        json.WriteNumber("lengthVarint", _lengthVarint);
        json.WriteNumber("dictionaryIdVarint", _dictionaryVarint);
        json.WriteNumber("checksum", _checksum);
        json.WriteNumber("zstdFrameHeader", _frameHeader);
        json.WriteNumber("zstdBlockHeaders", _blockHeaders);
        json.WriteNumber("content", _content);
        json.WriteEndObject();
        json.WriteEndObject();
    }

    /// <summary>The rows of the per-document table: title, average bytes per document (or a note).</summary>
    public IReadOnlyList<(string Title, string Value)> Rows()
    {
        double n = _documents;
        string Avg(long total) => (total / n).ToString("F2", System.Globalization.CultureInfo.InvariantCulture);
        long framing = _envelope - _content;
        return
        [
            ("BSON document length + terminator", Avg(_documentFraming)),
            ("`_id` element", Avg(_idElement)),
            ("`_z` element header (type 1, name `_z\\0` 3, int32 length 4, subtype 1)", Avg(_zElementHeader)),
            ("**BSON wrapper**", Avg(_stored - _envelope)),
            ("envelope magic", Avg(_magic)),
            ("envelope header byte", Avg(_header)),
            ("uncompressed length varint", Avg(_lengthVarint)),
            ("dictionary id varint", Avg(_dictionaryVarint)),
            ("checksum", Avg(_checksum)),
            ("zstd frame header", Avg(_frameHeader)),
            ("zstd block header", Avg(_blockHeaders)),
            ("**envelope framing**", Avg(framing)),
            ("compressed content", Avg(_content)),
            ("inner BSON length + terminator, in the compressed content (subtype 0x81: not stored)",
                _elementsOnly == _documents ? "0 (not stored)" : _innerFramingMeasured == 0 ? "-"
                    : (_elementsOnly == 0 ? "" : "mixed: ") + (_innerFraming / (double)_innerFramingMeasured).ToString("F2", System.Globalization.CultureInfo.InvariantCulture)),
            ("**stored document**", Avg(_stored)),
            ("plain BSON document", Avg(_plain)),
            ("wrapper + framing, share of stored bytes", ((_stored - _envelope + framing) / (double)_stored).ToString("P0", System.Globalization.CultureInfo.InvariantCulture)),
            ("documents with a dictionary", $"{_withDictionary:N0} of {_documents:N0}"),
        ];
    }

    private static int VarintLength(uint value)
    {
        int n = 1;
        while (value >= 0x80) { value >>= 7; n++; }
        return n;
    }

    /// <summary>The frame header and block header bytes of a zstd frame (magicless frames, as the envelope stores them).</summary>
    private static (int FrameHeader, int BlockHeaders) ZstdFraming(ReadOnlySpan<byte> frame)
    {
        byte descriptor = frame[0];
        int contentSizeFlag = descriptor >> 6;
        bool singleSegment = (descriptor & 0x20) != 0;
        int dictionaryIdFlag = descriptor & 3;
        int header = 1 + (singleSegment ? 0 : 1) + dictionaryIdFlag switch { 0 => 0, 1 => 1, 2 => 2, _ => 4 }
            + contentSizeFlag switch { 0 => singleSegment ? 1 : 0, 1 => 2, 2 => 4, _ => 8 };
        if ((descriptor & 0x04) != 0) throw new InvalidDataException("zstd frame with a checksum: the envelope's frames have none");
        int offset = header, blocks = 0;
        while (true)
        {
            int block = frame[offset] | frame[offset + 1] << 8 | frame[offset + 2] << 16;
            offset += 3;
            blocks++;
            int type = (block >> 1) & 3;
            offset += type == 1 ? 1 : block >> 3;
            if ((block & 1) != 0) break;
        }
        if (offset != frame.Length) throw new InvalidDataException($"zstd frame of {frame.Length} bytes parsed as {offset}");
        return (header, 3 * blocks);
    }

    /// <summary>Length of a BSON value of the types an <c>_id</c> or <c>_z</c> can have here.</summary>
    private static int ValueLength(byte type, ReadOnlySpan<byte> value) => type switch
    {
        0x01 or 0x09 or 0x11 or 0x12 => 8,
        0x10 => 4,
        0x08 => 1,
        0x07 => 12,
        0x0A => 0,
        0x02 => 4 + BinaryPrimitives.ReadInt32LittleEndian(value),
        0x05 => 5 + BinaryPrimitives.ReadInt32LittleEndian(value),
        0x03 or 0x04 => BinaryPrimitives.ReadInt32LittleEndian(value),
        _ => throw new InvalidDataException($"_id of BSON type 0x{type:x2} is not handled by the overhead count"),
    };
}
