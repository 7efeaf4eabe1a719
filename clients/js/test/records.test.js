'use strict';

// Dictionary records are untrusted (a peer with write access to the database or the folder can write anything): checked
// as the .NET stores and DictionaryRecordValidator check them. A hostile record is an InvalidDataError naming the store,
// never a crash, and never adopted.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { deserialize, serialize, Long, Binary } = require('bson');
const { DocumentReader, DictionaryCache, FileDictionaryStore, InvalidDataError } = require('../src');
const { readMongoRecord, validateRecord, parseFileRecord } = require('../src/dictionaries');
const { parseStructureModel } = require('../src/structure');
const { hash32, hash3 } = require('../src/hash');
const zstd = require('../src/zstd');
const { vectors, vectorFile, expected } = require('./helpers');

const fixture = path.join(__dirname, 'fixtures', 'dotnet');
const rawRecords = (() => {
  const bytes = fs.readFileSync(path.join(fixture, 'dictionaries.bson'));
  const out = [];
  for (let at = 0; at < bytes.length; at += bytes.readInt32LE(at)) out.push(bytes.subarray(at, at + bytes.readInt32LE(at)));
  return out;
})();

function record(overrides = {}) {
  const content = vectorFile('dictionary-4242.bin');
  return { id: 4242, namespace: 'db.docs', version: 1, content, contentHash: hash3(content), shapes: null, shapesHash: 0n, codec: 1, level: 3, sampleCount: 10, ratio: 2.5, ...overrides };
}

const invalid = (pattern) => (e) => e instanceof InvalidDataError && pattern.test(e.message) && /from a test store is invalid and was not used/.test(e.message);

test('versions 1 to 1,000,000 only; id, namespace, codec, level, counts, ratio and hashes checked', () => {
  for (const version of [1, 1000000]) assert.equal(validateRecord(record({ version }), 'a test store').version, version);
  for (const version of [0, -1, 1000001, 1.5]) assert.throws(() => validateRecord(record({ version }), 'a test store'), invalid(/is not a version \(1 to 1000000\)/));
  assert.throws(() => validateRecord(record(), 'a test store', 4243), invalid(/asked for id 4243, the record says 4242/));
  assert.throws(() => validateRecord(record({ id: 0 }), 'a test store'), invalid(/not a dictionary id/));
  assert.throws(() => validateRecord(record({ namespace: '' }), 'a test store'), invalid(/names no namespace/));
  assert.throws(() => validateRecord(record({ codec: 2 }), 'a test store'), invalid(/codec Lz4 is not zstd/));
  assert.throws(() => validateRecord(record({ level: 23 }), 'a test store'), invalid(/level 23 is out of zstd's range/));
  assert.throws(() => validateRecord(record({ sampleCount: -1 }), 'a test store'), invalid(/sample count/));
  assert.throws(() => validateRecord(record({ ratio: Number.NaN }), 'a test store'), invalid(/not a ratio/));
  assert.throws(() => validateRecord(record({ contentHash: 1n }), 'a test store'), invalid(/does not match its hash/));
  assert.throws(() => validateRecord(record({ shapesHash: 5n }), 'a test store'), invalid(/shape table is missing/));
  const shapes = vectorFile('shapes-json.bin');
  assert.throws(() => validateRecord(record({ shapes, shapesHash: 5n }), 'a test store'), invalid(/shape table does not match its hash/));
  assert.throws(() => validateRecord(record({ content: Buffer.alloc(2 * 1024 * 1024) }), 'a test store'), invalid(/over MaxDictionaryBytes/));
  const notZstd = Buffer.alloc(1024, 7);
  assert.throws(() => validateRecord(record({ content: notZstd, contentHash: hash3(notZstd) }), 'a test store'), invalid(/does not start with the zstd dictionary magic/));
  const big = Buffer.alloc(768 * 1024 + 17);
  assert.throws(() => validateRecord(record({ shapes: big, shapesHash: hash3(big) }), 'a test store'), invalid(/over 786448/));
  // A table that is not one: refused with the table's own reason.
  const bad = Buffer.from(shapes);
  bad[5] = 9;
  assert.throws(() => validateRecord(record({ shapes: bad, shapesHash: hash3(bad) }), 'a test store'), invalid(/shape table is not usable: Shape table kind 9 is unknown/));
});

test('every bit flip of the fixture\'s dictionary documents: refused by the store or the validator, or a valid record; never a crash', () => {
  let refused = 0, accepted = 0;
  for (const raw of rawRecords) {
    // Every bit of the fields around the content (the content and table are covered by their hashes), and a sample inside.
    const positions = [];
    for (let i = 0; i < raw.length; i++) if (i < 200 || i > raw.length - 200 || i % 97 === 0) positions.push(i);
    for (const i of positions) {
      for (let bit = 0; bit < 8; bit++) {
        const mutant = Buffer.from(raw);
        mutant[i] ^= 1 << bit;
        try {
          const r = readMongoRecord(mutant, 'a test store', 4 * 1024 * 1024);
          validateRecord(r, 'a test store');
          accepted++;
        } catch (e) {
          if (!(e instanceof InvalidDataError)) throw new Error(`byte ${i} bit ${bit}: ${e.stack}`);
          refused++;
        }
      }
    }
  }
  assert.ok(refused > accepted, `${refused} refused, ${accepted} accepted`);
});

test('the MongoDB store\'s field types and ranges (an _id that is not a dictionary id, a version of another type, BinData of another subtype)', () => {
  const doc = deserialize(rawRecords[0], { promoteLongs: false, promoteValues: false });
  const check = (change, pattern) => {
    const mutated = { ...doc, ...change };
    assert.throws(() => readMongoRecord(serialize(mutated), 'a test store', 4 * 1024 * 1024), (e) => e instanceof InvalidDataError && pattern.test(e.message));
  };
  check({ _id: Long.fromNumber(0) }, /_id 0 is not a dictionary id/);
  check({ _id: Long.fromString('4294967296') }, /is not a dictionary id/);
  check({ v: 'one' }, /field 'v' is a String, not an Int32 or Int64/);
  check({ v: Long.fromNumber(1000001) }, /version 1000001 is not a version/);
  check({ content: new Binary(Buffer.alloc(300), 4) }, /'content' is BinData\(0x04\), not BinData\(0\)/);
  check({ hash: 5 }, /field 'hash' is a (Int32|number), not an Int64/);
  check({ codec: '1' }, /'codec' is '1', not a codec name/);
  check({ ns: '' }, /field 'ns' is empty/);
  const { shapes, ...withoutShapes } = doc;
  if (shapes) assert.throws(() => readMongoRecord(serialize(withoutShapes), 'a test store', 4 * 1024 * 1024), (e) => e instanceof InvalidDataError && /field 'shapes' is missing/.test(e.message));
  assert.throws(() => readMongoRecord(rawRecords[0], 'a test store', 100), (e) => e instanceof InvalidDataError && /over the 100 a record/.test(e.message));
});

test('structure models with a recomputed checksum (what a hostile peer writes): refused or parsed, and documents read with them are exact or refused', async () => {
  await zstd.ready();
  const v = vectors().find((x) => x.name === 'v2-fields-json');
  const model = vectorFile(v.fields);
  const envelope = Buffer.from(v.envelope, 'hex');
  let refused = 0, parsed = 0, decoded = 0;
  for (let i = 0; i < model.length; i++) {
    for (let bit = 0; bit < 8; bit += 3) {
      const mutant = Buffer.from(model);
      mutant[i] ^= 1 << bit;
      // Recompute the inner checksums (the table's and the model's) so the checks behind them are reached.
      const tableAt = 6, tableLength = mutant[5];
      if (tableAt + tableLength <= mutant.length && mutant.toString('latin1', 0, 4) === 'SMDL') {
        mutant.writeUInt32LE(hash32(mutant.subarray(tableAt, tableAt + tableLength - 4)), tableAt + tableLength - 4);
        if (mutant.length - 4 > tableAt + tableLength) mutant.writeUInt32LE(hash32(mutant.subarray(tableAt + tableLength, mutant.length - 4)), mutant.length - 4);
      }
      try {
        parseStructureModel(mutant);
        parsed++;
      } catch (e) {
        if (!(e instanceof InvalidDataError)) throw new Error(`byte ${i} bit ${bit}: ${e.stack}`);
        refused++;
        continue;
      }
      const cache = new DictionaryCache(null);
      cache.addContent(4242, vectorFile('dictionary-4242.bin'), { shapes: mutant });
      try {
        assert.deepEqual(await new DocumentReader({ dictionaries: cache }).decompress(envelope), expected(v));
        decoded++;
      } catch (e) {
        if (!(e instanceof InvalidDataError) && !(e instanceof assert.AssertionError)) throw new Error(`byte ${i} bit ${bit}: ${e.stack}`);
        if (e instanceof assert.AssertionError) throw e;
      }
    }
  }
  assert.ok(refused > 0 && parsed > 0, `${refused} refused, ${parsed} parsed, ${decoded} decoded`);
});

test('the file store: records by id, validated; a damaged, oversized or foreign file is refused naming the folder', async () => {
  const reader = new DocumentReader({ store: new FileDictionaryStore(path.join(fixture, 'files')) });
  const ids = fs.readdirSync(path.join(fixture, 'files')).filter((f) => f.endsWith('.dict.json')).map((f) => Number(f.split('.')[0]));
  for (const id of ids) assert.equal((await reader.dictionaries.get(id)).id, id);
  // Fixture ids are random: take one that is none of the names this test writes (1, 3, 4, 5, 6).
  const id = ids.find((n) => ![1, 3, 4, 5, 6].includes(n));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docz-files-'));
  try {
    const text = fs.readFileSync(path.join(fixture, 'files', `${id}.dict.json`), 'utf8');
    fs.writeFileSync(path.join(dir, '1.dict.json'), text); // names another id inside
    fs.writeFileSync(path.join(dir, `${id}.dict.json`), text.replace(/"ContentHash":(-?\d*)(\d)/, (m, head, d) => `"ContentHash":${head}${(Number(d) + 9) % 10}`) /* the last digit: the first may be at the range's top */);
    fs.writeFileSync(path.join(dir, '3.dict.json'), '{"Id":3');
    fs.writeFileSync(path.join(dir, '4.dict.json'), 'x'.repeat(3 * 1024 * 1024));
    fs.mkdirSync(path.join(dir, '5.dict.json'));
    const store = new FileDictionaryStore(dir);
    const cache = new DictionaryCache(store);
    await assert.rejects(cache.get(1), invalidFolder(/asked for id 1, the record says/));
    await assert.rejects(cache.get(id), invalidFolder(/does not match its hash/));
    await assert.rejects(cache.get(3), (e) => e instanceof InvalidDataError && /is not a record/.test(e.message));
    await assert.rejects(cache.get(4), (e) => e instanceof InvalidDataError && /over the .* a valid file can have/.test(e.message));
    await assert.rejects(cache.get(5), (e) => e instanceof InvalidDataError && /not a regular file|EISDIR/.test(e.message));
    assert.equal(await store.get(6), null);
    // The 64-bit hashes are read exactly from the text (JSON numbers past 2^53 would be rounded).
    const parsed = parseFileRecord(text, 'x');
    assert.equal(parsed.contentHash, hash3(parsed.content));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function invalidFolder(pattern) {
  return (e) => e instanceof InvalidDataError && pattern.test(e.message) && /from the dictionary folder /.test(e.message);
}

test('MongoDictionaryStore: findOne by _id with raw: true on _compression.dictionaries, read concern majority; the record checked', async () => {
  const { MongoDictionaryStore } = require('../src');
  const calls = [];
  const byId = new Map(rawRecords.map((raw) => [Number(deserialize(raw)._id), raw]));
  const db = {
    databaseName: 'shop',
    collection(name, options) {
      calls.push({ name, options });
      return { async findOne(filter, findOptions) { calls.push({ filter, findOptions }); return byId.get(filter._id) ?? null; } };
    },
  };
  const store = new MongoDictionaryStore(db);
  assert.equal(store.location, 'MongoDB collection shop._compression.dictionaries');
  const [id] = byId.keys();
  const reader = new DocumentReader({ store });
  assert.equal((await reader.dictionaries.get(id)).id, id);
  assert.equal(await store.get(123456), null);
  assert.deepEqual(calls.slice(0, 2), [{ name: '_compression.dictionaries', options: { readConcern: { level: 'majority' } } }, { filter: { _id: id }, findOptions: { raw: true } }]);
});
