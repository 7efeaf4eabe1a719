'use strict';

// The real `mongodb` driver against the loopback MongoDB server (tests/Compression.Testing), into which the .NET
// serializer has just written documents (format v3, codec 9: a trained dictionary with a shape table and a field model):
// MongoDictionaryStore reads the dictionary from _compression.dictionaries, findDecoded decodes every document, and each
// equals what was written. Run by `npm run test:live` and by .ci/run (it needs the .NET SDK: it builds and runs
// test/live/LoopbackHost).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const readline = require('node:readline');
const { MongoClient } = require('mongodb');
const { deserialize } = require('bson');
const { DocumentReader, MongoDictionaryStore, findDecoded, decodeStoredDocument } = require('../..');

const project = path.join(__dirname, 'LoopbackHost');

test('the mongodb driver reads documents the .NET serializer wrote, through the loopback server', { timeout: 600000 }, async () => {
  execFileSync('dotnet', ['build', project, '-c', 'Release', '-nologo', '-v', 'q'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const host = spawn('dotnet', [path.join(project, 'bin', 'Release', 'net10.0', 'LoopbackHost.dll')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => host.on('exit', resolve));
  try {
    const line = await new Promise((resolve, reject) => {
      readline.createInterface({ input: host.stdout }).once('line', resolve);
      host.once('exit', (code) => reject(new Error(`LoopbackHost exited with ${code} before it served`)));
    });
    const info = JSON.parse(line);
    const client = new MongoClient(info.connectionString, { serverSelectionTimeoutMS: 10000 });
    try {
      const db = client.db(info.database);
      const reader = new DocumentReader({ store: new MongoDictionaryStore(db) });
      const bytes = fs.readFileSync(info.expected);
      const expected = [];
      for (let at = 0; at < bytes.length; at += bytes.readInt32LE(at)) expected.push(deserialize(bytes.subarray(at, at + bytes.readInt32LE(at))));
      const decoded = [];
      for await (const document of findDecoded(db.collection(info.collection), reader, {}, { sort: { _id: 1 } })) decoded.push(document);
      assert.equal(decoded.length, 40);
      assert.deepEqual(decoded, expected);
      // A filter on a clear field, and a document as the driver deserializes it by default.
      const station = expected[0].Station;
      const some = [];
      for await (const document of findDecoded(db.collection(info.collection), reader, { Station: station })) some.push(document);
      assert.deepEqual(some, expected.filter((e) => e.Station === station));
      const stored = await db.collection(info.collection).findOne({ _id: expected[1]._id });
      assert.equal(stored._z.sub_type, 0x81);
      assert.equal(stored._z.buffer[1] & 0x0f, 9, 'codec 9 (field zstd with the checksum in its stream)');
      assert.deepEqual(await decodeStoredDocument(stored, reader), expected[1]);
    } finally {
      await client.close();
    }
  } finally {
    host.stdin.end();
    const code = await exited;
    assert.equal(code, 0, 'the loopback server saw no protocol failure');
  }
});
