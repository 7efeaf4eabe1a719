#!/usr/bin/env bash
# Checks that fuzz/run.sh tells a defect from a fuzzer that could not run (see fuzz/README.md):
#   bash fuzz/selftest.sh          # about 1 minute (one build, then six short runs)
# Each case runs fuzz/run.sh on a hidden self-test target of fuzz/Compression.Fuzz/Program.cs and asserts its exit code
# and message. Exit 0 when every case behaves; 1 otherwise (the failing cases are listed).
set -o pipefail
cd "$(dirname "$0")/.." || exit 1
out=fuzz/out/selftest
mkdir -p "$out"
failures=0
export FUZZ_EXEC_TIMEOUT_MS=2000 FUZZ_REPLAY_TIMEOUT=15 FUZZ_BACKOFF=1 FUZZ_ATTEMPTS=2 FUZZ_APT_BACKOFF=1 FUZZ_APT_ATTEMPTS=2

check() { # NAME EXPECTED_EXIT EXPECTED_TEXT -- COMMAND...
  local name=$1 want=$2 text=$3; shift 4
  local start=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  if [ "$rc" = "$want" ] && grep -q -- "$text" "$out/$name.log"; then
    echo "PASS $name: exit $rc, \"$(grep -m1 -o -- "$text.*" "$out/$name.log" | cut -c1-240)\" ($((SECONDS - start)) s)"
  else
    failures=$((failures + 1))
    echo "FAIL $name: exit $rc (expected $want), text \"$text\" $(grep -q -- "$text" "$out/$name.log" && echo found || echo 'not found') ($((SECONDS - start)) s); last lines of $out/$name.log:"
    tail -n 25 "$out/$name.log" | sed 's/^/    /'
  fi
}

# 1. A planted crash (inputs starting with 'B', seed "A"): a defect, exit 1, replayed by the plain build.
check crash 1 "FUZZ DEFECT in selftest-crash" -- bash fuzz/run.sh selftest-crash 20
grep -q "planted crash" "$out/crash.log" || { failures=$((failures + 1)); echo "FAIL crash: the replay did not show the planted crash"; }
# 2. A planted hang (inputs starting with 'H'): afl-fuzz stops (the hang ends the fork server); the plain build hangs
#    on the input it was running: a defect, exit 1.
check hang 1 "FUZZ DEFECT in selftest-hang" -- env FUZZ_REUSE_BUILD=1 bash fuzz/run.sh selftest-hang 20
# 3. The CI failure of 2026-11: no coverage in the dry run. Not a defect: retried, then NOT RUN, exit 0.
check noinst 0 "FUZZ STEP NOT RUN for selftest-noinst: afl-fuzz stopped (exit code 1): No instrumentation detected" \
  -- env FUZZ_REUSE_BUILD=1 bash fuzz/run.sh selftest-noinst 5
# 4. A target that exits before the fork server handshake: NOT RUN, exit 0.
check nostart 0 "FUZZ STEP NOT RUN for selftest-nostart: afl-fuzz stopped (exit code 1): Fork server handshake failed" \
  -- env FUZZ_REUSE_BUILD=1 bash fuzz/run.sh selftest-nostart 5
# 5. afl++ missing and apt-get failing on the dpkg lock (a stub apt-get first on PATH): NOT RUN, exit 0.
stub="$out/stub-bin"; mkdir -p "$stub"
printf '#!/bin/sh\necho "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2\nexit 100\n' > "$stub/apt-get"
chmod +x "$stub/apt-get"
check no-afl 0 "FUZZ STEP NOT RUN for roundtrip: afl++ could not be installed" \
  -- env PATH="$PWD/$stub:$PATH" FUZZ_AFL_FUZZ=afl-fuzz-missing-for-selftest FUZZ_REUSE_BUILD=1 bash fuzz/run.sh roundtrip 5
# 6. The same start failure with FUZZ_STRICT=1 (for local use): exit 2.
check strict 2 "FUZZ STEP NOT RUN for selftest-noinst" \
  -- env FUZZ_STRICT=1 FUZZ_ATTEMPTS=1 FUZZ_REUSE_BUILD=1 bash fuzz/run.sh selftest-noinst 5

if [ "$failures" -gt 0 ]; then echo "fuzz self-test: $failures case(s) FAILED"; exit 1; fi
echo "fuzz self-test: all cases passed"
