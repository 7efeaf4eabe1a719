'use strict';

// mongosh/docz.js in a simulated shell: the globals mongosh gives a load()ed script (require, __dirname, print, EJSON,
// NumberLong, db) over the .NET fixture's documents. (No mongosh and no mongod run on this project's machines; the script
// uses only the shell's public API: getName, getCollection, getDB, getFullName, find().sort().limit().toArray().)
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const bson = require('bson');

const folder = path.join(__dirname, 'fixtures', 'dotnet');
const split = (bytes) => {
  const out = [];
  for (let at = 0; at < bytes.length; at += bytes.readInt32LE(at)) out.push(bytes.subarray(at, at + bytes.readInt32LE(at)));
  return out;
};

function shellCollection(database, name, documents) {
  return {
    getName: () => name,
    getDB: () => database,
    getFullName: () => `${database.getName()}.${name}`,
    findOne: () => documents[0],
    find(filter = {}) {
      let docs = documents.filter((d) => Object.entries(filter).every(([k, v]) => (v instanceof bson.Long ? bson.Long.fromValue(d[k]).equals(v) : d[k] === v)));
      const cursor = {
        sort: () => cursor,
        limit: (n) => { docs = docs.slice(0, n); return cursor; },
        toArray: async () => docs,
      };
      return cursor;
    },
  };
}

test('mongosh/docz.js: load()ed into a shell, it finds and decodes the .NET fixture\'s documents', async () => {
  const stored = split(fs.readFileSync(path.join(folder, 'stored.bson'))).map((b) => bson.deserialize(b, { promoteLongs: false }));
  const expected = split(fs.readFileSync(path.join(folder, 'expected.bson'))).map((b) => bson.deserialize(b));
  const dictionaries = split(fs.readFileSync(path.join(folder, 'dictionaries.bson'))).map((b) => bson.deserialize(b, { promoteLongs: false }));
  const printed = [];
  const database = { getName: () => 'fixture' };
  database.getCollection = (name) => shellCollection(database, name, name === '_compression.dictionaries' ? dictionaries : stored);
  const sandbox = { print: (...a) => printed.push(a.join(' ')), EJSON: bson.EJSON, NumberLong: (s) => bson.Long.fromString(s), db: database, Buffer, globalThis: null };
  sandbox.globalThis = sandbox;
  const script = path.join(__dirname, '..', 'mongosh', 'docz.js');
  const run = vm.compileFunction(fs.readFileSync(script, 'utf8'), ['require', '__dirname', '__filename', 'print', 'EJSON', 'NumberLong', 'db', 'globalThis'], { filename: script });
  run(require, path.dirname(script), script, sandbox.print, sandbox.EJSON, sandbox.NumberLong, database, sandbox);
  assert.match(printed[0], /^docz: read-only decoding loaded \(zstd: (zstd-napi|wasm)\)/);
  const docz = sandbox.docz;
  const found = await docz.find(database.getCollection('docs'), {}, { limit: 1000 });
  assert.equal(found.length, expected.length);
  for (let i = 0; i < found.length; i++) assert.deepEqual(bson.EJSON.serialize(found[i]), bson.EJSON.serialize(expected[i]), `document ${i}`);
  const one = await docz.decode(stored[stored.length - 1], database.getCollection('docs'));
  assert.deepEqual(bson.EJSON.serialize(one), bson.EJSON.serialize(expected[expected.length - 1]));
  const last = stored[stored.length - 1]._z;
  assert.equal((await docz.decompress(last)).length, docz.header(last).uncompressedLength);
});
