'use strict';

// Dictionary records: read from the stores the .NET engine publishes to, validated as
// src/Compression.Core/Dictionaries/DictionaryRecordValidator.cs validates them, and cached by id.
const fs = require('node:fs');
const path = require('node:path');
const { hash3 } = require('./hash');
const { InvalidDataError, DictionaryNotFoundError } = require('./errors');
const { parseStructureModel, MAX_STORED } = require('./structure');
const zstd = require('./zstd');

const MAX_VERSION = 1000000;
const DEFAULT_MAX_DICTIONARY_BYTES = 1024 * 1024;
const DICTIONARY_MAGIC = 0xec30a437;
const CODEC_NAMES = ['Stored', 'Zstd', 'Lz4', 'Snappy', 'Deflate', 'Brotli', 'Gzip', 'PackedZstd', 'FieldZstd'];

/**
 * Checks a record ({ id, namespace, version, content, contentHash (BigInt), shapes, shapesHash (BigInt), codec (1 =
 * zstd), level, sampleCount, ratio }) read from `location` and returns the dictionary the decoders use:
 * { id, namespace, version, zstd, structure }. Throws InvalidDataError naming the store for anything else.
 */
function validateRecord(record, location, expectedId, maxDictionaryBytes = DEFAULT_MAX_DICTIONARY_BYTES) {
  const invalid = (problem, cause) => new InvalidDataError(
    `Dictionary record ${record.id} (namespace '${record.namespace}', version ${record.version}) from ${location} is invalid and was not used: ${problem}.`, cause ? { cause } : undefined);
  const problem = findProblem(record, expectedId, maxDictionaryBytes);
  if (problem) throw invalid(problem);
  let structure = null;
  if (record.shapes && record.shapes.length > 0) {
    try {
      structure = parseStructureModel(record.shapes);
    } catch (e) {
      if (!(e instanceof InvalidDataError)) throw e;
      throw invalid(`its shape table is not usable: ${e.message}`, e);
    }
  }
  const content = record.content;
  if (content.length < 256 || content.length > maxDictionaryBytes) throw invalid(`Zstd dictionary ${record.id} has ${content.length} bytes; allowed are 256 to ${maxDictionaryBytes}.`);
  if (content.readUInt32LE(0) !== DICTIONARY_MAGIC) throw invalid(`Zstd dictionary ${record.id} does not start with the zstd dictionary magic 0xEC30A437.`);
  let handle;
  try {
    handle = zstd.prepareDictionary(Buffer.from(content));
  } catch (e) {
    if (!(e instanceof InvalidDataError)) throw e;
    throw invalid(`Zstd dictionary ${record.id} could not be loaded: ${e.message}`, e);
  }
  return { id: record.id, namespace: record.namespace, version: record.version, zstd: handle, structure };
}

function findProblem(r, expectedId, maxDictionaryBytes) {
  if (expectedId !== undefined && expectedId !== null && r.id !== expectedId) return `asked for id ${expectedId}, the record says ${r.id}`;
  if (!Number.isInteger(r.id) || r.id < 1 || r.id > 0xffffffff) return `id ${r.id} is not a dictionary id`;
  if (typeof r.namespace !== 'string' || r.namespace.length === 0) return 'the record names no namespace';
  if (!Number.isInteger(r.version) || r.version < 1 || r.version > MAX_VERSION) return `version ${r.version} is not a version (1 to ${MAX_VERSION})`;
  if (r.codec !== 1) return `codec ${CODEC_NAMES[r.codec] ?? r.codec} is not zstd`;
  if (!Number.isInteger(r.level) || r.level < 1 || r.level > 22) return `level ${r.level} is out of zstd's range (1 to 22)`;
  if (!Number.isInteger(r.sampleCount) || r.sampleCount < 0) return `sample count ${r.sampleCount} is negative`;
  if (typeof r.ratio !== 'number' || !Number.isFinite(r.ratio) || r.ratio < 0) return `ratio ${r.ratio} is not a ratio`;
  if (!Buffer.isBuffer(r.content)) return 'it has no content';
  if (r.content.length > maxDictionaryBytes) return `${r.content.length} bytes, over MaxDictionaryBytes (${maxDictionaryBytes})`;
  if (hash3(r.content) !== r.contentHash) return `the content does not match its hash (0x${hex64(r.contentHash)})`;
  const shapes = r.shapes && r.shapes.length > 0 ? r.shapes : null;
  if (shapes && shapes.length > MAX_STORED) return `its shape table has ${shapes.length} bytes, over ${MAX_STORED}`;
  if (shapes === null ? r.shapesHash !== 0n : hash3(shapes) !== r.shapesHash) {
    return shapes === null ? `its shape table is missing (the record has its hash, 0x${hex64(r.shapesHash)})` : `the shape table does not match its hash (0x${hex64(r.shapesHash)})`;
  }
  return null;
}

function hex64(v) {
  return typeof v === 'bigint' ? BigInt.asUintN(64, v).toString(16).toUpperCase().padStart(16, '0') : String(v);
}

/**
 * The .NET FileDictionaryStore's folder: `<id>.dict.json` per record (System.Text.Json: Id, Namespace, Version,
 * Content (base64), ContentHash (a 64-bit number), Created, Codec (a number), Level, SampleCount, Ratio, Shapes
 * (base64) and ShapesHash when it has a shape table), beside `<namespace key>.v<version>.id` files. Read-only here.
 */
class FileDictionaryStore {
  constructor(directory, { maxDictionaryBytes = DEFAULT_MAX_DICTIONARY_BYTES } = {}) {
    if (!directory) throw new TypeError('directory is required');
    this.directory = path.resolve(directory);
    this.maxDictionaryBytes = maxDictionaryBytes;
    // Base64 takes 4 bytes for every 3, plus the record's other fields (as the .NET store bounds its files).
    this.maxRecordFileBytes = Math.floor((maxDictionaryBytes + 2) / 3) * 4 + Math.floor((MAX_STORED + 2) / 3) * 4 + 4096;
    this.location = `the dictionary folder ${this.directory}`;
  }

  /** The record of `id`, or null when the folder has none. */
  async get(id) {
    const file = path.join(this.directory, `${id}.dict.json`);
    let handle;
    try {
      handle = await fs.promises.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK || 0));
    } catch (e) {
      if (e.code === 'ENOENT') return null;
      throw e;
    }
    let text;
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new InvalidDataError(`${file} is not a regular file; it was not read.`);
      if (stat.size > this.maxRecordFileBytes) throw new InvalidDataError(`${file} has ${stat.size} bytes, over the ${this.maxRecordFileBytes} a valid file can have; it was not read.`);
      text = (await handle.readFile()).toString('utf8');
    } finally {
      await handle.close();
    }
    return parseFileRecord(text, file);
  }
}

/** A record file's JSON: the 64-bit hashes are read from the text itself, exactly (JSON.parse would round them). */
function parseFileRecord(text, file) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new InvalidDataError(`Dictionary record ${file} is not a record: ${e.message}`, { cause: e });
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new InvalidDataError(`Dictionary record ${file} is empty.`);
  const exact = (name) => {
    const matches = [...text.matchAll(new RegExp(`"${name}"\\s*:\\s*(-?[0-9]+)\\s*[,}]`, 'g'))];
    if (!(name in json)) return 0n;
    if (matches.length !== 1 || typeof json[name] !== 'number') throw new InvalidDataError(`Dictionary record ${file} is not a record: '${name}' is not one whole number.`);
    const v = BigInt(matches[0][1]);
    if (v < 0n || v > 0xffffffffffffffffn) throw new InvalidDataError(`Dictionary record ${file} is not a record: '${name}' is out of range.`);
    return v;
  };
  const base64 = (name) => {
    const v = json[name];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) throw new InvalidDataError(`Dictionary record ${file} is not a record: '${name}' is not base64.`);
    return Buffer.from(v, 'base64');
  };
  const int = (name) => (json[name] === undefined ? 0 : json[name]);
  return {
    id: int('Id'), namespace: json.Namespace ?? '', version: int('Version'), content: base64('Content') ?? Buffer.alloc(0), contentHash: exact('ContentHash'),
    shapes: base64('Shapes'), shapesHash: exact('ShapesHash'), codec: int('Codec'), level: int('Level'), sampleCount: int('SampleCount'), ratio: int('Ratio'),
    created: json.Created,
  };
}

/**
 * The .NET MongoDictionaryStore: collection `_compression.dictionaries` of the application's database, one document per
 * version, `{ _id: <id as long>, ns, v, content: BinData(0), hash (long), created, codec ("Zstd"), level, samples,
 * ratio }` and `shapes: BinData(0), shapesHash (long)` with a shape table. Read with read concern majority, as .NET does.
 */
class MongoDictionaryStore {
  constructor(db, { maxDictionaryBytes = DEFAULT_MAX_DICTIONARY_BYTES } = {}) {
    if (!db || typeof db.collection !== 'function') throw new TypeError('db must be a mongodb Db');
    this.collection = db.collection('_compression.dictionaries', { readConcern: { level: 'majority' } });
    this.maxDictionaryBytes = maxDictionaryBytes;
    this.maxDocumentBytes = maxDictionaryBytes + 768 * 1024 + 16 + 8 * 1024;
    this.location = `MongoDB collection ${db.databaseName}._compression.dictionaries`;
  }

  async get(id) {
    // A plain number: the server matches it with the stored NumberLong (numbers compare by value), and no BSON type of
    // this package's own bson copy goes to a driver that may use another.
    const raw = await this.collection.findOne({ _id: id }, { raw: true });
    return raw === null ? null : readMongoRecord(raw, this.location, this.maxDocumentBytes, this.maxDictionaryBytes);
  }
}

/** A raw BSON dictionary document checked as MongoDictionaryStore.Read checks it. */
function readMongoRecord(raw, location, maxDocumentBytes, maxDictionaryBytes = DEFAULT_MAX_DICTIONARY_BYTES) {
  const { deserialize, Long, Binary } = require('bson');
  let doc;
  let describe = '(unreadable _id)';
  const invalid = (problem) => new InvalidDataError(`Dictionary document ${describe} in ${location} is invalid and was not used: ${problem}.`);
  if (raw.length > maxDocumentBytes) {
    throw new InvalidDataError(`Dictionary document in ${location} has ${raw.length} bytes, over the ${maxDocumentBytes} a record of at most ${maxDictionaryBytes} dictionary bytes can take; it was not read.`);
  }
  try {
    doc = deserialize(raw, { promoteLongs: false, promoteBuffers: false, promoteValues: false });
  } catch (e) {
    throw invalid(`it is not a well-formed BSON document (${e.message})`);
  }
  const typeOf = (v) => (v instanceof Long ? 'Int64' : v && v._bsontype ? v._bsontype : typeof v === 'string' ? 'String' : typeof v === 'boolean' ? 'Boolean' : v === null ? 'Null' : typeof v);
  const has = (name) => Object.prototype.hasOwnProperty.call(doc, name);
  describe = has('_id') ? `_id ${doc._id}` : 'without _id';
  const int64 = (name, allowInt32 = true) => {
    if (!has(name)) throw invalid(`field '${name}' is missing`);
    const v = doc[name];
    if (v instanceof Long) return v.toBigInt();
    if (allowInt32 && v && v._bsontype === 'Int32') return BigInt(v.value);
    throw invalid(`field '${name}' is a ${typeOf(v)}, not ${allowInt32 ? 'an Int32 or Int64' : 'an Int64'}`);
  };
  const text = (name) => {
    if (!has(name)) throw invalid(`field '${name}' is missing`);
    const v = doc[name];
    const s = v && v._bsontype === 'String' ? v.value : typeof v === 'string' ? v : null;
    if (s === null) throw invalid(`field '${name}' is a ${typeOf(v)}, not a String`);
    if (s.length === 0) throw invalid(`field '${name}' is empty`);
    return s;
  };
  const binary = (name) => {
    if (!has(name)) throw invalid(`field '${name}' is missing`);
    const v = doc[name];
    if (!(v instanceof Binary)) throw invalid(`field '${name}' is a ${typeOf(v)}, not a Binary`);
    if (v.sub_type !== 0) throw invalid(`'${name}' is BinData(0x${v.sub_type.toString(16).padStart(2, '0')}), not BinData(0)`);
    return Buffer.from(v.buffer.subarray(0, v.position));
  };
  const rawId = int64('_id');
  if (rawId < 1n || rawId > 0xffffffffn) throw invalid(`_id ${rawId} is not a dictionary id (1 to 4294967295)`);
  const namespace = text('ns');
  const version = int64('v');
  if (version < 1n || version > BigInt(MAX_VERSION)) throw invalid(`version ${version} is not a version (1 to ${MAX_VERSION})`);
  const content = binary('content');
  if (content.length > maxDictionaryBytes) throw invalid(`'content' has ${content.length} bytes, over ${maxDictionaryBytes}`);
  let shapes = null, shapesHash = 0n;
  if (has('shapes') || has('shapesHash')) {
    shapes = binary('shapes');
    if (shapes.length > 768 * 1024 + 16) throw invalid(`'shapes' has ${shapes.length} bytes, over ${768 * 1024 + 16}`);
    shapesHash = BigInt.asUintN(64, int64('shapesHash', false));
  }
  const codecName = text('codec');
  const codec = CODEC_NAMES.indexOf(codecName);
  if (codec < 0) throw invalid(`'codec' is '${codecName}', not a codec name`);
  const level = int64('level'), samples = int64('samples');
  if (level < -2147483648n || level > 2147483647n) throw invalid(`level ${level} is out of range`);
  if (samples < 0n || samples > 2147483647n) throw invalid(`sample count ${samples} is out of range`);
  if (!has('created') || !(doc.created instanceof Date)) throw invalid(`field 'created' is ${has('created') ? `a ${typeOf(doc.created)}` : 'missing'}, not a DateTime`);
  const ratioValue = doc.ratio;
  let ratio;
  if (!has('ratio')) throw invalid("field 'ratio' is missing");
  if (ratioValue && ratioValue._bsontype === 'Double') ratio = ratioValue.value;
  else if (ratioValue && ratioValue._bsontype === 'Int32') ratio = ratioValue.value;
  else if (ratioValue instanceof Long) ratio = ratioValue.toNumber();
  else throw invalid(`field 'ratio' is a ${typeOf(ratioValue)}, not a number`);
  return {
    id: Number(rawId), namespace, version: Number(version), content, contentHash: BigInt.asUintN(64, int64('hash', false)), shapes, shapesHash,
    codec, level: Number(level), sampleCount: Number(samples), ratio, created: doc.created,
  };
}

/**
 * Dictionaries by id, each fetched once from its store and validated (concurrent readers share one fetch), kept for the
 * life of the cache: dictionaries are never changed or deleted once published. A missing id is remembered for
 * `missRetentionMs` (30 s by default, as the .NET catalog), then asked again.
 */
class DictionaryCache {
  constructor(store, { maxDictionaryBytes, missRetentionMs = 30000 } = {}) {
    this.store = store;
    this.maxDictionaryBytes = maxDictionaryBytes ?? store?.maxDictionaryBytes ?? DEFAULT_MAX_DICTIONARY_BYTES;
    this.missRetentionMs = missRetentionMs;
    this.loaded = new Map();
    this.inflight = new Map();
    this.missing = new Map();
  }

  /** The cached dictionary of `id`, or undefined. */
  peek(id) {
    return this.loaded.get(id);
  }

  async get(id) {
    const cached = this.loaded.get(id);
    if (cached) return cached;
    const since = this.missing.get(id);
    if (since !== undefined) {
      if (Date.now() - since < this.missRetentionMs) throw new DictionaryNotFoundError(id, `${this.location} had no dictionary with this id moments ago`);
      this.missing.delete(id);
    }
    if (!this.store) throw new DictionaryNotFoundError(id, 'no dictionary store was given');
    let pending = this.inflight.get(id);
    if (!pending) {
      pending = this.fetch(id).finally(() => this.inflight.delete(id));
      this.inflight.set(id, pending);
    }
    return pending;
  }

  get location() {
    return this.store ? this.store.location : 'no store';
  }

  async fetch(id) {
    let record;
    try {
      record = await this.store.get(id);
    } catch (e) {
      if (e instanceof InvalidDataError) throw e;
      throw new DictionaryNotFoundError(id, `${this.location} could not be read (${e.message})`, { cause: e });
    }
    if (record === null || record === undefined) {
      this.missing.set(id, Date.now());
      throw new DictionaryNotFoundError(id, `${this.location} has no dictionary with this id`);
    }
    const dictionary = validateRecord(record, this.location, id, this.maxDictionaryBytes);
    this.loaded.set(id, dictionary);
    return dictionary;
  }

  /** Adds a raw zstd dictionary (and a record's `Shapes` bytes) under `id`, hashed and validated as a record would be. */
  addContent(id, content, { shapes = null, namespace = 'memory', version = 1 } = {}) {
    return this.add({ id, namespace, version, content, contentHash: hash3(content), shapes, shapesHash: shapes ? hash3(shapes) : 0n, codec: 1, level: 3, sampleCount: 0, ratio: 0 });
  }

  /** Adds a dictionary record held in memory (tests, or a record read by other means), validated as one from a store. */
  add(record, location = 'memory') {
    const dictionary = validateRecord(record, location, record.id, this.maxDictionaryBytes);
    this.loaded.set(record.id, dictionary);
    return dictionary;
  }
}

module.exports = { validateRecord, FileDictionaryStore, MongoDictionaryStore, DictionaryCache, readMongoRecord, parseFileRecord, MAX_VERSION };
