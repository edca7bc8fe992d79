#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 3 x 3 corner turn through tdmd, on the corner testbed (tdm_corner
# in testbed/wire.sh): three senders, each behind its own NIC and wire,
# send to three receivers, every sender to every receiver, through one
# switch whose three ports toward the receivers have a shallow buffer
# (tdm_switch_buf).  Each sender offers 60 % of its line, to the
# receivers in turn, and each receiver's port gets 60 % on average.
#
# - free: no gate; each sender rotates through the receivers on its own
#   clock (tdmgen --corner --pace windows on its own [barrel] plan, out
#   of phase and 1/64 slower than the one before, as tdmgen_corner.sh's
#   free run): at times two senders send to one receiver at once.
# - tdmd: a coordinator (on a management network of its own, so that its
#   sessions stay off the ports judged) hands the 3 x 3 barrel shifter
#   ([barrel]: 3 slots of 12 ms, 2 ms of dead time) to a member on each
#   sender, which programs its tdmwin qdisc with a destination class per
#   receiver and one flower filter per receiver (Documentation/tdmd.rst,
#   "Plans with receivers"), checked here with tc; then every sender runs
#   tdmgen --corner free-running (--pace rate: packet by packet to the
#   receivers in turn) and the gate does the timing.
#
# Judged at the ideal ports on the host, after the guest (testbed/tb
# ideal-port --by-dest on taps at the senders' devices, where the gate
# acts; tdm_corner_judge): free-running loses frames to collisions at the
# receivers' ports, tdmd's barrel shifter none (a timing check: the
# quiet-host rule).  Every frame sent is counted through the NICs, the
# ports and the receivers, as in tdmgen_corner.sh.
#
# Needs sch_tdmwin with destination classes and cls_flower.  Traffic
# takes 2 s + 1 s.

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdm_timescale 1
tdmd_require bridge
tdm_use_build "$TDM_ROOT/build/us" release TDMGEN=tdmgen
[ -x "$TDMGEN" ] || tdm_skip_all "tdmgen not built (make tools)"

NSEND=3 NRECV=3
SLOT=12000000
DEAD=2000000
# Traffic: free-running needs its drifting slots to meet (2 s); the
# barrel shifter is judged on every frame of 1 s.
SECS=2
PPS=$(( WIRE_MBIT * 1000000 * 60 / 100 / ((WIRE_SIZE + WIRE_FRAME_EXTRA) * 8) ))
MG_C=198.18.3.1
mg_ip() { echo "198.18.3.$((10 + $1))"; }

tdm_corner "$NSEND" "$NRECV" || tdm_skip_all "cannot build the corner testbed (bridge, netem rate)"
# The management network: the coordinator's namespace on a bridge with a
# veth to each sender (mg0), which carries no gate.
setup_ns CO || tdm_skip_all "cannot create a namespace"
ip -n "$CO" -b - <<-EOF || tdm_skip_all "cannot build the management network"
	link add br0 type bridge
	link set br0 up
	addr add $MG_C/24 dev br0
EOF
for i in $(seq "$NSEND"); do
	ip link add mg0 netns "${S[$i]}" type veth peer name "mg$i" netns "$CO" ||
		tdm_skip_all "cannot build the management network"
	ip -n "$CO" link set "mg$i" master br0 up
	ip -n "${S[$i]}" -b - <<-EOF || tdm_skip_all "cannot build the management network"
		addr add $(mg_ip "$i")/24 dev mg0
		link set mg0 up
	EOF
done
tdm_log "testbed built in $SECONDS s"
tdm_log "$NSEND senders to $NRECV receivers; switch ports of $SW_BUF frames, NIC FIFOs of $WIRE_RING, wires of $WIRE_MBIT Mbit/s; $PPS frames/s a sender"
for j in $(seq "$NRECV"); do
	tdm_switch_sink 8081 "${RCV[$j]}" || tdm_skip_all "no receiving socket on receiver $j"
done

# plan FILE SLOT BASE [KEY VALUE...]: the barrel shifter of the three
# senders to the three receivers, slots of SLOT ns, cycle 0 at BASE ns
# on CLOCK_TAI (tdmd picks its own), wires of WIRE_MBIT.
plan() {
	local f=$1 slot=$2 base=$3 j
	shift 3
	{
		printf '[global]\nbase_time %s\nlink_speed %s\n' "$base" "$WIRE_MBIT"
		[ $# -gt 0 ] && printf '%s %s\n' "$@"
		for j in $(seq "$NRECV"); do
			printf '[receiver x%s]\naddress %s\n' "$j" "$(tdm_corner_ip "$j")"
		done
		printf '[barrel]\nsenders f1 f2 f3\nslot %sns\ndead_time %sns\n' "$slot" "$DEAD"
	} >"$f"
}

# run NAME PACE: every sender at once with tdmgen --corner --pace PACE
# on $TDM_TMP/NAME-I.conf (tdm_corner_run); paced by the plan, libtdmgate
# books the wire (as tdmgen_corner.sh).
run() {
	local gate=()
	[ "$2" = windows ] && gate=(--gate lib)
	tdm_corner_run "$1" "$SECS" --pace "$2" "${gate[@]}" -r "${PPS}pps"
}

# ---- free-running: each sender rotates on its own clock, no gate -----------

for i in $(seq "$NSEND"); do
	plan "$TDM_TMP/free-$i.conf" "$(( SLOT + (i - 1) * SLOT / 64 ))" \
		"$(( 1000000000 + (i - 1) * SLOT / 3 ))"
done
mark=$(tdm_hostload_mark)
run free windows || { tdm_fail "free: the run did not complete"; tdm_exit; }
tdm_quiet_judge "$mark"
tdm_judge_check "free: senders meeting at a receiver lose frames at its ideal port" \
	free 'collision > 0'

# ---- tdmd: the barrel shifter in every sender's qdisc -----------------------

tdmd_key "$TDMD_KEY"
# lead_time: the members' prepares (sanitizer builds, under TCG) answer
# within commit_lead of the base time.
plan "$TDM_TMP/barrel.conf" "$SLOT" 0 lead_time 3s base_align 0
tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/barrel.conf" "listen=$MG_C"
tdmd_start coord "$CO" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
for i in $(seq "$NSEND"); do
	tdmd_member_conf "$TDM_TMP/m$i.conf" "f$i" interface=tx0 \
		"coordinator=$MG_C:$TDMD_PORT" "link_speed=$WIRE_MBIT"
	tdmd_start "m$i" "${S[$i]}" "$TDM_TMP/m$i.conf" || tdmd_fatal "member f$i starts"
done

# runs I: sender I's qdisc has plan v1 in force (confirmed, none pending).
runs() {
	local -A q
	tdm_snap q "${S[$1]}" tx0
	[ "${q[options.plan_version]:-}" = 1 ] &&
		[ -z "${q[options.pending.plan_version]:-}" ] &&
		[ "${q[options.unconfirmed]:-false}" = false ]
}
all_run() { runs 1 && runs 2 && runs 3; }
# filters I: sender I's flower filters on its tdmwin, "ADDRESS->CLASS" by class.
filters() {
	local h
	h=$(tc -n "${S[$1]}" qdisc show dev tx0 | awk '$2 == "tdmwin" { print $3; exit }')
	[ -n "$h" ] || return 0
	tc -n "${S[$1]}" filter show dev tx0 parent "$h" |
		awk '/classid/ { for (k = 1; k < NF; k++) if ($k == "classid") c = $(k + 1) }
		     /dst_ip/ { print $2 "->" c }' | sort -t: -k2
}
check "every member connects" tdm_wait_for 30 tdmd_all_connected coord "$NSEND"
check "every sender runs the barrel shifter (v1, in force)" \
	tdm_wait_for 30 all_run
for i in $(seq "$NSEND"); do
	want=""
	for j in $(seq "$NRECV"); do
		want+="$(tdm_corner_ip "$j")->$(tc -n "${S[$i]}" qdisc show dev tx0 |
			awk '$2 == "tdmwin" { print $3; exit }')$((2 + j))"$'\n'
	done
	check_eq "sender $i: a filter per receiver into its class" "$(filters "$i")" "${want%$'\n'}"
done
tdmctl_at coord status | sed 's/^/#   /'

for i in $(seq "$NSEND"); do cp "$TDM_TMP/barrel.conf" "$TDM_TMP/tdmd-$i.conf"; done
tdm_quiet_wait 5 || tdm_log "$TDM_LOADED"
SECS=1
mark=$(tdm_hostload_mark)
run tdmd rate || { tdm_fail "tdmd: the run did not complete"; tdmd_show_logs; tdm_exit; }
tdm_quiet_judge "$mark"
for i in $(seq "$NSEND"); do
	tc -n "${S[$i]}" -s class show dev tx0 | sed "s/^/#   f$i: /"
done
tdm_timing tdm_judge_check "tdmd: no collision at any receiver's ideal port, none lost" \
	tdmd "collision == 0 and dropped == 0 and nic_drops == 0"

tdmd_finish
tdm_exit
