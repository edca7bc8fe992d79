#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The BPF receive recorder against tdmrx.ko on the same traffic: two
# tdmwin-gated tdmgen senders, and on the receiver `tdmstat capture
# --recorder kmod` and `--recorder bpf` at the same time on the same
# device.  Both hooks read the same skb's stamp (the stack's software RX
# stamp on veth), so the per-window results must be identical: the same
# windows, per window and sender the same counts (tdmstat_check.py
# compare), the same first and last RX times to the nanosecond, and the
# same run totals; the BPF recorder's own accounting (records read = its
# records, no drops) and its attach mode (tcx on 6.12, a tc filter on 6.1)
# are checked, and that it is gone from the device when capture ends.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
ts_require

RATE=${TS_RATE:-300pps}
DUR=${TS_DURATION:-2s}
declare -A K B

ts_topology 2 || tdm_skip_all "cannot create the namespaces, bridge and veths"
PLAN=$TDM_TMP/plan.conf
ts_gate_2x5ms "$PLAN" || tdm_exit

ts_capture_start kmod --recorder kmod -p "$PLAN" -e 2 -d 60s -o "$TDM_TMP/kmod" -P -j ||
	{ tdm_fail "tdmstat capture --recorder kmod starts"; tdm_exit; }
ts_capture_start bpf --recorder bpf -p "$PLAN" -e 2 -d 60s -o "$TDM_TMP/bpf" -P -j ||
	{ tdm_fail "tdmstat capture --recorder bpf starts"; tdm_exit; }
mode=$(sed -n 's/.*BPF recorder (\([a-z]*\), prog id.*/\1/p' "$TDM_TMP/bpf.err")
case "$(uname -r)" in
6.1.*) want=tc ;;
*) want=tcx ;;
esac
check_eq "the BPF recorder's attach mode on $(uname -r)" "$mode" "$want"
ts_send_each -r "$RATE" -d "$DUR" -s 200 -E 3 -w 300ms
ts_capture_wait kmod 60
check_eq "capture --recorder kmod exit status" $? 0
ts_capture_wait bpf 60
check_eq "capture --recorder bpf exit status" $? 0
sed 's/^/#   kmod: /' "$TDM_TMP/kmod.err" | tail -n 3
sed 's/^/#   bpf: /' "$TDM_TMP/bpf.err" | tail -n 3
ts_json K "$TDM_TMP/kmod.out"
ts_json B "$TDM_TMP/bpf.out"

total=$(( $(ts_sent 1) + $(ts_sent 2) ))
tdm_log "sent $total; kmod: records ${K[run.records]:-?} ts ${K[run.ts_source]:-?}; bpf: records ${B[run.records]:-?} ts ${B[run.ts_source]:-?}"
check_eq "kmod: received = sent, lost 0, no ring drops" \
	"${K[run.received]:-}:${K[run.lost]:-}:${K[run.ring_drops]:-}" "$total:0:0"
check_eq "bpf: received = sent, lost 0, no ring drops" \
	"${B[run.received]:-}:${B[run.lost]:-}:${B[run.ring_drops]:-}" "$total:0:0"
check_eq "the same timestamp source (software, the stack's stamp)" \
	"${B[run.ts_source]:-}:${B[run.sw_stamps]:-}" "${K[run.ts_source]:-x}:${K[run.sw_stamps]:-x}"
for k in records data_packets end_markers windows overlap_windows rx_outside tx_outside late bad_records; do
	check_eq "run.$k: bpf = kmod" "${B[run.$k]:-}" "${K[run.$k]:-x}"
done
for s in 0 1; do
	for k in sent received lost reordered duplicates transit_min_ns transit_max_ns; do
		check_eq "sender $s $k: bpf = kmod" "${B[senders.$s.$k]:-}" "${K[senders.$s.$k]:-x}"
	done
done
tdm_judge G tdmstat-check compare "@$TDM_TMP/kmod*" "@$TDM_TMP/bpf*"
tdm_judge_check "the same windows" G 'windows_only_in_one == 0 and windows_a == windows_b'
tdm_judge_check "per window and per sender: the same counts" G 'count_mismatches == 0'
tdm_judge_check "per window: the same first/last RX times (ns)" G 'max_rx_diff_ns == 0'
check_eq "the window CSVs are identical" \
	"$(md5sum <"$TDM_TMP/bpf-windows.csv")" "$(md5sum <"$TDM_TMP/kmod-windows.csv")"
check_eq "the packet CSVs are identical" \
	"$(md5sum <"$TDM_TMP/bpf-packets.csv")" "$(md5sum <"$TDM_TMP/kmod-packets.csv")"

# ---- teardown: nothing of ours left on r0 -----------------------------------
left=$(nsx "$R" tc filter show dev r0 ingress 2>/dev/null | grep -c tdmrx_bpf)
check_eq "no tc filter of the BPF recorder left on r0" "$left" 0
if command -v bpftool >/dev/null; then
	check_eq "no tdmrx_bpf program left in the kernel" \
		"$(bpftool prog show 2>/dev/null | grep -c 'name tdmrx_bpf')" 0
fi
ts_san_check "$TDM_TMP"/kmod.err "$TDM_TMP"/bpf.err "$TDM_TMP"/send*.err
ts_keep

tdm_exit
