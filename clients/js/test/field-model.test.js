'use strict';

// Field models of format version 2 (sources; docs/field-model.md, "Stored layout" and "Joining"): Parse's refusals of
// the version 2 rules, as tests/Compression.Core.Tests/Structure/FieldModelTests.cs's rows, a valid version 2 model,
// and a join that must refuse rather than write wrong bytes (a copy slot or a relative range with nothing to count from).
const test = require('node:test');
const assert = require('node:assert/strict');
const { FieldModel, join } = require('../src/structure/fieldModel');
const { parseStructureModel } = require('../src/structure');
const { InvalidDataError } = require('../src');
const { hash32 } = require('../src/hash');
const { vectors, vectorFile } = require('./helpers');

/** The frequencies of n symbols, at least 1 each, adding up to 4096, as even as can be. */
const spread = (n) => Array.from({ length: n }, (_, i) => Math.floor(4096 / n) + (i < 4096 % n ? 1 : 0));

/** A template from a pattern: literal text, {width} digit slots (from 0, `bits` bits, bit lengths equally likely), {} copy slots. */
function template(pattern, bits = 0) {
  const slots = [];
  let literal = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '{') {
      literal += pattern[i];
      continue;
    }
    const close = pattern.indexOf('}', i);
    slots.push({ before: Buffer.from(literal, 'latin1'), width: close === i + 1 ? 0 : Number(pattern.slice(i + 1, close)), bits });
    literal = '';
    i = close;
  }
  return { slots, last: Buffer.from(literal, 'latin1') };
}

/** FLDM bytes written field by field (lying where a test says so), with a valid XxHash32. */
class ModelBytes {
  constructor(version = 1) {
    this.out = [...Buffer.from('FLDM'), version, 0, 0];
    this.sources = version === 2;
  }

  varint(v) {
    let x = BigInt(v);
    while (x >= 0x80n) {
      this.out.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.out.push(Number(x));
    return this;
  }

  raw(...bytes) {
    for (const b of bytes) this.out.push(...(typeof b === 'number' ? [b] : b));
    return this;
  }

  field(keyAndItems, values, frequencies, { rangeTag = 0, rangeMin = 0n, rangeBits = 0, templates = [], sourcePlusOne = 0, flags = 0 } = {}) {
    this.varint(keyAndItems);
    if (this.sources) this.varint(sourcePlusOne).raw(flags);
    this.varint(values.length);
    for (const v of values) this.varint(v.length).raw(v);
    this.raw(rangeTag);
    if (rangeTag !== 0) {
      const m = BigInt(rangeMin);
      this.varint(BigInt.asUintN(64, (m << 1n) ^ (m >> 63n))).raw(rangeBits);
    }
    this.varint(templates.length);
    for (const t of templates) {
      this.varint(t.slots.length);
      for (const s of t.slots) {
        this.varint(s.before.length).raw(s.before, s.width);
        if (s.width === 0) continue; // a copy slot: its literal and width alone
        this.varint(0).raw(s.bits);
        for (const f of spread(s.bits + 1)) this.varint(f);
      }
      this.varint(t.last.length).raw(t.last);
    }
    for (const f of frequencies) this.varint(f);
    return this;
  }

  build() {
    const body = Buffer.from(this.out);
    const sum = Buffer.alloc(4);
    sum.writeUInt32LE(hash32(body));
    return Buffer.concat([body, sum]);
  }
}

const X = [0x21, 0x78]; // the short string "x"
const Five = [0x06, 0x0a]; // the integer 5
const Day = template('Jun {2} {4}', 3);
const Skin = template('{}: light skin tone');
const Quake = template('M {1}.{1} - {}');
const table = { totalKeys: 5 }; // all Parse reads of the shape table
const v2 = () => new ModelBytes(2);

test('a valid version 2 model: sources, a relative range, copy slots (not counted in the template length)', () => {
  const bytes = v2().varint(3)
    .field(0, [X, Five], [2000, 2000, 96])
    .field((1 << 1) | 1, [], [1000, 1000, 1000, 1000, 96], { rangeTag: 0x06, rangeMin: -4n, rangeBits: 3, sourcePlusOne: 1, flags: 1 })
    .field(2 << 1, [X], [1000, 1000, 1000, 1000, 96], { templates: [Skin, Day, Quake], sourcePlusOne: ((1 << 1) | 1) + 1 })
    .build();
  const model = FieldModel.parse(bytes, table);
  assert.deepEqual(model.fields.map((f) => [f.source, f.relative]), [[-1, false], [0, true], [3, false]]);
  assert.equal(model.fields[1].rangeMin, -4n);
  assert.deepEqual([...model.sourceKeys].sort((a, b) => a - b), [0, 3]);
  assert.deepEqual(model.fields[2].templates.map((t) => [t.copySlot, t.length]), [[0, 17], [-1, 11], [2, 8]]);
});

const refusals = {
  'version 4': [new ModelBytes(4).varint(0).build(), 'Field model format version 4 is not supported; this reader knows versions 1 to 3.'],
  'version 2 without a source': [v2().varint(1).field(0, [X, Five], [2000, 2000, 96]).build(),
    'Field model: version 2, but no field has a source (a model without sources is version 1).'],
  'source key out of the table': [v2().varint(1).field(0, [X], [4095, 1], { sourcePlusOne: (5 << 1) + 1 }).build(),
    "Field model: field 0's source names key 5; the shape table has 5 keys."],
  'source items of a key out of the table': [v2().varint(1).field(0, [X], [4095, 1], { sourcePlusOne: ((5 << 1) | 1) + 1 }).build(),
    "Field model: field 0's source names key 5; the shape table has 5 keys."],
  'field its own source': [v2().varint(2).field(0, [X], [4095, 1], { sourcePlusOne: 2 }).field((1 << 1) | 1, [X], [4095, 1], { sourcePlusOne: ((1 << 1) | 1) + 1 }).build(),
    'Field model: field 1 is its own source.'],
  'flags 2': [v2().varint(1).field(0, [], [4095, 1], { rangeTag: 0x06, sourcePlusOne: 3, flags: 2 }).build(),
    'Field model: field 0 has flags 0x02; only 0x01 (a relative range) is defined.'],
  'flags 0x81': [v2().varint(1).field(0, [], [4095, 1], { rangeTag: 0x06, sourcePlusOne: 3, flags: 0x81 }).build(),
    'Field model: field 0 has flags 0x81; only 0x01 (a relative range) is defined.'],
  'relative range without a source': [v2().varint(2).field(0, [X], [4095, 1], { sourcePlusOne: 3 }).field(2, [], [4095, 1], { rangeTag: 0x06, flags: 1 }).build(),
    "Field model: field 1's range is relative but it has no source."],
  'relative flag without a range': [v2().varint(1).field(0, [X], [4095, 1], { sourcePlusOne: 3, flags: 1 }).build(),
    "Field model: field 0's range is relative but it has no range."],
  'copy slot in a field without a source': [v2().varint(2).field(0, [X], [4095, 1], { sourcePlusOne: 3 }).field(2 << 1, [X], spread(3), { templates: [Skin] }).build(),
    "Field model: field 1's template 0 has a copy slot (width 0) but the field has no source."],
  'two copy slots': [v2().varint(1).field(2 << 1, [X], spread(4), { templates: [Day, template('{} and {}')], sourcePlusOne: 1 }).build(),
    "Field model: field 0's template 1 has more than one copy slot."],
  'copy slot in version 1': [new ModelBytes(1).varint(1).field(2 << 1, [X], spread(3), { templates: [Skin] }).build(),
    "Field model: field 0's template 0 has a copy slot (width 0) but the field has no source."],
  'source + 1 non-minimal': [v2().varint(1).varint(0).raw(0x81, 0x00, 0).varint(0).raw(0).varint(0).varint(4096).build(), 'Field model: truncated, over-long or non-minimal varint at offset 9'],
  'truncated before the flags': [v2().varint(1).varint(0).varint(2).build(), 'Field model: truncated'],
};

for (const [name, [bytes, message]] of Object.entries(refusals)) {
  test(`a version 2 field model is refused: ${name}`, () => {
    assert.throws(() => FieldModel.parse(bytes, table), (e) => e instanceof InvalidDataError && e.message.startsWith(message), `expected: ${message}`);
  });
}

// v3-fields-sources (docs/format.md, "Reading v3-fields-sources byte by byte"): place (key 1) is title's source, time
// (key 2) updated's. Its residual is root shape 1, mag 11 18, place (a 19-byte string), time (06 + 7 bytes).
const sources = vectors().find((v) => v.name === 'v3-fields-sources');
const model = parseStructureModel(vectorFile(sources.fields));
const residual = Buffer.from(sources.residual, 'hex');
const symbols = Buffer.from(sources.symbols, 'hex');
const place = residual.subarray(3, 23), time = residual.subarray(23);

test('v3-fields-sources: its model is version 2, and the join gives its packed stream', () => {
  assert.equal(vectorFile(sources.fields).indexOf('FLDM') > 0, true);
  assert.equal(join(model.table, model.fields, residual, symbols, 1024).toString('hex'), sources.packed);
});

test('a copy slot whose source has no latest string is corrupt, never wrong bytes', () => {
  const refusedCopy = (e) => e instanceof InvalidDataError && e.message === "Field stream: a template copies the field's source, which the document has not had as a string before it.";
  // place null, then place a number: the copy has nothing to write.
  for (const other of [[0x00], [0x06, 0x0a]]) {
    const damaged = Buffer.concat([residual.subarray(0, 3), Buffer.from(other), time]);
    assert.throws(() => join(model.table, model.fields, damaged, symbols, 1024), refusedCopy);
  }
});

test('a relative range whose source has no latest number is corrupt', () => {
  const damaged = Buffer.concat([residual.subarray(0, 3), place, Buffer.from([0x21, 0x78])]); // time the string "x"
  assert.throws(() => join(model.table, model.fields, damaged, symbols, 1024),
    (e) => e instanceof InvalidDataError && e.message === "Field stream: a relative range's value where the document has no number at the field's source before it.");
});

test('a copy making the string longer than a short string is written with the long tag', () => {
  const text = Buffer.alloc(230, 0x61); // place: 230 bytes of "a"; the title is 8 + 230 bytes
  const longPlace = Buffer.concat([Buffer.from([0x05, 230, 1]), text]);
  const packed = join(model.table, model.fields, Buffer.concat([residual.subarray(0, 3), longPlace, time]), symbols, 1024);
  const title = Buffer.concat([Buffer.from([0x05, 238, 1]), Buffer.from('M 1.2 - '), text]);
  assert.equal(packed.subarray(packed.length - title.length).toString('hex'), title.toString('hex'));
  assert.equal(packed.subarray(0, 3 + longPlace.length).toString('hex'), Buffer.concat([residual.subarray(0, 3), longPlace]).toString('hex'));
});
