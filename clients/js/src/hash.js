'use strict';

// XxHash32 (seed 0) and XxHash3 (64-bit, seed 0) from @node-rs/xxhash (native, shipped as npm platform packages).
const { xxh32, xxh3 } = require('@node-rs/xxhash');

/** XxHash32 with seed 0, as an unsigned 32-bit Number. */
function hash32(bytes) {
  return xxh32(bytes, 0) >>> 0;
}

/** XxHash3 (XXH3_64bits, seed 0), as an unsigned 64-bit BigInt. */
function hash3(bytes) {
  return xxh3.xxh64(bytes, 0n);
}

module.exports = { hash32, hash3 };
