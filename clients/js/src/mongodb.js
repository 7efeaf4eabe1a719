'use strict';

// Documents the .NET serializer (src/Compression.MongoDB/CompressedDocumentSerializer.cs) stores:
// { _id, <clear fields>, _z: BinData(0x81, envelope of the other elements' bytes) } (formats v2 and v3), or
// BinData(0x80, envelope of a whole BSON document) (format v1). The plain document is the stored clear elements in their
// order, then the decompressed ones that are not stored in the clear (a clear element wins: an update set it later) and
// are not docz's clear-field placeholders. A document without such a _z is plain (written before compression, or the
// application's own _z).
const { InvalidDataError, DictionaryNotFoundError } = require('./errors');
const { toBuffer } = require('./reader');

const DOCUMENT_SUBTYPE = 0x80;
const ELEMENTS_SUBTYPE = 0x81;
const PLACEHOLDER_SUBTYPE = 0x82;
const PLACEHOLDER_MARKER = Buffer.from('docz clear field', 'latin1');
const MAX_DEPTH = 100;

/** The elements of the BSON document bytes `doc[start..end)` (its elements, without length and terminator). */
function* elements(doc, start, end, depth = 0) {
  let at = start;
  while (at < end) {
    const elementStart = at;
    const type = doc[at++];
    const nameEnd = doc.indexOf(0, at);
    if (nameEnd < 0 || nameEnd >= end) throw new InvalidDataError(`BSON element at offset ${elementStart}: its name does not end.`);
    const nameStart = at;
    at = nameEnd + 1;
    const valueStart = at;
    const need = (n) => {
      if (n < 0 || at + n > end) throw new InvalidDataError(`BSON element at offset ${elementStart} runs past its document.`);
    };
    const int32 = () => {
      need(4);
      return doc.readInt32LE(at);
    };
    switch (type) {
      case 0x01: case 0x09: case 0x11: case 0x12: need(8); at += 8; break;
      case 0x02: case 0x0d: case 0x0e: {
        const n = int32();
        need(4 + n);
        if (n < 1 || doc[at + 4 + n - 1] !== 0) throw new InvalidDataError(`BSON string at offset ${elementStart} is not terminated.`);
        at += 4 + n;
        break;
      }
      case 0x03: case 0x04: case 0x0f: {
        const n = int32();
        need(n);
        if (n < 5 || doc[at + n - 1] !== 0) throw new InvalidDataError(`BSON document at offset ${elementStart} is malformed.`);
        if (depth + 1 > MAX_DEPTH) throw new InvalidDataError(`the document nests deeper than ${MAX_DEPTH} levels.`);
        if (type !== 0x0f) for (const _ of elements(doc, at + 4, at + n - 1, depth + 1)) { /* checked */ }
        at += n;
        break;
      }
      case 0x05: {
        const n = int32();
        need(5 + n);
        at += 5 + n;
        break;
      }
      case 0x06: case 0x0a: case 0x7f: case 0xff: break;
      case 0x07: need(12); at += 12; break;
      case 0x08: need(1); at += 1; break;
      case 0x0b: {
        const a = doc.indexOf(0, at);
        const b = a < 0 ? -1 : doc.indexOf(0, a + 1);
        if (b < 0 || b >= end) throw new InvalidDataError(`BSON regex at offset ${elementStart} is not terminated.`);
        at = b + 1;
        break;
      }
      case 0x0c: {
        const n = int32();
        need(4 + n + 12);
        at += 4 + n + 12;
        break;
      }
      case 0x10: need(4); at += 4; break;
      case 0x13: need(16); at += 16; break;
      default: throw new InvalidDataError(`BSON element at offset ${elementStart} has unknown type 0x${type.toString(16)}.`);
    }
    yield { type, start: elementStart, end: at, nameStart, nameEnd, valueStart };
  }
  if (at !== end) throw new InvalidDataError('BSON elements run past their document.');
}

function isPlaceholder(doc, e) {
  if (e.type !== 0x05) return false;
  const n = doc.readInt32LE(e.valueStart);
  return n === PLACEHOLDER_MARKER.length && doc[e.valueStart + 4] === PLACEHOLDER_SUBTYPE && doc.subarray(e.valueStart + 5, e.valueStart + 5 + n).equals(PLACEHOLDER_MARKER);
}

function describeId(stored) {
  try {
    const { deserialize } = require('bson');
    const doc = deserialize(stored, { promoteValues: true });
    return doc._id === undefined ? 'BsonNull' : String(typeof doc._id === 'object' && doc._id.toHexString ? doc._id.toHexString() : doc._id);
  } catch {
    return '(unreadable _id)';
  }
}

/**
 * A stored document's raw BSON (as a `find` with `raw: true` returns it) turned into the plain document's raw BSON,
 * exactly as the .NET serializer rebuilds it. A document without the serializer's _z comes back as it is.
 * @param {Buffer|Uint8Array} stored
 * @param {import('./reader').DocumentReader} reader
 * @param {{ namespace?: string }} [options] the collection's namespace, for messages
 */
async function decodeStoredBson(stored, reader, { namespace = '' } = {}) {
  const bytes = toBuffer(stored);
  if (bytes.length < 5 || bytes.readInt32LE(0) !== bytes.length || bytes[bytes.length - 1] !== 0) throw new InvalidDataError('The stored document is not a BSON document.');
  let z = null;
  const clear = [];
  for (const e of elements(bytes, 4, bytes.length - 1)) {
    if (e.nameEnd - e.nameStart === 2 && bytes[e.nameStart] === 0x5f && bytes[e.nameStart + 1] === 0x7a && e.type === 0x05
      && (bytes[e.valueStart + 4] === DOCUMENT_SUBTYPE || bytes[e.valueStart + 4] === ELEMENTS_SUBTYPE)) z = e;
    else clear.push(e);
  }
  if (z === null) return bytes;
  const subtype = bytes[z.valueStart + 4];
  const envelope = bytes.subarray(z.valueStart + 5, z.end);
  let rest;
  try {
    rest = await reader.decompress(envelope);
  } catch (e) {
    if (e instanceof InvalidDataError) throw new InvalidDataError(`Document _id ${describeId(bytes)} in '${namespace}' cannot be decompressed: ${e.message}`, { cause: e });
    if (e instanceof DictionaryNotFoundError) {
      const wrapped = new DictionaryNotFoundError(e.dictionaryId, `document _id ${describeId(bytes)} in '${namespace}' needs it (${e.message})`, { cause: e });
      throw wrapped;
    }
    throw e;
  }
  const clearNames = new Set(clear.map((e) => bytes.toString('latin1', e.nameStart, e.nameEnd)));
  const parts = [Buffer.alloc(4)];
  for (const e of clear) parts.push(bytes.subarray(e.start, e.end));
  try {
    let start = 0, end = rest.length;
    if (subtype === DOCUMENT_SUBTYPE) {
      if (rest.length < 5 || rest.readInt32LE(0) !== rest.length || rest[rest.length - 1] !== 0) throw new InvalidDataError('its length or terminator is wrong.');
      start = 4;
      end = rest.length - 1;
    }
    for (const e of elements(rest, start, end)) {
      if (clearNames.has(rest.toString('latin1', e.nameStart, e.nameEnd))) continue;
      if (isPlaceholder(rest, e)) continue;
      parts.push(rest.subarray(e.start, e.end));
    }
  } catch (e) {
    if (!(e instanceof InvalidDataError)) throw e;
    throw new InvalidDataError(`Document _id ${describeId(bytes)} in '${namespace}': the decompressed part is not a BSON document: ${e.message}`, { cause: e });
  }
  parts.push(Buffer.from([0]));
  const merged = Buffer.concat(parts);
  merged.writeInt32LE(merged.length, 0);
  return merged;
}

/**
 * A stored document turned into the plain document: `stored` is its raw BSON (Buffer) or a document the driver
 * deserialized (its _z a bson Binary). Returns a deserialized document (`bsonOptions` go to BSON's deserialize).
 */
async function decodeStoredDocument(stored, reader, { namespace = '', bsonOptions = {} } = {}) {
  const { serialize, deserialize } = require('bson');
  const raw = Buffer.isBuffer(stored) || stored instanceof Uint8Array ? stored : serialize(stored);
  const plain = await decodeStoredBson(raw, reader, { namespace });
  try {
    return deserialize(plain, bsonOptions);
  } catch (e) {
    throw new InvalidDataError(`Document _id ${describeId(plain)} in '${namespace}': the decoded document does not deserialize: ${e.message}`, { cause: e });
  }
}

/**
 * A thin wrapper over a `mongodb` collection's find: yields each matching document decoded. Filters, sorts and
 * projections can name only `_id` and the clear fields (the rest is not stored in the clear).
 * @param {import('mongodb').Collection} collection
 */
async function* findDecoded(collection, reader, filter = {}, { bsonOptions = {}, ...findOptions } = {}) {
  const namespace = `${collection.dbName}.${collection.collectionName}`;
  const cursor = collection.find(filter, { ...findOptions, raw: true });
  try {
    for await (const raw of cursor) yield await decodeStoredDocument(raw, reader, { namespace, bsonOptions });
  } finally {
    await cursor.close();
  }
}

module.exports = { decodeStoredBson, decodeStoredDocument, findDecoded, elements };
