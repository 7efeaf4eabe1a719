'use strict';

// zstd decoding through an ordinary frame decoder (docs/format.md, "Reading with any zstd library"): v1 payloads are
// magicless frames (the magic is put back in front), v2/v3 payloads and the sections of codecs 7 and 8 are one raw
// compressed block (a frame header is built in front of it). Two backends, chosen by measurement (README, "Choices"):
// zstd-napi (libzstd through Node-API, a digested dictionary per record: about 1.3 µs a small document) when its native
// module is installed, else @bokuweb/zstd-wasm (libzstd in WebAssembly, shipped in the npm tarball; its exports digest
// the dictionary on every call: about 27 µs a document). Both are libzstd, so both accept and refuse the same frames.
const { corrupt } = require('./errors');

const MAX_BLOCK = 128 * 1024;

let napi = null;
try {
  napi = require('zstd-napi/binding');
} catch {
  napi = null;
}

let wasm = null; // { M, dctx } once initialized
let wasmInit = null;

function loadWasm() {
  if (wasmInit) return wasmInit;
  wasmInit = (async () => {
    const path = require('node:path');
    const zstdWasm = require('@bokuweb/zstd-wasm');
    await zstdWasm.init();
    // The package's exports map hides its module; its emscripten Module holds libzstd's exported functions.
    const M = require(path.join(path.dirname(require.resolve('@bokuweb/zstd-wasm')), 'module.js')).Module;
    wasm = { M, dctx: M._ZSTD_createDCtx(), src: 0, srcCap: 0, dst: 0, dstCap: 0 };
  })();
  return wasmInit;
}

/** Which backend decodes: 'zstd-napi' or 'wasm' (forced with DOCZ_ZSTD_BACKEND=wasm, or by `use('wasm')`). */
let backend = process.env.DOCZ_ZSTD_BACKEND === 'wasm' || !napi ? 'wasm' : 'zstd-napi';

function use(name) {
  if (name === 'zstd-napi' && !napi) throw new Error('zstd-napi is not installed (its native module did not build or load).');
  if (name !== 'zstd-napi' && name !== 'wasm') throw new Error(`Unknown zstd backend '${name}'.`);
  backend = name;
}

/** Resolves when the backend can decode synchronously (the wasm module compiles asynchronously once). */
async function ready() {
  if (backend === 'wasm') await loadWasm();
}

function isReady() {
  return backend === 'zstd-napi' || wasm !== null;
}

/** A dictionary prepared for the current backend: zstd-napi digests it once (DDict); wasm keeps its bytes in its heap. */
class ZstdDictionaryHandle {
  constructor(content) {
    this.content = content;
    this._ddict = null;
    this._ptr = 0;
  }

  ddict() {
    if (this._ddict === null) this._ddict = new napi.DDict(this.content);
    return this._ddict;
  }

  pointer() {
    if (this._ptr === 0) {
      this._ptr = wasm.M._malloc(this.content.length);
      wasm.M.HEAPU8.set(this.content, this._ptr);
    }
    return this._ptr;
  }
}

/** Loads the dictionary once, so a malformed one fails when the record is read, not on a document's read path. */
function prepareDictionary(content) {
  const handle = new ZstdDictionaryHandle(content);
  if (napi) {
    try {
      handle.ddict();
    } catch (e) {
      corrupt(`the zstd dictionary could not be loaded: ${e.message}`);
    }
  }
  return handle;
}

let napiDctx = null;

/** Decodes one complete zstd frame into at most `capacity` bytes; returns the bytes produced. */
function decodeFrame(frame, capacity, dictionary) {
  const end = frameLength(frame);
  if (end !== frame.length) corrupt(`zstd payload has ${frame.length - end} bytes after the end of its frame.`);
  if (backend === 'zstd-napi') {
    if (napiDctx === null) napiDctx = new napi.DCtx();
    const out = Buffer.allocUnsafe(capacity);
    let produced;
    try {
      produced = dictionary ? napiDctx.decompressUsingDDict(out, frame, dictionary.ddict()) : napiDctx.decompress(out, frame);
    } catch (e) {
      napiDctx = null; // a context that failed is not reused
      corrupt(`zstd: ${e.message}`);
    }
    return out.subarray(0, produced);
  }
  if (!wasm) throw new Error('The zstd wasm backend is not initialized: await ready() (or any async read) first.');
  const { M } = wasm;
  if (wasm.srcCap < frame.length) {
    if (wasm.src) M._free(wasm.src);
    wasm.srcCap = Math.max(frame.length, 64 * 1024);
    wasm.src = M._malloc(wasm.srcCap);
  }
  if (wasm.dstCap < capacity || wasm.dstCap === 0) {
    if (wasm.dst) M._free(wasm.dst);
    wasm.dstCap = Math.max(capacity, 256 * 1024);
    wasm.dst = M._malloc(wasm.dstCap);
  }
  M.HEAPU8.set(frame, wasm.src);
  const r = dictionary
    ? M._ZSTD_decompress_usingDict(wasm.dctx, wasm.dst, capacity, wasm.src, frame.length, dictionary.pointer(), dictionary.content.length)
    : M._ZSTD_decompress(wasm.dst, capacity, wasm.src, frame.length);
  const produced = r >>> 0;
  if (M._ZSTD_isError(produced)) corrupt(`zstd: error code ${-(r | 0)} (${errorName(-(r | 0))}).`);
  return Buffer.from(M.HEAPU8.subarray(wasm.dst, wasm.dst + produced));
}

function errorName(code) {
  const names = { 1: 'generic', 10: 'prefix_unknown', 12: 'version_unsupported', 14: 'frameParameter_unsupported', 16: 'frameParameter_windowTooLarge',
    20: 'corruption_detected', 22: 'checksum_wrong', 24: 'literals_headerWrong', 30: 'dictionary_corrupted', 32: 'dictionary_wrong',
    70: 'dstSize_tooSmall', 72: 'srcSize_wrong', 74: 'dstBuffer_null' };
  return names[code] || 'error';
}

/**
 * The length of the zstd frame at the start of `frame` (header, blocks, optional checksum), walked from its headers,
 * or -1 when it is truncated: a payload must end exactly with its frame (docs/format.md, codec 1).
 */
function frameLength(frame) {
  if (frame.length < 6) return -1;
  const descriptor = frame[4];
  const fcsFlag = descriptor >> 6, single = (descriptor >> 5) & 1, checksum = (descriptor >> 2) & 1, dictFlag = descriptor & 3;
  let at = 5 + (single ? 0 : 1) + [0, 1, 2, 4][dictFlag] + [single ? 1 : 0, 2, 4, 8][fcsFlag];
  for (;;) {
    if (at + 3 > frame.length) return -1;
    const header = frame[at] | (frame[at + 1] << 8) | (frame[at + 2] << 16);
    at += 3;
    const type = (header >> 1) & 3, size = header >>> 3;
    at += type === 1 ? 1 : size;
    if (at > frame.length) return -1;
    if (header & 1) break;
  }
  if (checksum) at += 4;
  return at > frame.length ? -1 : at;
}

const MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
let scratch = Buffer.allocUnsafe(4096); // the frame built around a block (decoding is synchronous: one at a time)

/** A v1 payload: a magicless frame; decoded into exactly `declared` bytes or refused. */
function decodeMagicless(payload, declared, dictionary) {
  const out = decodeFrame(Buffer.concat([MAGIC, payload]), declared, dictionary);
  if (out.length !== declared) corrupt(`Payload decodes to ${out.length} bytes, the envelope declares ${declared}.`);
  return out;
}

/**
 * One raw compressed block (Block_Content, type 2) decoded into at most `capacity` bytes, as zstd's block API does:
 * with a known length (v2/v3 codec 1) the frame says it (single segment); otherwise (codecs 7 and 8) a frame with a
 * window descriptor and no content size.
 */
function decodeBlock(block, capacity, dictionary, exactLength) {
  if (block.length === 0 || block.length > MAX_BLOCK) corrupt(`zstd block: ${block.length} bytes is not a block's size (1 to ${MAX_BLOCK}).`);
  let header;
  if (exactLength !== undefined) {
    const n = exactLength;
    if (n < 256) header = [0x20, n];
    else if (n < 65536 + 256) header = [0x60, (n - 256) & 0xff, (n - 256) >> 8];
    else header = [0xa0, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
  } else {
    header = [0x00, (27 - 10) << 3]; // no content size; window 2^27 (the one-shot decoder allocates nothing for it)
  }
  const blockHeader = 1 | (2 << 1) | (block.length << 3);
  const length = 4 + header.length + 3 + block.length;
  if (scratch.length < length) scratch = Buffer.allocUnsafe(Math.max(length, 2 * scratch.length));
  MAGIC.copy(scratch, 0);
  for (let i = 0; i < header.length; i++) scratch[4 + i] = header[i];
  let at = 4 + header.length;
  scratch[at++] = blockHeader & 0xff;
  scratch[at++] = (blockHeader >> 8) & 0xff;
  scratch[at++] = (blockHeader >> 16) & 0xff;
  block.copy(scratch, at);
  return decodeFrame(scratch.subarray(0, length), capacity, dictionary);
}

module.exports = { use, ready, isReady, prepareDictionary, decodeMagicless, decodeBlock, MAX_BLOCK, get backend() { return backend; }, hasNative: !!napi };
