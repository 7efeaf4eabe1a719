'use strict';

// The codecs of docs/format.md ("Codecs and payloads"), each refusing what the .NET engine refuses
// (src/Compression.Core/Codecs). Every decoder is handed the declared length and must produce exactly that.
const zlib = require('node:zlib');
const lz4js = require('lz4js');
const snappyjs = require('snappyjs');
const zstd = require('./zstd');
const { corrupt } = require('./errors');

const CODEC_NAMES = ['stored', 'zstd', 'lz4', 'snappy', 'deflate', 'brotli', 'gzip', 'packedZstd', 'fieldZstd', 'fieldZstdFoldedChecksum'];
const MAX_DOCUMENT_PACKED = 128 * 1024;

/** The most a payload of `p` bytes can decode to (docs/format.md, "Declared lengths are claims"). */
function maxDecodedLength(codec, p) {
  switch (codec) {
    case 0: return p;
    case 1: return (p * 131072) / 4;
    case 2: return 255 * p;
    case 3: return Math.floor((64 * p) / 3);
    case 4: case 6: return 1032 * p;
    case 5: return Math.floor((p + 3) / 4) * 2 ** 24;
    default: return MAX_DOCUMENT_PACKED; // 7, 8 and 9
  }
}

function lengthMismatch(produced, declared) {
  corrupt(`Payload decodes to ${produced} bytes, the envelope declares ${declared}.`);
}

/**
 * Walks an LZ4 block's sequences (lengths and offsets only): the bytes it produces, or -1 when it is corrupt or
 * truncated. Stops once past `limit`. (Lz4Codec.BlockLength.)
 */
function lz4BlockLength(src, limit) {
  let position = 0, produced = 0;
  for (;;) {
    if (position >= src.length) return -1;
    const token = src[position++];
    let literals = token >> 4;
    if (literals === 15) {
      let b;
      do {
        if (position >= src.length) return -1;
        b = src[position++];
        literals += b;
      } while (b === 255);
    }
    if (literals > src.length - position) return -1;
    position += literals;
    produced += literals;
    if (position === src.length) return produced;
    if (src.length - position < 2) return -1;
    const offset = src[position] | (src[position + 1] << 8);
    position += 2;
    if (offset === 0 || offset > produced) return -1;
    let match = token & 15;
    if (match === 15) {
      let b;
      do {
        if (position >= src.length) return -1;
        b = src[position++];
        match += b;
      } while (b === 255);
    }
    produced += match + 4;
    if (produced > limit) return produced;
  }
}

/**
 * Walks a raw snappy stream: its preamble, then its elements up to `length` bytes, checking every copy's offset. The
 * position where the elements end, or -1. (SnappyCodec.StreamLength, with offsets checked as well.)
 */
function snappyStreamLength(src, length) {
  let position = 0;
  while (position < src.length && (src[position++] & 0x80) !== 0) { /* the length varint */ }
  let produced = 0;
  while (produced < length && position < src.length) {
    const tag = src[position++];
    let offset;
    switch (tag & 3) {
      case 0: {
        let size = tag >> 2;
        if (size >= 60) {
          const extra = size - 59;
          if (position + extra > src.length) return -1;
          size = 0;
          for (let i = 0; i < extra; i++) size += src[position + i] * 2 ** (8 * i);
          position += extra;
        }
        produced += size + 1;
        position += size + 1;
        continue;
      }
      case 1:
        if (position + 1 > src.length) return -1;
        offset = ((tag >> 5) << 8) | src[position];
        produced += ((tag >> 2) & 7) + 4;
        position += 1;
        break;
      case 2:
        if (position + 2 > src.length) return -1;
        offset = src[position] | (src[position + 1] << 8);
        produced += (tag >> 2) + 1;
        position += 2;
        break;
      default:
        if (position + 4 > src.length) return -1;
        offset = (src[position] | (src[position + 1] << 8) | (src[position + 2] << 16)) + src[position + 3] * 2 ** 24;
        produced += (tag >> 2) + 1;
        position += 4;
        break;
    }
    const copyLength = tag & 3 ? ((tag & 3) === 1 ? ((tag >> 2) & 7) + 4 : (tag >> 2) + 1) : 0;
    if (offset === 0 || offset > produced - copyLength) return -1;
  }
  return produced === length && position <= src.length ? position : -1;
}

function snappyPreamble(src) {
  let value = 0;
  for (let i = 0; i < 5 && i < src.length; i++) {
    value += (src[i] & 0x7f) * 2 ** (7 * i);
    if ((src[i] & 0x80) === 0) return value;
  }
  return -1;
}

/** zlib's one-shot decoders, bounded by the declared length, and every input byte used. */
function zlibDecode(fn, payload, declared, name) {
  let result;
  try {
    result = fn(payload, { maxOutputLength: Math.max(1, declared), info: true });
  } catch (e) {
    if (e.code === 'ERR_BUFFER_TOO_LARGE') corrupt(`${name} payload decodes to more than the ${declared} bytes the envelope declares.`);
    corrupt(`${name} payload is corrupt or truncated (${e.code || e.message}).`);
  }
  const { buffer, engine } = result;
  if (engine.bytesWritten !== payload.length) corrupt(`${name} payload has ${payload.length - engine.bytesWritten} bytes after the end of its stream.`);
  if (buffer.length !== declared) lengthMismatch(buffer.length, declared);
  return buffer;
}

/** Decodes a payload of codecs 0-6 into exactly `declared` bytes (codecs 7 and 8 are structure.js's). */
function decodeSimple(codec, format, payload, declared, dictionary) {
  switch (codec) {
    case 0:
      if (payload.length !== declared) lengthMismatch(payload.length, declared);
      return Buffer.from(payload);
    case 1: {
      if (format !== 0 && declared <= zstd.MAX_BLOCK) {
        const out = zstd.decodeBlock(payload, declared, dictionary, declared);
        if (out.length !== declared) lengthMismatch(out.length, declared);
        return out;
      }
      return zstd.decodeMagicless(payload, declared, dictionary);
    }
    case 2: {
      const produced = lz4BlockLength(payload, declared);
      if (produced < 0) corrupt('LZ4 payload is corrupt or truncated (walking its sequences).');
      if (produced > declared) corrupt(`lz4 payload decodes to more than the ${declared} bytes the envelope declares.`);
      if (produced !== declared) lengthMismatch(produced, declared);
      const out = Buffer.alloc(declared);
      const n = declared === 0 ? 0 : lz4js.decompressBlock(payload, out, 0, payload.length, 0);
      if (n !== declared) lengthMismatch(n, declared);
      return out;
    }
    case 3: {
      const preamble = snappyPreamble(payload);
      if (preamble !== declared) lengthMismatch(preamble, declared);
      if (snappyStreamLength(payload, declared) !== payload.length) corrupt('Snappy payload is corrupt, truncated, or its elements do not end with the stream.');
      let out;
      try {
        out = Buffer.from(snappyjs.uncompress(payload, declared));
      } catch (e) {
        corrupt(`Snappy payload is corrupt (${e.message}).`);
      }
      if (out.length !== declared) lengthMismatch(out.length, declared);
      return out;
    }
    case 4:
      return zlibDecode(zlib.inflateRawSync, payload, declared, 'Deflate');
    case 5:
      return zlibDecode(zlib.brotliDecompressSync, payload, declared, 'Brotli');
    case 6: {
      const out = zlibDecode(zlib.gunzipSync, payload, declared, 'Gzip');
      const n = payload.length;
      if (n < 18 || payload.readUInt32LE(n - 8) !== zlib.crc32(out) || payload.readUInt32LE(n - 4) !== declared >>> 0) {
        corrupt('Gzip payload does not end with the CRC-32 and length of its data (cut, extended or corrupt).');
      }
      return out;
    }
    default:
      throw new Error(`codec ${codec} is not decoded here`);
  }
}

module.exports = { CODEC_NAMES, maxDecodedLength, decodeSimple, lz4BlockLength, snappyStreamLength };
