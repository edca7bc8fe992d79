#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The BPF recorder counts every record it could not write: `tdmstat
# capture --recorder bpf -r 64` (rings of 8 KiB: 113 records each, as the
# capture reports them) is stopped (SIGSTOP) while two
# tdmgen senders send, so the rings fill and every further reservation
# fails; it is continued before the end markers come.  Then records + ring
# drops = sent exactly, the senders' loss is the ring drops, and the
# summary says they are not network loss.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
tdm_require tcpdump
{ [ -x "$TDMSTAT" ] && [ -x "$TDMGEN" ]; } ||
	tdm_skip_all "tdmstat/tdmgen not built in $TS_BUILD (make tools)"

COUNT=${TS_COUNT:-600}
declare -A J

ts_topology 2 || tdm_skip_all "cannot create the namespaces, bridge and veths"
PLAN=$TDM_TMP/plan.conf
printf '[auto]\nsenders 2\nwindow 5ms\ndead_time 2ms\n' >"$PLAN"

ts_capture_start ring --recorder bpf -r 64 -p "$PLAN" -e 2 -d 60s -o "$TDM_TMP/ring" ||
	{ tdm_fail "tdmstat capture --recorder bpf -r 64 starts"; tdm_exit; }
grep 'recording' "$TDM_TMP/ring.err" | sed 's/^/#   /'
per=$(sed -n 's/.* rings of \([0-9]*\) records.*/\1/p' "$TDM_TMP/ring.err")
rings=$(sed -n 's/.*), \([0-9]*\) rings of.*/\1/p' "$TDM_TMP/ring.err")
pid=${TS_PID[ring]}
kill -STOP "$pid"
rx0=$(ts_rx_packets)
# The end markers wait 4 s after the data: tdmstat runs again by then.
ts_send 1 -r 1000pps -c "$COUNT" -s 200 -E 3 -w 4s
ts_send 2 -r 1000pps -c "$COUNT" -s 200 -E 3 -w 4s
arrived() { [ $(($(ts_rx_packets) - rx0)) -ge $((2 * COUNT)) ]; }
tdm_wait_for 30 arrived
check "the data arrived while tdmstat was stopped" arrived
kill -CONT "$pid"
ts_send_wait
check_eq "both tdmgen senders finished" $? 0
ts_capture_wait ring 60
check_eq "tdmstat capture exit status" $? 0
sed 's/^/#   /' "$TDM_TMP/ring.out"
ts_json J "$TDM_TMP/ring.json"

sent=$(( $(ts_sent 1) + $(ts_sent 2) ))
drops=${J[run.ring_drops]:-0}
tdm_log "sent $sent, received ${J[run.received]:-?}, ring drops $drops, lost ${J[run.lost]:-?}; ${rings:-?} rings of ${per:-?} records"
check_num "the rings dropped records" "$drops" -gt 0
check_num "records kept: at most a ring's worth per ring (+ the end markers)" \
	"${J[run.received]:-99999}" -le $(( ${rings:-0} * ${per:-0} ))
check_eq "end markers recorded: the sent counts are known" "${J[run.sent]:-}" "$sent"
check_eq "records + ring drops = sent" "$(( ${J[run.received]:-0} + drops ))" "$sent"
check_eq "the senders' loss is the ring drops" "${J[run.lost]:-}" "$drops"
check_match "the summary: dropped by the ring N + network loss 0" "$(cat "$TDM_TMP/ring.out")" \
	"= dropped by the ring $drops \\+ network loss 0"
ts_san_check "$TDM_TMP"/ring.err "$TDM_TMP"/send*.err
ts_keep

tdm_exit
