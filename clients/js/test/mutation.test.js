'use strict';

// Mutation tests as the .NET ones (EnvelopeMutationTests, PackedEnvelopeTests): every prefix and every single-bit flip of
// a sample of envelopes (every vector of docs/format.md, and one envelope of each kind the .NET fixture holds) gives a
// clear error (InvalidDataError, or DictionaryNotFoundError when the id changed) or exactly the original bytes when the
// envelope has a checksum; without one, an error or bytes of the declared length. Never another exception. The one
// exception to "exact bytes" is the one docs/format.md measures for formats v2 and v3: a mutant whose wrong document has
// the original's 16-bit checksum (probability about 1.6e-6 a random corruption). One such mutant is in this sample (a bit of
// v3-fields-bson-elements turns "Lillian" into "Lilliin", whose XxHash3 has the same low 16 bits): it is counted as a
// collision, checked to be one (the decoded bytes have the checksum the envelope carries), and there may be no other.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { deserialize } = require('bson');
const { DocumentReader, DictionaryCache, InvalidDataError, DictionaryNotFoundError, readHeader } = require('../src');
const { readMongoRecord } = require('../src/dictionaries');
const zstd = require('../src/zstd');
const { hash32, hash3 } = require('../src/hash');
const { vectors, vectorFile, expected } = require('./helpers');

const collisions = [];

function splitBson(bytes) {
  const out = [];
  for (let at = 0; at < bytes.length; at += bytes.readInt32LE(at)) out.push(bytes.subarray(at, at + bytes.readInt32LE(at)));
  return out;
}

/** [name, envelope, document, reader] for every vector and one fixture envelope of each kind. */
async function samples() {
  const list = [];
  for (const v of vectors()) {
    const cache = new DictionaryCache(null);
    if (v.dictionary) cache.addContent(v.dictionaryId, vectorFile(v.dictionary), { shapes: v.fields ? vectorFile(v.fields) : v.shapes ? vectorFile(v.shapes) : null });
    list.push([v.name, Buffer.from(v.envelope, 'hex'), expected(v), new DocumentReader({ dictionaries: cache })]);
  }
  const folder = path.join(__dirname, 'fixtures', 'dotnet');
  const records = new Map();
  for (const raw of splitBson(fs.readFileSync(path.join(folder, 'dictionaries.bson')))) {
    const r = readMongoRecord(raw, 'fixture', 4 * 1024 * 1024);
    records.set(r.id, r);
  }
  const reader = new DocumentReader({ store: { location: 'fixture', async get(id) { return records.get(id) ?? null; } } });
  const seen = new Set();
  for (const raw of splitBson(fs.readFileSync(path.join(folder, 'stored.bson')))) {
    const envelope = Buffer.from(deserialize(raw)._z.buffer);
    const h = readHeader(envelope);
    const kind = `${h.format}/${h.codecName}/${h.dictionaryId !== null}`;
    if (seen.has(kind)) continue;
    seen.add(kind);
    list.push([`fixture ${kind}`, envelope, await reader.decompress(envelope), reader]);
  }
  return list;
}

async function check(reader, mutant, original, checksummed, what) {
  let out;
  try {
    out = await reader.decompress(mutant);
  } catch (e) {
    if (e instanceof InvalidDataError || e instanceof DictionaryNotFoundError) return 'refused';
    throw new Error(`${what}: ${e.constructor.name} escaped: ${e.stack}`);
  }
  if (out.equals(original)) return 'original';
  const h = readHeader(mutant);
  if (h.hasChecksum) {
    if (!checksummed || h.formatVersion === 0) assert.fail(`${what}: decoded to other bytes (${out.length} bytes)`);
    const stored = mutant.readUInt16LE(mutant.length - 2);
    const low = h.formatVersion === 1 ? hash32(out) & 0xffff : Number(hash3(out) & 0xffffn);
    assert.equal(low, stored, `${what}: decoded to other bytes that do not have the envelope's checksum`);
    collisions.push(what);
    return 'collision';
  }
  assert.equal(out.length, readHeader(mutant).uncompressedLength, `${what}: the declared length`);
  return 'other';
}

for (const backend of zstd.hasNative ? ['zstd-napi', 'wasm'] : ['wasm']) test(`every prefix and every bit flip of the sample envelopes: an error or the exact bytes (zstd backend ${backend})`, async () => {
  zstd.use(backend);
  await zstd.ready();
  collisions.length = 0;
  const counts = { refused: 0, original: 0, other: 0, collision: 0 };
  let total = 0;
  for (const [name, envelope, document, reader] of await samples()) {
    const checksummed = readHeader(envelope).hasChecksum;
    for (let n = 0; n < envelope.length; n++) {
      counts[await check(reader, envelope.subarray(0, n), document, true, `${name} cut to ${n} bytes`)]++;
      total++;
    }
    for (let bit = 0; bit < envelope.length * 8; bit++) {
      const mutant = Buffer.from(envelope);
      mutant[bit >> 3] ^= 1 << (bit & 7);
      counts[await check(reader, mutant, document, checksummed, `${name} bit ${bit}`)]++;
      total++;
    }
  }
  // Figures for the README: how many mutants, and what became of them.
  console.log(`# mutants: ${total}; refused ${counts.refused}, decoded to the original ${counts.original}, other bytes (no checksum) ${counts.other}, 16-bit checksum collisions ${counts.collision} (${collisions.join('; ')})`);
  assert.deepEqual(collisions, ['v3-fields-bson-elements bit 413']);
  assert.ok(total > 20000);
  assert.ok(counts.refused > counts.original);
  zstd.use(zstd.hasNative ? 'zstd-napi' : 'wasm');
});
