// Types of @docz/reader: a read-only reader of the envelopes the .NET Compression library writes.
/// <reference types="node" />

/** Corruption: a damaged envelope, packed stream, field stream or dictionary record. Never returned as data. */
export class InvalidDataError extends Error {
  readonly code: 'ERR_INVALID_DATA';
}

/** The dictionary an envelope names cannot be had from the store. */
export class DictionaryNotFoundError extends Error {
  readonly code: 'ERR_DICTIONARY_NOT_FOUND';
  readonly dictionaryId: number;
}

/** An envelope's header (docs/format.md, "Layout"). */
export interface EnvelopeHeader {
  codec: number;
  codecName: 'stored' | 'zstd' | 'lz4' | 'snappy' | 'deflate' | 'brotli' | 'gzip' | 'packedZstd' | 'fieldZstd' | 'fieldZstdFoldedChecksum';
  /** 0 (v1), 1 (v2) or 2 (v3). */
  formatVersion: 0 | 1 | 2;
  format: 'v1' | 'v2' | 'v3';
  /** The declared length: a claim, checked against what the payload can decode to. */
  uncompressedLength: number;
  dictionaryId: number | null;
  hasChecksum: boolean;
  checksumLength: number;
  headerLength: number;
  payloadLength: number;
}

/** A dictionary record as the .NET stores hold it. */
export interface DictionaryRecord {
  id: number;
  namespace: string;
  version: number;
  content: Buffer;
  /** XxHash3 of the content, unsigned 64-bit. */
  contentHash: bigint;
  /** The shape table ("SHPT") or structure model ("SMDL": table and field model), or null. */
  shapes: Buffer | null;
  shapesHash: bigint;
  /** 1: zstd. */
  codec: number;
  level: number;
  sampleCount: number;
  ratio: number;
  created?: Date | string;
}

/** Where dictionaries are read from: any object with these two members. */
export interface DictionaryStore {
  /** Names the store in messages. */
  readonly location: string;
  /** The record of `id`, or null when the store has none. */
  get(id: number): Promise<DictionaryRecord | null>;
}

/** The .NET FileDictionaryStore's folder (`<id>.dict.json`), read-only. */
export class FileDictionaryStore implements DictionaryStore {
  constructor(directory: string, options?: { maxDictionaryBytes?: number });
  readonly location: string;
  get(id: number): Promise<DictionaryRecord | null>;
}

/** The .NET MongoDictionaryStore: collection `_compression.dictionaries` of `db` (a `mongodb` Db), read-only. */
export class MongoDictionaryStore implements DictionaryStore {
  constructor(db: import('mongodb').Db, options?: { maxDictionaryBytes?: number });
  readonly location: string;
  get(id: number): Promise<DictionaryRecord | null>;
}

/** A validated dictionary, ready for the decoders. */
export interface LoadedDictionary {
  id: number;
  namespace: string;
  version: number;
}

/** Dictionaries by id: fetched once from the store, validated, kept; a missing id remembered briefly. */
export class DictionaryCache {
  constructor(store: DictionaryStore | null, options?: { maxDictionaryBytes?: number; missRetentionMs?: number });
  get(id: number): Promise<LoadedDictionary>;
  peek(id: number): LoadedDictionary | undefined;
  /** Adds a raw zstd dictionary (and a record's `Shapes` bytes) under `id`, validated as a record would be. */
  addContent(id: number, content: Buffer, options?: { shapes?: Buffer | null; namespace?: string; version?: number }): LoadedDictionary;
  add(record: DictionaryRecord, location?: string): LoadedDictionary;
}

export interface DocumentReaderOptions {
  /** Where the dictionaries envelopes name are read from. */
  store?: DictionaryStore | null;
  /** A cache to share between readers (instead of `store`). */
  dictionaries?: DictionaryCache | null;
  /** The largest declared length accepted. @default 67108864 (64 MiB, as the .NET default) */
  maxUncompressedLength?: number;
  /** Refuse envelopes without a checksum. @default false */
  requireChecksum?: boolean;
  /** The largest dictionary accepted. @default 1048576 */
  maxDictionaryBytes?: number;
}

/** Decodes envelopes (formats v1-v3, codecs 0-9). Read-only: writing stays with the .NET engine. */
export class DocumentReader {
  constructor(options?: DocumentReaderOptions);
  readonly dictionaries: DictionaryCache;
  /** The header, or null for a value that is not an envelope (legacy plain data). Throws InvalidDataError when corrupt. */
  readHeader(data: Uint8Array): EnvelopeHeader | null;
  /** Exactly the document's bytes; fetches the named dictionary when needed. */
  decompress(data: Uint8Array): Promise<Buffer>;
  /** As decompress, synchronously: the dictionary must be cached and the zstd decoder ready. */
  decompressSync(data: Uint8Array): Buffer;
  /** Resolves once synchronous decoding is possible. */
  static ready(): Promise<void>;
}

export function isEnvelope(data: Uint8Array): boolean;
export function readHeader(data: Uint8Array, maxUncompressedLength?: number): EnvelopeHeader | null;

/** A stored document's raw BSON to the plain document's raw BSON, as the .NET serializer rebuilds it. */
export function decodeStoredBson(stored: Uint8Array, reader: DocumentReader, options?: { namespace?: string }): Promise<Buffer>;

/** A stored document (raw BSON, or as the driver deserialized it) to the plain document. */
export function decodeStoredDocument(
  stored: Uint8Array | import('bson').Document,
  reader: DocumentReader,
  options?: { namespace?: string; bsonOptions?: import('bson').DeserializeOptions },
): Promise<import('bson').Document>;

/** `collection.find(filter, { ...options, raw: true })`, each document decoded. */
export function findDecoded(
  collection: import('mongodb').Collection,
  reader: DocumentReader,
  filter?: import('mongodb').Filter<import('bson').Document>,
  options?: import('mongodb').FindOptions & { bsonOptions?: import('bson').DeserializeOptions },
): AsyncGenerator<import('bson').Document>;

/** The zstd backend in use: 'zstd-napi' (native, when installed) or 'wasm'. */
export const zstdBackend: 'zstd-napi' | 'wasm';
