'use strict';

const fs = require('node:fs');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..', '..', '..');
const VECTORS = path.join(REPO, 'tests', 'Compression.Core.Tests', 'Vectors');

function vectors() {
  return JSON.parse(fs.readFileSync(path.join(VECTORS, 'vectors.json'), 'utf8'));
}

function structureVectors() {
  return JSON.parse(fs.readFileSync(path.join(VECTORS, 'structure-vectors.json'), 'utf8'));
}

function vectorFile(name) {
  return fs.readFileSync(path.join(VECTORS, name));
}

function expected(v) {
  return v.text !== null && v.text !== undefined ? Buffer.from(v.text, 'utf8') : Buffer.from(v.hex, 'hex');
}

module.exports = { REPO, VECTORS, vectors, structureVectors, vectorFile, expected };
