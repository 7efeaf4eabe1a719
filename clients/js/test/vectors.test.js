'use strict';

// Every vector of docs/format.md (tests/Compression.Core.Tests/Vectors/vectors.json), byte for byte, and each step of
// the codec 7 and 8 vectors (the block gives `packed`; the section gives `residual`; residual and symbols join into
// `packed`; `packed` unpacks to the document).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { DocumentReader, DictionaryCache, readHeader } = require('../src');
const zstd = require('../src/zstd');
const { parseStructureModel } = require('../src/structure');
const { join } = require('../src/structure/fieldModel');
const { unpack } = require('../src/structure/packed');
const { read32 } = require('../src/varint');
const { hash3 } = require('../src/hash');
const { vectors, vectorFile, expected, REPO } = require('./helpers');
const crypto = require('node:crypto');

const all = vectors();
const backends = zstd.hasNative ? ['zstd-napi', 'wasm'] : ['wasm'];

function cacheFor(v) {
  const cache = new DictionaryCache(null);
  if (v.dictionary) cache.addContent(v.dictionaryId, vectorFile(v.dictionary), { shapes: v.fields ? vectorFile(v.fields) : v.shapes ? vectorFile(v.shapes) : null });
  return cache;
}

test('the vectors cover every codec, format and structure step', () => {
  assert.ok(all.length >= 29);
  for (const codec of ['stored', 'zstd', 'lz4', 'snappy', 'deflate', 'brotli', 'gzip', 'packedZstd', 'fieldZstd', 'fieldZstdFoldedChecksum']) assert.ok(all.some((v) => v.codec === codec), codec);
  for (const format of [undefined, 'v2', 'v3']) assert.ok(all.some((v) => v.format === format), String(format));
});

for (const backend of backends) {
  test(`every vector of docs/format.md decodes to its exact bytes (zstd backend ${backend})`, async (t) => {
    zstd.use(backend);
    await zstd.ready();
    try {
      for (const v of all) {
        await t.test(v.name, async () => {
          const envelope = Buffer.from(v.envelope, 'hex');
          const header = readHeader(envelope);
          assert.equal(header.codecName, v.codec);
          assert.equal(header.format, v.format ?? 'v1');
          assert.equal(header.hasChecksum, v.checksum);
          assert.equal(header.uncompressedLength, expected(v).length);
          assert.equal(header.dictionaryId, v.dictionaryId);
          const reader = new DocumentReader({ dictionaries: cacheFor(v) });
          assert.deepEqual(await reader.decompress(envelope), expected(v));
          assert.deepEqual(reader.decompressSync(envelope), expected(v));
        });
      }
    } finally {
      zstd.use(zstd.hasNative ? 'zstd-napi' : 'wasm');
    }
  });
}

test('the dictionary fixture has the documented SHA-256', () => {
  for (const v of all.filter((x) => x.dictionary)) {
    assert.equal(crypto.createHash('sha256').update(vectorFile(v.dictionary)).digest('hex'), v.dictionarySha256);
  }
});

test('codec 7, 8 and 9 vectors: each step on its own', async () => {
  await zstd.ready();
  for (const v of all.filter((x) => x.codec === 'packedZstd' || x.codec === 'fieldZstd' || x.codec === 'fieldZstdFoldedChecksum')) {
    const envelope = Buffer.from(v.envelope, 'hex');
    const header = readHeader(envelope);
    const payload = envelope.subarray(header.headerLength, header.headerLength + header.payloadLength);
    const dictionary = cacheFor(v).peek(v.dictionaryId);
    const model = parseStructureModel(v.fields ? vectorFile(v.fields) : vectorFile(v.shapes));
    if (v.fields) {
      // "SMDL" 1, the table's length, the table (the vector's shape table file, byte for byte), the field model.
      const smdl = vectorFile(v.fields);
      assert.equal(smdl.toString('latin1', 0, 4), 'SMDL');
      const [tableLength, read] = read32(smdl, 5);
      assert.deepEqual(smdl.subarray(5 + read, 5 + read + tableLength), vectorFile(v.shapes));
    }
    let packed;
    if (v.codec === 'packedZstd') {
      packed = zstd.decodeBlock(payload, header.uncompressedLength - 1, dictionary.zstd);
    } else {
      const [h, n] = read32(payload, 0);
      const section = payload.subarray(n, n + Math.floor(h / 2));
      const symbols = payload.subarray(n + Math.floor(h / 2));
      const residual = h % 2 === 1 ? zstd.decodeBlock(section, header.uncompressedLength - 1, dictionary.zstd) : section;
      assert.equal(residual.toString('hex'), v.residual, `${v.name}: residual`);
      assert.equal(symbols.toString('hex'), v.symbols, `${v.name}: symbols`);
      const end = v.codec === 'fieldZstdFoldedChecksum' ? {} : null;
      packed = join(model.table, model.fields, residual, symbols, header.uncompressedLength - 1, end);
      if (end !== null) {
        // Codec 9: no trailer; the stream's final state held the checksum, the low 16 bits of the document's XxHash3.
        assert.equal(header.checksumLength, 0);
        assert.equal(end.folded, Number(hash3(expected(v)) & 0xffffn), `${v.name}: folded checksum`);
      }
    }
    assert.equal(Buffer.from(packed).toString('hex'), v.packed, `${v.name}: packed`);
    assert.deepEqual(unpack(model.table, packed, header.uncompressedLength), expected(v), `${v.name}: document`);
  }
});

test('docs/format.md holds every envelope the tests read', () => {
  const format = fs.readFileSync(path.join(REPO, 'docs', 'format.md'), 'utf8');
  for (const v of all) assert.ok(format.includes(v.envelope), v.name);
});
