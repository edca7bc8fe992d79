#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A coordinator out of file descriptors: with RLIMIT_NOFILE 32 and 60
# peers connecting, accept() fails with EMFILE while the connections
# wait in the backlog.  tdmd must not spin on them (it did, at 98 % of a
# CPU, logging nothing): it logs the failure, rate-limited, stops
# accepting for 100 ms at a time, and serves again once descriptors are
# free.  Host test, no root.  Built into O/tests as test_tdmd_fds (which
# passes the tdmd and tdmctl binaries); prints TAP lines.
#
#   tests/tdmd_fds.sh TDMD TDMCTL
set -uo pipefail
tdmd=$1 tdmctl=$2
n=0 failed=0
d=$(mktemp -d) || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$d"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; printf '#   %s\n' "$@"; failed=1; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$d/key")
printf '[global]\ncycle_time 10ms\n[sender a]\nwindow 0 2ms\n' >"$d/plan.conf"
printf '[global]\nrole coordinator\nkey_file %s\nlisten 127.0.0.1\nport %s\ncontrol_socket %s/ctl\nplan_file %s/plan.conf\n' \
	"$d/key" "$port" "$d" "$d" >"$d/c.conf"
(ulimit -n 32 && exec "$tdmd" -f "$d/c.conf" -l debug) >"$d/log" 2>&1 &
pid=$!
for _ in $(seq 50); do "$tdmctl" -s "$d/ctl" status >/dev/null 2>&1 && break; sleep 0.1; done
served() { "$tdmctl" -s "$d/ctl" status >/dev/null 2>&1; }
check "tdmd answers" served

# 60 connections held open; tdmd's CPU time over 2 s of that.
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
echo "1..$n"
exit "$failed"
