#!/usr/bin/env bash
# Coverage-guided fuzzing of the decoders with AFL++ through SharpFuzz (see fuzz/README.md).
#   bash fuzz/run.sh [TARGET|all] [SECONDS]     # default: all targets, 60 s each
# Targets: envelope (untrusted envelopes, every codec), roundtrip (arbitrary documents through every codec and
# setting), dictionary (untrusted dictionary bytes), structure (untrusted packed streams and structured frames),
# shapetable (untrusted shape tables), packing (arbitrary documents through the structure transform), fields
# (untrusted field models and codec 8 payloads: the model parser, the joiner and the rANS decoder). Hidden
# self-test targets (selftest-*) are run by fuzz/selftest.sh.
#
# Two kinds of failure, told apart:
#   - a DEFECT: afl-fuzz saved a crash or a hang, or stopped on an input (or a seed) that the plain build also fails or
#     hangs on. Exit 1, after replaying the inputs with the plain build; they are in
#     fuzz/out/findings/TARGET/default/{crashes,hangs}/ (copy them to fuzz/regressions/TARGET/ once fixed).
#   - the fuzzer COULD NOT RUN: afl++ not installable, a setup step failed (tool restore, publish, instrumentation),
#     afl-fuzz could not start or run the target (no instrumentation detected, fork server handshake or timeout) while
#     the inputs it was on replay cleanly. Retried (FUZZ_ATTEMPTS, backoff FUZZ_BACKOFF s, doubling), then reported in
#     one "FUZZ STEP NOT RUN for TARGET: reason" block and in fuzz/out/summary.md; exit 0 (FUZZ_STRICT=1: exit 2).
# Settings (environment): FUZZ_ATTEMPTS (3), FUZZ_BACKOFF (10), FUZZ_EXEC_TIMEOUT_MS (10000: afl-fuzz -t),
# FUZZ_REPLAY_TIMEOUT (120 s per replay), FUZZ_STRICT (0), FUZZ_REUSE_BUILD (0: 1 keeps fuzz/out/bin* if present),
# FUZZ_AFL_FUZZ (afl-fuzz), FUZZ_APT_ATTEMPTS (4), FUZZ_APT_BACKOFF (15).
# No `set -e`/`set -u`: every failure is handled below, and a shell error must not pass for a defect (exit 1).
set -o pipefail
target=${1:-all}
seconds=${2:-60}
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
out="$root/fuzz/out"
mkdir -p "$out"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
attempts=${FUZZ_ATTEMPTS:-3}
backoff=${FUZZ_BACKOFF:-10}
exec_timeout=${FUZZ_EXEC_TIMEOUT_MS:-10000}
replay_timeout=${FUZZ_REPLAY_TIMEOUT:-120}
afl=${FUZZ_AFL_FUZZ:-afl-fuzz}

if [ "$target" = all ]; then targets=(envelope roundtrip dictionary structure shapetable packing fields); else targets=("$target"); fi
summary="$out/summary.md"
printf '| target | status | seconds | executions | exec/s | corpus | edges | crashes | hangs |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n' > "$summary"
defects=0 not_run=0

strip() { sed -e 's/\x1b\[[?0-9;]*[A-Za-z]//g' -e 's/\x1b[()][0-9A-Za-z]//g' "$@"; }

# The loud block: the step did not run, and the build does not fail for it.
report_not_run() { # TARGET REASON LOG
  local t=$1 reason=$2 log=$3
  not_run=$((not_run + 1))
  {
    echo
    echo "################################################################################"
    echo "## FUZZ STEP NOT RUN for $t: $reason"
    echo "## The fuzzer could not start or run; this is not a defect found in the code, and the build does not fail"
    echo "## for it. Nothing was fuzzed for $t in this run."
    if [ -n "$log" ] && [ -s "$log" ]; then
      echo "## Last lines of ${log#"$root"/}:"
      strip "$log" | grep -v '^[[:space:]]*$' | tail -n 15 | sed 's/^/##   /'
    fi
    echo "################################################################################"
    echo
  } >&2
  printf '| %s | not run: %s | | | | | | | |\n' "$t" "${reason//|//}" >> "$summary"
}

finish() {
  cat "$summary"
  echo "fuzz: ${#targets[@]} target(s), $defects with a defect, $not_run NOT RUN" >&2
  if [ "$defects" -gt 0 ]; then exit 1; fi
  if [ "$not_run" -gt 0 ] && [ "${FUZZ_STRICT:-0}" = 1 ]; then exit 2; fi
  exit 0
}

not_run_all() { # REASON LOG
  for t in "${targets[@]}"; do report_not_run "$t" "$1" "$2"; done
  finish
}

# --- afl++ (Debian's package): retried with backoff (the dpkg lock may be held by another apt, the network may fail).
install_afl() {
  local log="$out/apt.log" sudo="" i wait=${FUZZ_APT_BACKOFF:-15}
  : > "$log"
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "not root and no password-less sudo: cannot install afl++" >> "$log"; return 1; fi
  fi
  for ((i = 1; i <= ${FUZZ_APT_ATTEMPTS:-4}; i++)); do
    echo "== attempt $i" >> "$log"
    # An update that fails (network) may still leave usable lists: install is tried anyway.
    $sudo apt-get -o DPkg::Lock::Timeout=30 -o Acquire::Retries=2 -o Acquire::http::Timeout=30 update -qq >> "$log" 2>&1
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=60 install -y -qq afl++ >> "$log" 2>&1
    if command -v "$afl" >/dev/null; then return 0; fi
    if [ "$i" -lt "${FUZZ_APT_ATTEMPTS:-4}" ]; then
      echo "afl++ not installed (attempt $i); retrying in $wait s" >&2; sleep "$wait"; wait=$((wait * 2)); fi
  done
  return 1
}
if ! command -v "$afl" >/dev/null; then
  echo "$afl not found: installing Debian's afl++" >&2
  install_afl || not_run_all "afl++ could not be installed (apt-get failed ${FUZZ_APT_ATTEMPTS:-4} times)" "$out/apt.log"
fi

# --- Build: the plain build writes the seeds and replays findings; an instrumented copy runs under afl-fuzz only (it
# writes coverage into AFL's shared memory and cannot run without it). Instrumented: the codec code reached from our
# targets, Compression.Core and the managed codec libraries (the framework's deflate and brotli are native code).
prepare() {
  local log="$out/prepare.log"
  : > "$log"
  rm -rf "$out/bin" "$out/bin-afl" "$out/seeds"
  step() { echo "== $*" >> "$log"; "$@" >> "$log" 2>&1 || { prepare_failed="$*"; return 1; }; }
  step dotnet tool restore &&
  step dotnet publish fuzz/Compression.Fuzz -c Release -o "$out/bin" -nologo -v quiet &&
  step dotnet "$out/bin/Compression.Fuzz.dll" seeds "$out/seeds" &&
  step cp -r "$out/bin" "$out/bin-afl" || return 1
  for dll in Compression.Core.dll ZstdSharp.dll K4os.Compression.LZ4.dll Snappier.dll; do
    step dotnet sharpfuzz "$out/bin-afl/$dll" || return 1
  done
}
if [ "${FUZZ_REUSE_BUILD:-0}" = 1 ] && [ -f "$out/bin-afl/Compression.Fuzz.dll" ] && [ -d "$out/seeds" ]; then
  echo "reusing $out/bin and $out/bin-afl (FUZZ_REUSE_BUILD=1)" >&2
else
  wait=$backoff
  for ((i = 1; ; i++)); do
    prepare_failed=""
    prepare && break
    if [ "$i" -ge "$attempts" ]; then not_run_all "setup step failed $attempts times: $prepare_failed" "$out/prepare.log"; fi
    echo "fuzz setup failed ($prepare_failed), attempt $i of $attempts; retrying in $wait s" >&2
    sleep "$wait"; wait=$((wait * 2))
  done
fi
for t in "${targets[@]}"; do
  case "$t" in selftest-*) mkdir -p "$out/seeds/$t"; printf A > "$out/seeds/$t/seed-A" ;; esac
done

# --- AFL++ settings for a managed target in a container: the dotnet host is not instrumented itself (SharpFuzz writes
# the coverage map), no CPU governor or core-dump tuning is possible, no terminal UI. The input goes through a file
# (@@), read by the target inside each execution (see Program.cs: SharpFuzz reads stdin too early for the first one).
# The fork server start-up timeout is AFL's default, 10 x -t (100 s).
export AFL_SKIP_BIN_CHECK=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1
dotnet_path=$(command -v dotnet)

# Replays inputs with the plain build, in its own process, under a time limit. 0: all pass; else the failure.
replay() { # TARGET LOG PATH...
  local t=$1 log=$2; shift 2
  timeout -k 10 "$replay_timeout" "$dotnet_path" "$out/bin/Compression.Fuzz.dll" replay "$t" "$@" >> "$log" 2>&1
}
describe_replay() { # RC WHAT
  case "$1" in
    1) echo "fails on $2" ;;
    124 | 137) echo "hangs on $2 (no result in ${replay_timeout} s)" ;;
    *) echo "dies on $2 (exit code $1)" ;;
  esac
}
stat_of() { awk -F' *: *' -v k="$1" '$1==k {print $2}' "$2" 2>/dev/null; }

for t in "${targets[@]}"; do
  findings="$out/findings/$t"
  log="$out/afl-$t.log"
  wait=$backoff
  for ((attempt = 1; ; attempt++)); do
    rm -rf "$findings"; mkdir -p "$out/findings"
    # The outer limit only guards against an afl-fuzz that never gets going (start-up is allowed 100 s, see above).
    timeout -k 30 $((seconds + 600)) "$afl" -V "$seconds" -t "$exec_timeout" -m none -i "$out/seeds/$t" -o "$findings" \
      -- "$dotnet_path" "$out/bin-afl/Compression.Fuzz.dll" run "$t" @@ > "$log" 2>&1
    rc=$?
    stats="$findings/default/fuzzer_stats"
    crashes=$(stat_of saved_crashes "$stats"); hangs=$(stat_of saved_hangs "$stats")
    verdict="" reason="" replayed="" replay_seeds=""
    if [ "${crashes:-0}" != 0 ] || [ "${hangs:-0}" != 0 ]; then
      verdict=defect
      reason="$crashes crash(es), $hangs hang(s) saved by afl-fuzz"
    elif [ "$rc" = 0 ] && [ -f "$stats" ]; then
      verdict=ran
    else
      # afl-fuzz stopped. Its own reason, then the plain build on the input it was running (.cur_input: a hang or a
      # crash that kills the process ends SharpFuzz's in-process fork server, and afl-fuzz with it) and on the seeds
      # (a seed that fails stops the dry run). Whatever the plain build fails or hangs on is a defect.
      abort=$(strip "$log" | grep -a -m1 -oE 'PROGRAM ABORT : .*' | sed -e 's/PROGRAM ABORT : //' -e 's/[[:space:]]*$//')
      reason="afl-fuzz stopped (exit code $rc)${abort:+: $abort}"
      cur="$findings/default/.cur_input"
      if [ -f "$cur" ]; then
        : > "$out/replay-$t.log"
        replay "$t" "$out/replay-$t.log" "$cur"; r=$?
        if [ "$r" != 0 ]; then
          replayed="$out/replay-$t.log"
          verdict=defect
          kind=crashes; case "$r" in 124 | 137) kind=hangs ;; esac
          mkdir -p "$findings/default/$kind"; cp "$cur" "$findings/default/$kind/id:stopped-afl-fuzz"
          reason="$reason; the plain build $(describe_replay "$r" "the input afl-fuzz was running")"
          if [ "$kind" = hangs ]; then hangs=1; else crashes=1; fi
        fi
      fi
      if [ -z "$verdict" ]; then
        : > "$out/replay-$t.log"
        replay "$t" "$out/replay-$t.log" "$out/seeds/$t"; r=$?
        if [ "$r" != 0 ]; then
          verdict=defect; replayed="$out/replay-$t.log" replay_seeds=1
          reason="$reason; the plain build $(describe_replay "$r" "the seeds (${out#"$root"/}/seeds/$t)")"
        fi
      fi
      [ -n "$verdict" ] || verdict=not-run
    fi
    if [ "$verdict" != not-run ]; then break; fi
    if [ "$attempt" -ge "$attempts" ]; then break; fi
    echo "fuzz $t: $reason; attempt $attempt of $attempts, retrying in $wait s" >&2
    sleep "$wait"; wait=$((wait * 2))
  done

  case "$verdict" in
    not-run)
      report_not_run "$t" "$reason (after $attempt attempts)" "$log" ;;
    ran | defect)
      status=ran
      [ "$attempt" -gt 1 ] && status="ran (attempt $attempt of $attempts)"
      [ "$verdict" = defect ] && status="$status: DEFECT"
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$status" "$(stat_of run_time "$stats")" \
        "$(stat_of execs_done "$stats")" "$(stat_of execs_per_sec "$stats")" "$(stat_of corpus_count "$stats")" \
        "$(stat_of edges_found "$stats")" "${crashes:-}" "${hangs:-}" >> "$summary" ;;
  esac
  if [ "$verdict" = defect ]; then
    defects=$((defects + 1))
    {
      echo
      echo "################################################################################"
      echo "## FUZZ DEFECT in $t: $reason"
      echo "## Replayed with the plain build (fuzz/out/bin):"
      if [ -n "$replayed" ]; then
        sed 's/^/##   /' "$replayed"
        [ "$r" = 124 ] || [ "$r" = 137 ] && echo "##   (the replay did not finish in ${replay_timeout} s: a hang)"
      else
        inputs=()
        for d in crashes hangs; do [ -d "$findings/default/$d" ] && inputs+=("$findings/default/$d"); done
        : > "$out/replay-$t-findings.log"
        replay "$t" "$out/replay-$t-findings.log" "${inputs[@]}"; r=$?
        sed 's/^/##   /' "$out/replay-$t-findings.log"
        [ "$r" = 0 ] && echo "##   (the plain build passes them: the failure shows under afl-fuzz only; the inputs are kept)"
        [ "$r" = 124 ] || [ "$r" = 137 ] && echo "##   (the replay did not finish in ${replay_timeout} s: a hang)"
      fi
      if [ -n "$replay_seeds" ]; then echo "## Inputs: the seeds, ${out#"$root"/}/seeds/$t/"
      else echo "## Inputs: ${findings#"$root"/}/default/{crashes,hangs}/ (copy them to fuzz/regressions/$t/ once fixed)"; fi
      echo "################################################################################"
      echo
    } >&2
  fi
done
finish
