'use strict';

// Decode speed of the JS reader on envelopes the .NET engine wrote (bench/dotnet-writer), beside the .NET figure the
// writer measured on the same envelopes:
//   dotnet run -c Release --project clients/js/bench/dotnet-writer -- samples/data/movies.jsonl /tmp/bench-movies
//   node clients/js/bench/decode.js /tmp/bench-movies samples/data/movies.jsonl
// Every envelope is checked against its line first; then the fastest of 5 rounds of at least 0.5 s, per zstd backend, by
// the clock and by the process's CPU time (steadier on a shared machine; the .NET writer reports both too).
const fs = require('node:fs');
const path = require('node:path');
const { DocumentReader, FileDictionaryStore } = require('../src');
const zstd = require('../src/zstd');

async function main() {
  const [folder, corpus] = process.argv.slice(2);
  if (!folder || !corpus) {
    console.error('usage: node bench/decode.js FOLDER CORPUS.jsonl');
    process.exit(2);
  }
  const bytes = fs.readFileSync(path.join(folder, 'envelopes.bin'));
  const envelopes = [];
  for (let at = 0; at < bytes.length;) {
    const n = bytes.readInt32LE(at);
    envelopes.push(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  const documents = fs.readFileSync(corpus, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => Buffer.from(l, 'utf8'));
  const raw = documents.reduce((s, d) => s + d.length, 0);
  const dotnet = JSON.parse(fs.readFileSync(path.join(folder, 'dotnet.json'), 'utf8'));
  const results = { documents: documents.length, rawBytes: raw, node: process.version, dotnet };
  for (const backend of zstd.hasNative ? ['zstd-napi', 'wasm'] : ['wasm']) {
    zstd.use(backend);
    await zstd.ready();
    const reader = new DocumentReader({ store: new FileDictionaryStore(path.join(folder, 'dictionaries')) });
    for (let i = 0; i < envelopes.length; i++) {
      const out = await reader.decompress(envelopes[i]);
      if (!out.equals(documents[i])) throw new Error(`document ${i} differs`);
    }
    let best = Infinity, bestCpu = Infinity;
    for (let round = 0; round < 5; round++) {
      let passes = 0;
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      let elapsed;
      do {
        for (const e of envelopes) reader.decompressSync(e);
        passes++;
        elapsed = Number(process.hrtime.bigint() - start) / 1e9;
      } while (elapsed < 0.5);
      best = Math.min(best, elapsed / passes);
      const used = process.cpuUsage(cpu);
      bestCpu = Math.min(bestCpu, (used.user + used.system) / 1e6 / passes);
    }
    results[backend] = { decodeMBps: +(raw / best / 1e6).toFixed(1), microsecondsPerDocument: +((best / documents.length) * 1e6).toFixed(3), cpuMBps: +(raw / bestCpu / 1e6).toFixed(1) };
  }
  console.log(JSON.stringify(results, null, 1));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
