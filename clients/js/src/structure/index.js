'use strict';

// Codecs 7 (packed zstd) and 8 (field zstd): docs/format.md, "Codec 7" and "Codec 8"; src/Compression.Core/Codecs/
// PackedZstdCodec.cs and FieldZstdCodec.cs.
const { read32 } = require('../varint');
const { corrupt, InvalidDataError } = require('../errors');
const { ShapeTable } = require('./shapeTable');
const { FieldModel, join } = require('./fieldModel');
const { unpack } = require('./packed');
const zstd = require('../zstd');

const SHAPE_TABLE_MAX = 256 * 1024;
const FIELD_MODEL_MAX = 512 * 1024;
const MAX_STORED = SHAPE_TABLE_MAX + FIELD_MODEL_MAX + 16; // ShapeTransform.MaxStoredLength
const MAX_DOCUMENT = 128 * 1024;

/** A record's `Shapes`: a shape table ("SHPT"), or "SMDL" 1, the table's length, the table, then a field model ("FLDM"). */
function parseStructureModel(bytes) {
  if (bytes.length > MAX_STORED) corrupt(`Structure model has ${bytes.length} bytes; the limit is ${MAX_STORED}.`);
  if (bytes.length < 5 || bytes.toString('latin1', 0, 4) !== 'SMDL') return { table: ShapeTable.parse(bytes), fields: null };
  if (bytes[4] !== 1) corrupt(`Structure model format version ${bytes[4]} is not supported; this reader knows version 1.`);
  const r = read32(bytes, 5);
  if (r === null || r[0] > bytes.length - 5 - r[1]) corrupt('Structure model: the shape table\'s length is truncated, not minimal, or longer than the bytes.');
  const at = 5 + r[1];
  const table = ShapeTable.parse(bytes.subarray(at, at + r[0]));
  return { table, fields: FieldModel.parse(bytes.subarray(at + r[0]), table) };
}

function decodePacked(payload, declared, dictionary) {
  if (declared > MAX_DOCUMENT) corrupt(`A packed envelope declares ${declared} bytes; documents over ${MAX_DOCUMENT} are never packed.`);
  if (!dictionary) throw new InvalidDataError('A packed envelope needs the dictionary it names, and none was given.');
  const model = dictionary.structure;
  if (!model) corrupt(`The envelope is packed with the shape table of dictionary ${dictionary.id}, and that dictionary's record has none.`);
  const capacity = Math.max(0, declared - 1); // a packed stream is always shorter than its document
  const packed = zstd.decodeBlock(payload, capacity, dictionary.zstd);
  const out = unpack(model.table, packed, declared);
  if (out.length !== declared) corrupt(`Payload decodes to ${out.length} bytes, the envelope declares ${declared}.`);
  return out;
}

/** Codec 8, or with `foldedChecksum` codec 9: then returns { document, folded }, the checksum its stream's end held. */
function decodeFields(payload, declared, dictionary, foldedChecksum = false) {
  if (declared > MAX_DOCUMENT) corrupt(`A field-coded envelope declares ${declared} bytes; documents over ${MAX_DOCUMENT} are never written so.`);
  if (!dictionary) throw new InvalidDataError('A field-coded envelope needs the dictionary it names, and none was given.');
  const model = dictionary.structure;
  if (!model) corrupt(`The envelope is coded with the field model of dictionary ${dictionary.id}, and that dictionary's record has no shape table.`);
  if (!model.fields) corrupt(`The envelope is coded with the field model of dictionary ${dictionary.id}, and that dictionary's record has none.`);
  const h = read32(payload, 0);
  if (h === null) corrupt('A field-coded payload\'s header is truncated or not a minimal varint.');
  const [header, headerLength] = h;
  const section = Math.floor(header / 2);
  if (section > payload.length - headerLength) corrupt(`A field-coded payload declares a ${section}-byte residual; ${payload.length - headerLength} bytes follow its header.`);
  const sectionBytes = payload.subarray(headerLength, headerLength + section);
  const stream = payload.subarray(headerLength + section);
  const capacity = Math.max(0, declared - 1);
  let residual;
  if (header % 2 === 1) residual = zstd.decodeBlock(sectionBytes, capacity, dictionary.zstd);
  else {
    if (sectionBytes.length > capacity) corrupt(`A field-coded payload's residual has ${sectionBytes.length} bytes, more than its ${declared}-byte document's packed stream can.`);
    residual = sectionBytes;
  }
  const end = foldedChecksum ? {} : null;
  const packed = join(model.table, model.fields, residual, stream, capacity, end);
  const out = unpack(model.table, packed, declared);
  if (out.length !== declared) corrupt(`A field-coded payload decodes to ${out.length} bytes; the envelope declares ${declared}.`);
  return foldedChecksum ? { document: out, folded: end.folded } : out;
}

module.exports = { parseStructureModel, decodePacked, decodeFields, MAX_STORED };
