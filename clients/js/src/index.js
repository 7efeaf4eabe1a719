'use strict';

const { DocumentReader, isEnvelope } = require('./reader');
const { readHeader } = require('./envelope');
const { InvalidDataError, DictionaryNotFoundError } = require('./errors');
const { FileDictionaryStore, MongoDictionaryStore, DictionaryCache } = require('./dictionaries');
const mongodb = require('./mongodb');
const zstd = require('./zstd');

module.exports = {
  DocumentReader,
  DictionaryCache,
  FileDictionaryStore,
  MongoDictionaryStore,
  InvalidDataError,
  DictionaryNotFoundError,
  isEnvelope,
  readHeader,
  decodeStoredDocument: mongodb.decodeStoredDocument,
  decodeStoredBson: mongodb.decodeStoredBson,
  findDecoded: mongodb.findDecoded,
  /** Which zstd backend decodes ('zstd-napi' or 'wasm'). */
  get zstdBackend() {
    return zstd.backend;
  },
};
