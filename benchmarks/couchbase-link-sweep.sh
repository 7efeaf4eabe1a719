#!/usr/bin/env bash
# The Couchbase suite's alternating run (upsert and get batches through the SDK, plain against compressed, both sides in
# the same minutes) at several link rates, into one report: where the link, not the client's CPU, bounds a batch.
#   COUCHBASE_FEED=/path/to/feed bash benchmarks/couchbase-link-sweep.sh                  # unshaped, 1gbit ... 100mbit
#   COUCHBASE_FEED=/path/to/feed bash benchmarks/couchbase-link-sweep.sh unshaped 300mbit # the rates given
# Every rate but "unshaped" runs under benchmarks/shaped-link.sh (root; it changes the whole machine's loopback while it
# runs: run nothing else). Each rate is its own process: its own server, cluster, dictionary and 10-20 s of warm-up.
# Corpora: ../shared/data beside the repository, or COMPRESSION_CORPUS_DIR. Report:
# benchmarks/results/CouchbaseLinkSweep-YYYY-MM-DD.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
project=benchmarks/Compression.Couchbase.Benchmarks
sources=()
if [ -n "${COUCHBASE_FEED:-}" ]; then sources=("-p:RestoreAdditionalProjectSources=$COUCHBASE_FEED"); fi
dotnet build "$project" -c Release "${sources[@]}"
export COMPRESSION_BENCH_CORPORA=${COMPRESSION_BENCH_CORPORA:-movies,flights}
rates=("$@")
if [ ${#rates[@]} -eq 0 ]; then rates=(unshaped 1gbit 500mbit 300mbit 200mbit 100mbit); fi
alternate=(dotnet bin/Release/net10.0/Compression.Couchbase.Benchmarks.dll --alternate --sdk --rounds 21 --operations 3)

start=$(date +%s)
sections=()
for rate in "${rates[@]}"; do
  load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)
  if [ "$rate" = unshaped ]; then
    output=$(cd "$project" && "${alternate[@]}" 2>/dev/null)
    link="unshaped loopback (MTU $(cat /sys/class/net/lo/mtu))"
  else
    output=$(cd "$project" && bash "$root/benchmarks/shaped-link.sh" "$rate" -- "${alternate[@]}" 2>/dev/null)
    link="$rate: $(echo "$output" | grep -m1 '^shaped-link:' | sed 's/^shaped-link: //')"
  fi
  table=$(echo "$output" | grep -v '^shaped-link:' | sed '/^$/d')
  sections+=("### $link; load average before: $load"$'\n\n'"$table")
  echo "$rate done"
done
seconds=$(( $(date +%s) - start ))

mkdir -p benchmarks/results
out="benchmarks/results/CouchbaseLinkSweep-$(date +%F).md"
{
  echo "# Couchbase through the SDK at several link rates ($(date +%F), at \`$(git rev-parse --short HEAD)\`: \`bash benchmarks/couchbase-link-sweep.sh ${rates[*]}\`, ${seconds} s)"
  echo
  echo "Alternating run (\`--alternate --sdk\`): compressed over plain, wall and process CPU time, same minutes for both sides."
  for section in "${sections[@]}"; do
    echo
    echo "$section"
  done
} > "$out"
echo "wrote $out (took $seconds s)"
