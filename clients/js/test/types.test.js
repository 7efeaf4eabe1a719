'use strict';

// index.d.ts declares what src/index.js exports (names checked both ways).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

test('index.d.ts declares every export, and nothing else', () => {
  const declared = new Set([...fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8').matchAll(/^export (?:class|function|const|interface) (\w+)/gm)].map((m) => m[1]));
  const exported = Object.keys(require('..'));
  for (const name of exported) assert.ok(declared.has(name), `${name} is exported but not declared`);
  const interfaces = ['EnvelopeHeader', 'DictionaryRecord', 'DictionaryStore', 'LoadedDictionary', 'DocumentReaderOptions'];
  for (const name of declared) assert.ok(exported.includes(name) || interfaces.includes(name), `${name} is declared but not exported`);
});
