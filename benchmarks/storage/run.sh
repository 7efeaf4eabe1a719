#!/usr/bin/env bash
# The same documents stored in the real WiredTiger engine (Debian's libwiredtiger 3.2.1, MongoDB's collection
# settings), plain and as Compression.MongoDB's serializer writes them: table file bytes and cache bytes.
#
#   bash benchmarks/storage/run.sh [--format markdown|json] FILE.jsonl...
#
# Per corpus: StorageLoad (.NET) writes plain BSON ({_id, ...document}) and the serializer's documents
# ({_id, _z: BinData(0x81, envelope)}, zstd-3 with the field model, dictionaries trained online, bootstrap included); wtload (C) bulk-loads
# each into a table under none/snappy/zlib/zstd-6 (plain) and snappy/zstd-6 (ours), checkpoints, stats the file,
# then reads everything back in a fresh connection and reads the cache statistic. Report on stdout (Markdown table or
# one JSON object per corpus, then the geometric means); progress on stderr.
#
# Read phase (wtload --reads): plain under snappy, plain under zstd-6 and ours under snappy are loaded again, the corpus
# repeated until the plain table holds at least STORAGE_READ_MIN_BYTES (default 32 MiB; WiredTiger's least cache is
# 1 MB), and read at random by key for STORAGE_READ_SECONDS (default 2) a phase: with a cache of 1/4 of the plain table's
# BSON bytes (the same size for all three), the same with direct_io, and with the least cache that holds the whole table.
# STORAGE_READ_SECONDS=0 skips it. STORAGE_TRAIN_FIRST=N (default 0) writes ours as a bulk load that trains from its
# first N documents before writing any (collection.TrainCompressionAsync(firstBatch)); 0 is the write path alone.
# Everything is built into
# benchmarks/storage/out/ (ignored by git). Installs libwiredtiger-dev, libzstd-dev and libsnappy-dev with apt-get
# when missing (sudo when not root).
set -euo pipefail

usage() { echo "usage: bash $0 [--format markdown|json] FILE.jsonl..." >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$here/out"
format=markdown
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --format) [ $# -ge 2 ] || usage; format=$2; shift 2 ;;
    --format=*) format=${1#--format=}; shift ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *)
      if [ ! -f "$1" ]; then echo "run.sh: no such file: $1 (give JSON Lines corpora, e.g. ../shared/data/*.jsonl)" >&2; exit 1; fi
      files+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"); shift ;;
  esac
done
case "$format" in markdown|json) ;; *) echo "run.sh: unknown format '$format' (markdown or json)" >&2; exit 2 ;; esac
[ ${#files[@]} -gt 0 ] || usage
for tool in dotnet gcc python3; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is needed and not on PATH" >&2; exit 1; }
done
log() { echo "[storage] $*" >&2; }
read_seconds=${STORAGE_READ_SECONDS:-2}
read_min_bytes=${STORAGE_READ_MIN_BYTES:-33554432}
train_first=${STORAGE_TRAIN_FIRST:-0}

# Debian packages: WiredTiger's headers and library (with its snappy and zlib extensions), libzstd for our extension.
missing=()
for pkg in libwiredtiger-dev libzstd-dev libsnappy-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  log "installing ${missing[*]}"
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
    "${sudo[@]}" apt-get update >&2
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2
  fi
fi
extension() { # the path of one of WiredTiger's own extension libraries, from the package's file list
  local path; path=$(dpkg -L libwiredtiger0 2>/dev/null | grep "/libwiredtiger_$1\.so$" | head -n 1 || true)
  [ -n "$path" ] && [ -f "$path" ] || { echo "run.sh: libwiredtiger_$1.so not found (dpkg -L libwiredtiger0)" >&2; exit 1; }
  echo "$path"
}
snappy_ext=$(extension snappy)
zlib_ext=$(extension zlib)

mkdir -p "$out"
log "building wtload and wt_zstd.so"
gcc -O2 -Wall -Wextra -Werror -o "$out/wtload" "$here/wtload.c" -lwiredtiger
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$out/wt_zstd.so" "$here/wt_zstd.c" -lzstd
log "building StorageLoad"
dotnet build "$here/StorageLoad/Compression.StorageLoad.csproj" -c Release -o "$out/StorageLoad" --nologo -v quiet -clp:NoSummary >&2
extensions="[$snappy_ext,$zlib_ext,$out/wt_zstd.so=(config=\"compression_level=6\")]"

dirs=()
for file in "${files[@]}"; do
  name=$(basename "$file" .jsonl)
  work="$out/work/$name"
  rm -rf "$work"
  mkdir -p "$work"
  log "$name: serializing"
  dotnet "$out/StorageLoad/Compression.StorageLoad.dll" "$file" "$work" --train-first "$train_first" > "$work/serializer.json"
  for compressor in none snappy zlib zstd; do
    log "$name: plain under $compressor"
    "$out/wtload" "$work/db" "$work/plain.bson" "$compressor" "$extensions" > "$work/plain-$compressor.json"
  done
  for compressor in snappy zstd; do
    log "$name: ours under $compressor"
    "$out/wtload" "$work/db" "$work/compressed.bson" "$compressor" "$extensions" > "$work/compressed-$compressor.json"
  done
  if [ "$read_seconds" != 0 ]; then
    plain_bytes=$(stat -c %s "$work/plain.bson")
    copies=$(( (read_min_bytes + plain_bytes - 1) / plain_bytes ))
    cache=$(( plain_bytes * copies / 4 ))
    [ "$cache" -ge 1048576 ] || cache=1048576
    for table in plain:snappy plain:zstd compressed:snappy; do
      log "$name: reads, ${table%%:*} under ${table#*:} ($copies copies, cache $cache B)"
      "$out/wtload" --reads "$work/db" "$work/${table%%:*}.bson" "${table#*:}" "$extensions" "$copies" "$cache" "$read_seconds" \
        > "$work/reads-${table%%:*}-${table#*:}.json"
    done
  fi
  rm -rf "$work/db" "$work/plain.bson" "$work/compressed.bson"
  dirs+=("$work")
done

python3 "$here/report.py" --format "$format" "${dirs[@]}"
