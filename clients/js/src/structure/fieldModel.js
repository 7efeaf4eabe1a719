'use strict';

// The field model (docs/field-model.md, "Stored layout" and "Joining"), parsed and joined as
// src/Compression.Core/Structure/FieldModel.cs, FieldCoder.cs and Rans.cs do.
const { hash32 } = require('../hash');
const { corrupt, InvalidDataError } = require('../errors');
const { PackedReader, Writer, MAX_DEPTH } = require('./packed');
const { read64 } = require('../varint');

const SCALE_BITS = 12, SCALE_TOTAL = 4096, RANS_LOW = 65536;
const MAX_FIELDS = 2048, MAX_VALUES_PER_FIELD = 1024, MAX_VALUES = 65536, MAX_VALUE_LENGTH = 96, MAX_RANGE_BITS = 48;
const MAX_SERIALIZED = 512 * 1024;
const MAX_TEMPLATES = 64, MAX_SLOTS = 16, MAX_SLOT_WIDTH = 18, MAX_SLOT_BITS = 60, MAX_TEMPLATE_LENGTH = 256;
const MAX_COPY_SKIP = 15;

/** A copied part's delimiter (model version 3): ASCII punctuation or space, never a letter or a digit. */
const isCopyDelimiter = (b) => b >= 0x20 && b < 0x7f && !((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a));
const POW10 = Array.from({ length: 19 }, (_, e) => 10n ** BigInt(e));
const INT64_MAX = (1n << 63n) - 1n;
const POW10_NUMBER = Array.from({ length: 19 }, (_, e) => 10 ** e);

/** The bytes of the minimal varint at `from` (at most 10), or -1. */
function varintLength(b, from) {
  for (let i = 0; i < 10; i++) {
    if (from + i >= b.length) return -1;
    const x = b[from + i];
    if (i === 9 && x > 1) return -1;
    if ((x & 0x80) === 0) return i > 0 && x === 0 ? -1 : i + 1;
  }
  return -1;
}

function lengthPrefixed(b, at, offset, extra) {
  const n = varintLength(b, at + offset);
  if (n < 0) return -2;
  let length = 0;
  for (let i = n - 1; i >= 0; i--) length = length * 128 + (b[at + offset + i] & 0x7f);
  const total = offset + n + extra + length;
  return length <= 0x7fffffff && total <= b.length - at ? total : -2;
}

/** The length of the one packed scalar value at `at` in `b`, -1 for an object or array, -2 when it is not one. */
function scalarLength(b, at = 0) {
  if (at >= b.length) return -2;
  const tag = b[at];
  if (tag >= 0x20) return 1 + tag - 0x20 <= b.length - at ? 1 + tag - 0x20 : -2;
  switch (tag) {
    case 0x00: case 0x01: case 0x02: return 1;
    case 0x03: case 0x04: return -1;
    case 0x05: case 0x08: return lengthPrefixed(b, at, 1, 0);
    case 0x09: return b.length - at >= 9 ? 9 : -2;
    case 0x0b: return b.length - at >= 13 ? 13 : -2;
    case 0x0c: return lengthPrefixed(b, at, 1, 1);
    case 0x0d: return b.length - at >= 2 ? lengthPrefixed(b, at, 2, 0) : -2;
    default:
      if (tag === 0x06 || tag === 0x07 || tag === 0x0a || (tag >= 0x10 && tag <= 0x1f)) {
        const n = varintLength(b, at + 1);
        return n < 0 ? -2 : 1 + n;
      }
      return -2;
  }
}

function isRangeTag(tag) {
  return tag === 0x06 || tag === 0x07 || tag === 0x0a || (tag >= 0x10 && tag <= 0x1f);
}

/** A model varint read as a BigInt (the model's varints are the packed stream's: 64-bit, minimal). */
function bigVarint(reader) {
  const v = reader.varint();
  return typeof v === 'number' ? BigInt(v) : v;
}

function readFrequencies(reader, symbols, what) {
  const cumulative = new Uint16Array(symbols + 1);
  let sum = 0;
  for (let s = 0; s < symbols; s++) {
    const f = bigVarint(reader);
    if (f === 0n || f > BigInt(SCALE_TOTAL) || sum + Number(f) > SCALE_TOTAL) corrupt(`Field model: ${what}'s frequencies are not at least 1 each and ${SCALE_TOTAL} in all.`);
    sum += Number(f);
    cumulative[s + 1] = sum;
  }
  if (sum !== SCALE_TOTAL) corrupt(`Field model: ${what}'s frequencies add up to ${sum}, not ${SCALE_TOTAL}.`);
  return cumulative;
}

function templateKey(literals, widths) {
  let key = '';
  for (let s = 0; s <= widths.length; s++) {
    key += literals[s].length + ':' + literals[s].toString('latin1');
    if (s < widths.length) key += '|' + widths[s] + '|';
  }
  return key;
}

function readTemplate(reader, f, t, copies) {
  let copySlot = -1;
  const slots = bigVarint(reader);
  if (slots === 0n || slots > BigInt(MAX_SLOTS)) corrupt(`Field model: field ${f}'s template ${t} has ${slots} slots; 1 to ${MAX_SLOTS} allowed.`);
  const k = Number(slots);
  const literals = [], widths = [], mins = [], bits = [], cumulative = [];
  let length = 0;
  for (let s = 0; ; s++) {
    const literalLength = bigVarint(reader);
    if (literalLength > BigInt(MAX_TEMPLATE_LENGTH)) corrupt(`Field model: field ${f}'s template ${t} has a literal of ${literalLength} bytes.`);
    literals.push(Buffer.from(reader.bytes(Number(literalLength))));
    length += Number(literalLength);
    if (s === k) break;
    const width = reader.byte();
    if (width === 0) {
      // Version 2: the copy slot, which writes the field's source's latest string; nothing more follows it.
      if (!copies) corrupt(`Field model: field ${f}'s template ${t} has a copy slot (width 0) but the field has no source.`);
      if (copySlot >= 0) corrupt(`Field model: field ${f}'s template ${t} has more than one copy slot.`);
      copySlot = s;
      widths.push(0);
      mins.push(0n);
      bits.push(0);
      cumulative.push(null);
      continue;
    }
    if (width > MAX_SLOT_WIDTH) corrupt(`Field model: field ${f}'s template ${t} has a slot ${width} digits wide; 1 to ${MAX_SLOT_WIDTH} allowed.`);
    widths.push(width);
    length += width;
    const min = bigVarint(reader);
    if (min >= POW10[width]) corrupt(`Field model: field ${f}'s template ${t} has a slot minimum ${min} of more than its ${width} digits.`);
    const b = reader.byte();
    if (b > MAX_SLOT_BITS) corrupt(`Field model: field ${f}'s template ${t} has a slot of ${b} bits; at most ${MAX_SLOT_BITS}.`);
    mins.push(min);
    bits.push(b);
    cumulative.push(readFrequencies(reader, b + 1, `field ${f}'s template ${t}, slot ${s}`));
  }
  if (length > MAX_TEMPLATE_LENGTH) corrupt(`Field model: field ${f}'s template ${t} describes ${length} bytes; at most ${MAX_TEMPLATE_LENGTH}.`);
  return {
    literals, widths, mins, bits, cumulative, length, copySlot,
    symbolOf: cumulative.map((c) => (c ? symbolTable(c) : null)),
    minNumbers: mins.map((m) => (m < 2n ** 52n ? Number(m) : null)),
  };
}

class FieldModel {
  constructor(fields, sourceKeys = new Set()) {
    this.fields = fields;
    this.sourceKeys = sourceKeys; // key * 2 + items of every field's source (version 2)
    this.byField = new Map(); // key * 2 + items -> field
    for (const f of fields) this.byField.set(f.key * 2 + (f.items ? 1 : 0), f);
  }

  static parse(bytes, table) {
    if (bytes.length > MAX_SERIALIZED) corrupt(`Field model has ${bytes.length} bytes; the limit is ${MAX_SERIALIZED}.`);
    if (bytes.length < 12) corrupt(`Field model has ${bytes.length} bytes; at least 12 are needed.`);
    if (bytes.toString('latin1', 0, 4) !== 'FLDM') corrupt(`Field model does not start with the magic 'FLDM' (found ${bytes.toString('hex', 0, 4).toUpperCase()}).`);
    if (bytes[4] < 1 || bytes[4] > 3) corrupt(`Field model format version ${bytes[4]} is not supported; this reader knows versions 1 to 3.`);
    if (bytes[5] !== 0 || bytes[6] !== 0) corrupt('Field model: the reserved bytes are not 0.');
    const body = bytes.subarray(0, bytes.length - 4);
    const stored = bytes.readUInt32LE(bytes.length - 4), actual = hash32(body);
    if (stored !== actual) corrupt(`Field model checksum mismatch (stored 0x${stored.toString(16).padStart(8, '0')}, computed 0x${actual.toString(16).padStart(8, '0')}).`);
    try {
      return FieldModel.parseBody(body, table);
    } catch (e) {
      if (e instanceof InvalidDataError && e.message.startsWith('Packed stream: ')) throw new InvalidDataError('Field model: ' + e.message.slice('Packed stream: '.length), { cause: e });
      throw e;
    }
  }

  static parseBody(body, table) {
    const reader = new PackedReader(body);
    const sources = body[4] >= 2; // version 2: per field a source and flags; copy slots
    const parts = body[4] === 3; // version 3: flag 0x02, a copy of a part of the source (a delimiter and a skip)
    const sourceKeys = new Set();
    let anyPart = false;
    reader.bytes(7);
    const fieldCount = bigVarint(reader);
    if (fieldCount > BigInt(MAX_FIELDS) || fieldCount > BigInt(reader.remaining)) corrupt(`Field model: ${fieldCount} fields; at most ${MAX_FIELDS} allowed, each taking bytes.`);
    const fields = [];
    let previous = -1n, totalValues = 0;
    for (let f = 0; f < Number(fieldCount); f++) {
      const keyAndItems = bigVarint(reader);
      if (keyAndItems >= BigInt(table.totalKeys) * 2n) corrupt(`Field model: field ${f} names key ${keyAndItems >> 1n}; the shape table has ${table.totalKeys} keys.`);
      if (keyAndItems <= previous) corrupt(`Field model: field ${f} is out of order or repeated.`);
      previous = keyAndItems;
      let source = -1, relative = false, delimiter = 0, skip = 0;
      if (sources) {
        const sourcePlusOne = bigVarint(reader);
        if (sourcePlusOne > BigInt(table.totalKeys) * 2n) corrupt(`Field model: field ${f}'s source names key ${(sourcePlusOne - 1n) >> 1n}; the shape table has ${table.totalKeys} keys.`);
        source = Number(sourcePlusOne) - 1;
        if (BigInt(source) === keyAndItems) corrupt(`Field model: field ${f} is its own source.`);
        const flags = reader.byte();
        if (flags > (parts ? 3 : 1)) {
          corrupt(`Field model: field ${f} has flags 0x${flags.toString(16).padStart(2, '0')}; ` + (parts
            ? 'only 0x01 (a relative range) and 0x02 (copies a part) are defined.'
            : 'only 0x01 (a relative range) is defined.'));
        }
        relative = (flags & 1) !== 0;
        if (relative && source < 0) corrupt(`Field model: field ${f}'s range is relative but it has no source.`);
        if ((flags & 2) !== 0) {
          if (source < 0) corrupt(`Field model: field ${f} copies a part of its source but it has no source.`);
          delimiter = reader.byte();
          skip = reader.byte();
          if (!isCopyDelimiter(delimiter)) corrupt(`Field model: field ${f}'s copy delimiter is 0x${delimiter.toString(16).padStart(2, '0')}; allowed: ASCII punctuation or space.`);
          if (skip > MAX_COPY_SKIP) corrupt(`Field model: field ${f}'s copy skips ${skip} bytes; at most ${MAX_COPY_SKIP}.`);
          anyPart = true;
        }
      }
      const valueCount = bigVarint(reader);
      if (valueCount > BigInt(MAX_VALUES_PER_FIELD) || BigInt(totalValues) + valueCount > BigInt(MAX_VALUES)) corrupt(`Field model: field ${f} has ${valueCount} values; at most ${MAX_VALUES_PER_FIELD} a field and ${MAX_VALUES} in all.`);
      const values = [];
      const seen = new Set();
      for (let i = 0; i < Number(valueCount); i++) {
        const length = bigVarint(reader);
        if (length === 0n || length > BigInt(MAX_VALUE_LENGTH)) corrupt(`Field model: field ${f} has a value of ${length} bytes; 1 to ${MAX_VALUE_LENGTH} allowed.`);
        const value = Buffer.from(reader.bytes(Number(length)));
        if (scalarLength(value) !== value.length) corrupt(`Field model: field ${f}'s value ${value.toString('hex').toUpperCase()} is not one packed scalar value.`);
        const key = value.toString('latin1');
        if (seen.has(key)) corrupt(`Field model: field ${f} lists the value ${value.toString('hex').toUpperCase()} twice.`);
        seen.add(key);
        values.push(value);
      }
      totalValues += values.length;
      const rangeTag = reader.byte();
      let rangeMin = 0n, rangeBits = 0;
      if (rangeTag !== 0) {
        if (!isRangeTag(rangeTag)) corrupt(`Field model: field ${f}'s range has tag 0x${rangeTag.toString(16).padStart(2, '0')}, not a number's.`);
        const u = bigVarint(reader);
        rangeMin = BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
        rangeBits = reader.byte();
        if (rangeBits > MAX_RANGE_BITS) corrupt(`Field model: field ${f}'s range has ${rangeBits} bits; at most ${MAX_RANGE_BITS}.`);
        if (rangeMin > INT64_MAX - ((1n << BigInt(rangeBits)) - 1n)) corrupt(`Field model: field ${f}'s range passes the largest 64-bit integer.`);
        if (values.length + rangeBits + 2 > SCALE_TOTAL) corrupt(`Field model: field ${f} has more symbols than ${SCALE_TOTAL}.`);
      } else if (relative) corrupt(`Field model: field ${f}'s range is relative but it has no range.`);
      const templateCount = bigVarint(reader);
      if (templateCount > BigInt(MAX_TEMPLATES)) corrupt(`Field model: field ${f} has ${templateCount} templates; at most ${MAX_TEMPLATES}.`);
      const templates = [];
      for (let t = 0; t < Number(templateCount); t++) templates.push(readTemplate(reader, f, t, source >= 0));
      const buckets = rangeTag !== 0 ? rangeBits + 1 : 0;
      const symbols = values.length + buckets + templates.length + 1;
      if (symbols > SCALE_TOTAL) corrupt(`Field model: field ${f} has more symbols than ${SCALE_TOTAL}.`);
      const cumulative = readFrequencies(reader, symbols, `field ${f}`);
      if (source >= 0) sourceKeys.add(source);
      const keys = new Set();
      templates.forEach((tp, t) => {
        const k = templateKey(tp.literals, tp.widths);
        if (keys.has(k)) corrupt(`Field model: field ${f} lists template ${t} twice.`);
        keys.add(k);
      });
      fields.push({
        key: Number(keyAndItems >> 1n), items: (keyAndItems & 1n) === 1n, values, rangeTag, rangeMin, rangeBits, buckets, templates, cumulative,
        symbolOf: symbolTable(cumulative),
        rangeMinNumber: rangeMin > -(2n ** 52n) && rangeMin < 2n ** 52n ? Number(rangeMin) : null,
        source, relative, delimiter, skip,
      });
    }
    if (reader.remaining !== 0) corrupt(`Field model: ${reader.remaining} bytes after the end of the model (offset ${reader.at}).`);
    // Canonical: a model without sources is written as version 1.
    if (sources && sourceKeys.size === 0) corrupt(`Field model: version ${body[4]}, but no field has a source (a model without sources is version 1).`);
    if (parts && !anyPart) corrupt('Field model: version 3, but no field copies a part of its source (such a model is version 2).');
    return new FieldModel(fields, sourceKeys);
  }
}

/** slot (0..4095) -> symbol, for a field's or a slot's cumulative frequencies. */
function symbolTable(cumulative) {
  const table = new Uint16Array(SCALE_TOTAL);
  for (let s = 0; s + 1 < cumulative.length; s++) table.fill(s, cumulative[s], cumulative[s + 1]);
  return table;
}

/** rANS, byte-wise, 24-bit state (L = 2^16), 12-bit frequencies (docs/format.md, "Codec 8"). */
class RansDecoder {
  constructor(stream, folded = false) {
    this.s = stream;
    if (folded && stream.length < 3) {
      // Codec 9, no symbol: the checksum alone, 2 bytes little-endian; a symbol read fails as on an empty stream.
      if (stream.length !== 2) corrupt(`Field stream: ${stream.length} bytes, where it holds at least the checksum (2).`);
      this.x = RANS_LOW + (stream[0] | (stream[1] << 8));
      this.s = stream.subarray(0, 0);
      this.at = 0;
      return;
    }
    if (stream.length === 0) {
      this.x = RANS_LOW;
      this.at = 0;
      return;
    }
    if (stream.length < 3) corrupt(`Field stream: ${stream.length} bytes, under the 3 of its state.`);
    this.x = stream[0] | (stream[1] << 8) | (stream[2] << 16);
    if (this.x < RANS_LOW) corrupt('Field stream: the state is below the normalized interval.');
    this.at = 3;
  }

  peek(bits) {
    if (this.s.length === 0) corrupt('Field stream: a symbol is needed and the stream is empty.');
    return this.x & ((1 << bits) - 1);
  }

  advance(start, frequency, bits) {
    this.x = frequency * (this.x >>> bits) + (this.x & ((1 << bits) - 1)) - start;
    while (this.x < RANS_LOW) {
      if (this.at >= this.s.length) corrupt('Field stream: truncated.');
      this.x = (this.x * 256 + this.s[this.at++]) >>> 0;
    }
  }

  symbol(cumulative, table) {
    const slot = this.peek(SCALE_BITS);
    const s = table ? table[slot] : symbolAt(cumulative, slot);
    this.advance(cumulative[s], cumulative[s + 1] - cumulative[s], SCALE_BITS);
    return s;
  }

  /** `bits` (at most 48) raw bits as a Number, 16 at a time, the first read holding the lowest. */
  bitsNumber(bits) {
    let value = 0;
    for (let scale = 1; bits > 0;) {
      const take = bits < 16 ? bits : 16;
      const slot = this.peek(take);
      this.advance(slot, 1, take);
      value += slot * scale;
      scale *= 65536;
      bits -= take;
    }
    return value;
  }

  /** `bits` raw bits as a BigInt, 16 at a time, the first read holding the lowest. */
  bits(bits) {
    let value = 0n;
    for (let shift = 0n; bits > 0;) {
      const take = Math.min(bits, 16);
      const slot = this.peek(take);
      this.advance(slot, 1, take);
      value |= BigInt(slot) << shift;
      shift += BigInt(take);
      bits -= take;
    }
    return value;
  }

  end() {
    if (this.at !== this.s.length) corrupt(`Field stream: ${this.s.length - this.at} bytes left after the last symbol.`);
    if (this.x !== RANS_LOW) corrupt('Field stream: the final state is not the encoder\'s initial state (the stream is damaged).');
  }

  /** Codec 9: every byte read and the state in [L, 2L); returns the 16-bit value (the checksum) it holds above L. */
  endFolded() {
    if (this.at !== this.s.length) corrupt(`Field stream: ${this.s.length - this.at} bytes left after the last symbol.`);
    if (this.x >= 2 * RANS_LOW) corrupt('Field stream: the final state is not one an encoder starts from (the stream is damaged).');
    return this.x - RANS_LOW;
  }
}

function symbolAt(cumulative, slot) {
  let lo = 0, hi = cumulative.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (cumulative[mid] <= slot) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function writeVarint(w, value) {
  let v = value;
  if (typeof v === 'bigint') {
    while (v >= 0x80n) {
      w.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    w.byte(Number(v));
    return;
  }
  while (v >= 0x80) {
    w.byte((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  w.byte(v);
}

/** Joins the residual and the symbol stream back into the packed stream, of at most `capacity` bytes. */
/** The packed stream; with `end` (an object: codec 9), the stream's state holds the checksum, set as end.folded. */
function join(table, model, residual, stream, capacity, end = null) {
  const r = new PackedReader(residual, 'Residual');
  const w = new Writer(capacity);
  const symbols = new RansDecoder(stream, end !== null);
  // Version 2: per source key, its latest value in this document (a string's place in the output, or a number), once whole.
  const latest = model.sourceKeys.size > 0 ? new Map() : null;

  const lowBits = (b) => (b === 0 ? 0n : (1n << BigInt(b - 1)) | symbols.bits(b - 1));
  // u of bit length b as a Number (b at most 49): 2^(b-1) plus its b - 1 low bits.
  const lowNumber = (b) => (b === 0 ? 0 : 2 ** (b - 1) + symbols.bitsNumber(b - 1));

  const template = (f, tp) => {
    let length = tp.length, copy = null;
    if (tp.copySlot >= 0) {
      copy = latest.get(f.source);
      if (!copy || copy.kind !== 'string') corrupt('Field stream: a template copies the field\'s source, which the document has not had as a string before it.');
      if (f.delimiter !== 0) {
        // Version 3: the part after the delimiter's last occurrence, less the skip.
        const at = w.out.subarray(copy.start, copy.end).lastIndexOf(f.delimiter);
        if (at < 0 || copy.start + at + 1 + f.skip > copy.end) corrupt('Field stream: a template copies a part of the field\'s source, which its latest string does not have.');
        copy = { kind: 'string', start: copy.start + at + 1 + f.skip, end: copy.end };
      }
      length += copy.end - copy.start;
    }
    if (length <= 223) w.byte(0x20 + length);
    else {
      w.byte(0x05);
      writeVarint(w, length);
    }
    for (let s = 0; ; s++) {
      w.bytes(tp.literals[s]);
      if (s === tp.widths.length) break;
      if (s === tp.copySlot) {
        w.copy(w.out, copy.start, copy.end);
        continue;
      }
      const c = tp.cumulative[s];
      const b = symbols.symbol(c, tp.symbolOf[s]);
      const width = tp.widths[s];
      if (tp.minNumbers[s] !== null && b <= 49) {
        // min < 2^52 and u < 2^49: the sum is below 2^53, exact.
        const value = tp.minNumbers[s] + lowNumber(b);
        if (value >= POW10_NUMBER[width]) corrupt(`Field stream: a template slot's number ${value} has more than its ${width} digits.`);
        w.ascii(String(value).padStart(width, '0'));
        continue;
      }
      const value = BigInt.asUintN(64, tp.mins[s] + lowBits(b));
      if (value >= POW10[width]) corrupt(`Field stream: a template slot's number ${value} has more than its ${width} digits.`);
      w.ascii(value.toString().padStart(width, '0'));
    }
  };

  const decode = (f) => {
    const symbol = symbols.symbol(f.cumulative, f.symbolOf);
    if (symbol < f.values.length) {
      w.bytes(f.values[symbol]);
      return true;
    }
    const bucket = symbol - f.values.length;
    if (bucket < f.buckets) {
      if (f.relative) {
        const last = latest.get(f.source);
        if (!last || last.kind !== 'number') corrupt('Field stream: a relative range\'s value where the document has no number at the field\'s source before it.');
        const value = BigInt.asIntN(64, last.value + f.rangeMin + lowBits(bucket));
        w.byte(f.rangeTag);
        writeVarint(w, BigInt.asUintN(64, (value << 1n) ^ (value >> 63n)));
        return true;
      }
      if (f.rangeMinNumber !== null) {
        // |min| < 2^52 and u < 2^48: the value is below 2^53 in magnitude and its zigzag (below 2^54, even when the
        // value is positive, under 2^53 when negative) exact.
        const value = f.rangeMinNumber + lowNumber(bucket);
        w.byte(f.rangeTag);
        writeVarint(w, value >= 0 ? value * 2 : -value * 2 - 1);
        return true;
      }
      const value = BigInt.asIntN(64, f.rangeMin + lowBits(bucket));
      w.byte(f.rangeTag);
      writeVarint(w, BigInt.asUintN(64, (value << 1n) ^ (value >> 63n)));
      return true;
    }
    const t = bucket - f.buckets;
    if (t < f.templates.length) {
      template(f, f.templates[t]);
      return true;
    }
    return false; // the escape
  };

  const value = (key, items, depth) => {
    if (latest !== null && key >= 0 && model.sourceKeys.has(key * 2 + (items ? 1 : 0))) {
      // A source key: none from its start (nothing inside an object or array there sees an older value), then its value
      // once whole, when it is a string or a number.
      const k = key * 2 + (items ? 1 : 0);
      latest.delete(k);
      const start = w.at;
      valueOf(key, items, depth);
      latest.delete(k);
      const out = w.out;
      if (scalarLength(out.subarray(0, w.at), start) !== w.at - start) return;
      const tag = out[start];
      if (tag >= 0x20) latest.set(k, { kind: 'string', start: start + 1, end: w.at });
      else if (tag === 0x05) latest.set(k, { kind: 'string', start: start + 1 + varintLength(out, start + 1), end: w.at });
      else if (isRangeTag(tag)) {
        const u = read64(out.subarray(0, w.at), start + 1);
        if (u !== null) latest.set(k, { kind: 'number', value: BigInt.asIntN(64, (u[0] >> 1n) ^ -(u[0] & 1n)) });
      }
      return;
    }
    valueOf(key, items, depth);
  };

  const valueOf = (key, items, depth) => {
    if (key >= 0) {
      const f = model.byField.get(key * 2 + (items ? 1 : 0));
      if (f !== undefined && decode(f)) return;
    }
    const length = scalarLength(r.b, r.at);
    if (length === -2) corrupt(`Residual: no value at offset ${r.at}.`);
    if (length > 0) {
      const start = r.take(length);
      w.copy(r.b, start, r.at);
      return;
    }
    const tag = r.byte();
    w.byte(tag);
    if (tag === 0x03) {
      object(depth + 1);
      return;
    }
    if (depth + 1 > MAX_DEPTH) corrupt(`Residual: nesting deeper than ${MAX_DEPTH} at offset ${r.at}.`);
    const countAt = r.at;
    const count = r.varint();
    if (count > w.out.length - w.at) corrupt(`Residual: an array of ${count} items at offset ${countAt} cannot fit the ${w.out.length - w.at} bytes left.`);
    w.bytes(r.b.subarray(countAt, r.at));
    for (let i = 0; i < count; i++) value(key, true, depth + 1);
  };

  const object = (depth) => {
    if (depth > MAX_DEPTH) corrupt(`Residual: nesting deeper than ${MAX_DEPTH} at offset ${r.at}.`);
    const at = r.at;
    const id = r.varint();
    if (typeof id !== 'number' || id > table.count) corrupt(`Packed stream: shape ${id} at offset ${at} is not in the table (${table.count} shapes).`);
    if (id !== 0) {
      w.bytes(r.b.subarray(at, r.at));
      const first = table.firstKey[id - 1], count = table.firstKey[id] - first;
      for (let m = 0; m < count; m++) value(first + m, false, depth);
      return;
    }
    const inline = r.count('inline key count');
    w.bytes(r.b.subarray(at, r.at));
    for (let m = 0; m < inline; m++) {
      const keyAt = r.at;
      r.bytes(r.count('key length'));
      w.bytes(r.b.subarray(keyAt, r.at));
      value(-1, false, depth);
    }
  };

  object(1);
  r.end();
  if (end !== null) end.folded = symbols.endFolded();
  else symbols.end();
  return w.result();
}

module.exports = { FieldModel, join, scalarLength };
