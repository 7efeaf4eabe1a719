'use strict';

// Bad input as the .NET engine refuses it (docs/format.md, "Reader obligations"): a clear error, never wrong bytes, and
// nothing of a lying declared length allocated.
const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { DocumentReader, DictionaryCache, InvalidDataError, DictionaryNotFoundError, readHeader, isEnvelope } = require('../src');
const { vectors, vectorFile } = require('./helpers');

const all = vectors();
const envelopeOf = (name) => Buffer.from(all.find((v) => v.name === name).envelope, 'hex');
const reader = () => {
  const cache = new DictionaryCache(null);
  cache.addContent(4242, vectorFile('dictionary-4242.bin'), { shapes: vectorFile('fields-json.bin') });
  return new DocumentReader({ dictionaries: cache });
};
const refused = (pattern) => (e) => e instanceof InvalidDataError && pattern.test(e.message);

function envelope(flags, declared, payload, dictionaryId = null) {
  const varint = (v) => {
    const out = [];
    while (v >= 0x80) { out.push((v & 0x7f) | 0x80); v = Math.floor(v / 128); }
    out.push(v);
    return out;
  };
  return Buffer.from([0xc5, flags, ...varint(declared), ...(dictionaryId === null ? [] : varint(dictionaryId)), ...payload]);
}

test('legacy plain data is not an envelope; decompress says so', async () => {
  assert.equal(isEnvelope(Buffer.from('{"a":1}')), false);
  assert.equal(readHeader(Buffer.from('{"a":1}')), null);
  assert.equal(readHeader(Buffer.alloc(0)), null);
  await assert.rejects(reader().decompress(Buffer.from('{"a":1}')), refused(/not an envelope: its first byte is 0x7b/));
});

test('unknown format versions and codecs, and codecs 7, 8 and 9 outside their rules', async () => {
  const r = reader();
  await assert.rejects(r.decompress(envelope(0x30, 1, [0x41])), refused(/Unknown envelope format version 3 \(v4\)/));
  for (let codec = 10; codec <= 15; codec++) await assert.rejects(r.decompress(envelope(0x20 | codec, 1, [0x41])), refused(new RegExp(`Unknown codec id ${codec}`)));
  await assert.rejects(r.decompress(envelope(0xc7, 10, [1, 2, 3], 4242)), refused(/codec 7 \(packed zstd\) is format v1/));
  await assert.rejects(r.decompress(envelope(0x98, 10, [1, 2, 3], 4242)), refused(/codec 8 \(field zstd\) is without a checksum/));
  await assert.rejects(r.decompress(envelope(0x58, 10, [1, 2, 3])), refused(/codec 8 \(field zstd\) is without a dictionary id/));
  await assert.rejects(r.decompress(envelope(0xd9, 10, [1, 2, 3], 4242)), refused(/codec 9 \(field zstd folded checksum\) is format v2; that codec exists only in format v3/));
  await assert.rejects(r.decompress(envelope(0xa9, 10, [1, 2, 3], 4242)), refused(/codec 9 \(field zstd folded checksum\) is without a checksum/));
  await assert.rejects(r.decompress(envelope(0x69, 10, [1, 2, 3])), refused(/codec 9 \(field zstd folded checksum\) is without a dictionary id/));
  await assert.rejects(r.decompress(envelope(0xe7, 131073, [1, 2, 3, 4, 5], 4242)), refused(/decodes to at most 131072/));
  await assert.rejects(r.decompress(envelope(0x82, 3, [1, 2, 3], 7)), refused(/carries a dictionary id/));
});

test('varints: truncated, over-long, over 32 bits, not minimal', async () => {
  const r = reader();
  for (const bytes of [[0xc5, 0x00], [0xc5, 0x00, 0x80], [0xc5, 0x00, 0x81, 0x00, 0x41], [0xc5, 0x00, 0xff, 0xff, 0xff, 0xff, 0x1f], [0xc5, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]]) {
    await assert.rejects(r.decompress(Buffer.from(bytes)), refused(/truncated|varint/));
  }
});

test('lying lengths: over the limit, over what the payload can decode to, or a stored payload of another length', async () => {
  const r = reader();
  await assert.rejects(r.decompress(envelope(0x01, 64 * 1024 * 1024 + 1, [1, 2, 3, 4])), refused(/over the limit of 67108864/));
  await assert.rejects(new DocumentReader({ maxUncompressedLength: 1000 }).decompress(envelope(0x01, 1001, [1, 2, 3, 4])), refused(/over the limit of 1000/));
  // 12 bytes claiming 64 MiB: refused from the header, before anything of that size exists.
  await assert.rejects(r.decompress(envelope(0x01, 64 * 1024 * 1024, [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])), refused(/zstd payload of 7 bytes decodes to at most 229376/));
  await assert.rejects(r.decompress(envelope(0x03, 1000, [0xe8, 0x07])), refused(/snappy payload of 2 bytes decodes to at most 42/));
  await assert.rejects(r.decompress(envelope(0x02, 1000, [0x00])), refused(/lz4 payload of 1 bytes decodes to at most 255/));
  await assert.rejects(r.decompress(envelope(0x00, 5, [1, 2, 3])), refused(/Stored envelope declares 5 bytes but holds 3/));
  await assert.rejects(r.decompress(envelope(0x01, 5, [])), refused(/declares 5 bytes but has no payload/));
});

test('decompression bombs: a payload that decodes to more than declared is refused, never decoded past it', async () => {
  const r = reader();
  const big = Buffer.alloc(1024 * 1024, 0x61);
  const cases = [
    [0x04, zlib.deflateRawSync(big)],
    [0x06, zlib.gzipSync(big)],
    [0x05, zlib.brotliCompressSync(big)],
  ];
  for (const [flags, payload] of cases) {
    await assert.rejects(r.decompress(envelope(flags, 1000, [...payload])), refused(/more than the 1000 bytes|decodes to at most/));
  }
  // zstd: a v1 frame of 1 MiB of 'a' declared as 1000 bytes.
  const lengthy = envelopeOf('zstd');
  const header = readHeader(lengthy);
  const shorter = Buffer.concat([envelope(0x01, header.uncompressedLength - 1, []), lengthy.subarray(header.headerLength)]);
  await assert.rejects(r.decompress(shorter), refused(/zstd|decodes/));
});

test('payloads that decode to fewer bytes than declared, or have bytes after their stream', async () => {
  const r = reader();
  const doc = Buffer.from('{"id":1,"name":"abcdefabcdefabcdefabcdef"}');
  for (const [flags, payload] of [[0x04, zlib.deflateRawSync(doc)], [0x06, zlib.gzipSync(doc)], [0x05, zlib.brotliCompressSync(doc)]]) {
    await assert.rejects(r.decompress(envelope(flags, doc.length + 1, [...payload])), refused(/decodes to|corrupt|truncated/));
    await assert.rejects(r.decompress(envelope(flags, doc.length, [...payload, 0x00])), refused(/after the end|corrupt|CRC/));
    assert.deepEqual(await r.decompress(envelope(flags, doc.length, [...payload])), doc);
  }
  const snappy = envelopeOf('snappy');
  await assert.rejects(r.decompress(Buffer.concat([snappy, Buffer.from([0x00])])), refused(/Snappy/));
  const lz4 = envelopeOf('lz4');
  await assert.rejects(r.decompress(Buffer.concat([lz4, Buffer.from([0x00])])), refused(/LZ4|lz4|decodes/));
  const zstdFrame = envelopeOf('zstd');
  await assert.rejects(r.decompress(Buffer.concat([zstdFrame, Buffer.from([0x00])])), refused(/after the end of its frame|zstd/));
});

test('a missing dictionary is a DictionaryNotFoundError naming the id, remembered briefly, and never wrong bytes', async () => {
  let gets = 0;
  const r = new DocumentReader({ store: { location: 'a test store', async get() { gets++; return null; } } });
  for (const name of ['zstd-dictionary', 'v2-packed-json', 'v3-fields-json-templates']) {
    await assert.rejects(r.decompress(envelopeOf(name)), (e) => e instanceof DictionaryNotFoundError && e.dictionaryId === 4242 && /a test store (has|had) no dictionary with this id/.test(e.message));
  }
  assert.equal(gets, 1);
  assert.throws(() => reader().decompressSync(envelope(0xd1, 10, [1, 2, 3, 4, 5], 99)), (e) => e instanceof DictionaryNotFoundError && e.dictionaryId === 99);
});

test('a record without the shape table or field model an envelope needs', async () => {
  const plain = new DictionaryCache(null);
  plain.addContent(4242, vectorFile('dictionary-4242.bin'));
  const tableOnly = new DictionaryCache(null);
  tableOnly.addContent(4242, vectorFile('dictionary-4242.bin'), { shapes: vectorFile('shapes-json.bin') });
  await assert.rejects(new DocumentReader({ dictionaries: plain }).decompress(envelopeOf('v2-packed-json')), refused(/that dictionary's record has none/));
  await assert.rejects(new DocumentReader({ dictionaries: tableOnly }).decompress(envelopeOf('v2-fields-json')), refused(/field model of dictionary 4242, and that dictionary's record has none/));
});

test('requireChecksum refuses envelopes without one', async () => {
  const r = new DocumentReader({ requireChecksum: true });
  await assert.rejects(r.decompress(envelopeOf('stored')), refused(/requires one/));
  assert.equal((await r.decompress(envelopeOf('stored-checksum'))).toString(), '{"ok":true}');
});
