#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A dead-time sweep, the original experiment (packet_overlap_and_deadtime):
# three senders, 4 ms windows, dead time 0, 1 ms and 2 ms, once
# gated by tdmwin (each sender's windows from the run's plan file) and once
# free-running (no qdisc: they send whenever they like; no TDM at all, not
# the original udp_send, which waited for its windows).  tdmstat capture measures each run; the overlap-vs-dead-
# time table is built from its outputs and printed.  Gated, the overlaps
# stay within lib.sh's outlier allowance at every dead time; free-running,
# they appear at dead time 0.  tdmplot draws the sweep (PNG checked).
# About 60-80 s in a TCG guest; tdmstat and tdmgen are the release builds
# here (tdmstat_capture.sh runs the sanitizer builds), for speed.

TDMSTAT_RELEASE=${TDMSTAT_RELEASE:-1}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
ts_require

DEADS=${TS_DEADS:-0 1000 2000}	# us
WIN_US=4000
RATE=${TS_RATE:-300pps}
DUR=${TS_DURATION:-1s}
TDMPLOT=$TDM_ROOT/userspace/tdmplot/tdmplot
declare -A T

ts_topology 3 || tdm_skip_all "cannot create the namespaces, bridge and veths"

# plan_for DEAD_US FILE: three 4 ms windows, each followed by the dead time.
plan_for() {
	local d=$1 i
	{
		echo "[global]"
		echo "cycle_time $((3 * (WIN_US + d)))us"
		for i in 0 1 2; do
			echo "[sender s$i]"
			echo "window $((i * (WIN_US + d)))us ${WIN_US}us"
		done
	} >"$2"
}

# run MODE DEAD_US: one run of the sweep, outputs $TDM_TMP/MODE-DEAD.*
run() {
	local mode=$1 d=$2 name=$1-$2 i rc
	plan_for "$d" "$TDM_TMP/$name.plan"
	for i in 1 2 3; do
		if [ "$mode" = gated ]; then
			ts_gate $i "$TDM_TMP/$name.plan" || { tdm_fail "$name: gate $i"; return 1; }
		else
			ts_ungate $i
		fi
	done
	ts_capture_start "$name" -p "$TDM_TMP/$name.plan" -e 3 -d 30s -o "$TDM_TMP/$name" ||
		{ tdm_fail "$name: tdmstat capture starts"; return 1; }
	for i in 1 2 3; do
		ts_send $i -r "$RATE" -d "$DUR" -s 200 -E 2 -w 100ms
	done
	ts_send_wait || { tdm_fail "$name: tdmgen"; return 1; }
	ts_capture_wait "$name" 30
	rc=$?
	[ $rc = 0 ] || { tdm_fail "$name: tdmstat capture exit status $rc"; return 1; }
}

for d in $DEADS; do
	run gated "$d"
	run free "$d"
done

args=()
for d in $DEADS; do
	for m in gated free; do
		[ -f "$TDM_TMP/$m-$d.json" ] && args+=("$m=$TDM_TMP/$m-$d")
	done
done
tdm_log "overlap against dead time (overlap: packets that arrived before the last packet of an earlier window):"
ts_kv T "${TS_CHECK[@]}" sweep "${args[@]}"

i=0
for d in $DEADS; do
	for m in gated free; do
		[ -f "$TDM_TMP/$m-$d.json" ] || continue
		pk=${T[run$i.packets]:-0} ov=${T[run$i.overlap]:-x}
		check_eq "$m, dead time $d us: nothing lost, no ring drops" \
			"${T[run$i.lost]:-}:${T[run$i.ring_drops]:-}" 0:0
		if [ $m = gated ]; then
			# Arrivals at the receiver carry the emulator's delay: reported,
			# not judged (the gate is judged at the sender's tap, in
			# tdmwin_gate.sh and tdmwin_wire.sh).  Seen on a quiet host,
			# 6.12: 14 of 900 at 2000 us, against 4 allowed before.
			tdm_log "gated, dead time $d us: $ov overlaps of $pk" \
				"(the departure allowance would be $(tdm_allowed "$pk"))"
		elif [ "$d" = 0 ]; then
			check_num "free-running, dead time 0: overlaps appear" "$ov" -gt "$(tdm_allowed "$pk")"
		fi
		i=$((i + 1))
	done
done

# matplotlib's font cache in build/ (writable in the guest, kept between runs)
export MPLCONFIGDIR=${MPLCONFIGDIR:-$TDM_ROOT/build/mplconfig}
mkdir -p "$MPLCONFIGDIR" 2>/dev/null || MPLCONFIGDIR=$TDM_TMP/mpl
if "$TDM_PY" -c 'import matplotlib' 2>/dev/null; then
	gated=()
	for d in $DEADS; do gated+=("$TDM_TMP/gated-$d"); done
	# Bounded: matplotlib under TCG is slow (make tools builds its font
	# cache on the host beforehand, in the MPLCONFIGDIR above).
	timeout 100 "$TDM_PY" "$TDMPLOT" sweep "${gated[@]}" -o "$TDM_TMP/sweep-gated" \
		>"$TDM_TMP/plot.log" 2>&1
	if [ $? = 124 ]; then
		tdm_skip "tdmplot sweep" "matplotlib took over 100 s in the emulated guest"
	else
		check "tdmplot sweep (gated runs): PNG written" test -s "$TDM_TMP/sweep-gated.png"
	fi
	sed 's/^/#   /' "$TDM_TMP/plot.log" | head -n 5
else
	tdm_skip "tdmplot sweep" "python3-matplotlib not installed"
fi
ts_keep

tdm_exit
