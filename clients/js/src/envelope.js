'use strict';

// The envelope (docs/format.md): header, payload, checksum; src/Compression.Core/Envelope/DocumentEnvelope.cs.
const { read32 } = require('./varint');
const { hash32, hash3 } = require('./hash');
const { corrupt } = require('./errors');
const { CODEC_NAMES, maxDecodedLength, decodeSimple } = require('./codecs');
const { decodePacked, decodeFields } = require('./structure');

const MAGIC = 0xc5;
const DEFAULT_MAX_UNCOMPRESSED = 64 * 1024 * 1024;
const FORMAT_NAMES = ['v1', 'v2', 'v3'];

function isEnvelope(data) {
  return data.length > 0 && data[0] === MAGIC;
}

/**
 * The envelope's header, or null when `data` is not an envelope (its first byte is not 0xC5: legacy plain data).
 * Throws InvalidDataError for an envelope that is corrupt, before anything of its declared size is allocated.
 */
function readHeader(data, maxUncompressedLength = DEFAULT_MAX_UNCOMPRESSED) {
  if (!isEnvelope(data)) return null;
  if (data.length < 3) corrupt(`Envelope truncated: ${data.length} bytes, the header alone needs at least 3.`);
  const flags = data[1];
  const codec = flags & 0x0f, version = (flags & 0x30) >> 4;
  const hasChecksum = (flags & 0x40) !== 0, hasDictionary = (flags & 0x80) !== 0;
  if (version > 2) corrupt(`Unknown envelope format version ${version} (v${version + 1}); this reader knows versions 0 (v1), 1 (v2) and 2 (v3).`);
  if (codec > 9) corrupt(`Unknown codec id ${codec}; known ids are 0-9 (stored, zstd, lz4, snappy, deflate, brotli, gzip, packed zstd, field zstd, field zstd folded checksum).`);
  if ((codec === 7 || codec === 8) && (version === 0 || !hasChecksum || !hasDictionary)) {
    corrupt(`Envelope of codec ${codec} (${codec === 7 ? 'packed zstd' : 'field zstd'}) is ${version === 0 ? 'format v1' : !hasChecksum ? 'without a checksum' : 'without a dictionary id'}; that codec exists only in formats v2 and v3, with a checksum and a dictionary id.`);
  }
  // Codec 9 (docs/format.md, "Codec 9"): codec 8 in v3 only, its checksum in the symbol stream's state, no trailer.
  if (codec === 9 && (version !== 2 || !hasChecksum || !hasDictionary)) {
    corrupt(`Envelope of codec 9 (field zstd folded checksum) is ${version !== 2 ? `format v${version + 1}` : !hasChecksum ? 'without a checksum' : 'without a dictionary id'}; that codec exists only in format v3, with a checksum and a dictionary id.`);
  }
  let offset = 2;
  const length = read32(data, offset);
  if (length === null) corrupt('Envelope truncated or corrupt: bad uncompressed-length varint.');
  offset += length[1];
  const declared = length[0];
  if (declared > maxUncompressedLength) corrupt(`Envelope declares ${declared} uncompressed bytes, over the limit of ${maxUncompressedLength} (MaxUncompressedLength).`);
  let dictionaryId = null;
  if (hasDictionary) {
    if (codec !== 1 && codec !== 7 && codec !== 8 && codec !== 9) corrupt(`Envelope of codec ${CODEC_NAMES[codec]} carries a dictionary id; only zstd, packed zstd and field zstd use dictionaries.`);
    const id = read32(data, offset);
    if (id === null) corrupt('Envelope truncated or corrupt: bad dictionary-id varint.');
    offset += id[1];
    dictionaryId = id[0];
  }
  const checksumLength = hasChecksum && codec !== 9 ? (version === 0 ? 4 : 2) : 0;
  const payloadLength = data.length - offset - checksumLength;
  if (payloadLength < 0) corrupt('Envelope truncated: no room for the checksum.');
  if (codec === 0 && payloadLength !== declared) corrupt(`Stored envelope declares ${declared} bytes but holds ${payloadLength}.`);
  if (declared > 0 && payloadLength === 0) corrupt(`Envelope truncated: it declares ${declared} bytes but has no payload.`);
  const most = maxDecodedLength(codec, payloadLength);
  if (declared > most) corrupt(`Envelope declares ${declared} bytes, but a ${CODEC_NAMES[codec]} payload of ${payloadLength} bytes decodes to at most ${most}.`);
  return {
    codec, codecName: CODEC_NAMES[codec], formatVersion: version, format: FORMAT_NAMES[version], uncompressedLength: declared,
    dictionaryId, hasChecksum, checksumLength, headerLength: offset, payloadLength,
  };
}

function checksumMatches(data, header, document, folded) {
  if (header.formatVersion === 0) return data.readUInt32LE(data.length - 4) === hash32(document);
  const low = header.formatVersion === 1 ? hash32(document) & 0xffff : Number(hash3(document) & 0xffffn);
  // Codec 9: the checksum the symbol stream's final state held; the others: the 2-byte trailer.
  return (folded !== null ? folded : data.readUInt16LE(data.length - 2)) === low;
}

/**
 * Decodes an envelope whose header was read, with the dictionary it names already resolved (`dictionary`: an object of
 * dictionaries.js, or null). Returns exactly the document's bytes, or throws InvalidDataError.
 */
function decodeWith(data, header, dictionary, requireChecksum = false) {
  if (requireChecksum && !header.hasChecksum) corrupt('Envelope has no checksum, and this reader requires one (requireChecksum).');
  const payload = data.subarray(header.headerLength, header.headerLength + header.payloadLength);
  const declared = header.uncompressedLength;
  let document, folded = null;
  if (header.codec === 7) document = decodePacked(payload, declared, dictionary);
  else if (header.codec === 8) document = decodeFields(payload, declared, dictionary);
  else if (header.codec === 9) ({ document, folded } = decodeFields(payload, declared, dictionary, true));
  else document = decodeSimple(header.codec, header.formatVersion, payload, declared, dictionary ? dictionary.zstd : null);
  if (header.hasChecksum && !checksumMatches(data, header, document, folded)) {
    document.fill(0);
    corrupt('Envelope checksum mismatch: the decoded document is not the one written (damaged envelope).');
  }
  return document;
}

module.exports = { MAGIC, DEFAULT_MAX_UNCOMPRESSED, isEnvelope, readHeader, decodeWith };
