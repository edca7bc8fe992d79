#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmrx records every matching packet once: two IPv4 senders on two ports
# and one IPv6 sender at a moderate rate give exactly one record per sent
# packet, with the sender's id, sequence and TX time, a timestamp flag, in
# order and without duplicates; other ports are not recorded, payloads
# without the stamped header are recorded as bad; every ring's receive
# watermark keeps moving while the device is idle.  Then a burst at full
# speed: still no loss (the rate is printed).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
tdmrx_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
tdm_veth_ipv6 "$A" "$B"
declare -A P

send() { nsx "$A" "${TDM_PYU[@]}" send "$@"; }

tdmrx_start rec "$B" tdmB 5001,5002 --duration 60 --until-end 3 --idle 3 ||
	tdm_skip_all "cannot attach"
send --dst "$TDM_IP_B" --port 5001 --count 5 --size 100 --rate 1000 >/dev/null
send --dst "$TDM_IP_B" --port 5003 --count 50 --size 100 --rate 1000 --tdm-hdr 9 >/dev/null
out1=$(send --dst "$TDM_IP_B" --port 5001 --count 2000 --size 100 --rate 2000 --tdm-hdr 1)
out2=$(send --dst "$TDM_IP_B" --port 5002 --count 1000 --size 200 --rate 2000 --tdm-hdr 2 \
	--plan-version 4)
out3=$(send --dst "$TDM_IP6_B" --port 5001 --count 300 --size 60 --rate 2000 --tdm-hdr 3)
s1=$(tdm_sent <<<"$out1") s2=$(tdm_sent <<<"$out2") s3=$(tdm_sent <<<"$out3")
tdm_log "sent: $s1 + $s2 + $s3"
tdmrx_wait rec P
sed 's/^/#   /' "$TDM_TMP/rec.out" | grep -E 'error|records|dropped|delay|sw=|now=|wakeups' 

check_eq "sender 1: one record per packet" "${P[sender1.records]:-}" "$s1"
check_eq "sender 2: one record per packet" "${P[sender2.records]:-}" "$s2"
check_eq "sender 3 (IPv6): one record per packet" "${P[sender3.records]:-}" "$s3"
check_eq "END markers carry the sent counts" \
	"${P[sender1.end_sent]:-}:${P[sender2.end_sent]:-}:${P[sender3.end_sent]:-}" "$s1:$s2:$s3"
check_eq "no duplicates, no reordering, none missing" \
	"${P[dup]:-x}:${P[reorder]:-x}:${P[missing]:-x}" 0:0:0
check_eq "port 5003 not recorded (no sender 9)" "${P[foreign]:-x}:${P[sender9.records]:-0}" 0:0
check_eq "payload without the header: bad magic" "${P[bad_magic]:-}" 5
check_eq "every record has a TX time" "${P[tx_zero]:-x}" 0
check_num "IPv6 records flagged" "${P[ipv6]:-0}" -ge "$s3"
check_eq "every record has a timestamp flag" \
	"$(( ${P[hw]:-0} + ${P[sw]:-0} + ${P[now]:-0} ))" "${P[records]:-x}"
check_num "software RX stamps (net_enable_timestamp)" "${P[sw]:-0}" -gt 0
tdm_timing check_num "RX after TX (min delay, us; TCG skew allowed)" "${P[min_delay_us]:-x}" -gt -50000
tdm_timing check_num "RX within 2 s of TX (max delay, us)" "${P[max_delay_us]:-x}" -lt 2000000
check_eq "kernel counted what we read, nothing dropped" \
	"${P[k_records]:-}:${P[k_dropped]:-}" "${P[records]:-x}:0"
check_eq "kernel: matched = records, bad headers" \
	"${P[k_matched]:-}:${P[k_bad_header]:-}" "${P[records]:-x}:5"
check_eq "stopped at the END markers, not detached from outside" "${P[finished]:-}" 0
# The receive watermark (tdmrx.h): set at the attach, moved on by each
# ring's timer (every 10 ms) through 3 s without traffic, never ahead of
# the clock.  A timer that did not run would leave the marks 3 s old.
check_eq "every ring's mark is of this session and not in the future" \
	"${P[mark_before_attach]:-x}:${P[mark_future]:-x}" 0:0
check_num "every ring's mark moved on while idle (oldest, ms)" "${P[mark_age_max_ms]:-99999}" -lt 1500

# Full speed: every packet is recorded once, and the ring drops none.  A
# packet the receive backlog drops before the hook (netdev_max_backlog,
# counted in /proc/net/softnet_stat) never reaches tdmrx: the burst's
# backlog drops are counted, and a deep backlog keeps them rare under TCG.
backlog_drops() { # the dropped column (hex) of every CPU, summed
	local s=0 dropped rest
	while read -r _ dropped rest; do
		s=$((s + 16#$dropped))
	done </proc/net/softnet_stat
	echo "$s"
}
tdm_sysctl net.core.netdev_max_backlog 100000
tdmrx_start fast "$B" tdmB 5001 --duration 60 --until-end 1 || tdm_skip_all "cannot attach"
bl0=$(backlog_drops)
out=$(send --dst "$TDM_IP_B" --port 5001 --count 20000 --size 100 --tdm-hdr 1)
tdmrx_wait fast P
bl=$(( $(backlog_drops) - bl0 ))
secs=$(sed -n 's/.*secs=\([0-9.]*\).*/\1/p' <<<"$out")
n=$(tdm_sent <<<"$out")
tdm_log "full speed: $n sent in $secs s ($(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%d", n / s }') pps), records ${P[data]:-?}, ring dropped ${P[k_dropped]:-?}, backlog dropped $bl, wakeups ${P[k_wakeups]:-?}"
check_eq "full speed: records + backlog drops = sent; the ring dropped none" \
	"$(( ${P[data]:-0} + bl )):${P[k_dropped]:-}:${P[dup]:-}" "$n:0:0"
tdm_timing check_eq "full speed: the backlog dropped none" "$bl" 0

tdm_exit
