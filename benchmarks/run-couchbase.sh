#!/usr/bin/env bash
# Runs the Couchbase suites (benchmarks/Compression.Couchbase.Benchmarks, outside Compression.sln) and writes one report:
#   bash benchmarks/run-couchbase.sh          # in-process BenchmarkDotNet jobs, movies and flights, then the alternating run
# The suites drive CouchbaseNetClient against the loopback KV server, so they need the package to restore;
# COUCHBASE_FEED may name a local folder feed that holds it (as for .ci/run). Corpora: ../shared/data beside the
# repository, or COMPRESSION_CORPUS_DIR. Report: benchmarks/results/CouchbaseSdkBenchmarks-quick-YYYY-MM-DD.md.
# In-process: BenchmarkDotNet's out-of-process build timed out on the loaded 2-core machine before.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
project=benchmarks/Compression.Couchbase.Benchmarks
artifacts="$root/$project/BenchmarkDotNet.Artifacts"
rm -rf "$artifacts"
sources=()
if [ -n "${COUCHBASE_FEED:-}" ]; then sources=("-p:RestoreAdditionalProjectSources=$COUCHBASE_FEED"); fi
dotnet build "$project" -c Release "${sources[@]}"
export COMPRESSION_BENCH_CORPORA=${COMPRESSION_BENCH_CORPORA:-movies,flights}

start=$(date +%s)
(cd "$project" && dotnet run -c Release --no-build -- --filter '*CouchbaseSdkBenchmarks*' --inProcess \
  --warmupCount 3 --iterationCount 15 --artifacts "$artifacts")
(cd "$project" && dotnet run -c Release --no-build -- --filter '*TranscoderOverheadBenchmarks*' --inProcess \
  --warmupCount 3 --iterationCount 15 --iterationTime 250 --artifacts "$artifacts")
alternating=$(cd "$project" && dotnet run -c Release --no-build -- --alternate --rounds 21 --operations 3 2>/dev/null)
seconds=$(( $(date +%s) - start ))

mkdir -p benchmarks/results
out="benchmarks/results/CouchbaseSdkBenchmarks-quick-$(date +%F).md"
{
  echo "# Couchbase through the SDK ($(date +%F), bash benchmarks/run-couchbase.sh, ${seconds} s; load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
  echo
  echo "## CouchbaseSdkBenchmarks (CouchbaseNetClient against the loopback KV server)"
  cat "$artifacts"/results/*CouchbaseSdkBenchmarks-report-github.md
  echo
  echo "## TranscoderOverheadBenchmarks (no SDK, no server)"
  cat "$artifacts"/results/*TranscoderOverheadBenchmarks-report-github.md
  echo
  echo "## Alternating run (stopwatch; wall and process CPU time)"
  echo
  echo "$alternating"
} > "$out"
echo "wrote $out (benchmarks took $seconds s)"
