'use strict';

// The packed stream (docs/structure.md, "Packed stream") and its unpackers back to JSON text or BSON, as
// src/Compression.Core/Structure/Unpackers.cs and PackedReader.cs: every length checked against what remains,
// output never past the declared document length, nesting at most 128.
const { corrupt } = require('../errors');
const { isRawStringContent, KIND_JSON, KIND_BSON_ELEMENTS } = require('./shapeTable');

const MAX_DEPTH = 128;

class PackedReader {
  constructor(bytes, what = 'Packed stream') {
    this.b = bytes;
    this.at = 0;
    this.what = what;
  }

  get remaining() {
    return this.b.length - this.at;
  }

  truncated() {
    corrupt(`${this.what}: truncated at offset ${this.at} (of ${this.b.length}).`);
  }

  byte() {
    if (this.at >= this.b.length) this.truncated();
    return this.b[this.at++];
  }

  /** An unsigned varint of up to 64 bits: a Number below 2^49, else a BigInt. */
  varint() {
    const b = this.b;
    let at = this.at;
    if (at < b.length && b[at] < 0x80) {
      this.at = at + 1;
      return b[at];
    }
    let value = 0;
    for (let i = 0; i < 10; i++, at++) {
      if (at >= b.length) break;
      const x = b[at];
      if (i === 9 && x > 0x01) break;
      if (i < 7) value += (x & 0x7f) * 2 ** (7 * i);
      if ((x & 0x80) === 0) {
        if (i > 0 && x === 0) break;
        const start = this.at;
        this.at = at + 1;
        if (i < 7) return value;
        let big = 0n;
        for (let j = at; j >= start; j--) big = (big << 7n) | BigInt(b[j] & 0x7f);
        return big;
      }
    }
    corrupt(`${this.what}: truncated, over-long or non-minimal varint at offset ${this.at}.`);
  }

  /** A zigzag varint (64-bit signed): a Number when it is a safe integer, else a BigInt. */
  zigzag() {
    const u = this.varint();
    if (typeof u === 'number') return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    const v = BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
    return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
  }

  count(what) {
    const at = this.at;
    const value = this.varint();
    if (typeof value !== 'number' || value > this.remaining) corrupt(`${this.what}: ${what} ${value} at offset ${at} exceeds the ${this.remaining} bytes that remain.`);
    return value;
  }

  /** Skips `length` bytes and returns where they start (no view allocated). */
  take(length) {
    if (length > this.b.length - this.at) this.truncated();
    const at = this.at;
    this.at += length;
    return at;
  }

  bytes(length) {
    if (length > this.remaining) this.truncated();
    const s = this.b.subarray(this.at, this.at + length);
    this.at += length;
    return s;
  }

  end() {
    if (this.at !== this.b.length) corrupt(`${this.what}: ${this.b.length - this.at} bytes after the end of the document (offset ${this.at}).`);
  }
}

class Writer {
  constructor(capacity) {
    this.out = Buffer.allocUnsafe(capacity);
    this.at = 0;
  }

  tooLong() {
    corrupt(`Packed stream decodes to more than the ${this.out.length} bytes expected.`);
  }

  byte(v) {
    if (this.at >= this.out.length) this.tooLong();
    this.out[this.at++] = v;
  }

  bytes(src) {
    if (src.length > this.out.length - this.at) this.tooLong();
    if (src.length < 16) for (let i = 0; i < src.length; i++) this.out[this.at + i] = src[i];
    else src.copy(this.out, this.at);
    this.at += src.length;
  }

  /** Copies src[start..end) (no view allocated for short runs). */
  copy(src, start, end) {
    const n = end - start;
    if (n > this.out.length - this.at) this.tooLong();
    if (n < 32) {
      const out = this.out;
      let at = this.at;
      for (let i = start; i < end; i++) out[at++] = src[i];
    } else src.copy(this.out, this.at, start, end);
    this.at += n;
  }

  /** Writes a safe integer in decimal. */
  integer(v) {
    if (v < 0) {
      this.byte(0x2d);
      v = -v;
    }
    if (v < 10) {
      this.byte(0x30 + v);
      return;
    }
    let digits = 1;
    for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
    if (digits > this.out.length - this.at) this.tooLong();
    for (let i = this.at + digits - 1; i >= this.at; i--) {
      this.out[i] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    }
    this.at += digits;
  }

  ascii(text) {
    if (text.length > this.out.length - this.at) this.tooLong();
    for (let i = 0; i < text.length; i++) this.out[this.at + i] = text.charCodeAt(i);
    this.at += text.length;
  }

  reserve(n) {
    if (n > this.out.length - this.at) this.tooLong();
    const at = this.at;
    this.at += n;
    return at;
  }

  result() {
    return this.out.subarray(0, this.at);
  }
}

function shapeId(reader, table) {
  const at = reader.at;
  const id = reader.varint();
  if (typeof id !== 'number' || id > table.count) corrupt(`Packed stream: shape ${id} at offset ${at} is not in the table (${table.count} shapes).`);
  return id;
}

const NUMBER_BYTES = new Uint8Array(256);
for (const c of '0123456789+-.eE') NUMBER_BYTES[c.charCodeAt(0)] = 1;

/** Prints m / 10^s as JSON text (docs/structure.md, "Writing JSON back"); at most 18 digits. */
function decimalText(mantissa, scale, at) {
  const negative = mantissa < 0;
  const digits = (negative ? -mantissa : mantissa).toString();
  if (digits.length > 18) corrupt(`Packed stream: the number tagged at offset ${at} has more than 18 digits.`);
  if (scale === 0) return (negative ? '-' : '') + digits;
  const padded = digits.padStart(scale + 1, '0');
  return (negative ? '-' : '') + padded.slice(0, padded.length - scale) + '.' + padded.slice(padded.length - scale);
}

function unpackJson(table, packed, capacity) {
  const r = new PackedReader(packed);
  const w = new Writer(capacity);

  const value = (depth) => {
    const at = r.at;
    const tag = r.byte();
    if (tag >= 0x20) {
      const start = r.take(tag - 0x20);
      if (!isRawStringContent(packed, start, r.at)) corrupt(`Packed stream: the string tagged at offset ${at} is not JSON string content.`);
      w.byte(0x22);
      w.copy(packed, start, r.at);
      w.byte(0x22);
      return;
    }
    switch (tag) {
      case 0x00: w.ascii('null'); return;
      case 0x01: w.ascii('false'); return;
      case 0x02: w.ascii('true'); return;
      case 0x03: object(depth + 1); return;
      case 0x04: {
        if (depth + 1 > MAX_DEPTH) corrupt(`Packed stream: nesting deeper than ${MAX_DEPTH} at offset ${at}.`);
        const count = r.count('array length');
        w.byte(0x5b);
        for (let i = 0; i < count; i++) {
          if (i > 0) w.byte(0x2c);
          value(depth + 1);
        }
        w.byte(0x5d);
        return;
      }
      case 0x05: {
        const content = r.bytes(r.count('string length'));
        if (!isRawStringContent(content)) corrupt(`Packed stream: the string tagged at offset ${at} is not JSON string content.`);
        w.byte(0x22);
        w.bytes(content);
        w.byte(0x22);
        return;
      }
      case 0x08: {
        const text = r.bytes(r.count('number length'));
        if (text.length === 0 || text.some((b) => !NUMBER_BYTES[b])) corrupt(`Packed stream: the number text tagged at offset ${at} is empty or not a number's characters.`);
        w.bytes(text);
        return;
      }
      case 0x06: {
        const v = r.zigzag();
        if (typeof v === 'number' && v < 1e15 && v > -1e15) w.integer(v);
        else w.ascii(decimalText(v, 0, at));
        return;
      }
      default:
        if (tag >= 0x11 && tag <= 0x1f) {
          w.ascii(decimalText(r.zigzag(), tag - 0x10, at));
          return;
        }
        corrupt(`Packed stream: tag 0x${tag.toString(16).padStart(2, '0')} at offset ${at} is not a JSON value.`);
    }
  };

  const object = (depth) => {
    if (depth > MAX_DEPTH) corrupt(`Packed stream: nesting deeper than ${MAX_DEPTH} at offset ${r.at}.`);
    const id = shapeId(r, table);
    if (id !== 0) {
      const first = table.firstKey[id - 1], last = table.firstKey[id];
      if (first === last) w.byte(0x7b);
      for (let k = first; k < last; k++) {
        w.bytes(table.prefixes[k]);
        value(depth);
      }
      w.byte(0x7d);
      return;
    }
    w.byte(0x7b);
    const count = r.count('inline key count');
    for (let m = 0; m < count; m++) {
      if (m > 0) w.byte(0x2c);
      const key = r.bytes(r.count('key length'));
      if (!isRawStringContent(key)) corrupt(`Packed stream: an inline key near offset ${r.at} is not JSON string content.`);
      w.byte(0x22);
      w.bytes(key);
      w.byte(0x22);
      w.byte(0x3a);
      value(depth);
    }
    w.byte(0x7d);
  };

  object(1);
  r.end();
  return w.result();
}

const POWERS_OF_TEN = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
const MAX_DOUBLE_MANTISSA = 2 ** 53 - 1;
const RAW_TYPES = new Set([0x06, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x11, 0x13, 0x7f, 0xff]);

function bsonStringLength(rest, at) {
  if (rest.length - at < 5) return -1;
  const length = rest.readInt32LE(at);
  return length >= 1 && length <= rest.length - at - 4 && rest[at + 4 + length - 1] === 0 ? length : -1;
}

/** The bytes of a rare BSON value of `type` kept as stored, or -1 when `raw` is not exactly one (BsonShapeReader.RawValueLength). */
function rawValueLength(type, raw) {
  switch (type) {
    case 0x06: case 0x7f: case 0xff: return 0;
    case 0x0b: {
      const pattern = raw.indexOf(0);
      if (pattern < 0) return -1;
      const options = raw.indexOf(0, pattern + 1);
      return options < 0 ? -1 : options + 1;
    }
    case 0x0c: {
      const n = bsonStringLength(raw, 0);
      return n >= 0 && raw.length - 4 - n >= 12 ? 4 + n + 12 : -1;
    }
    case 0x0d: case 0x0e: {
      const n = bsonStringLength(raw, 0);
      return n >= 0 ? 4 + n : -1;
    }
    case 0x0f: {
      if (raw.length < 4) return -1;
      const total = raw.readInt32LE(0);
      if (total < 14 || total > raw.length) return -1;
      const inner = raw.subarray(4, total);
      const code = bsonStringLength(inner, 0);
      if (code < 0) return -1;
      const scope = inner.subarray(4 + code);
      return scope.length >= 5 && scope.readInt32LE(0) === scope.length && scope[scope.length - 1] === 0 ? total : -1;
    }
    case 0x11: return raw.length >= 8 ? 8 : -1;
    case 0x13: return raw.length >= 16 ? 16 : -1;
    default: return -1;
  }
}

function unpackBson(table, packed, capacity) {
  const r = new PackedReader(packed);
  const w = new Writer(capacity);

  const element = (name, depth, terminated) => {
    const at = r.at;
    const tag = r.byte();
    const typeAt = w.reserve(1);
    w.bytes(name);
    if (!terminated) w.byte(0);
    let type;
    if (tag >= 0x20 || tag === 0x05) {
      type = 0x02;
      const length = tag >= 0x20 ? tag - 0x20 : r.count('string length');
      const p = w.reserve(4);
      w.out.writeInt32LE(length + 1, p);
      w.bytes(r.bytes(length));
      w.byte(0);
    } else if (tag >= 0x10 && tag <= 0x1f) {
      type = 0x01;
      const m = r.zigzag();
      if (typeof m !== 'number' || m < -MAX_DOUBLE_MANTISSA || m > MAX_DOUBLE_MANTISSA) corrupt(`Packed stream: the decimal mantissa tagged at offset ${at} is out of range (${m}).`);
      const p = w.reserve(8);
      w.out.writeDoubleLE(m / POWERS_OF_TEN[tag - 0x10], p);
    } else {
      switch (tag) {
        case 0x00: type = 0x0a; break;
        case 0x01: case 0x02: type = 0x08; w.byte(tag === 0x02 ? 1 : 0); break;
        case 0x03: type = 0x03; document(false, depth + 1); break;
        case 0x04: type = 0x04; document(true, depth + 1); break;
        case 0x06: {
          type = 0x10;
          const v = r.zigzag();
          if (typeof v !== 'number' || v < -2147483648 || v > 2147483647) corrupt(`Packed stream: the int32 tagged at offset ${at} is out of range (${v}).`);
          w.out.writeInt32LE(v, w.reserve(4));
          break;
        }
        case 0x07: case 0x0a: {
          type = tag === 0x07 ? 0x12 : 0x09;
          const v = r.zigzag();
          w.out.writeBigInt64LE(BigInt(v), w.reserve(8));
          break;
        }
        case 0x09: type = 0x01; w.bytes(r.bytes(8)); break;
        case 0x0b: type = 0x07; w.bytes(r.bytes(12)); break;
        case 0x0c: {
          type = 0x05;
          const length = r.count('binary length');
          const subtype = r.byte();
          w.out.writeInt32LE(length, w.reserve(4));
          w.byte(subtype);
          w.bytes(r.bytes(length));
          break;
        }
        case 0x0d: {
          type = r.byte();
          const raw = r.bytes(r.count('raw value length'));
          if (!RAW_TYPES.has(type) || rawValueLength(type, raw) !== raw.length) {
            corrupt(`Packed stream: the raw BSON value tagged at offset ${at} (type 0x${type.toString(16).padStart(2, '0')}, ${raw.length} bytes) is not a value of that type.`);
          }
          w.bytes(raw);
          break;
        }
        default:
          corrupt(`Packed stream: tag 0x${tag.toString(16).padStart(2, '0')} at offset ${at} is not a BSON value.`);
      }
    }
    w.out[typeAt] = type;
  };

  const document = (isArray, depth) => {
    if (depth > MAX_DEPTH) corrupt(`Packed stream: nesting deeper than ${MAX_DEPTH} at offset ${r.at}.`);
    const start = w.reserve(4);
    let id = 0, count;
    if (isArray) count = r.count('array length');
    else {
      id = shapeId(r, table);
      count = id === 0 ? r.count('inline key count') : table.keyCount(id);
    }
    const first = id !== 0 ? table.firstKey[id - 1] : 0;
    for (let m = 0; m < count; m++) {
      if (isArray) element(Buffer.from(String(m), 'latin1'), depth, false);
      else if (id === 0) {
        const name = r.bytes(r.count('key length'));
        if (name.includes(0)) corrupt(`Packed stream: an inline key near offset ${r.at} holds a NUL byte.`);
        element(name, depth, false);
      } else element(table.prefixes[first + m], depth, true);
    }
    w.byte(0);
    w.out.writeInt32LE(w.at - start, start);
  };

  document(false, 1);
  r.end();
  return w.result();
}

/** Unpacks a packed stream with `table` into the document, of at most `capacity` bytes. */
function unpack(table, packed, capacity) {
  if (table.kind === KIND_JSON) return unpackJson(table, packed, capacity);
  if (table.kind !== KIND_BSON_ELEMENTS) return unpackBson(table, packed, capacity);
  // BSON elements: unpack the framing document, then hand out its elements.
  const framed = unpackBson(table, packed, capacity + 5);
  if (framed.length < 5) corrupt(`Packed stream decodes to a ${framed.length}-byte BSON document; the smallest has 5.`);
  return framed.subarray(4, framed.length - 1);
}

module.exports = { PackedReader, Writer, unpack, MAX_DEPTH };
