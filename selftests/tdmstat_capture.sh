#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmgen -> tdmwin -> tdmrx -> tdmstat capture, end to end: three senders
# (namespaces behind a bridge, each gated by tdmwin with its windows from
# one plan file) send stamped traffic at a moderate rate to one receiver,
# where `tdmstat capture` records it through tdmrx.ko while tcpdump
# captures the same traffic.  Checked: every sender's received count is
# its sent count (from its end markers), nothing lost, no ring drops, the
# arrivals inside the sender's windows (lib.sh's tolerances and outlier
# allowance; a packet that was queued before its window closed but arrived
# later is counted as delivered late, not as a gate failure: the receive
# path's delay, reported, not judged, lib.sh), transit above
# lib.sh's TRANSIT_MIN_NS (vCPU skew), the timestamp source, the CSV/JSON outputs; and `tdmstat analyze` of tcpdump's pcap
# agrees with the capture: the same counts per sender and per window
# exactly, the RX times within TS_RX_TOL_NS (the recorder and AF_PACKET
# read the same skb stamp when the stack set one, else each reads the
# clock itself; 2 ms by default, the TCG allowance of the gate tests).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
ts_require

RATE=${TS_RATE:-200pps}
DUR=${TS_DURATION:-3s}
RX_TOL=${TS_RX_TOL_NS:-2000000}
declare -A J C Q

ts_topology 3 || tdm_skip_all "cannot create the namespaces, bridge and veths"
PLAN=$TDM_TMP/plan.conf
cat >"$PLAN" <<'EOF'
# 21 ms cycle, three 5 ms windows, 2 ms dead time after each
[global]
cycle_time 21ms

[sender s1]
window 0 5ms

[sender s2]
window 7ms 5ms

[sender s3]
window 14ms 5ms
EOF
for i in 1 2 3; do
	check "tdmwin gate on sender $i from the plan ($(ts_plan_windows "$PLAN" $((i - 1))))" \
		ts_gate $i "$PLAN" || tdm_exit
done

tdm_cap_start dump "$R" r0 "udp dst port $TS_PORT" || tdm_skip_all "tcpdump does not start"
ts_capture_start cap -p "$PLAN" -e 3 -d 60s -o "$TDM_TMP/cap" -P -j ||
	{ tdm_fail "tdmstat capture starts"; tdm_exit; }
mark=$(tdm_hostload_mark)
for i in 1 2 3; do
	ts_send $i -r "$RATE" -d "$DUR" -s 200 -E 3 -w 300ms
done
ts_send_wait
check_eq "the three tdmgen senders finished" $? 0
tdm_quiet_judge "$mark"
ts_capture_wait cap 60
rc=$?
# tcpdump reads the ring a block at a time (1 s timeout) and drops the
# block in hand when stopped: give the last packets (the end markers) time
# to reach the file.
sleep 1.5
tdm_cap_stop dump
check_eq "tdmstat capture exit status" $rc 0
for i in 1 2 3; do
	tdm_snap Q "${S[i]}" s0
	tdm_log "gate $i: window_packets ${Q[x.window_packets]:-?}, windows_opened ${Q[x.windows_opened]:-?}, drops ${Q[drops]:-?}, open latency mean ${Q[x.open_latency_mean]:-?} ns"
done
sed 's/^/#   /' "$TDM_TMP/cap.err" | tail -n 8
ts_json J "$TDM_TMP/cap.out"

# ---- the capture's counts -----------------------------------------------------
total=0
for i in 1 2 3; do
	s=$((i - 1))
	sent=$(ts_sent $i)
	total=$((total + ${sent:-0}))
	check_eq "sender $s: the end markers carry tdmgen's sent count" "${J[senders.$s.sent]:-}" "$sent"
	check_eq "sender $s: received = sent, lost 0, no duplicates" \
		"${J[senders.$s.received]:-}:${J[senders.$s.lost]:-}:${J[senders.$s.duplicates]:-}" "$sent:0:0"
done
tdm_log "sent $total data packets; capture: records ${J[run.records]:-?}, windows ${J[run.windows]:-?}, ts ${J[run.ts_source]:-?}, tx_outside ${J[run.tx_outside]:-?}, rx_outside ${J[run.rx_outside]:-?}"
check_eq "run: received = sent, lost 0" "${J[run.received]:-}:${J[run.lost]:-}" "$total:0"
check_eq "no ring drops, no bad or late records" \
	"${J[run.ring_drops]:-}:${J[run.bad_records]:-}:${J[run.late]:-}:${J[run.unknown_sender]:-}" 0:0:0:0
check_num "end markers recorded (3 per sender sent)" "${J[run.end_markers]:-0}" -ge 3
check_match "timestamp source reported" "${J[run.ts_source]:-}" '^(sw|hw|now|mixed)$'
check_num "software RX stamps (veth)" "${J[run.sw_stamps]:-0}" -gt $((total * 99 / 100))

# ---- the gates: arrivals inside the sender's windows (judged on the host) -----
# inside [start - TOL_EARLY, end + TOL_LATE); late: queued before the window
# closed, arrived after it (the receive path delayed); outside: sent while
# closed, arrived while closed.
tdm_judge K tdmstat-check inwin "@$TDM_TMP/cap*" --early "$TOL_EARLY" --late "$TOL_LATE"
tdm_judge_check "every data packet in the per-packet CSV" K "judged == $total"
tdm_judge_check "gated: no packet sent while the gate was closed arrived before it opened (outliers)" \
	K 'outside <= allowed(judged)'
# Late arrivals are the receive path slower than TOL_LATE: the emulator's
# delay, reported (lib.sh).  Every packet is in one of the three.
tdm_judge_check "inside + late + outside = every packet judged" K \
	'inside + late + outside == judged'

# ---- the outputs ------------------------------------------------------------------
for f in cap-windows.csv cap-senders.csv cap-packets.csv cap.json; do
	check "output $f written" test -s "$TDM_TMP/$f"
done
check_match "windows CSV header" "$(head -n 1 "$TDM_TMP/cap-windows.csv")" \
	'^window,sender,name,sender_window,plan_version,cycle,slot,win_start_ns,win_end_ns,packets,'
check_match "senders CSV header" "$(head -n 1 "$TDM_TMP/cap-senders.csv")" '^sender,name,sent,received,lost,'
check_match "packets CSV header" "$(head -n 1 "$TDM_TMP/cap-packets.csv")" '^arrival,sender,window,sender_window,'
check_eq "window rows = windows in the JSON" "$(($(wc -l <"$TDM_TMP/cap-windows.csv") - 1))" "${J[run.windows]:-x}"
check_eq "sender rows" "$(($(wc -l <"$TDM_TMP/cap-senders.csv") - 1))" 3
wsum=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ p += $c["packets"]; d = $c["win_end_ns"] - $c["win_start_ns"]	# doubles in awk
	  if (d < 4999000 || d > 5001000 || $c["packets"] < 1) b++ }
	END { printf "%d %d", p, b }' "$TDM_TMP/cap-windows.csv")
read -r wpk wbad <<<"$wsum"
check_eq "the window rows hold every packet" "$wpk" "$total"
check_eq "every window row: 5 ms long, with packets" "$wbad" 0
ts_json C "$TDM_TMP/cap.json"
check_eq "PREFIX.json is the summary" "${C[run.received]:-}:${C[plans.0.cycle_ns]:-}" "$total:21000000"
for s in 0 1 2; do
	check_num "sender $s: transit min above $TRANSIT_MIN_NS ns (vCPU skew, lib.sh)" \
		"${J[senders.$s.transit_min_ns]:-x}" -gt "$TRANSIT_MIN_NS"
	check_num "sender $s: transit max plausible (< 1 s; held up to a cycle)" \
		"${J[senders.$s.transit_max_ns]:-x}" -lt 1000000000
done

# ---- tcpdump + tdmstat analyze agree with the capture ---------------------------
got=$(sed -n 's/^\([0-9]*\) packets captured.*/\1/p' "$TDM_TMP/dump.tcpdump")
check_num "tcpdump dropped nothing" "$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$TDM_TMP/dump.tcpdump")" -eq 0
# tdmstat analyze reads tcpdump's pcap on the host (the same build; a
# sanitizer report there fails the judgement), and its outputs are
# compared there with the capture's.
tdm_judge A tdmstat "$TDMSTAT" analyze -q -j -p "@$TDM_TMP/plan.conf" -o @ana -P \
	"@$TDM_TMP/dump.pcap"
# capture stops at the first end marker of the last sender (-e 3); tcpdump
# and analyze see them all.
tdm_judge_check "analyze read every packet tcpdump captured (${got:-?})" A \
	"run_records == ${got:--1}"
tdm_judge_check "tcpdump captured every data packet tdmrx recorded" A \
	"run_data_packets == ${J[run.data_packets]:--1}"
for s in 0 1 2; do
	tdm_judge_check "sender $s: analyze = capture (sent, received, lost, reordered)" A \
		"(senders_${s}_sent, senders_${s}_received, senders_${s}_lost, senders_${s}_reordered) == (${J[senders.$s.sent]:--1}, ${J[senders.$s.received]:--1}, ${J[senders.$s.lost]:--1}, ${J[senders.$s.reordered]:--1})"
done
tdm_judge_check "run: analyze = capture (received, lost, windows, overlapping)" A \
	"(run_received, run_lost, run_windows, run_overlap_windows) == (${J[run.received]:--1}, ${J[run.lost]:--1}, ${J[run.windows]:--1}, ${J[run.overlap_windows]:--1})"
tdm_judge G tdmstat-check compare @cap @ana
tdm_judge_check "the same windows" G 'windows_only_in_one == 0 and windows_a == windows_b'
tdm_judge_check "per window and per sender: the same counts" G 'count_mismatches == 0'
tdm_judge_check "per window: first/last RX times within $RX_TOL ns" G "max_rx_diff_ns <= $RX_TOL"
ts_san_check "$TDM_TMP"/cap.err "$TDM_TMP"/send*.err
ts_keep

tdm_exit
