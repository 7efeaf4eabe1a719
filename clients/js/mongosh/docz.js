// Decoding compressed documents in mongosh, with no build step: in a clone where `npm ci` has been run in clients/js,
//
//   load('/path/to/clients/js/mongosh/docz.js')
//   await docz.find(db.orders, { status: 'open' }, { limit: 5 })    // decoded documents, as an array
//   await docz.decode(db.orders.findOne())                           // one stored document, decoded
//   await docz.decompress(someEnvelopeBinary)                        // a bare envelope (BinData) to a Buffer
//
// Dictionaries are read from the same database's `_compression.dictionaries` (db.getSiblingDB of the collection's
// database), validated as the .NET stores validate them, and kept for the session. Read-only: nothing is written.
// Shell documents are handed to the package through canonical Extended JSON, so the shell's BSON library and the
// package's need not be the same version. See clients/js/README.md, "mongosh".
(function install(global) {
  'use strict';
  const path = require('path');
  const base = typeof __dirname === 'string' ? __dirname : path.dirname(typeof __filename === 'string' ? __filename : '.');
  const docz = require(path.join(base, '..', 'src'));
  const { readMongoRecord } = require(path.join(base, '..', 'src', 'dictionaries.js'));
  const bson = require(require.resolve('bson', { paths: [path.join(base, '..')] }));
  const readers = new Map(); // database name -> DocumentReader

  // A shell document (any BSON library) to raw BSON bytes of the package's library, exactly.
  function toRaw(shellDocument) {
    const text = EJSON.stringify(shellDocument, { relaxed: false });
    return bson.serialize(bson.EJSON.parse(text, { relaxed: false }));
  }

  function readerFor(database) {
    const name = database.getName();
    let reader = readers.get(name);
    if (!reader) {
      const collection = database.getCollection('_compression.dictionaries');
      const store = {
        location: `MongoDB collection ${name}._compression.dictionaries (mongosh)`,
        async get(id) {
          const found = await collection.find({ _id: NumberLong(String(id)) }).limit(1).toArray();
          if (found.length === 0) return null;
          return readMongoRecord(toRaw(found[0]), store.location, 1024 * 1024 + 768 * 1024 + 16 + 8 * 1024);
        },
      };
      reader = new docz.DocumentReader({ store });
      readers.set(name, reader);
    }
    return reader;
  }

  async function decode(shellDocument, collection) {
    const database = collection ? collection.getDB() : db;
    const namespace = collection ? collection.getFullName() : '';
    const plain = await docz.decodeStoredBson(toRaw(shellDocument), readerFor(database), { namespace });
    return EJSON.parse(bson.EJSON.stringify(bson.deserialize(plain), { relaxed: false }), { relaxed: false });
  }

  async function find(collection, filter = {}, { limit = 20, sort, projection } = {}) {
    let cursor = collection.find(filter, projection);
    if (sort) cursor = cursor.sort(sort);
    const stored = await cursor.limit(limit).toArray();
    const out = [];
    for (const document of stored) out.push(await decode(document, collection));
    return out;
  }

  async function decompress(envelope, database = db) {
    const bytes = envelope && typeof envelope.buffer !== 'undefined' && envelope.sub_type !== undefined
      ? Buffer.from(envelope.buffer).subarray(0, envelope.position ?? envelope.buffer.length)
      : envelope;
    return readerFor(database).decompress(bytes);
  }

  global.docz = {
    find, decode, decompress,
    header: (envelope) => docz.readHeader(Buffer.from(envelope.buffer ?? envelope)),
    get zstdBackend() { return docz.zstdBackend; },
  };
  print(`docz: read-only decoding loaded (zstd: ${docz.zstdBackend}); docz.find(db.coll, filter), docz.decode(doc), docz.decompress(binData)`);
})(globalThis);
