#!/usr/bin/env python3
"""Formats the measurements run.sh leaves in benchmarks/storage/out/work/<corpus>/ (standard library only).

    python3 benchmarks/storage/report.py [--format markdown|json] DIR...

Each DIR holds serializer.json (from StorageLoad) and plain-<compressor>.json / compressed-<compressor>.json (from
wtload), and, when the read phase ran, reads-<plain|compressed>-<compressor>.json (from wtload --reads). Markdown: the
ratio table (plain BSON bytes / table file bytes), the bytes, the cache bytes, the per-document overhead of the
serializer's documents, the wire and the read phase. JSON: one object per corpus per line, then one line
{"geometricMean": {...}} with the geometric means of the ratios.
"""
import json
import math
import os
import sys

PLAIN = ["none", "snappy", "zlib", "zstd"]
COMPRESSED = ["snappy", "zstd"]
CACHE_COMPRESSOR = "snappy"  # cache bytes are read in the runs under MongoDB's default compressor
READ_TABLES = [("plainSnappy", "plain", "snappy", "plain, snappy"), ("plainZstd", "plain", "zstd", "plain, zstd-6"),
               ("oursSnappy", "compressed", "snappy", "ours, snappy")]
EVICTION_TARGET = 0.80  # WiredTiger's default: eviction starts when the cache holds this share of cache_size


def load(directory):
    def read(name):
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            return json.loads(f.read())

    s = read("serializer.json")
    plain = {c: read(f"plain-{c}.json") for c in PLAIN}
    compressed = {c: read(f"compressed-{c}.json") for c in COMPRESSED}
    for run in list(plain.values()) + list(compressed.values()):
        if run["documents"] != s["documents"]:
            sys.exit(f"{directory}: wtload loaded {run['documents']} documents, StorageLoad wrote {s['documents']}")
    reads = None
    if all(os.path.exists(os.path.join(directory, f"reads-{g}-{c}.json")) for _, g, c, _ in READ_TABLES):
        reads = read_phase({key: read(f"reads-{g}-{c}.json") for key, g, c, _ in READ_TABLES})
    return {
        "corpus": s["corpus"],
        "documents": s["documents"],
        "trainFirst": s.get("trainFirst", 0),
        "bsonBytes": s["bsonBytes"],
        "storedBytes": s["storedBytes"],
        "plain": {c: plain[c]["fileBytes"] for c in PLAIN},
        "compressed": {c: compressed[c]["fileBytes"] for c in COMPRESSED},
        "cache": {"plain": plain[CACHE_COMPRESSOR]["cacheBytes"], "compressed": compressed[CACHE_COMPRESSOR]["cacheBytes"]},
        "cacheCompressor": CACHE_COMPRESSOR,
        "leafPages": {"plain": {c: plain[c].get("leafPages") for c in PLAIN},
                      "compressed": {c: compressed[c].get("leafPages") for c in COMPRESSED}},
        "dictionaryVersions": s["dictionaryVersions"],
        "overhead": s["overhead"],
        "wire": s.get("wire"),
        "decode": s.get("decode"),
        "reads": reads,
    }


def read_phase(tables):
    """The read phase's figures per table, with what a miss costs: the extra time (mean, and the process's CPU) a read
    takes in the small cache over the whole one, per extra miss."""
    first = next(iter(tables.values()))
    out = {"copies": first["copies"], "documents": first["documents"], "smallCacheBytes": first["smallCacheSize"],
           "loadAverage": {k: t.get("loadAverage") for k, t in tables.items()}}
    for key, t in tables.items():
        if t["copies"] != first["copies"] or t["smallCacheSize"] != first["smallCacheSize"]:
            sys.exit(f"read phase: {key} ran with other copies or another cache size than {next(iter(tables))}")
        whole, entry = t["whole"], {"fileBytes": t["fileBytes"], "wholeCacheBytes": t["wholeCacheBytes"],
                                    "wholeCacheSize": t["wholeCacheSize"],
                                    # the least cache_size that holds one copy of the collection
                                    "holdCacheBytes": round(t["wholeCacheBytes"] / t["copies"] / EVICTION_TARGET)}
        for phase in ("small", "smallDirect", "whole"):
            entry[phase] = t[phase]
        for phase, name in (("small", "missCostUs"), ("smallDirect", "missCostDirectUs")):
            p = t[phase]
            extra = p.get("missesPerRead", 0) - whole["missesPerRead"] if "error" not in p else 0
            entry[name] = round((p["meanUs"] - whole["meanUs"]) / extra, 1) if extra > 0.01 else None
            entry[name.replace("Us", "CpuUs")] = round((p["cpuUsPerRead"] - whole["cpuUsPerRead"]) / extra, 1) if extra > 0.01 else None
        out[key] = entry
    return out


def ratios(r):
    out = {f"plain {c}": r["bsonBytes"] / r["plain"][c] for c in PLAIN}
    out.update({f"ours {c}": r["bsonBytes"] / r["compressed"][c] for c in COMPRESSED})
    out["ours BSON"] = r["bsonBytes"] / r["storedBytes"]
    out["cache"] = r["cache"]["compressed"] / r["cache"]["plain"]
    return out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def size(n):
    if n >= 1000:
        return f"{n / 1000:.1f} KB" if n < 10_000 else f"{n / 1000:.0f} KB"
    return f"{n:.0f} B"


def bootstrap(results):
    """How the serializer's runs started: the write path alone, or a bulk load trained from its first documents."""
    first = sorted({r.get("trainFirst", 0) for r in results})
    if first == [0]:
        return "bootstrap included"
    return "after training from the first " + "/".join(f"{n:,}" for n in first) + " documents of each corpus before any was written (STORAGE_TRAIN_FIRST)"


def markdown(results):
    lines = []
    cols = ["plain none", "plain snappy", "plain zlib", "plain zstd", "ours snappy", "ours zstd", "ours BSON"]
    titles = ["plain, none", "plain, snappy", "plain, zlib", "plain, zstd-6", "ours, snappy", "ours, zstd-6",
              "ours, BSON before storage"]
    lines.append("Ratio = plain BSON bytes / table file bytes (after bulk load, checkpoint and close). "
                 "\"ours\" = `{_id, _z: BinData(0x81, envelope)}` as `CompressedDocumentSerializer` writes it (before 2026-11-24: BinData(0x80) and envelope format v1) "
                 f"(zstd-3, dictionaries trained online, {bootstrap(results)}); \"BSON before storage\" = plain BSON bytes "
                 "/ the serializer's BSON bytes.")
    lines.append("")
    lines.append("| corpus (docs, avg BSON) | " + " | ".join(titles) + " |")
    lines.append("|---|" + "---:|" * len(cols))
    per = [ratios(r) for r in results]
    for r, q in zip(results, per):
        label = f"{r['corpus']} ({r['documents']:,}, {size(r['bsonBytes'] / r['documents'])})"
        lines.append(f"| {label} | " + " | ".join(f"{q[c]:.2f}" for c in cols) + " |")
    if results:
        lines.append(f"| geometric mean ({len(results)}) | "
                     + " | ".join(f"**{geomean([q[c] for q in per]):.2f}**" for c in cols) + " |")
    lines.append("")
    lines.append("Bytes: plain BSON, the serializer's BSON, and the table file under each block compressor.")
    lines.append("")
    lines.append("| corpus | plain BSON | ours BSON | plain, none | plain, snappy | plain, zlib | plain, zstd-6 | ours, snappy | ours, zstd-6 |")
    lines.append("|---|" + "---:|" * 8)
    for r in results:
        cells = [r["bsonBytes"], r["storedBytes"]] + [r["plain"][c] for c in PLAIN] + [r["compressed"][c] for c in COMPRESSED]
        lines.append(f"| {r['corpus']} | " + " | ".join(f"{v:,}" for v in cells) + " |")
    if all(r["leafPages"]["plain"]["none"] is not None for r in results):
        lines.append("")
        lines.append("Leaf pages (statistic \"btree: row-store leaf pages\"): with a block compressor WiredTiger grows the "
                     "pre-compression page size from the compression it observes, so each compressor call sees more than "
                     "leaf_page_max.")
        lines.append("")
        lines.append("| corpus | " + " | ".join(f"plain, {c}" for c in PLAIN) + " | " + " | ".join(f"ours, {c}" for c in COMPRESSED)
                     + " | plain BSON per leaf page, snappy |")
        lines.append("|---|" + "---:|" * (len(PLAIN) + len(COMPRESSED) + 1))
        for r in results:
            pages = [r["leafPages"]["plain"][c] for c in PLAIN] + [r["leafPages"]["compressed"][c] for c in COMPRESSED]
            lines.append(f"| {r['corpus']} | " + " | ".join(f"{p:,}" for p in pages)
                         + f" | {size(r['bsonBytes'] / r['leafPages']['plain']['snappy'])} |")
    lines.append("")
    lines.append(f"Cache: statistic \"cache: bytes currently in the cache\" after reading every document back in a fresh "
                 f"connection (cache_size=1GB), tables under {CACHE_COMPRESSOR}.")
    lines.append("")
    lines.append("| corpus | plain | ours | ours / plain |")
    lines.append("|---|---:|---:|---:|")
    for r, q in zip(results, per):
        lines.append(f"| {r['corpus']} | {r['cache']['plain']:,} | {r['cache']['compressed']:,} | {q['cache']:.2f} |")
    if results:
        lines.append(f"| geometric mean | | | **{geomean([q['cache'] for q in per]):.2f}** |")
    lines.append("")
    lines.append(overhead_table(results))
    if all(r.get("wire") for r in results):
        lines.append("")
        lines.append(wire_table(results))
    if all(r.get("reads") for r in results):
        lines.append("")
        lines.append(reads_tables(results))
    return "\n".join(lines)


def reads_ratio(r, key, phase="small", cpu=True):
    """Reads of ours under snappy over those of the plain table KEY, in one phase: by CPU (reads a CPU second: the
    process's CPU per read, which other work on the machine barely moves; with the file in the OS page cache a miss is
    CPU work) or by the wall clock (reads a second, which a busy machine's preemptions dominate)."""
    ours, plain = r["reads"]["oursSnappy"][phase], r["reads"][key][phase]
    return plain["cpuUsPerRead"] / ours["cpuUsPerRead"] if cpu else ours["readsPerSecond"] / plain["readsPerSecond"]


def reads_tables(results):
    """The read phase (wtload --reads): a small cache, the same with direct I/O, and the least cache that holds it all."""
    mb = lambda n: f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} KB"
    lines = ["Reads: random point reads by key over the whole table for a fixed time, one thread (wtload --reads). Each "
             "corpus is repeated until the plain table holds at least 32 MiB (\"copies\"; WiredTiger's least cache is "
             "1 MB); the small cache is 1/4 of the plain table's BSON bytes, the same for all three tables. The file is in "
             "the OS page cache, so a miss is a page read from memory and a decompression; \"direct\" is the same with "
             "`direct_io=[data]` (O_DIRECT, a miss reads the disk). CPU: the process's user + system time over the reads "
             "(eviction threads included), less sensitive than wall time to other work on the machine. Client decode: the "
             "CPU time of reading one document in the client (StorageLoad: the driver's class map from plain BSON against "
             "the serializer from ours, decompression included; the fastest of alternating passes over the corpus in one "
             "process, timed by the process's CPU clock).", ""]
    lines.append("| corpus (copies, cache) | table | reads/s (wall) | p50 µs | p99 µs | misses/read | CPU µs/read | reads/s, direct | p50 µs, direct | client decode, CPU µs/doc |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        q = r["reads"]
        for key, group, _, title in READ_TABLES:
            small, direct = q[key]["small"], q[key]["smallDirect"]
            decode = r.get("decode") or {}
            ns = decode.get(("ours" if group == "compressed" else "plain") + "CpuNsPerDocument")
            label = f"{r['corpus']} ({q['copies']}, {mb(q['smallCacheBytes'])})" if key == "plainSnappy" else ""
            direct_cells = (f"{direct['readsPerSecond']:,.0f} | {direct['p50Us']:,.1f}" if "error" not in direct
                            else f"refused: {direct['error']} | -")
            lines.append(f"| {label} | {title} | {small['readsPerSecond']:,.0f} | {small['p50Us']:,.1f} | {small['p99Us']:,.0f} | "
                         f"{small['missesPerRead']:.3f} | {small['cpuUsPerRead']:,.1f} | {direct_cells} | "
                         + (f"{ns / 1000:.2f}" if ns else "-") + " |")
    lines.append("")
    lines.append("Ours under snappy against plain, in the small cache: reads a CPU second (1 / the process's CPU per read; "
                 "the figure to quote on a busy machine), reads a second by the wall clock, and by the wall clock with "
                 "direct I/O (where a miss waits for the disk, which CPU time does not count); and the client's decode "
                 "CPU, ours over plain (above 1x ours costs more).")
    lines.append("")
    lines.append("| corpus | by CPU, vs plain snappy | by CPU, vs plain zstd-6 | wall, vs snappy | wall, vs zstd-6 | direct, wall, vs snappy | direct, wall, vs zstd-6 | client decode CPU, ours / plain |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    per = []
    for r in results:
        d = r.get("decode") or {}
        direct_ok = all("error" not in r["reads"][k]["smallDirect"] for k, _, _, _ in READ_TABLES)
        row = [reads_ratio(r, "plainSnappy"), reads_ratio(r, "plainZstd"),
               reads_ratio(r, "plainSnappy", cpu=False), reads_ratio(r, "plainZstd", cpu=False),
               reads_ratio(r, "plainSnappy", "smallDirect", cpu=False) if direct_ok else None,
               reads_ratio(r, "plainZstd", "smallDirect", cpu=False) if direct_ok else None,
               d["oursCpuNsPerDocument"] / d["plainCpuNsPerDocument"] if d.get("plainCpuNsPerDocument") else None]
        per.append(row)
        lines.append(f"| {r['corpus']} | " + " | ".join(f"{v:.2f}x" if v else "-" for v in row) + " |")
    if per:
        means = [geomean([row[i] for row in per]) if all(row[i] for row in per) else None for i in range(len(per[0]))]
        lines.append(f"| geometric mean ({len(per)}) | " + " | ".join(f"**{v:.2f}x**" if v else "-" for v in means) + " |")
    lines.append("")
    lines.append(f"The least cache that holds the whole collection (one copy): the bytes it takes in the cache after a full "
                 f"scan / {EVICTION_TARGET:.2f} (eviction_target). \"whole\": the repeated table read at random with that "
                 "cache + 5%: misses/read says whether it held. Miss cost: (mean µs a read in the small cache − in the whole "
                 "one) / (misses a read more), by wall time and by the process's CPU; bytes a miss: uncompressed into the "
                 "cache / read from the file.")
    lines.append("")
    lines.append("| corpus | table | least cache to hold it | reads/s, whole | p50 µs, whole | misses/read, whole | miss µs (CPU µs) | miss µs, direct (CPU µs) | bytes a miss (file) |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    opt = lambda v: f"{v:,.0f}" if v is not None else "-"
    for r in results:
        q = r["reads"]
        for key, _, _, title in READ_TABLES:
            t = q[key]
            w, small = t["whole"], t["small"]
            per_miss = (f"{small['bytesPerMiss']:,.0f} ({small['fileBytesPerMiss']:,.0f})" if small["missesPerRead"] > 0 else "-")
            lines.append(f"| {r['corpus'] if key == 'plainSnappy' else ''} | {title} | {mb(t['holdCacheBytes'])} | "
                         f"{w['readsPerSecond']:,.0f} | {w['p50Us']:,.1f} | {w['missesPerRead']:.3f} | "
                         f"{opt(t['missCostUs'])} ({opt(t['missCostCpuUs'])}) | {opt(t['missCostDirectUs'])} ({opt(t['missCostDirectCpuUs'])}) | {per_miss} |")
    loads = sorted(v for r in results for v in r["reads"]["loadAverage"].values() if v is not None)
    if loads:
        lines.append("")
        lines.append(f"The machine's 1-minute load average when each table's phases started: {loads[0]:.1f} to {loads[-1]:.1f} "
                     "(2 cores). Compare within a corpus (the three tables ran one after the other); absolute figures move with the load.")
    return "\n".join(lines)


def wire_table(results):
    """Bytes per document on the wire (StorageLoad's Wire.cs): OP_MSG, and OP_COMPRESSED around it."""
    lines = ["Wire: bytes per document of whole messages (header included), in file order: find replies of 101 and "
             "1,000 documents (server: zstd level 3), insert batches of 1,000 (driver: zstd level 6); plain BSON "
             "documents and ours (the serializer's), without and with the driver's compressors.", ""]
    lines.append("| corpus | message | plain | plain + snappy | plain + zstd | ours | ours + zstd | ours / (plain + zstd) |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        for kind, title in [("read101", "find, 101"), ("read1000", "getMore, 1,000"), ("insert1000", "insert, 1,000")]:
            w = r["wire"][kind]
            lines.append(f"| {r['corpus']} | {title} | {w['plain']:,.1f} | {w['snappy']:,.1f} | {w['zstd']:,.1f} | "
                         f"{w['ours']:,.1f} | {w['oursZstd']:,.1f} | {w['ours'] / w['zstd']:.2f} |")
    return "\n".join(lines)


def overhead_table(results):
    parts = [("wrapper", "documentLengthAndTerminator", "BSON length + terminator"),
             ("wrapper", "idElement", "`_id` element"),
             ("wrapper", "zElementHeader", "`_z` element header (type, name, length, subtype)"),
             ("envelope", "magic", "envelope magic"),
             ("envelope", "header", "envelope header byte"),
             ("envelope", "lengthVarint", "length varint"),
             ("envelope", "dictionaryIdVarint", "dictionary id varint"),
             ("envelope", "checksum", "checksum (v1 XxHash32, 4 B; v2 its low 16 bits, 2 B)"),
             ("envelope", "zstdFrameHeader", "zstd frame header"),
             ("envelope", "zstdBlockHeaders", "zstd block headers"),
             ("envelope", "content", "compressed content")]
    lines = ["Per-document bytes of the serializer's documents (averages over all documents; bootstrap included):", ""]
    lines.append("| part | " + " | ".join(r["corpus"] for r in results) + " |")
    lines.append("|---|" + "---:|" * len(results))
    for group, key, title in parts:
        lines.append(f"| {title} | " + " | ".join(f"{r['overhead'][group][key] / r['documents']:.2f}" for r in results) + " |")

    def per(r, f):
        return f(r["overhead"]) / r["documents"]

    wrapper = lambda o: o["wrapperBytes"]
    envelope_overhead = lambda o: o["envelopeBytes"] - o["envelope"]["content"]
    rows = [("**BSON wrapper**", lambda r: f"{per(r, wrapper):.2f}"),
            ("**envelope framing** (all but content)", lambda r: f"{per(r, envelope_overhead):.2f}"),
            ("**stored document**", lambda r: f"{per(r, lambda o: o['storedBytes']):.2f}"),
            ("plain BSON document", lambda r: f"{per(r, lambda o: o['plainBytes']):.2f}"),
            ("wrapper + framing, share of stored bytes",
             lambda r: f"{(r['overhead']['wrapperBytes'] + envelope_overhead(r['overhead'])) / r['overhead']['storedBytes']:.0%}"),
            ("documents with a dictionary", lambda r: f"{r['overhead']['withDictionary']:,} of {r['documents']:,}")]
    for title, f in rows:
        lines.append(f"| {title} | " + " | ".join(f(r) for r in results) + " |")
    return "\n".join(lines)


def reads_mean(results, key, cpu=True):
    """Geometric mean of ours' reads over plain's in the small cache (None without the read phase)."""
    if not results or not all(r.get("reads") for r in results):
        return None
    return round(geomean([reads_ratio(r, key, cpu=cpu) for r in results]), 4)


def main(argv):
    fmt = "markdown"
    dirs = []
    i = 0
    while i < len(argv):
        if argv[i] == "--format":
            fmt = argv[i + 1]
            i += 2
            continue
        dirs.append(argv[i])
        i += 1
    if fmt not in ("markdown", "json"):
        sys.exit(f"unknown format {fmt}: markdown or json")
    results = [load(d) for d in dirs]
    if fmt == "json":
        for r in results:
            print(json.dumps(r))
        per = [ratios(r) for r in results]
        if per:
            mean = {k: round(geomean([q[k] for q in per]), 4) for k in per[0]}
            print(json.dumps({"geometricMean": {
                "corpora": len(results),
                "plain": {c: mean[f"plain {c}"] for c in PLAIN},
                "compressed": {c: mean[f"ours {c}"] for c in COMPRESSED},
                "serializerBson": mean["ours BSON"],
                "cacheCompressedOverPlain": mean["cache"],
                "readsPerCpuSecondOursOverPlainSnappy": reads_mean(results, "plainSnappy"),
                "readsPerCpuSecondOursOverPlainZstd": reads_mean(results, "plainZstd"),
                "readsPerSecondOursOverPlainSnappy": reads_mean(results, "plainSnappy", cpu=False),
                "readsPerSecondOursOverPlainZstd": reads_mean(results, "plainZstd", cpu=False)}}))
    else:
        print(markdown(results))


if __name__ == "__main__":
    main(sys.argv[1:])
