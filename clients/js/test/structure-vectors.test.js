'use strict';

// The vectors of docs/structure.md (tests/Compression.Core.Tests/Vectors/structure-vectors.json): every packed stream
// unpacks with its table to the document, byte for byte; the structured frame decodes with dictionary 4242 to its packed
// stream; every invalid stream is refused with the reason the vector gives.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ShapeTable } = require('../src/structure/shapeTable');
const { unpack } = require('../src/structure/packed');
const { InvalidDataError, DictionaryCache } = require('../src');
const zstd = require('../src/zstd');
const { structureVectors, vectorFile } = require('./helpers');

const data = structureVectors();
const tables = new Map(data.tables.map((t) => [t.name, ShapeTable.parse(Buffer.from(t.hex, 'hex'))]));

test('the tables parse to their key lists', () => {
  for (const t of data.tables) {
    const table = tables.get(t.name);
    assert.equal(table.kind, t.kind === 'json' ? 1 : 2);
    assert.equal(table.count, t.shapes.length);
    t.shapes.forEach((keys, s) => {
      assert.deepEqual(table.keys.slice(table.firstKey[s], table.firstKey[s + 1]).map((k) => k.toString('utf8')), keys);
    });
  }
});

for (const v of data.vectors) {
  test(`structure vector ${v.name} unpacks to its document`, async () => {
    const document = Buffer.from(v.document, 'hex');
    if (v.text !== undefined) assert.equal(document.toString('utf8'), v.text);
    const packed = Buffer.from(v.packed, 'hex');
    assert.deepEqual(unpack(tables.get(v.table), packed, document.length), document);
    if (v.frame) {
      await zstd.ready();
      const dictionary = new DictionaryCache(null).addContent(4242, vectorFile(data.dictionary));
      assert.deepEqual(zstd.decodeMagicless(Buffer.from(v.frame, 'hex'), packed.length, dictionary.zstd), packed);
    }
  });
}

for (const v of data.invalid) {
  test(`invalid structure vector ${v.name} is refused (${v.error})`, () => {
    assert.throws(() => unpack(tables.get(v.table), Buffer.from(v.packed, 'hex'), v.length), (e) => e instanceof InvalidDataError && e.message.includes(v.error));
  });
}
