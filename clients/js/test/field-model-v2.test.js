'use strict';

// Field models of version 2 (sources) and 3 (parts of sources) built byte by byte (docs/field-model.md; FieldModel.Parse's
// rules): every refusal rule of versions 2 and 3, and joins that copy the source's latest string (or a part of it) and
// count from its latest number.
const test = require('node:test');
const assert = require('node:assert/strict');
const { FieldModel, join } = require('../src/structure/fieldModel');
const { ShapeTable } = require('../src/structure/shapeTable');
const { unpack } = require('../src/structure/packed');
const { InvalidDataError } = require('../src');
const { hash32 } = require('../src/hash');
const { write } = require('../src/varint');

function withChecksum(bytes) {
  const b = Buffer.from(bytes);
  const sum = Buffer.alloc(4);
  sum.writeUInt32LE(hash32(b));
  return Buffer.concat([b, sum]);
}

// One JSON shape of three keys: 0 "place", 1 "title", 2 "time", 3 "updated" (shape 1 holds them all).
const keys = ['place', 'title', 'time', 'updated'];
const tableBytes = (() => {
  const out = [...Buffer.from('SHPT'), 1, 1, 0, 1, keys.length];
  for (const k of keys) out.push(k.length, ...Buffer.from(k));
  return withChecksum(out);
})();
const table = ShapeTable.parse(tableBytes);

/** A field: { key, source (key*2+items or -1), flags, part: [delimiter, skip] (flag 2), range: [tag, min, bits] | null, templates: [[literal, width, ...]], frequencies }. */
function model(fields, version = 2) {
  const out = [...Buffer.from('FLDM'), version, 0, 0];
  write(out, fields.length);
  for (const f of fields) {
    write(out, f.key * 2);
    if (version >= 2) {
      write(out, f.source + 1);
      out.push(f.flags ?? 0);
      if (f.part) out.push(...f.part);
    }
    write(out, 0); // no values
    if (f.range) {
      out.push(f.range[0]);
      write(out, BigInt(f.range[1]) * 2n); // zigzag of a non-negative min
      out.push(f.range[2]);
    } else out.push(0);
    write(out, (f.templates ?? []).length);
    for (const t of f.templates ?? []) {
      // t: [literal0, slot0, literal1, ...]; a slot is { width: 0 } (copy) or { width, min, bits }.
      write(out, (t.length - 1) / 2);
      for (let i = 0; i < t.length; i++) {
        if (i % 2 === 0) {
          write(out, t[i].length);
          out.push(...Buffer.from(t[i]));
        } else {
          out.push(t[i].width);
          if (t[i].width === 0) continue;
          write(out, t[i].min);
          out.push(t[i].bits);
          for (let b = 0; b <= t[i].bits; b++) write(out, b === 0 ? 4096 - t[i].bits : 1);
        }
      }
    }
    const symbols = (f.range ? f.range[2] + 1 : 0) + (f.templates ?? []).length + 1;
    for (let s = 0; s < symbols; s++) write(out, s === 0 ? 4096 - (symbols - 1) : 1);
  }
  return withChecksum(out);
}

const refused = (pattern) => (e) => e instanceof InvalidDataError && pattern.test(e.message);

test('version 2 refusals: its own source, unknown flags, relative without a source or a range, copy slots without a source or twice, no source at all', () => {
  const copy = ['M ', { width: 0 }, ''];
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: 2 }]), table), refused(/field 0 is its own source/));
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: 0, flags: 2 }]), table), refused(/has flags 0x02/));
  assert.throws(() => FieldModel.parse(model([{ key: 3, source: -1, flags: 1, range: [6, 0, 4] }]), table), refused(/relative but it has no source/));
  assert.throws(() => FieldModel.parse(model([{ key: 3, source: 4, flags: 1 }]), table), refused(/relative but it has no range/));
  assert.throws(() => FieldModel.parse(model([{ key: 0, source: -1, templates: [copy] }, { key: 1, source: 0 }]), table), refused(/copy slot \(width 0\) but the field has no source/));
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: 0, templates: [['', { width: 0 }, '-', { width: 0 }, '']] }]), table), refused(/more than one copy slot/));
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: -1 }]), table), refused(/version 2, but no field has a source/));
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: 99 }]), table), refused(/source names key 49/));
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: -1, templates: [copy] }], 1), table), refused(/copy slot \(width 0\) but the field has no source/));
  const parsed = FieldModel.parse(model([{ key: 1, source: 0, templates: [copy] }, { key: 3, source: 4, flags: 1, range: [6, 0, 4] }]), table);
  assert.deepEqual([...parsed.sourceKeys].sort(), [0, 4]);
});

test('a join copies the source\'s latest string and counts from its latest number; without them it is refused', () => {
  const title = { key: 1, source: 0, templates: [['M ', { width: 0 }, '']] };
  const updated = { key: 3, source: 4, flags: 1, range: [6, 0, 4] };
  const m = FieldModel.parse(model([title, updated]), table);
  // Residual: shape 1; place "Anza" (no model: copied, the title's source); title: a symbol; time 50 (no model, the
  // source of updated's relative range); updated: a symbol.
  const residual = Buffer.from([0x01, 0x24, ...Buffer.from('Anza'), 0x06, 100]);
  // Symbols: title's template (frequency 4095 of 4096), then updated's bit length 0 (frequency 4091): encoded backwards
  // from the final state 65,536: 4091 x 16 + 80 = 65,536 and 4095 x 16 + 96 = 65,616, so the state is 16 x 4096 + 96.
  const stream = Buffer.from([0x60, 0x00, 0x01]);
  const packed = join(table, m, residual, stream, 64);
  assert.equal(unpack(table, packed, 80).toString(), '{"place":"Anza","title":"M Anza","time":50,"updated":50}');
  // A title whose source is a number (time), not a string: refused, never a string made up.
  const wrong = FieldModel.parse(model([{ ...title, source: 4 }, updated]), table);
  assert.throws(() => join(table, wrong, residual, stream, 64), refused(/copies the field's source, which the document has not had as a string/));
  // updated counting from a source that is a string (place): refused.
  const wrongRange = FieldModel.parse(model([title, { ...updated, source: 0 }]), table);
  assert.throws(() => join(table, wrongRange, residual, stream, 64), refused(/relative range's value where the document has no number/));
});

test('version 3 refusals: no part, a part without a source, a delimiter that is a letter, a digit or 0, a skip over 15, unknown flags', () => {
  const copy = ['M ', { width: 0 }, ''];
  const part = (delimiter, skip) => ({ key: 1, source: 0, flags: 2, part: [delimiter, skip], templates: [copy] });
  assert.throws(() => FieldModel.parse(model([{ key: 1, source: 0, templates: [copy] }], 3), table), refused(/version 3, but no field copies a part/));
  assert.throws(() => FieldModel.parse(model([part(0x2f, 0), { key: 3, source: -1, flags: 2, part: [0x2f, 0] }], 3), table), refused(/field 1 copies a part of its source but it has no source/));
  assert.throws(() => FieldModel.parse(model([part(0x61, 0)], 3), table), refused(/copy delimiter is 0x61; allowed: ASCII punctuation or space/));
  assert.throws(() => FieldModel.parse(model([part(0x37, 0)], 3), table), refused(/copy delimiter is 0x37/));
  assert.throws(() => FieldModel.parse(model([part(0x00, 0)], 3), table), refused(/copy delimiter is 0x00/));
  assert.throws(() => FieldModel.parse(model([part(0x2f, 16)], 3), table), refused(/copy skips 16 bytes; at most 15/));
  assert.throws(() => FieldModel.parse(model([{ ...part(0x2f, 0), flags: 6 }], 3), table), refused(/has flags 0x06; only 0x01 \(a relative range\) and 0x02 \(copies a part\)/));
  // Flag 2 in version 2 stays unknown there.
  assert.throws(() => FieldModel.parse(model([part(0x2f, 0)], 2), table), refused(/has flags 0x02; only 0x01/));
  assert.throws(() => FieldModel.parse(model([part(0x2f, 0)], 4), table), refused(/format version 4 is not supported; this reader knows versions 1 to 3/));
  const parsed = FieldModel.parse(model([part(0x2f, 2)], 3), table);
  assert.deepEqual([parsed.fields[0].delimiter, parsed.fields[0].skip], [0x2f, 2]);
});

test('a join copies the part of the source\'s string after its delimiter\'s last occurrence, less the skip; without it, refused', () => {
  const place = 'https://e.org/event/ci123';
  const residual = Buffer.from([0x01, 0x20 + place.length, ...Buffer.from(place), 0x00, 0x00]); // title a symbol; time, updated null
  // One symbol: title's template (start 0, frequency 4095 of 4096), encoded from the final state 65,536 = 4095 x 16 + 16:
  // the state is 16 x 4096 + 16 = 0x010010.
  const stream = Buffer.from([0x10, 0x00, 0x01]);
  const joined = (delimiter, skip) => {
    const m = FieldModel.parse(model([{ key: 1, source: 0, flags: 2, part: [delimiter, skip], templates: [['M ', { width: 0 }, '!']] }], 3), table);
    return unpack(table, join(table, m, residual, stream, 128), 160).toString();
  };
  assert.equal(joined(0x2f, 0), `{"place":"${place}","title":"M ci123!","time":null,"updated":null}`);
  assert.equal(joined(0x2f, 2), `{"place":"${place}","title":"M 123!","time":null,"updated":null}`);
  assert.equal(joined(0x2e, 0), `{"place":"${place}","title":"M org/event/ci123!","time":null,"updated":null}`);
  assert.throws(() => joined(0x2d, 0), refused(/copies a part of the field's source, which its latest string does not have/)); // no '-'
  assert.throws(() => joined(0x2f, 6), refused(/copies a part of the field's source, which its latest string does not have/)); // past its end
});
