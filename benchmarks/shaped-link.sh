#!/usr/bin/env bash
# Runs a command with the loopback interface shaped like a network link of a given rate, then puts it back:
#   bash benchmarks/shaped-link.sh 1gbit -- <command...>
#   bash benchmarks/shaped-link.sh 1gbit --check          # only measures what the shaped link carries
# The loopback test doubles run in the benchmark process, and through loopback a byte saved costs next to nothing to
# move; between an application and its database it crosses a network. This shapes the loopback the way a network
# interface of that rate would (the kernel's token bucket, `tc qdisc ... tbf`, and an Ethernet MTU of 1,500 bytes), so the
# same suites can show what the saved bytes are worth at a given rate. It emulates bandwidth only: no propagation delay
# (the kernel here has no netem), no loss. Both directions share the one rate (loopback has a single queue), where a
# full-duplex link has it each way; a batch's traffic is nearly all one way (bodies out on writes, back on reads), so
# it differs little.
#
# It changes the whole machine's loopback while it runs (every local connection shares the rate): run nothing else.
# It needs root (CAP_NET_ADMIN) and the tbf queueing discipline; it says so and stops when either is missing.
# Before the command, it measures the rate the shaped link actually carries (one TCP stream through loopback, python3)
# and prints it: report that figure with the results.
set -euo pipefail

usage() { echo "usage: bash benchmarks/shaped-link.sh RATE (e.g. 1gbit, 10gbit) -- COMMAND... | --check" >&2; exit 2; }
[ $# -ge 2 ] || usage
rate=$1
shift
case "$1" in
  --) shift; [ $# -ge 1 ] || usage ;;
  --check) ;;
  *) usage ;;
esac

if [ "$(id -u)" != 0 ]; then echo "shaped-link: needs root (tc and ip link on the loopback interface)" >&2; exit 2; fi
command -v tc >/dev/null && command -v ip >/dev/null || { echo "shaped-link: needs tc and ip (Debian: iproute2)" >&2; exit 2; }
if [ "$(tc qdisc show dev lo | head -1 | cut -d' ' -f2)" != noqueue ]; then
  echo "shaped-link: the loopback interface already has a queueing discipline: $(tc qdisc show dev lo | head -1); remove it first" >&2
  exit 2
fi

old_mtu=$(cat /sys/class/net/lo/mtu)
restore() {
  tc qdisc del dev lo root 2>/dev/null || true
  ip link set dev lo mtu "$old_mtu"
  echo "shaped-link: loopback put back (no qdisc, MTU $old_mtu)" >&2
}
trap restore EXIT
ip link set dev lo mtu 1500
# burst: ten full frames, so that the bucket never holds back a single frame; latency: a queue deep enough that
# nothing is dropped at any rate used here (a drop on loopback would stall TCP for a retransmission timeout).
if ! tc qdisc add dev lo root tbf rate "$rate" burst 15140 latency 400ms; then
  echo "shaped-link: the kernel refused 'tc qdisc add dev lo root tbf rate $rate' (no sch_tbf?)" >&2
  exit 2
fi

# What the shaped link carries: one TCP stream of 64 MiB (or 2 s, whichever ends first) through loopback.
python3 - <<'PY'
import socket, threading, time
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
port = server.getsockname()[1]
received = [0]
def sink():
    connection, _ = server.accept()
    while True:
        chunk = connection.recv(1 << 20)
        if not chunk: break
        received[0] += len(chunk)
thread = threading.Thread(target=sink); thread.start()
client = socket.create_connection(("127.0.0.1", port))
block = b"x" * (1 << 16)
start = time.perf_counter(); sent = 0
while sent < (64 << 20) and time.perf_counter() - start < 2.0:
    client.sendall(block); sent += len(block)
client.close(); thread.join()
seconds = time.perf_counter() - start
print(f"shaped-link: the shaped loopback carried {received[0] * 8 / seconds / 1e9:.3f} Gbit/s ({received[0] >> 20} MiB in {seconds:.2f} s, one TCP stream)")
PY

if [ "$1" = --check ]; then exit 0; fi
"$@"
