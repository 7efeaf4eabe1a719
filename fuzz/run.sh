#!/usr/bin/env bash
# Coverage-guided fuzzing of the decoders with AFL++ through SharpFuzz (see fuzz/README.md).
#   bash fuzz/run.sh [TARGET|all] [SECONDS]     # default: all targets, 60 s each
# Targets: envelope (untrusted envelopes, every codec), roundtrip (arbitrary documents through every codec and
# setting), dictionary (untrusted dictionary bytes). Exits 1 when AFL++ saved a crash or a hang; the inputs are
# then in fuzz/out/findings/TARGET/default/{crashes,hangs}/ (copy them to fuzz/regressions/TARGET/ to keep them
# replayed by dotnet test once fixed).
set -euo pipefail
target=${1:-all}
seconds=${2:-60}
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/fuzz/out"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

if ! command -v afl-fuzz >/dev/null; then
  echo "afl-fuzz not found: installing Debian's afl++" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq afl++ >/dev/null
fi

dotnet tool restore >/dev/null
rm -rf "$out/bin" "$out/bin-afl" "$out/seeds"
dotnet publish fuzz/Compression.Fuzz -c Release -o "$out/bin" -nologo -v quiet
# The plain build writes the seeds and replays findings; an instrumented copy runs under afl-fuzz only (it writes
# coverage into AFL's shared memory and cannot run without it). Instrumented: our assembly and the managed codec
# libraries (the framework's deflate and brotli are native code, not instrumented).
dotnet "$out/bin/Compression.Fuzz.dll" seeds "$out/seeds" >/dev/null
cp -r "$out/bin" "$out/bin-afl"
for dll in Compression.Core.dll ZstdSharp.dll K4os.Compression.LZ4.dll Snappier.dll; do
  dotnet sharpfuzz "$out/bin-afl/$dll" >/dev/null
done

# AFL++ settings for a managed target in a container: the dotnet host is not instrumented itself (SharpFuzz writes
# the coverage map), no CPU governor or core-dump tuning is possible, no terminal UI.
export AFL_SKIP_BIN_CHECK=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1

if [ "$target" = all ]; then targets=(envelope roundtrip dictionary); else targets=("$target"); fi
status=0
printf '| target | seconds | executions | exec/s | corpus | edges | crashes | hangs |\n|---|---:|---:|---:|---:|---:|---:|---:|\n' > "$out/summary.md"
for t in "${targets[@]}"; do
  findings="$out/findings/$t"
  rm -rf "$findings"; mkdir -p "$out/findings"
  afl-fuzz -V "$seconds" -t 10000 -m none -i "$out/seeds/$t" -o "$findings" -- "$(command -v dotnet)" "$out/bin-afl/Compression.Fuzz.dll" run "$t" @@ >"$out/afl-$t.log" 2>&1 || {
    echo "afl-fuzz failed for $t; its log:" >&2; tail -n 30 "$out/afl-$t.log" >&2; exit 1; }
  stats="$findings/default/fuzzer_stats"
  get() { awk -F' *: *' -v k="$1" '$1==k {print $2}' "$stats"; }
  crashes=$(get saved_crashes); hangs=$(get saved_hangs)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$(get run_time)" "$(get execs_done)" "$(get execs_per_sec)" \
    "$(get corpus_count)" "$(get edges_found)" "$crashes" "$hangs" >> "$out/summary.md"
  if [ "$crashes" != 0 ] || [ "$hangs" != 0 ]; then
    status=1
    echo "$t: $crashes crash(es), $hangs hang(s); replaying them:" >&2
    dotnet "$out/bin/Compression.Fuzz.dll" replay "$t" "$findings/default/crashes" "$findings/default/hangs" >&2 || true
  fi
done
cat "$out/summary.md"
exit "$status"
