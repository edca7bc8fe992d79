#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libtdmgate following a live tdmwin qdisc (Documentation/libtdmgate.rst,
# "How it follows the qdisc"), through tdmgate_probe (tdmgate_probe.c),
# linked against libtdmgate.so.1:
#
#   1. tdmgate_plan_from_qdisc() reads every field `tc qdisc add` set
#      (windows, guard, base, cycle, link speed, clock, hold, lease), and
#      after `tc qdisc change ... unconfirmed` the pending plan and its flag;
#   2. a sender that asks the gate every 100 us (tdmgate_try()) sees a hold,
#      a new plan, a deleted qdisc and a new one; a sender blocked in
#      tdmgate_wait() goes when the qdisc is released; each within the
#      bound below, measured from the kernel's answer to the request
#      (libtdm's rtnetlink client: tdmd's requests; the kernel sends its
#      news before it answers) to the library's answer, and reported from
#      just before the request too (the kernel's own time: a deletion
#      waits for an RCU grace period, tens of ms under TCG);
#   3. a pending plan takes over at its base, not before;
#   4. a lease that is not renewed closes the gate no later than the
#      qdisc's lease ends (and not much earlier);
#   5. news lost to a full socket (ENOBUFS) is recovered: the last plan,
#      whose news was dropped, is in force.
#
# The bound (timing checks, tdm_timing): LAT_MAX_NS, 20 ms under TCG.
# The library reads news at most 1 ms after it came (the next query) or at
# once while blocked; the rest is the emulator's scheduling.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require

PROBE=$TDM_ROOT/build/selftests/tdmgate_probe
[ -x "$PROBE" ] || tdm_skip_all "$PROBE not built (make tools)"
setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
ROUNDS=3
LAT_MAX_NS=${TDM_GATE_LAT_MAX_NS:-20000000}
declare -A P

tc_a() { tdm_tc -n "$A" "$@"; }
probe() { nsx "$A" "$PROBE" "$@"; }

# ---- 1. the plan as tc set it ------------------------------------------------

now=$(tdm_now CLOCK_TAI)
base=$(( (now / 1000000000 + 1000) * 1000000000 ))	# in the future: pending
# The lease is long enough that it cannot run out before the checks
# below: under TCG on a busy host a tc call alone took 262 ms, and a 2 s
# lease ran out before "open until the pending base" (state 2, LEASE_OUT).
check "add tdmwin: two windows, guard, link speed, hold, lease" tc_a qdisc add \
	dev $D root handle 1: tdmwin cycle-time 10ms base-time 20ms \
	window 1ms 2ms window 5ms 3ms guard 10us link-speed 1000 \
	plan-version 7 hold lease 30s
tdm_kv P "$(probe plan $D)"
check_eq "active version" "${P[active.version]:-}" 7
check_eq "active cycle" "${P[active.cycle]:-}" 10000000
check_eq "active base" "${P[active.base]:-}" 20000000
check_eq "active guard" "${P[active.guard]:-}" 10000
check_eq "active windows" "${P[active.nwin]:-}" 2
check_eq "window 0" "${P[active.win.0]:-}" 1000000:2000000
check_eq "window 1" "${P[active.win.1]:-}" 5000000:3000000
check_eq "link speed" "${P[link_speed]:-}" 1000
check_eq "clock: CLOCK_TAI" "${P[clockid]:-}" 11
check_eq "hold" "${P[hold]:-}" 1
check_eq "no pending plan" "${P[has_pending]:-}" 0
check_eq "lease" "${P[lease_ns]:-}" 30000000000
check_num "lease left (0, 30 s]" "${P[lease_left_ns]:-0}" -gt 0
check_num "lease left <= 30 s" "${P[lease_left_ns]:-99999999999}" -le 30000000000
check_eq "the library takes the plan" "${P[create]:-}" 0
check_eq "the gate holds (TDMGATE_HOLD)" "${P[state]:-}" 1

check "change: an unconfirmed pending plan, released" tc_a qdisc change dev $D \
	root tdmwin cycle-time 20ms base-time "$base" window 0 4ms guard 2us \
	plan-version 8 unconfirmed release
tdm_kv P "$(probe plan $D)"
check_eq "a pending plan" "${P[has_pending]:-}" 1
check_eq "pending version" "${P[pending.version]:-}" 8
check_eq "pending base" "${P[pending.base]:-}" "$base"
check_eq "pending cycle" "${P[pending.cycle]:-}" 20000000
check_eq "pending guard" "${P[pending.guard]:-}" 2000
check_eq "pending window" "${P[pending.win.0]:-}" 0:4000000
check_eq "unconfirmed" "${P[unconfirmed]:-}" 1
check_eq "released" "${P[hold]:-}" 0
check_eq "active plan kept" "${P[active.version]:-}" 7
check_eq "open until the pending base (TDMGATE_OPEN)" "${P[state]:-}" 0
tc_a qdisc del dev $D root

# ---- 2-5. following it: what a sender sees, and when -----------------------

# Timing under TCG is judged only on a quiet host (testbed/quiet.sh): a
# preempted vCPU delays the library by milliseconds.
mark=$(tdm_hostload_mark)
out=$(probe follow $D $ROUNDS 2>&1)
check_eq "tdmgate_probe follow ran" $? 0
tdm_quiet_judge "$mark"
tdm_kv P "$out"
for k in hold release change gone back; do
	check_eq "$k: seen in every round" "${P[$k.n]:-0}/${P[$k.lost]:-0}" "$ROUNDS/0"
	tdm_log "$k: the library's latency (ns) after the kernel's answer:" \
		"min ${P[$k.min]:-?} mean ${P[$k.mean]:-?} max ${P[$k.max]:-?};" \
		"from the request: min ${P[$k.req.min]:-?} mean ${P[$k.req.mean]:-?}" \
		"max ${P[$k.req.max]:-?}"
	tdm_timing check_num "$k: within $LAT_MAX_NS ns" "${P[$k.max]:-$LAT_MAX_NS}" \
		-le "$LAT_MAX_NS"
done
check_num "pending plan: not before its base" "${P[pending.seen]:--1}" -ge "${P[pending.base]:-0}"
tdm_timing check_num "pending plan: from its base on (within $LAT_MAX_NS ns)" \
	"${P[pending.seen]:-0}" -le $(( ${P[pending.base]:-0} + LAT_MAX_NS ))
tdm_log "pending plan: taken over $(( ${P[pending.seen]:-0} - ${P[pending.base]:-0} )) ns after its base"
lo=${P[lease.lib_out]:--1}
check_num "lease: the library's gate closed" "$lo" -gt 0
tdm_timing check_num "lease: closed no later than the qdisc's lease ended (+1 ms)" \
	"$lo" -le $(( ${P[lease.ack]:-0} + ${P[lease.ns]:-0} + 1000000 ))
tdm_timing check_num "lease: closed at most 5 ms early" \
	"$lo" -ge $(( ${P[lease.req]:-0} + ${P[lease.ns]:-0} - 5000000 ))
tdm_log "lease: library closed $(( ${P[lease.qdisc_end_min]:-0} - lo )) ns before the qdisc's earliest end"
check_eq "lease off: open again" "${P[lease.off_seen]:-}" 1
check_eq "lost news recovered: the last plan (version ${P[flood.version]:-?}) in force" \
	"${P[flood.seen]:-}" 1

tdm_exit
