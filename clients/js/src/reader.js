'use strict';

const { readHeader, decodeWith, isEnvelope, DEFAULT_MAX_UNCOMPRESSED } = require('./envelope');
const { DictionaryCache } = require('./dictionaries');
const { DictionaryNotFoundError } = require('./errors');
const zstd = require('./zstd');

/**
 * Decodes envelopes written by the .NET engine (formats v1-v3, codecs 0-8), resolving the dictionaries they name through
 * a store ({ get(id) → record | null, location }) and keeping them.
 */
class DocumentReader {
  /**
   * @param {object} [options]
   * @param {object} [options.store] a dictionary store (FileDictionaryStore, MongoDictionaryStore, or any { get(id), location })
   * @param {DictionaryCache} [options.dictionaries] a cache to share between readers (instead of `store`)
   * @param {number} [options.maxUncompressedLength] the largest declared length accepted (default 64 MiB, as .NET)
   * @param {boolean} [options.requireChecksum] refuse envelopes without a checksum (default false, as .NET)
   */
  constructor({ store = null, dictionaries = null, maxUncompressedLength = DEFAULT_MAX_UNCOMPRESSED, requireChecksum = false, maxDictionaryBytes } = {}) {
    this.dictionaries = dictionaries ?? new DictionaryCache(store, { maxDictionaryBytes });
    this.maxUncompressedLength = maxUncompressedLength;
    this.requireChecksum = requireChecksum;
  }

  /** The envelope's header, or null for a value that is not an envelope (legacy plain data). */
  readHeader(data) {
    return readHeader(toBuffer(data), this.maxUncompressedLength);
  }

  /** Decodes an envelope into exactly the document's bytes; fetches the dictionary it names when it is not cached. */
  async decompress(data) {
    const bytes = toBuffer(data);
    const header = this.readHeader(bytes);
    if (header === null) throw notAnEnvelope(bytes);
    if (!zstd.isReady()) await zstd.ready();
    const dictionary = header.dictionaryId === null ? null : await this.dictionaries.get(header.dictionaryId);
    return decodeWith(bytes, header, dictionary, this.requireChecksum);
  }

  /** As decompress, synchronously: the dictionary must be cached already (DictionaryNotFoundError otherwise). */
  decompressSync(data) {
    const bytes = toBuffer(data);
    const header = this.readHeader(bytes);
    if (header === null) throw notAnEnvelope(bytes);
    if (!zstd.isReady()) throw new Error('The zstd decoder is not ready: await DocumentReader.ready() first.');
    let dictionary = null;
    if (header.dictionaryId !== null) {
      dictionary = this.dictionaries.peek(header.dictionaryId);
      if (!dictionary) throw new DictionaryNotFoundError(header.dictionaryId, 'it is not loaded; use decompress (async) to fetch it');
    }
    return decodeWith(bytes, header, dictionary, this.requireChecksum);
  }

  /** Resolves once synchronous decoding is possible (the zstd WebAssembly fallback compiles asynchronously). */
  static ready() {
    return zstd.ready();
  }
}

function notAnEnvelope(bytes) {
  const { InvalidDataError } = require('./errors');
  return new InvalidDataError(bytes.length === 0 ? 'The value is empty: not an envelope.' : `The value is not an envelope: its first byte is 0x${bytes[0].toString(16).padStart(2, '0')}, not 0xc5.`);
}

function toBuffer(data) {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data && data._bsontype === 'Binary') return Buffer.from(data.buffer.subarray(0, data.position));
  throw new TypeError('An envelope is a Buffer or Uint8Array.');
}

module.exports = { DocumentReader, isEnvelope: (d) => isEnvelope(toBuffer(d)), toBuffer };
