'use strict';

// A collection written by the .NET serializer through the real MongoClient (tests/Compression.MongoDB.Tests/
// JsReaderFixtureTests.cs): every stored document decodes to exactly the BSON the serializer reads back, with the
// dictionaries read from the raw documents of _compression.dictionaries and from a FileDictionaryStore folder. Its last
// dictionary's field model has sources (FLDM version 2: a title copying the place, an update time relative to the event's).
// test/fixtures/dotnet is a committed copy; test/fixtures/generated (or COMPRESSION_JS_FIXTURE) is written by the .NET
// test suite, which .ci/run runs first.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { deserialize } = require('bson');
const { DocumentReader, FileDictionaryStore, decodeStoredBson, decodeStoredDocument, findDecoded, InvalidDataError, DictionaryNotFoundError } = require('../src');
const { readMongoRecord } = require('../src/dictionaries');

const folders = [path.join(__dirname, 'fixtures', 'dotnet')];
const generated = process.env.COMPRESSION_JS_FIXTURE || path.join(__dirname, 'fixtures', 'generated');
if (fs.existsSync(path.join(generated, 'manifest.json'))) folders.push(path.resolve(generated));
if (process.env.CI && folders.length < 2) throw new Error(`CI: the .NET test suite did not write the fixture at ${generated}`);

function splitBson(bytes) {
  const out = [];
  for (let at = 0; at < bytes.length;) {
    const n = bytes.readInt32LE(at);
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

/** A store over the raw dictionary documents, read and checked as MongoDictionaryStore reads them. */
function rawDocumentStore(folder) {
  const records = new Map();
  for (const raw of splitBson(fs.readFileSync(path.join(folder, 'dictionaries.bson')))) {
    const record = readMongoRecord(raw, 'fixture dictionaries.bson', 2 * 1024 * 1024);
    records.set(record.id, record);
  }
  return { location: 'fixture dictionaries.bson', gets: 0, async get(id) { this.gets++; return records.get(id) ?? null; } };
}

for (const folder of folders) {
  const name = path.basename(folder);
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'manifest.json'), 'utf8'));
  const stored = splitBson(fs.readFileSync(path.join(folder, 'stored.bson')));
  const expected = splitBson(fs.readFileSync(path.join(folder, 'expected.bson')));

  test(`${name}: the fixture holds every codec, formats v1-v3, four dictionary versions and both field model versions`, () => {
    assert.equal(stored.length, manifest.documents);
    assert.equal(expected.length, stored.length);
    assert.deepEqual(manifest.dictionaryVersions, [1, 2, 3, 4]);
    // Version 3's field model is FLDM version 1; version 4's is version 2 (sources: copy slots, relative ranges).
    assert.deepEqual(manifest.fieldModelVersions, [0, 0, 1, 2]);
    const keys = Object.keys(manifest.envelopes);
    for (const k of ['V1/Zstd/0x80/dictionary', 'V2/PackedZstd/0x81/dictionary', 'V3/FieldZstdFoldedChecksum/0x81/dictionary', 'V3/PackedZstd/0x81/dictionary',
      'V3/Zstd/0x81', 'V3/Lz4/0x81', 'V3/Snappy/0x81', 'V3/Deflate/0x81', 'V3/Brotli/0x81', 'V3/Gzip/0x81', 'V3/Stored/0x81']) {
      assert.ok(keys.includes(k), k);
    }
  });

  test(`${name}: every stored document decodes byte for byte (dictionaries from the MongoDB store's documents)`, async () => {
    const store = rawDocumentStore(folder);
    const reader = new DocumentReader({ store });
    for (let i = 0; i < stored.length; i++) {
      const plain = await decodeStoredBson(stored[i], reader, { namespace: manifest.namespace });
      assert.deepEqual(plain, expected[i], `document ${i}`);
    }
    assert.equal(store.gets, 4, 'each dictionary fetched once, then cached');
  });

  test(`${name}: every stored document decodes byte for byte (dictionaries from the file store's folder)`, async () => {
    const reader = new DocumentReader({ store: new FileDictionaryStore(path.join(folder, 'files')) });
    for (let i = 0; i < stored.length; i++) assert.deepEqual(await decodeStoredBson(stored[i], reader), expected[i], `document ${i}`);
  });

  test(`${name}: decodeStoredDocument takes a document the driver deserialized, and findDecoded wraps a collection's find`, async () => {
    const reader = new DocumentReader({ store: rawDocumentStore(folder) });
    for (let i = 0; i < stored.length; i++) {
      assert.deepEqual(await decodeStoredDocument(deserialize(stored[i]), reader), deserialize(expected[i]));
    }
    // A collection as the driver gives it: find(filter, { raw: true }) returns a cursor of raw BSON.
    const calls = [];
    const collection = {
      dbName: 'db', collectionName: 'docs',
      find(filter, options) {
        calls.push({ filter, options });
        return { async *[Symbol.asyncIterator]() { yield* stored; }, async close() {} };
      },
    };
    const decoded = [];
    for await (const document of findDecoded(collection, reader, { Kind: 'v3-fields' }, { sort: { _id: 1 } })) decoded.push(document);
    assert.deepEqual(decoded, expected.map((e) => deserialize(e)));
    assert.deepEqual(calls, [{ filter: { Kind: 'v3-fields' }, options: { sort: { _id: 1 }, raw: true } }]);
  });

  test(`${name}: a missing dictionary or a damaged document is an error naming the document, never data`, async () => {
    const empty = new DocumentReader({ store: { location: 'an empty store', async get() { return null; } } });
    const withDictionary = stored.find((s) => deserialize(s)._z.buffer[1] & 0x80);
    await assert.rejects(decodeStoredBson(withDictionary, empty, { namespace: 'db.docs' }), (e) => e instanceof DictionaryNotFoundError && /document _id [0-9a-f]{24} in 'db.docs' needs it/.test(e.message));
    const reader = new DocumentReader({ store: rawDocumentStore(folder) });
    const damaged = Buffer.from(stored[stored.length - 1]);
    damaged[damaged.length - 3] ^= 0x40; // in the envelope's checksum
    await assert.rejects(decodeStoredBson(damaged, reader), (e) => e instanceof InvalidDataError && /cannot be decompressed/.test(e.message));
  });
}
