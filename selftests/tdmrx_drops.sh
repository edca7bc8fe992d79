#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A full ring drops the newest record and counts it: with a 64-record ring
# and a reader that stalls while the traffic passes, records + dropped is
# exactly what was sent, the oldest records are the ones kept, and the
# counters in the mapped header and in the kernel's GET agree.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
tdmrx_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
declare -A P

# The reader stalls until the sender is done (at most 60 s).
tdmrx_start st "$B" tdmB 5001 --ring 64 --stall 60 --stall-file "$TDM_TMP/sent" --duration 1 ||
	tdm_skip_all "cannot attach"
out=$(nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --count 1000 \
	--size 100 --rate 2000 --tdm-hdr 1 --tdm-end 3)
sent=$(tdm_sent <<<"$out")
touch "$TDM_TMP/sent"
total=$((sent + 3))	# and the END markers
tdmrx_wait st P
grep -E '^(records|ring_dropped|k_|nr_rings|data|error)' "$TDM_TMP/st.out" | sed 's/^/#   /'

rings=${P[nr_rings]:-1}
check_num "records kept: at least one ring's worth" "${P[records]:-0}" -ge 64
check_num "records kept: at most 64 per ring" "${P[records]:-0}" -le $((64 * rings))
check_eq "records + dropped = sent (+ END markers)" \
	"$(( ${P[records]:-0} + ${P[ring_dropped]:-0} ))" "$total"
check_eq "mapped and kernel drop counters agree" "${P[k_dropped]:-}" "${P[ring_dropped]:-x}"
check_eq "kernel: records = what we read" "${P[k_records]:-}" "${P[records]:-x}"
check_eq "the oldest are kept, in order, none twice" \
	"${P[dup]:-x}:${P[reorder]:-x}:${P[sender1.records]:-0}" "0:0:${P[records]:-x}"

tdm_exit
