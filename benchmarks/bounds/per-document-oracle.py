#!/usr/bin/env python3
"""A bound on what any per-document coder with a shared dictionary can reach (issue #37).

Each held-out document (every tenth line, up to 150) is compressed alone by the zstd command-line tool at level 19
with, as its dictionary, the raw text of every other line of the corpus (up to its last 8 MiB): a dictionary no
trainer could ship, which holds the document's own neighbours (emoji's skin variants, a movie's sequels). What this
gets is far more than a namespace's dictionary, shape table and field model can know, so a per-document codec that
stays above it on a corpus cannot reach a block compressor that sees the neighbours themselves.

Prints bytes a document: the frame without its 4-byte magic (a frame header of about 3 bytes and a 3-byte block header
remain, about what the envelope's own header costs). Needs the `zstd` command (Debian package zstd).

    python3 benchmarks/bounds/per-document-oracle.py ../shared/data/{movies,earthquakes,emoji,flights}.jsonl
"""
import os
import subprocess
import sys
import tempfile


def bound(path):
    lines = [l for l in open(path, 'rb').read().split(b'\n') if l]
    held = [l for i, l in enumerate(lines) if i % 10 == 5][:150]
    rest = b'\n'.join(l for i, l in enumerate(lines) if i % 10 != 5)[-(8 << 20):]
    with tempfile.TemporaryDirectory() as work:
        dictionary, document, frame = (os.path.join(work, n) for n in ('dict.bin', 'doc.json', 'doc.zst'))
        open(dictionary, 'wb').write(rest)
        total = 0
        for d in held:
            open(document, 'wb').write(d)
            subprocess.run(['zstd', '-q', '-19', '--ultra', '--no-check', '-f', '-D', dictionary, document, '-o', frame], check=True)
            total += os.path.getsize(frame) - 4
    return sum(len(d) for d in held) / len(held), total / len(held), len(held)


if __name__ == '__main__':
    print('| corpus | documents | raw B/doc | zstd-19, the rest of the corpus as dictionary, B/doc |')
    print('|---|---:|---:|---:|')
    for path in sys.argv[1:]:
        raw, coded, n = bound(path)
        print(f'| {os.path.basename(path).removesuffix(".jsonl")} | {n} | {raw:.1f} | {coded:.1f} |')
