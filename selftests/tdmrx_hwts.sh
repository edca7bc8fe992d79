#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmrx's receive stamp, on tdm_testdev (a NIC test double whose PTP clock
# runs 1000 s ahead of CLOCK_TAI here, so a hardware stamp is told from a
# software one by its value): with hardware RX stamping on, every record is
# flagged HW and its rx_ns is the PHC's (RX - TX = the offset), even when a
# software stamp is there too; with it off, SW, within seconds of the
# clock; with neither (the frame carries a monotonic delivery time, so the
# stack takes no software stamp), NOW.  The kernel's hw_stamps/sw_stamps
# counters and its "hardware stamps seen" reply agree.  Then the PHC as
# a later test steps and slews it: ethtool -T names it, phc_ctl reads,
# steps and changes its frequency.  Last, tdmstat capture switches the
# device's hardware stamping on itself and back off when it ends.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=testdev_lib.sh
. "$(dirname "$0")/testdev_lib.sh"

OFF_S=1000
OFF_US=$((OFF_S * 1000000))
# rx_ns judged against TX (taken on TAI just before sending): a bound that
# tells 1000 s from 0 whatever the emulator's delays, not a timing check.
BOUND_US=100000000
N=200

tdmrx_require
tdmt_require phc_offset_s=$OFF_S

setup_ns A B || tdm_skip_all "cannot create network namespaces"
if ! ip link set tdmt0 netns "$A" || ! ip link set tdmt1 netns "$B"; then
	tdm_skip_all "cannot move tdmt0/tdmt1 into namespaces"
fi
tdm_hosts "$A" tdmt0 "$B" tdmt1
declare -A P

# phase NAME: a session on tdmt1, N packets with END markers from tdmt0,
# the probe's results in P, the count sent in SENT.
phase() {
	local out
	P=()
	SENT=x
	if ! tdmrx_start "$1" "$B" tdmt1 5001 --duration 60 --until-end 1; then
		tdm_fail "$1: tdmrx attaches to tdmt1"
		return 1
	fi
	out=$(nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 \
		--count $N --size 100 --rate 1000 --tdm-hdr 1)
	SENT=$(tdm_sent <<<"$out")
	tdmrx_wait "$1" P
	tdm_log "$1: sent $SENT, data records ${P[data]:-?} of ${P[records]:-?}, flags hw=${P[hw]:-?} sw=${P[sw]:-?} now=${P[now]:-?}, RX-TX ${P[min_delay_us]:-?}..${P[max_delay_us]:-?} us, kernel hw_stamps=${P[k_hw_stamps]:-?} sw_stamps=${P[k_sw_stamps]:-?} hw_tstamp=${P[k_hw_tstamp]:-?}"
	check_eq "$1: one record per packet" "${P[sender1.records]:-}:${P[dup]:-}" "$SENT:0"
	check_num "$1: and the END markers" "${P[records]:-0}" -gt "$SENT"
}

# flags NAME HW:SW:NOW (records with each flag, END markers included)
flags() {
	check_eq "$1: stamp flags hw:sw:now" "${P[hw]:-}:${P[sw]:-}:${P[now]:-}" "$2"
}

delay_within() { # NAME LO_US HI_US
	check_num "$1: RX - TX above $2 us" "${P[min_delay_us]:-x}" -gt "$2"
	check_num "$1: RX - TX below $3 us" "${P[max_delay_us]:-x}" -lt "$3"
}

# ---- hardware stamps -------------------------------------------------------
check "SIOCSHWTSTAMP rx_filter ALL on tdmt1" tdmt_hwts "$B" tdmt1 1
check_match "SIOCGHWTSTAMP reads it back" \
	"$(nsx "$B" hwstamp_ctl -i tdmt1 2>&1)" 'rx_filter 1'
tdmt_rx_edt 0
if phase hw; then
	flags hw "${P[records]:-x}:0:0"
	delay_within hw $((OFF_US - BOUND_US)) $((OFF_US + BOUND_US))
	check_eq "hw: kernel counters hw_stamps:sw_stamps" \
		"${P[k_hw_stamps]:-}:${P[k_sw_stamps]:-}" "${P[records]:-x}:0"
	check_eq "hw: reply says hardware stamps seen" "${P[k_hw_tstamp]:-}" 1
fi

# Hardware beats NOW too: frames with a delivery time and a PHC stamp.
tdmt_rx_edt 1
if phase hw_edt; then
	flags hw_edt "${P[records]:-x}:0:0"
	delay_within hw_edt $((OFF_US - BOUND_US)) $((OFF_US + BOUND_US))
fi
tdmt_rx_edt 0

# ---- software stamps ------------------------------------------------------
# tdmrx's attach enables the stack's RX stamps (net_enable_timestamp).
check "SIOCSHWTSTAMP rx_filter NONE on tdmt1" tdmt_hwts "$B" tdmt1 0
if phase sw; then
	flags sw "0:${P[records]:-x}:0"
	delay_within sw $((-BOUND_US)) $BOUND_US
	check_eq "sw: kernel counters hw_stamps:sw_stamps" \
		"${P[k_hw_stamps]:-}:${P[k_sw_stamps]:-}" "0:${P[records]:-x}"
	check_eq "sw: reply says no hardware stamps" "${P[k_hw_tstamp]:-}" 0
fi

# ---- neither: the time at the hook ----------------------------------------
# While tdmrx is attached every frame gets a software stamp unless it
# already carries a time: a monotonic delivery time (a frame forwarded from
# a local sender with an EDT) is not one, and is not replaced.
tdmt_rx_edt 1
if phase now; then
	flags now "0:0:${P[records]:-x}"
	delay_within now $((-BOUND_US)) $BOUND_US
	check_eq "now: kernel counters hw_stamps:sw_stamps" \
		"${P[k_hw_stamps]:-}:${P[k_sw_stamps]:-}" "0:0"
	check_eq "now: reply says no hardware stamps" "${P[k_hw_tstamp]:-}" 0
fi
tdmt_rx_edt 0

# ---- the PHC, for tests that step and slew it -----------------------------
ts=$(nsx "$B" ethtool -T tdmt1 2>&1)
check_match "ethtool -T: hardware receive stamps" "$ts" 'hardware-receive'
check_match "ethtool -T: filter all" "$ts" '^[[:space:]]*all'
ptp=$(tdmt_phc "$B" tdmt1)
ptp0=$(tdmt_phc "$A" tdmt0)
check_match "ethtool -T names a PHC per device" "$ptp:$ptp0" '^/dev/ptp[0-9]+:/dev/ptp[0-9]+$'
if [ -c "${ptp:-/nonexistent}" ] && [ "$ptp" != "$ptp0" ]; then
	d=$(tdmt_phc_minus_tai "$ptp")
	check_num "PHC - TAI = phc_offset_s (ns, +-1 s)" "$(( ${d:-0} - OFF_S * 1000000000 ))" \
		-lt 1000000000
	check_num "PHC - TAI = phc_offset_s (ns, -1 s)" "$(( ${d:-0} - OFF_S * 1000000000 ))" \
		-gt -1000000000
	if command -v phc_ctl >/dev/null; then
		check "phc_ctl adj -$OFF_S (clock_adjtime ADJ_SETOFFSET)" phc_ctl -q -Q "$ptp" -- adj -$OFF_S
		d=$(tdmt_phc_minus_tai "$ptp")
		check_num "stepped: |PHC - TAI| below 1 s (ns)" "${d#-}" -lt 1000000000
		check_match "phc_ctl cmp (PTP_SYS_OFFSET*)" "$(phc_ctl "$ptp" cmp 2>&1)" \
			'offset from CLOCK_REALTIME is -?[0-9]+ns'
		check "phc_ctl freq 100000000 (ADJ_FREQUENCY, +10 %)" phc_ctl -q -Q "$ptp" -- freq 100000000
		# PHC - TAI grows by 10 % of the time that passed (+-20 %)
		read -r _ ppm < <(tdmt_phc_minus_tai "$ptp" 2)
		tdm_log "PHC drift at +10 %: $ppm ppm"
		check_num "PHC runs 10 % fast (ppm, >= 80000)" "${ppm:-x}" -ge 80000
		check_num "PHC runs 10 % fast (ppm, <= 120000)" "${ppm:-x}" -le 120000
		phc_ctl -q -Q "$ptp" -- freq 0 >/dev/null 2>&1
	else
		tdm_skip "phc_ctl step, compare and slew" "phc_ctl not installed (linuxptp)"
	fi
	check "PHC of tdmt0 untouched (PHC - TAI = phc_offset_s, +-1 s)" \
		test "$(( $(tdmt_phc_minus_tai "$ptp0") / 1000000000 ))" -ge $((OFF_S - 1))
fi

# ---- tdmstat capture switches hardware stamping on, and back --------------
# tdmgen -> tdmt0 -> tdmt1 -> tdmrx -> tdmstat capture, the filter NONE
# before: capture turns it to ALL itself (SIOCSHWTSTAMP), reports hardware
# stamps, and puts NONE back when it ends.
tdm_use_build "$TDM_ROOT/build/us" "${TDMSTAT_RELEASE:-}" TDMSTAT=tdmstat TDMGEN=tdmgen
if [ ! -x "$TDMSTAT" ] || [ ! -x "$TDMGEN" ]; then
	tdm_skip "tdmstat capture enables hardware stamps" "tdmstat/tdmgen not built (make tools)"
else
	tdmt_hwts "$B" tdmt1 0
	printf '[global]\ncycle_time 10ms\n\n[sender s1]\nwindow 0 10ms\n' >"$TDM_TMP/plan.conf"
	nsx "$B" "$TDMSTAT" capture -i tdmt1 -p "$TDM_TMP/plan.conf" -o "$TDM_TMP/cap" -e 1 -d 60s -j \
		>"$TDM_TMP/cap.json" 2>"$TDM_TMP/cap.err" &
	cap=$!
	TDM_BG_PIDS+=("$cap")
	if tdm_wait_for 20 grep -q recording "$TDM_TMP/cap.err"; then
		nsx "$A" "$TDMGEN" -j -i 0 -r 500pps -d 1s -s 200 -E 3 -w 300ms "$TDM_IP_B" \
			>"$TDM_TMP/gen.json" 2>"$TDM_TMP/gen.err"
		check_eq "tdmgen exit status" $? 0
		wait "$cap"
		check_eq "tdmstat capture exit status" $? 0
	else
		tdm_fail "tdmstat capture starts recording"
		kill "$cap" 2>/dev/null
	fi
	sed 's/^/#   /' "$TDM_TMP/cap.err" | tail -n 6
	declare -A J
	while IFS= read -r line; do J["${line%%=*}"]=${line#*=}; done \
		< <(py json <"$TDM_TMP/cap.json" 2>/dev/null)
	sent=$(sed -n 's/.*"sent":\([0-9]*\).*/\1/p' "$TDM_TMP/gen.json")
	tdm_log "capture: sent ${sent:-?}, received ${J[run.received]:-?}, ts ${J[run.ts_source]:-?}, hw_stamps ${J[run.hw_stamps]:-?} of ${J[run.records]:-?}"
	check_match "capture said it switched hardware stamps on" \
		"$(cat "$TDM_TMP/cap.err")" 'hardware RX timestamps of every packet on tdmt1'
	check_eq "capture: received = sent" "${J[run.received]:-}" "${sent:-x}"
	check_eq "capture: timestamp source hw, every record" \
		"${J[run.ts_source]:-}:${J[run.hw_stamps]:-}" "hw:${J[run.records]:-x}"
	check_match "capture put rx_filter NONE back" \
		"$(nsx "$B" hwstamp_ctl -i tdmt1 2>&1)" 'rx_filter 0'
	tdm_san_reports "$TDM_TMP/cap.err" "$TDM_TMP/gen.err"
	check_eq "no sanitizer reports from tdmstat and tdmgen" $? 0
fi

tdm_exit
