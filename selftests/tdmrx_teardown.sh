#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sessions end under traffic without harm: a forced detach, the deletion
# of the device, and the deletion of the namespace (then the owner's exit)
# while packets flow.  Each time the reader sees the session end, reads
# every record the kernel wrote, and its mapping stays readable after the
# end.  The module cannot be unloaded while only a mapping is left, and
# unloads once it is gone.  (run.sh checks the kernel log after the test.)

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
tdmrx_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
declare -A P

flood() { # NS DST: background traffic (python starts slowly under TCG)
	nsx "$1" "${TDM_PYU[@]}" send --dst "$2" --port 5001 --duration 30 \
		--size 100 --rate 5000 --tdm-hdr 1 --tdm-end 0 >/dev/null 2>&1 &
	TDM_BG_PIDS+=($!)
	FLOOD=$!
}

unflood() {
	kill "$FLOOD" 2>/dev/null
	wait "$FLOOD" 2>/dev/null
}

# flowing NS: the session has recorded packets
flowing() {
	local r
	r=$(nsx "$1" "$TDMRX_PROBE" get | sed -n 's/^records=//p')
	[ "${r:-0}" -gt 0 ]
}

# 1. forced detach under traffic, then rmmod while only the mapping is left.
# The reader lingers with its rings mapped (and nothing else open) until
# it is told to stop, however long the checks take on a slow machine.
tdmrx_start one "$B" tdmB 5001 --duration 60 --linger 600 --linger-file "$TDM_TMP/one.linger" ||
	tdm_skip_all "cannot attach"
flood "$A" "$TDM_IP_B"
check "packets flow" tdm_wait_for 30 flowing "$B"
check "forced detach while packets flow" nsx "$B" "$TDMRX_PROBE" detach --force
check "reader keeps only its mapping" tdm_wait_for 60 test -f "$TDM_TMP/one.linger"
tdm_kv P "$(cat "$TDM_TMP/one.out")"
check_eq "reader saw the end" "${P[finished]:-}" 1
check_num "records before the end" "${P[records]:-0}" -gt 0
check_eq "every record the kernel wrote was read" "${P[k_records]:-}" "${P[records]:-x}"
check_fails "rmmod refused while the rings are mapped" rmmod tdmrx
alive() { local pid="TDMRX_PID_$1"; kill -0 "${!pid}"; }
check "the mapping was still there at the rmmod" alive one
tdmrx_wait one P INT
check_eq "mapping readable after the end (prod)" "${P[linger_prod]:-}" \
	"${P[records]:-x}"
unflood
check "rmmod once unmapped" rmmod tdmrx
check "insmod again" tdmrx_load

# 2. device deleted under traffic
tdmrx_start two "$B" tdmB 5001 --duration 60 || tdm_skip_all "cannot attach"
flood "$A" "$TDM_IP_B"
check "packets flow" tdm_wait_for 30 flowing "$B"
check "delete the device while packets flow" ip -n "$A" link del tdmA
tdmrx_wait two P
check_eq "reader saw the end" "${P[finished]:-}" 1
check_num "records before the end" "${P[records]:-0}" -gt 0
check_eq "every record the kernel wrote was read" "${P[k_records]:-}" "${P[records]:-x}"
check_eq "session gone" "${P[k_attached]:-}" 0
unflood

# 3. namespace deleted under traffic; its last process, the owner, exits
setup_ns C D || tdm_skip_all "cannot create network namespaces"
tdm_veth "$C" "$D" || tdm_skip_all "cannot create a veth pair"
tdmrx_start three "$D" tdmB 5001 --duration 60 --linger 2 || tdm_skip_all "cannot attach"
flood "$C" "$TDM_IP_B"
check "packets flow" tdm_wait_for 30 flowing "$D"
check "delete the namespace while packets flow" ip netns del "$D"
sleep 0.5
tdmrx_wait three P INT
check_eq "owner exit detached the session" "${P[owner_closed]:-}:${P[finished]:-}" 1:1
check_num "records before the end" "${P[records]:-0}" -gt 0
check_eq "mapping readable after the end (prod)" "${P[linger_prod]:-}" \
	"${P[records]:-x}"
gone() { ! ip -n "$C" link show tdmA >/dev/null 2>&1; }
check "namespace and its device went away" tdm_wait_for 60 gone
unflood
check "rmmod at the end" rmmod tdmrx
check "insmod again" tdmrx_load

tdm_exit
