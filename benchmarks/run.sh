#!/usr/bin/env bash
# Runs the BenchmarkDotNet suites and copies the GitHub-markdown reports to benchmarks/results/.
#   bash benchmarks/run.sh quick   # short jobs, movies and flights only (under 20 minutes on 2 cores until 2026-11-26;
#                                  # since 2026-11-27 MongoDriverBenchmarks runs each wire setting, about 37 s a case:
#                                  # COMPRESSION_BENCH_WIRE=None,Zstd keeps it shorter)
#   bash benchmarks/run.sh full    # default jobs, every corpus the suites know
# Corpora: ../shared/data beside the repository, or COMPRESSION_CORPUS_DIR.
set -euo pipefail
mode=${1:-quick}
cd "$(dirname "$0")/.."
root=$(pwd)
artifacts="$root/benchmarks/Compression.Benchmarks/BenchmarkDotNet.Artifacts"
rm -rf "$artifacts"
dotnet build benchmarks/Compression.Benchmarks -c Release

case "$mode" in
  quick) export COMPRESSION_BENCH_CORPORA=${COMPRESSION_BENCH_CORPORA:-movies,flights}; job=(--job short) ;;
  full)  job=() ;;
  *) echo "usage: $0 [quick|full]" >&2; exit 2 ;;
esac

start=$(date +%s)
(cd benchmarks/Compression.Benchmarks && dotnet run -c Release --no-build -- --filter '*' "${job[@]}" --artifacts "$artifacts")
echo "benchmarks took $(( $(date +%s) - start )) s"

mkdir -p benchmarks/results
for report in "$artifacts"/results/*-report-github.md; do
  name=$(basename "$report" -report-github.md)
  name=${name##*.}
  cp "$report" "benchmarks/results/$name-$mode.md"
done
ls -l benchmarks/results
