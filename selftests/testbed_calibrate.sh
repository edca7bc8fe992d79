#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The switch testbed's calibration (Documentation/testbed.rst, "Time
# dilation"): one sender, no other, paced at the line rate through its
# emulated NIC (tdm_switch_nic) to the emulated switch port (tdm_switch 1).
# A real wire at the port's own rate cannot fill the port's buffer: every
# frame it drops is the emulator's (its timers and softirqs running late
# bunch frames that a wire would have spaced).  At most 0.1 % of the
# frames that reached the port may be dropped there, at the current
# TDM_TIMESCALE: that is what makes the testbed's port a fair judge of
# collisions.  A timing check (the quiet-host rule); the accounting (sent =
# through the port + its drops, through the port = received) is exact.
#
# CALIBRATE_FRAMES frames (6000: 0.1 % is 6 frames) at the dilated line
# rate: 1.4 s of traffic at scale 1, 7 s at 5, 14 s at 10.
#
# Measured on a quiet host: Documentation/testbed.rst.  At scale 1 the
# port drops several per cent, and this test fails.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require bridge
tdm_use_build "$TDM_ROOT/build/us" release TDMGEN=tdmgen
[ -x "$TDMGEN" ] || tdm_skip_all "tdmgen not built (make tools)"

FRAMES=${CALIBRATE_FRAMES:-6000}
FRAME_NS=$(( (WIRE_SIZE + WIRE_FRAME_EXTRA) * 8 * 1000000 / WIRE_LINE_KBIT ))
# The line rate in frames per second, rounded down: the sender never
# offers more than the wire carries, so its NIC never drops.
PPS=$(( 1000000000 / FRAME_NS ))

tdm_switch 1 || tdm_skip_all "cannot build the switch testbed (bridge, netem rate)"
tdm_log "time scale $TDM_TIMESCALE: wire $WIRE_LINE_KBIT kbit/s, a frame of" \
	"$((WIRE_SIZE + WIRE_FRAME_EXTRA)) bytes $FRAME_NS ns; switch port buffer" \
	"$SW_BUF frames, NIC FIFO $WIRE_RING frames; $FRAMES frames at ${PPS} pps"
tdm_switch_sink 8081 || tdm_skip_all "no receiving socket on the receiver"
tdm_switch_reset || tdm_skip_all "cannot reset the testbed's counters"

tdm_quiet_wait 30 || tdm_log "$TDM_LOADED"
mark=$(tdm_hostload_mark)
start=$SECONDS
ip netns exec "${S[1]}" taskset -c 1 "$TDMGEN" -s "$WIRE_SIZE" -r "${PPS}pps" \
	-c "$FRAMES" -E 0 -j "$TDM_SW_IP_RX" -p 8081 >"$TDM_TMP/gen.json" 2>&1 ||
	tdm_fail "tdmgen failed: $(tail -n 3 "$TDM_TMP/gen.json")"
tdm_wait_for 30 tdm_switch_idle || tdm_log "the FIFOs did not drain in 30 s"
tdm_quiet_judge "$mark"
tdm_log "traffic took $((SECONDS - start)) s of guest time"

declare -A C
tdm_switch_count C
tdm_log "frames: NIC sent ${C[nic.sent]} (dropped ${C[nic.drops]}), switch port" \
	"sent ${C[sw.sent]} and dropped ${C[sw.drops]}, receiver got ${C[rx]}"
# The counters count every frame on the wire; tdmgen sends only its own
# (no end markers, -E 0) and the namespaces nothing else (no ARP: static
# neighbours; no IPv6 in them, setup_ns).
sent=${C[nic.sent]} drops=${C[sw.drops]}
check_eq "every frame that reached the port left it or was dropped there" \
	"$(( ${C[sw.sent]} + drops ))" "$sent"
check_eq "every frame the port let go reached the receiver" "${C[rx]}" "${C[sw.sent]}"
tdm_timing check_num "enough frames reached the switch port to judge 0.1 % (${C[nic.sent]})" \
	"${C[nic.sent]}" -ge 3000
lost_ppm=$(( sent ? drops * 1000000 / sent : 0 ))
tdm_log "lost at the switch port: ${C[sw.drops]} of ${C[nic.sent]}" \
	"($lost_ppm ppm) at time scale $TDM_TIMESCALE"
tdm_timing check_num "one sender at line rate: at most 0.1 % ($((sent / 1000)) of $sent) lost at the switch port" \
	"$drops" -le "$((sent / 1000))"

tdm_exit
