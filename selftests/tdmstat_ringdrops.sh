#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ring drops are not network loss, and are counted exactly, with either
# recorder: `tdmstat capture --recorder R -r 64` is stopped (SIGSTOP) while
# two tdmgen senders send their data, so the rings overflow (tdmrx.ko's
# rings of 64 records; the BPF recorder's of 8 KiB, 113 records each as the
# capture reports them, where every further reservation fails); it is
# continued before the end markers come.  tdmstat must count the records
# the rings dropped, and since the end markers give the sent counts:
# records + ring drops = sent, the senders' loss is the ring drops, and the
# summary says "dropped by the ring N + network loss 0".
#
# RECORDER=kmod|bpf runs one recorder (default: both, one after the other
# on the same namespaces; each half's sub-results are named with it).
# Every check applies to both: the drops reach the summary, the JSON and
# the window rows through the same code of tdmstat (capture.c's
# feed_round, whichever recorder counted them).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
tdm_require tcpdump
{ [ -x "$TDMSTAT" ] && [ -x "$TDMGEN" ]; } ||
	tdm_skip_all "tdmstat/tdmgen not built in $TS_BUILD (make tools)"

RECORDERS=${RECORDER:-kmod bpf}
for rec in $RECORDERS; do
	case $rec in
	kmod | bpf) ;;
	*) tdm_fail "RECORDER=$RECORDER: kmod, bpf or both"; tdm_exit ;;
	esac
done
# Only the kmod half needs tdmrx.ko; alone, without it, the test cannot run.
kmod_why=
tdmrx_load || kmod_why="tdmrx.ko not loadable ($TDMRX_KO missing? make modules-testbed)"
[ -n "$kmod_why" ] || [ -c /dev/tdmrx ] || kmod_why="no /dev/tdmrx"
[ "$RECORDERS" = kmod ] && [ -n "$kmod_why" ] && tdm_skip_all "$kmod_why"

COUNT=${TS_COUNT:-1000}

ts_topology 2 || tdm_skip_all "cannot create the namespaces, bridge and veths"
PLAN=$TDM_TMP/plan.conf
printf '[auto]\nsenders 2\nwindow 5ms\ndead_time 2ms\n' >"$PLAN"

arrived() { [ $(($(ts_rx_packets) - rx0)) -ge $((2 * COUNT)) ]; }

# ring_drops REC: one capture with recorder REC (kmod or bpf) stalled while
# the data passes, and its checks, named "REC: ...".
ring_drops() {
	local rec=$1 out=$TDM_TMP/$1 pid per rings sent drops wdrops
	local -A J
	if [ "$rec" = kmod ] && [ -n "$kmod_why" ]; then
		tdm_skip "kmod: ring drops counted exactly" "$kmod_why"
		return
	fi
	ts_capture_start "$rec" --recorder "$rec" -r 64 -p "$PLAN" -e 2 -d 60s -o "$out" ||
		{ tdm_fail "$rec: tdmstat capture --recorder $rec -r 64 starts"; return; }
	grep 'recording' "$out.err" | sed 's/^/#   /'
	# The rings' size as the capture reports it: tdmrx.ko's hold -r
	# records, the BPF recorder's -r * 128 bytes (113 records of 8 KiB).
	if [ "$rec" = bpf ]; then
		per=$(sed -n 's/.* rings of \([0-9]*\) records.*/\1/p' "$out.err")
		rings=$(sed -n 's/.*), \([0-9]*\) rings of.*/\1/p' "$out.err")
	else
		per=64
		rings=$(sed -n 's/.* with tdmrx, \([0-9]*\) rings.*/\1/p' "$out.err")
	fi
	pid=${TS_PID[$rec]}
	kill -STOP "$pid"
	rx0=$(ts_rx_packets)
	# The end markers wait 4 s after the data: tdmstat runs again by then.
	ts_send 1 -r 1000pps -c "$COUNT" -s 200 -E 3 -w 4s
	ts_send 2 -r 1000pps -c "$COUNT" -s 200 -E 3 -w 4s
	tdm_wait_for 30 arrived
	check "$rec: the data arrived while tdmstat was stopped" arrived
	kill -CONT "$pid"
	ts_send_wait
	check_eq "$rec: both tdmgen senders finished" $? 0
	ts_capture_wait "$rec" 60
	check_eq "$rec: tdmstat capture exit status" $? 0
	sed 's/^/#   /' "$out.out"
	ts_json J "$out.json"

	sent=$(( $(ts_sent 1) + $(ts_sent 2) ))
	drops=${J[run.ring_drops]:-0}
	tdm_log "$rec: sent $sent, received ${J[run.received]:-?}, ring drops $drops, lost ${J[run.lost]:-?}; ${rings:-?} rings of ${per:-?} records"
	check_num "$rec: the rings dropped records" "$drops" -gt 0
	check_num "$rec: records kept: at most a ring's worth per ring (+ the end markers)" \
		"${J[run.received]:-99999}" -le $(( ${rings:-0} * ${per:-0} ))
	check_eq "$rec: end markers recorded: the sent counts are known" "${J[run.sent]:-}" "$sent"
	check_eq "$rec: records + ring drops = sent" "$(( ${J[run.received]:-0} + drops ))" "$sent"
	check_eq "$rec: the senders' loss is the ring drops" "${J[run.lost]:-}" "$drops"
	check_match "$rec: the summary: ring drops, not network loss" "$(cat "$out.out")" \
		"ring drops $drops \\(not network loss\\)"
	check_match "$rec: the summary: dropped by the ring N + network loss 0" "$(cat "$out.out")" \
		"= dropped by the ring $drops \\+ network loss 0"
	wdrops=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ring_drops") c = i; next }
		{ if ($c > m) m = $c } END { print m + 0 }' "$out-windows.csv")
	check_num "$rec: window rows carry the drops seen while they were open (largest)" "$wdrops" -gt 0
	check_num "$rec: ... and no more than the run's" "$wdrops" -le "$drops"
	check_eq "$rec: no duplicates or bad records" "${J[run.duplicates]:-}:${J[run.bad_records]:-}" 0:0
	ts_san_check -p "$rec: " "$out.err" "$TDM_TMP"/send*.err
}

for rec in $RECORDERS; do
	ring_drops "$rec"
done
ts_keep

tdm_exit
