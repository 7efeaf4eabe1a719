'use strict';

// Unsigned LEB128, minimal encodings only (docs/format.md, "Varints"; docs/structure.md, "Byte layout").

/** A 32-bit varint at `at`: [value, bytesRead], or null when truncated, over-long, over 32 bits or not minimal. */
function read32(data, at) {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (at + i >= data.length) return null;
    const b = data[at + i];
    if (i === 4 && b > 0x0f) return null;
    value += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) {
      if (i > 0 && b === 0) return null;
      return [value, i + 1];
    }
  }
  return null;
}

/** A 64-bit varint at `at` as a BigInt: [value, bytesRead], or null (at most 10 bytes, the tenth holding only bit 0). */
function read64(data, at) {
  // Most values are small: a Number while they fit 49 bits, a BigInt past it.
  let value = 0;
  for (let i = 0; i < 10; i++) {
    if (at + i >= data.length) return null;
    const b = data[at + i];
    if (i === 9 && b > 0x01) return null;
    if (i < 7) value += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) {
      if (i > 0 && b === 0) return null;
      if (i < 7) return [BigInt(value), i + 1];
      let big = 0n;
      for (let j = i; j >= 0; j--) big = (big << 7n) | BigInt(data[at + j] & 0x7f);
      return [big, i + 1];
    }
  }
  return null;
}

/** Appends the varint of a non-negative BigInt or Number to an array of bytes. */
function write(out, value) {
  let v = BigInt(value);
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

function unZigZag(u) {
  return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
}

function zigZag(n) {
  return BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
}

module.exports = { read32, read64, write, unZigZag, zigZag };
