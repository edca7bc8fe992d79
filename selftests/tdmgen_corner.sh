#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The corner turn on the corner testbed (tdm_corner in testbed/wire.sh):
# three senders, each behind its own NIC and 50 Mbit/s wire, send to
# three receivers, every sender to every receiver, through one switch
# whose three ports toward the receivers drain at the wire's rate with a
# shallow buffer (tdm_switch_buf: 5 frames).  Each sender offers 60 % of
# its line, evenly, and each receiver's port gets 60 % on average.  Every
# sender paces itself by a plan with tdmgen --corner --pace windows --gate
# lib (libtdmgate books its wire: a frame starts only where it fits its
# window at the plan's link speed, so no backlog spills past a window):
#
# - barrel: the user-space barrel shifter on one plan ([barrel]: 3 slots
#   of 12 ms, 2 ms of dead time): in slot k sender i sends to receiver
#   (i + k) mod 3, so a port never has two senders at once.
# - free: the same senders and load, each rotating through the receivers
#   on its own clock (its own [barrel] plan, its cycle 0 a third of a slot
#   after the previous sender's and its slot 1/64 longer, as
#   unsynchronized clocks are out of phase and drift): at times two
#   senders send to one receiver at once, at 120 % of its line.
#
# Judged at the ideal ports on the host, after the guest (testbed/tb
# ideal-port --by-dest on taps at the senders' devices, where tdmgen's
# pacing shows: each frame on its sender's perfect wire into its
# receiver's port of 5 frames; tdm_corner_judge): free-running loses
# frames to collisions, the barrel shifter none (a timing check: the
# quiet-host rule).  The emulated ports' own drops and the frame counts
# at every stage are logged, and the counts checked: every frame sent is
# through a NIC or dropped there, every frame through the NICs through a
# port or dropped there, every frame a port sent at its receiver.
#
# User space only (tdmgen, no qdisc): in USERSPACE_PROGS, on 6.1.
# Traffic takes 2 x 2 s.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Scale 1 (testbed/wire.sh, "time dilation"), as tdmwin_incast.sh: the
# free-running senders' drifting slots need tens of cycles to meet, and
# the verdict is the ideal ports', computed from the senders' taps, which
# the emulator's timing does not reach.
tdm_timescale 1
tdm_require bridge
tdm_use_build "$TDM_ROOT/build/us" release TDMGEN=tdmgen
[ -x "$TDMGEN" ] || tdm_skip_all "tdmgen not built (make tools)"

N=3 M=3
SLOT=12000000
DEAD=2000000
SECS=2
# 60 % of the line per sender, in frames of WIRE_SIZE bytes of payload.
PPS=$(( WIRE_MBIT * 1000000 * 60 / 100 / ((WIRE_SIZE + WIRE_FRAME_EXTRA) * 8) ))

tdm_corner "$N" "$M" || tdm_skip_all "cannot build the corner testbed (bridge, netem rate)"
tdm_log "testbed built in $SECONDS s"
tdm_log "$N senders to $M receivers; switch ports of $SW_BUF frames, NIC FIFOs of $WIRE_RING, wires of $WIRE_MBIT Mbit/s; $PPS frames/s a sender"
check "a slot's window fits the testbed" tdm_switch_check "$M" "$((SLOT - DEAD))" "$DEAD" 0
for j in $(seq "$M"); do
	tdm_switch_sink 8081 "${RCV[$j]}" || tdm_skip_all "no receiving socket on receiver $j"
done

# plan FILE SLOT BASE: the barrel shifter of the three senders to the
# three receivers, slots of SLOT ns, on CLOCK_TAI, cycle 0 at BASE ns,
# wires of WIRE_MBIT (libtdmgate books them).
plan() {
	local j
	{
		printf '[global]\nbase_time %s\nlink_speed %s\n' "$3" "$WIRE_MBIT"
		for j in $(seq "$M"); do
			printf '[receiver x%s]\naddress %s\n' "$j" "$(tdm_corner_ip "$j")"
		done
		printf '[barrel]\nsenders f1 f2 f3\nslot %sns\ndead_time %sns\n' "$2" "$DEAD"
	} >"$1"
}

# run NAME: every sender at once, sender i with PLAN_i (its --plan),
# paced by it with libtdmgate booking the wire (tdm_corner_run).
run() {
	tdm_corner_run "$1" "$SECS" --pace windows --gate lib -r "${PPS}pps"
}

# ---- free-running: each sender rotates on its own clock ---------------------

for i in $(seq "$N"); do
	plan "$TDM_TMP/free-$i.conf" "$(( SLOT + (i - 1) * SLOT / 64 ))" \
		"$(( 1000000000 + (i - 1) * SLOT / 3 ))"
done
mark=$(tdm_hostload_mark)
run free || { tdm_fail "free: the run did not complete"; tdm_exit; }
tdm_quiet_judge "$mark"
tdm_judge_check "free: senders meeting at a receiver lose frames at its ideal port" \
	free 'collision > 0'

# ---- barrel: one plan, every sender on the same clock --------------------------

for i in $(seq "$N"); do plan "$TDM_TMP/barrel-$i.conf" "$SLOT" "$(( M * SLOT ))"; done
tdm_quiet_wait 10 || tdm_log "$TDM_LOADED"
mark=$(tdm_hostload_mark)
run barrel || { tdm_fail "barrel: the run did not complete"; tdm_exit; }
tdm_quiet_judge "$mark"
# A port never has two senders: nothing to collide, and one sender's
# frames alone cannot fill a port of its wire's rate.  What can still
# collide is a frame tdmgen sent late, after a vCPU stall between
# libtdmgate's answer and the tap, into the next slot: the suite's
# allowance for such departures (OUTLIER_PERMILLE), as tdmwin_incast.sh.
tdm_timing tdm_judge_check "barrel: frames lost at the ideal ports, at most the allowance" \
	barrel "dropped <= allowed($SENT) and nic_drops == 0"

tdm_exit
