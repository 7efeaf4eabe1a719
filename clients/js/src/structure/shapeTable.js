'use strict';

// The shape table (docs/structure.md, "Shape table"), parsed as src/Compression.Core/Structure/ShapeTable.cs parses it:
// nothing read from a store is trusted, every field is checked.
const { hash32 } = require('../hash');
const { read32 } = require('../varint');
const { corrupt } = require('../errors');

const KIND_JSON = 1, KIND_BSON = 2, KIND_BSON_ELEMENTS = 3;
const MAX_SHAPES = 4096;
const MAX_KEYS_PER_SHAPE = 65535;
const DEFAULT_MAX_LENGTH = 1024 * 1024;
const HEADER = 7, CHECKSUM = 4;

/** Whether raw JSON string content could stand between quotes: no unescaped '"', no '\' at the end. */
function isRawStringContent(bytes, start = 0, end = bytes.length) {
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b === 0x22) return false;
    if (b === 0x5c && ++i >= end) return false;
  }
  return true;
}

class ShapeTable {
  constructor(kind, keys, firstKey) {
    this.kind = kind;
    this.keys = keys; // Buffer per key, table-wide
    this.firstKey = firstKey; // shape id s (1-based) has keys firstKey[s-1] .. firstKey[s]
    this.count = firstKey.length - 1;
    this.totalKeys = firstKey[firstKey.length - 1];
    // What the unpackers write before each member's value: JSON '{"key":' or ',"key":'; BSON the key and its NUL.
    this.prefixes = new Array(keys.length);
    for (let s = 0; s < this.count; s++) {
      for (let k = firstKey[s]; k < firstKey[s + 1]; k++) {
        this.prefixes[k] = kind === KIND_JSON
          ? Buffer.concat([Buffer.from(k === firstKey[s] ? '{"' : ',"', 'latin1'), keys[k], Buffer.from('":', 'latin1')])
          : Buffer.concat([keys[k], Buffer.from([0])]);
      }
    }
  }

  keyCount(id) {
    return this.firstKey[id] - this.firstKey[id - 1];
  }

  firstKeyOf(id) {
    return this.firstKey[id - 1];
  }

  static parse(bytes, maxLength = DEFAULT_MAX_LENGTH) {
    if (bytes.length > maxLength) corrupt(`Shape table has ${bytes.length} bytes; the limit is ${maxLength}.`);
    if (bytes.length < HEADER + 1 + CHECKSUM) corrupt(`Shape table has ${bytes.length} bytes; at least ${HEADER + 1 + CHECKSUM} are needed.`);
    if (bytes.toString('latin1', 0, 4) !== 'SHPT') corrupt(`Shape table does not start with the magic 'SHPT' (found ${bytes.toString('hex', 0, 4).toUpperCase()}).`);
    if (bytes[4] !== 1) corrupt(`Shape table format version ${bytes[4]} is not supported; this reader knows version 1.`);
    const kind = bytes[5];
    if (kind !== KIND_JSON && kind !== KIND_BSON && kind !== KIND_BSON_ELEMENTS) corrupt(`Shape table kind ${kind} is unknown; allowed: 1 (JSON), 2 (BSON), 3 (BSON elements).`);
    if (bytes[6] !== 0) corrupt(`Shape table: the reserved byte is 0x${bytes[6].toString(16).padStart(2, '0')}; this reader knows only 0.`);
    const end = bytes.length - CHECKSUM;
    const body = bytes.subarray(0, end);
    const stored = bytes.readUInt32LE(end), actual = hash32(body);
    if (stored !== actual) corrupt(`Shape table checksum mismatch (stored 0x${stored.toString(16).padStart(8, '0')}, computed 0x${actual.toString(16).padStart(8, '0')}).`);
    let at = HEADER;
    const count = (what, max) => {
      const r = read32(body, at);
      if (r === null) corrupt(`Shape table: the ${what} is truncated or not a minimal varint.`);
      if (r[0] > max) corrupt(`Shape table: the ${what} is ${r[0]}; at most ${max} allowed.`);
      at += r[1];
      return r[0];
    };
    const shapeCount = count('shape count', 0x7fffffff);
    if (shapeCount > MAX_SHAPES) corrupt(`Shape table: the shape count is ${shapeCount}; the limit is ${MAX_SHAPES} (the most shapes training produces).`);
    if (shapeCount > end - at) corrupt(`Shape table: the shape count is ${shapeCount}; only ${end - at} bytes remain.`);
    const firstKey = new Array(shapeCount + 1).fill(0);
    const keys = [];
    const runs = new Set();
    for (let s = 0; s < shapeCount; s++) {
      const runStart = at;
      const keyCount = count(`key count of shape ${s + 1}`, Math.min(MAX_KEYS_PER_SHAPE, end - at - 1));
      for (let k = 0; k < keyCount; k++) {
        const length = count(`length of key ${k} of shape ${s + 1}`, 0x7fffffff);
        if (length > end - at) corrupt(`Shape table: key ${k} of shape ${s + 1} declares ${length} bytes; ${end - at} remain.`);
        const key = body.subarray(at, at + length);
        const valid = kind === KIND_JSON ? isRawStringContent(key) : !key.includes(0);
        if (!valid) corrupt(`Shape table: key ${k} of shape ${s + 1} is not a valid ${['', 'Json', 'Bson', 'BsonElements'][kind]} key (${key.subarray(0, 32).toString('hex').toUpperCase()}).`);
        keys.push(Buffer.from(key));
        at += length;
      }
      firstKey[s + 1] = keys.length;
      // A key list has one encoding: two equal runs of bytes are the same list.
      const run = body.toString('latin1', runStart, at);
      if (runs.has(run)) corrupt(`Shape table: shape ${s + 1} repeats the key list of an earlier shape.`);
      runs.add(run);
    }
    if (at !== end) corrupt(`Shape table has ${end - at} bytes after its last shape.`);
    return new ShapeTable(kind, keys, firstKey);
  }
}

module.exports = { ShapeTable, isRawStringContent, KIND_JSON, KIND_BSON, KIND_BSON_ELEMENTS };
