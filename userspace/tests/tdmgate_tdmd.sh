#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End to end on the host, the vfio deployment's path: no qdisc to follow,
# the plan from the local tdmd.  A coordinator and a member "a" with gate
# tdmd (its plan store on a unix socket), namespaces A and B joined by a
# veth (198.18.0.0/15); in A, tdmgen --stack dpdk --gate-sock (DPDK's EAL
# without hugepages on a net_af_packet vdev over dpA, at real-time
# priority with chrt where it can) sends 200-byte datagrams at 1000/s;
# tcpdump at dpB captures what left, and testbed/tb pcap judges it
# against the windows of the plan the store holds (tdmctl status), with
# the host's tolerances and the suite's allowance (selftests/tolerance.sh):
#
#   - ungated (--ungated), the same path: many frames outside (what the
#     judge sees without the gate: this test can fail);
#   - gated, 2000 frames, a plan pushed with tdmctl during the run: the
#     frames before its base inside the first plan's windows, those after
#     it inside the new one's, within the allowance; the first frame on the
#     new plan within HOST_TOL_LATE of its first window's opening;
#   - the preload shim (TDMGATE_SOCK) on tdmgen's kernel UDP: the same;
#   - a's tdmd killed (lease LEASE_MS): frames go on after the kill (the
#     lease runs) and none leaves after the lease's end + HOST_TOL_LATE.
#
# Figures (outside/judged, the plan change's latency, the lease's end)
# and the host's load (testbed/guest/hostload, sampled here) are printed.
# Timing is judged when the sender ran at real-time priority (the host's
# other work, at normal priority, cannot delay it) or the host was quiet
# (testbed/quiet.sh); a sender at normal priority on a loaded host has
# its timing checks skipped with the load as reason, never passed.
# Built into O/tests as test_tdmgate_tdmd, run by `make unit`; prints
# TAP.  Needs root, ip, tcpdump and a tdmgen built with DPDK (else
# "SKIP: ...", exit 4).  About 12 s.
#
#   tests/tdmgate_tdmd.sh TDMD TDMCTL TDMGEN SHIM
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=../../selftests/tap.sh
. "$here/../../selftests/tap.sh"
# shellcheck source=../../selftests/tolerance.sh
. "$here/../../selftests/tolerance.sh"
# shellcheck source=../../testbed/quiet.sh
. "$here/../../testbed/quiet.sh"
tdmd=$1 tdmctl=$2 tdmgen=$3 shim=$4
tb=$here/../../testbed/tb
for c in ip tcpdump python3; do
	command -v "$c" >/dev/null || tdm_skip_all "needs $c"
done
[ "$(id -u)" = 0 ] || tdm_skip_all "needs root (uid $(id -u))"
[[ $(ldd "$tdmgen" 2>/dev/null) == *librte_eal* ]] ||
	tdm_skip_all "tdmgen built without DPDK (libdpdk-dev)"
# shellcheck source=veth_ns.sh
. "$here/veth_ns.sh"
# shellcheck source=tdmd_pair.sh
. "$here/tdmd_pair.sh"
LEASE_MS=500
CYCLE=20000000
a=tdmgA$$ b=tdmgB$$ hpid='' gpid='' cpid_cap=''
trap '[ -n "$gpid" ] && kill "$gpid" 2>/dev/null; [ -n "$cpid_cap" ] && kill "$cpid_cap" 2>/dev/null
      [ -n "$hpid" ] && kill "$hpid" 2>/dev/null; [ -n "$mpid" ] && kill "$mpid" 2>/dev/null
      [ -n "$cpid" ] && kill "$cpid" 2>/dev/null; veth_ns_del "$a" "$b"; rm -rf "$d"' EXIT

# The sender at real-time priority where chrt can (bypass.rst: a software
# gate acts in its sender's thread).
rt=()
if command -v chrt >/dev/null && chrt -f 50 true 2>/dev/null; then
	rt=(chrt -f 50)
else
	tdm_log "no chrt -f: the senders run at normal priority"
fi
# The host's load while the test runs: other work than this test's
# processes, in CPUs (testbed/quiet.sh reads it).
"$here/../../testbed/guest/hostload" $$ "$d/hostload" 0.5 &
hpid=$!
export TDM_HOSTLOAD=$d/hostload

veth_ns "$a" "$b" dpA dpB
mac=$(ip netns exec "$b" cat /sys/class/net/dpB/address)
# The plans: a alone, two windows in a 20 ms cycle, then one.  The link
# speed the gate books a kick's frames at: about what net_af_packet over
# a veth does with them.
plan() {
	printf '[global]\ncycle_time 20ms\nlead_time 300ms\nbase_align 0\nlink_speed 1000\n[sender a]\n'
	printf 'window %s\n' "$@"
}
plan "2ms 4ms" "12ms 3ms" >"$d/plan.conf"
plan "8ms 3ms" >"$d/plan2.conf"
coord_conf "commit_lead 100ms" >"$d/c.conf"
# "dpA" names the device as a vfio device's PCI address would: tdmd does
# not look it up.
gate_member_conf dpA "$d/a.gate" "lease ${LEASE_MS}ms" >"$d/m.conf"
pair_start || { tdm_fail_why "tdmd: a coordinator and a member with gate tdmd come up" \
	"$(cat "$d/c.log" "$d/m.log")"; tdm_exit; }

# The gate's clock is CLOCK_TAI, tcpdump's CLOCK_REALTIME: TAI_OFF apart
# (whole seconds).
TAI_OFF=$(python3 -c 'import time
print(round((time.clock_gettime_ns(time.CLOCK_TAI) - time.time_ns()) / 1e9) * 1000000000)')
# store_plan: the store's active plan, "VERSION BASE WINDOWS" (BASE on
# the capture's clock, WINDOWS as tb pcap takes them), as tdmctl shows it.
store_plan() {
	"$tdmctl" -s "$d/m.sock" -j status | python3 -c '
import json, sys
q = json.load(sys.stdin)["qdisc"]
print(q["plan_version"], q["base_time"] - int(sys.argv[1]),
      ",".join("%d:%d" % (w["offset_ns"], w["length_ns"]) for w in q["windows"]))' "$TAI_OFF"
}
plan_is() {	# VERSION: the store runs it, from its base on
	local v base
	read -r v base _ <<<"$(store_plan 2>/dev/null)"
	[ "$v" = "$1" ] && [ "$base" -le "$(now_ns)" ]
}
check_here "the store runs plan v1" wait_for plan_is 1
read -r _ BASE WINS <<<"$(store_plan)"
tdm_log "plan v1: base $BASE, windows $WINS (ns)"

# cap_start NAME / cap_stop NAME: tcpdump at dpB into $d/NAME.pcap; once
# stopped, what it captured and dropped in CAPTURED and CAPDROP.  The
# headers and tdmgen's stamped header only (-s 96), in an 8 MiB buffer:
# a window's first kicks come at once, and tcpdump, at normal priority,
# may run later on a loaded host.
cap_start() {
	ip netns exec "$b" tcpdump -i dpB -n -U --immediate-mode -Z root -s 96 -B 8192 \
		--time-stamp-precision=nano -w "$d/$1.pcap" udp dst port 5001 \
		2>"$d/$1.tcpdump" &
	cpid_cap=$!
	wait_for grep -qs "listening on" "$d/$1.tcpdump"
}
cap_stop() {
	sleep 0.3
	kill -INT "$cpid_cap"
	wait "$cpid_cap"
	cpid_cap=''
	CAPTURED=$(sed -n 's/^\([0-9]*\) packets\? captured$/\1/p' "$d/$1.tcpdump")
	CAPDROP=$(sed -n 's/^\([0-9]*\) packets\? dropped by kernel$/\1/p' "$d/$1.tcpdump")
}
# judge NAME TB_ARGS...: tb pcap of NAME's capture, its key=value lines
# into J.
declare -A J
judge() {
	local name=$1 k v
	shift
	"$tb" pcap "$d/$name.pcap" --port 5001 --cycle "$CYCLE" \
		--tol-early "$HOST_TOL_EARLY" --tol-late "$HOST_TOL_LATE" "$@" >"$d/$name.judge"
	J=()
	while IFS='=' read -r k v; do
		J[$k]=$v
	done < <(grep -v '^#' "$d/$name.judge")
	tdm_log "$name: ${J[outside]:-?} of ${J[judged]:-?} frames outside, the farthest" \
		"${J[max_out_ns]:-?} ns from its window"
	grep '^# outside' "$d/$name.judge" | head -n 5
}
# span NAME TO [FROM]: tb span of NAME's capture, its fields into S.
declare -A S
span() {
	local k v
	S=()
	while IFS='=' read -r k v; do
		S[$k]=$v
	done < <("$tb" span "$d/$1.pcap" --port 5001 --to "$2" ${3:+--from "$3"})
}
# timing_rule MARK: judge timing checks from here on if the sender ran at
# real-time priority or the host was quiet since MARK; else skip them.
timing_rule() {
	tdm_quiet_judge "$1"
	if [ -n "$TDM_LOADED" ] && [ ${#rt[@]} -gt 0 ]; then
		tdm_log "... the sender ran at real-time priority, above that load: timing judged"
		TDM_LOADED=
	fi
}
gen() {
	ip netns exec "$a" "${rt[@]}" "$tdmgen" --stack dpdk -I dpA --dst-mac "$mac" \
		-p 5001 -s 200 -E 0 -j "$@" 198.18.0.2 2>>"$d/gen.err"
}
# sent FILE: tdmgen's "sent" in its JSON summary FILE.
sent() { sed -n 's/.*"sent":\([0-9]*\).*/\1/p' "$1"; }

# Ungated, on the same path: the frames leave when they are due.
cap_start ungated
gen --ungated -c 600 -r 1000pps >"$d/ungated.json"
check_eq "ungated: tdmgen --stack dpdk --ungated sent 600" "$(sent "$d/ungated.json")" 600
cap_stop ungated
judge ungated --base "$BASE" --windows "$WINS"
check_num "ungated: every frame captured" "${J[total]:-}" -eq 600
ungated_out=${J[outside]:-0}/${J[judged]:-0}
tdm_log "gated: ${J[phase1]:-?} frames under plan v1, ${J[phase2]:-?} under v2"
# The windows cover 7 of 20 ms: about 65 % of frames due at a steady
# rate fall outside.
check_num "ungated: many frames outside the windows (%)" \
	$(( ${J[outside]:-0} * 100 / (${J[judged]:-0} + 1) )) -ge 40

# Gated by the store, with a plan pushed during the run.
mark=$(tdm_hostload_mark)
cap_start gated
gen --gate-sock "$d/a.gate" -c 2000 -r 1000pps >"$d/gated.json" &
gpid=$!
sleep 0.5
tpush=$(now_ns)
check "tdmctl plan push of plan v2 during the run" \
	"$tdmctl" -s "$d/c.sock" plan push "$d/plan2.conf"
wait "$gpid"
check_eq "gated: tdmgen --stack dpdk --gate-sock ran" $? 0
gpid=''
cap_stop gated
timing_rule "$mark"
check_eq "gated: it sent 2000 and said so" "$(sent "$d/gated.json"):$(grep -o '"gate":"[a-z]*"' "$d/gated.json")" \
	'2000:"gate":"lib"'
check_eq "gated: every frame captured, none dropped" "$CAPTURED:$CAPDROP" 2000:0
check_here "gated: plan v2 runs in the store" plan_is 2
read -r _ BASE2 WINS2 <<<"$(store_plan)"
tdm_log "plan v2: base $BASE2 ($(( (BASE2 - tpush) / 1000000 )) ms after the push), windows $WINS2 (ns)"
judge gated --base "$BASE" --windows "$WINS" --switch "$BASE2" --base2 "$BASE2" \
	--windows2 "$WINS2"
gated_out=${J[outside]:-0}/${J[judged]:-0}
tdm_log "gated: ${J[phase1]:-?} frames under plan v1, ${J[phase2]:-?} under v2"
check_eq "gated: in order" "${J[reorder]:-}" 0
tdm_timing check_num "gated: frames under plan v1" "${J[phase1]:-0}" -ge 300
tdm_timing check_num "gated: frames under plan v2, after its base" "${J[phase2]:-0}" -ge 300
tdm_timing check_num "gated: frames outside their plan's windows, at most $OUTLIER_PERMILLE per mille" \
	"${J[outside]:-x}" -le "$(tdm_allowed "${J[judged]:-0}")"
# The new plan's first window: its first frame (frames wait for it).
w2=$(( BASE2 + ${WINS2%%:*} ))
span gated "$w2"
switch_us=$(( (${S[first_after]:-0} - w2) / 1000 ))
tdm_log "gated: the first frame on plan v2 left ${switch_us} us after its first window opened"
tdm_timing check_num "gated: ... within HOST_TOL_LATE of it (us)" "$switch_us" -le $((HOST_TOL_LATE / 1000))
check_num "gated: ... not before it (us)" "$switch_us" -ge 0

# The preload shim on tdmgen's kernel UDP, the same store.  The DPDK
# ports flushed dpA's neighbours: the static one again.
veth_ns_neigh "$a" dpA "$b" dpB 198.18.0.2
mark=$(tdm_hostload_mark)
cap_start shim
ip netns exec "$a" env LD_PRELOAD="$shim" TDMGATE_SOCK="$d/a.gate" "${rt[@]}" \
	"$tdmgen" -p 5001 -s 200 -E 0 -j -c 1000 -r 1000pps 198.18.0.2 >"$d/shim.json" 2>>"$d/gen.err"
check_eq "shim: tdmgen over kernel UDP, preloaded with TDMGATE_SOCK, sent 1000" \
	"$(sent "$d/shim.json")" 1000
cap_stop shim
timing_rule "$mark"
check_eq "shim: every frame captured, none dropped" "$CAPTURED:$CAPDROP" 1000:0
judge shim --base "$BASE2" --windows "$WINS2"
shim_out=${J[outside]:-0}/${J[judged]:-0}
tdm_timing check_num "shim: frames outside the windows, at most $OUTLIER_PERMILLE per mille" \
	"${J[outside]:-x}" -le "$(tdm_allowed "${J[judged]:-0}")"

# a's tdmd killed: the gate runs on the lease, then closes.
mark=$(tdm_hostload_mark)
cap_start lease
gen --gate-sock "$d/a.gate" -c 3000 -r 1000pps -d 1600ms >"$d/lease.json" &
gpid=$!
sleep 0.5
stop_now "$mpid"
mpid=''
wait "$gpid"
gpid=''
cap_stop lease
timing_rule "$mark"
span lease 9223372036854775807
lease_ms=$(( (${S[last_before]:-0} - t0) / 1000000 ))
tdm_log "lease: a's tdmd killed, the last frame left $lease_ms ms later (lease $LEASE_MS ms)"
span lease $((t0 + LEASE_MS * 1000000 / 2))
# Renewed every quarter of the lease, it ends 3/4 to 1 lease after the
# kill; half a lease allows a renewal starved on a loaded host
# (tdmd_store.sh).
check_num "lease: frames went on after the kill, on the lease" "${S[first_after]:-0}" -gt 0
span lease $((t0 + LEASE_MS * 1000000 + HOST_TOL_LATE))
tdm_timing check_eq "lease: no frame after its end + HOST_TOL_LATE" "${S[first_after]:-x}" 0
judge lease --base "$BASE2" --windows "$WINS2"
tdm_timing check_num "lease: frames outside the windows, at most $OUTLIER_PERMILLE per mille" \
	"${J[outside]:-x}" -le "$(tdm_allowed "${J[judged]:-0}")"

tdm_log "outside/judged: ungated $ungated_out, gated $gated_out, shim $shim_out" \
	"(tolerance -$HOST_TOL_EARLY/+$HOST_TOL_LATE ns)"
load=$(tdm_hostload_since 0)
tdm_log "host load over the test: other work on ${load% *} CPUs (mean), ${load#* } (max);" \
	"sender ${rt[*]:-at normal priority}"
[ -s "$d/gen.err" ] && sed 's/^/# tdmgen: /' "$d/gen.err" | head -n 10
tdm_exit
