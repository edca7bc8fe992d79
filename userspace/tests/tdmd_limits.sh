#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What peers without the key can make a coordinator spend.
#  - Memory: 300 connections that each send the header of a 200 KB frame
#    and then 100 KB: before the peer proved the key tdmd holds 4 KiB for
#    it and refuses a larger frame (it took 256 KiB each, and kept the
#    memory after they closed).  Its RSS (an ASan build) grows by less
#    than 16 MB: 7 MB measured, 47 MB with 256 KiB buffers.
#  - File descriptors: with RLIMIT_NOFILE 32 and 60 peers connecting,
#    accept() fails with EMFILE while the connections wait in the backlog.
#    tdmd must not spin on them (it did, at 98 % of a CPU, logging
#    nothing): it logs the failure, rate-limited, stops accepting for
#    100 ms at a time, and serves again once descriptors are free.
# Host test, no root.  Built into O/tests as test_tdmd_limits (which passes
# the tdmd and tdmctl binaries); prints TAP lines.
#
#   tests/tdmd_limits.sh TDMD TDMCTL
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmd=$1 tdmctl=$2
d=$(mktemp -d) || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$d"' EXIT


rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$d/key")
printf '[global]\ncycle_time 10ms\n[sender a]\nwindow 0 2ms\n' >"$d/plan.conf"
printf '[global]\nrole coordinator\nkey_file %s\nlisten 127.0.0.1\nport %s\ncontrol_socket %s/ctl\nplan_file %s/plan.conf\nstate_file %s/c.state\n' \
	"$d/key" "$port" "$d" "$d" "$d" >"$d/c.conf"
# start [ULIMIT_N]: a coordinator (log in $d/log), waited for
start() {
	(if [ -n "${1:-}" ]; then ulimit -n "$1"; fi
	 exec "$tdmd" -f "$d/c.conf" -l debug) >"$d/log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do served && return 0; sleep 0.1; done
	return 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null; pid=; }
served() { "$tdmctl" -s "$d/ctl" status >/dev/null 2>&1; }
check_here "tdmd answers" start

# ---- memory: big frames before the key ----
rss0=$(rss_kb "$pid")
python3 - "$port" >"$d/mem" <<'PY'
import socket, struct, sys, time
port = int(sys.argv[1])
socks, closed = [], 0
for _ in range(300):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    # an nlmsghdr announcing a 200 KB frame, then up to 100 KB of it
    s.send(struct.pack("<IHHII", 200000, 16, 0, 0, 0))
    try:
        s.sendall(b"x" * 100000)
    except OSError:
        pass                    # tdmd closed it already
    socks.append(s)
time.sleep(1)
for s in socks:
    s.settimeout(2)
    try:
        while s.recv(65536):
            pass
        closed += 1             # EOF: tdmd closed it
    except ConnectionResetError:
        closed += 1
    except OSError:
        pass                    # still open: a timeout
print("closed=%d" % closed)
for s in socks:
    s.close()
PY
rss1=$(rss_kb "$pid")
echo "# tdmd's RSS: $rss0 kB before, $rss1 kB after 300 peers sent 100 KB of a 200 KB frame each"
check "300 oversized pre-key frames: all connections closed by tdmd" \
	grep -qx "closed=300" "$d/mem"
check "tdmd's memory grew by less than 16 MB ($((rss1 - rss0)) kB)" \
	test $((rss1 - rss0)) -lt 16384
check "the refusal says why" grep -q "before the peer proved the key" "$d/log"

stop

# ---- descriptors: 60 connections held open; tdmd's CPU time over 2 s ----
check_here "tdmd with 32 descriptors answers" start 32
python3 - "$port" "$pid" >"$d/probe" <<'PY'
import socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])     # utime + stime, in ticks
held = [socket.create_connection(("127.0.0.1", port), timeout=2)
        for _ in range(60)]
time.sleep(0.5)
t0 = cpu()
time.sleep(2)
print("ticks=%d hz=%d" % (cpu() - t0, __import__("os").sysconf("SC_CLK_TCK")))
for s in held:
    s.close()
PY
read -r ticks hz < <(sed 's/ticks=\([0-9]*\) hz=\([0-9]*\)/\1 \2/' "$d/probe")
echo "# tdmd's CPU time while out of descriptors: $ticks ticks of 1/$hz s in 2 s"
# Spinning takes most of a CPU (2 s); backing off, next to nothing.  A
# quarter of a CPU tells the two apart on any machine.
check "no spinning while out of descriptors (CPU time < 0.5 s of 2 s)" \
	test "${ticks:-999999}" -lt $((hz / 2))
msgs=$(grep -c "accept: Too many open files" "$d/log")
check "the failure is logged, rate-limited (logged $msgs times)" \
	test "$msgs" -ge 1 -a "$msgs" -le 2
for _ in $(seq 50); do served && break; sleep 0.1; done
check "served again once descriptors are free" served
tdm_exit
